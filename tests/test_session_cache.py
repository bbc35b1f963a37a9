"""A user's nvfp4ctl variables do not reach the tests, and the tests' builds stay out of the user's caches (nvfp4ctl's,
torch's extensions)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import session_cache
from nvfp4ctl.env import Env

ROOT = Path(__file__).resolve().parents[1]
SET_BY_THE_SUITE = {Env.MEMORY, Env.CACHE}


def _probe(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    probe = f"{Path(__file__).relative_to(ROOT)}::test_a_test_sees_none_of_the_users_nvfp4ctl_variables"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", probe], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)


def test_a_test_sees_none_of_the_users_nvfp4ctl_variables(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Run on its own by the test below, with every variable set as a user may have it."""
    read = {value for name, value in vars(Env).items() if name.isupper()}
    assert sorted((read - SET_BY_THE_SUITE) & os.environ.keys()) == []
    cache = os.environ[Env.CACHE]
    assert cache == os.environ.get("NVFP4CTL_TEST_CACHE") or Path(cache).name.startswith("nvfp4ctl-test-cache-"), cache
    assert Path(os.environ[Env.MEMORY]).parent.name.startswith("runlog")
    assert Path(os.environ["TORCH_EXTENSIONS_DIR"]).is_relative_to(tmp_path_factory.getbasetemp())


def test_a_users_exported_variables_change_nothing_in_a_test(tmp_path: Path) -> None:
    users = {name: value for name, value in vars(Env).items() if name.isupper()}
    env = {key: value for key, value in os.environ.items() if key not in users.values()}
    env.pop("NVFP4CTL_TEST_CACHE", None)
    env.update({Env.TASK: str(ROOT / "nvfp4ctl/problems/nvfp4_dual_gemm/task.yml"), Env.TIMEOUT: "7", Env.LOAD_TIMEOUT: "5",
                Env.CACHE: str(tmp_path / "users-cache"), Env.MEMORY: str(tmp_path / "MEMORY.md"),
                Env.DEBUG: "1", Env.DEVICE: "cpu", Env.NO_COLOR: "1",
                "TORCH_EXTENSIONS_DIR": str(tmp_path / "users-torch-extensions")})
    assert set(env) >= set(users.values()), "a variable Env names is not set here: add it"
    done = _probe(env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert not (tmp_path / "users-cache").exists() and not (tmp_path / "MEMORY.md").exists()


def test_the_cache_a_run_made_is_removed_at_its_end_and_a_given_one_is_kept(tmp_path: Path) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary)}
    env.pop(session_cache.TEST_CACHE, None)
    done = _probe(env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert [path.name for path in temporary.iterdir() if path.name.startswith("nvfp4ctl-test-cache-")] == []

    given = tmp_path / "kept"
    given.mkdir()
    (given / "k-sm_90a-built").write_text("a build kept between runs")
    done = _probe({**env, session_cache.TEST_CACHE: str(given)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert (given / "k-sm_90a-built").is_file()


def test_an_xdist_worker_uses_its_controllers_cache_and_leaves_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    monkeypatch.setenv(Env.CACHE, os.environ[Env.CACHE])  # choose() sets it for the process: restored after
    monkeypatch.delenv(session_cache.TEST_CACHE, raising=False)
    monkeypatch.setattr(session_cache.tempfile, "tempdir", str(tmp_path))
    controller = SimpleNamespace(stash=pytest.Stash())
    made = Path(session_cache.choose(controller))  # type: ignore[arg-type]
    assert made.parent == tmp_path and os.environ[Env.CACHE] == str(made)

    workerinput: dict[str, object] = {}
    session_cache.hand_to_worker(controller, workerinput)  # type: ignore[arg-type]
    worker = SimpleNamespace(stash=pytest.Stash(), workerinput=workerinput)
    assert session_cache.choose(worker) == str(made)  # type: ignore[arg-type]
    session_cache.remove_if_made(worker)  # type: ignore[arg-type]
    assert made.is_dir(), "a worker removed the folder its controller and the other workers still use"
    session_cache.remove_if_made(controller)  # type: ignore[arg-type]
    assert not made.exists()
