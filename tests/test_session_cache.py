"""A user's nvfp4ctl variables do not reach the tests, and the tests' builds stay out of the user's caches (nvfp4ctl's,
torch's extensions)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nvfp4ctl.env import Env

ROOT = Path(__file__).resolve().parents[1]
SET_BY_THE_SUITE = {Env.MEMORY, Env.CACHE}


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
    env.update({Env.TASK: str(ROOT / "nvfp4ctl/problems/nvfp4_dual_gemm/task.yml"), Env.TIMEOUT: "7",
                Env.CACHE: str(tmp_path / "users-cache"), Env.MEMORY: str(tmp_path / "MEMORY.md"),
                Env.DEBUG: "1", Env.DEVICE: "cpu", Env.NO_COLOR: "1",
                "TORCH_EXTENSIONS_DIR": str(tmp_path / "users-torch-extensions")})
    assert set(env) >= set(users.values()), "a variable Env names is not set here: add it"
    probe = f"{Path(__file__).relative_to(ROOT)}::test_a_test_sees_none_of_the_users_nvfp4ctl_variables"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", probe], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert not (tmp_path / "users-cache").exists() and not (tmp_path / "MEMORY.md").exists()
