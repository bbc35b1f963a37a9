"""Shared test setup: `gpu` tests skip cleanly without a CUDA GPU; the run log goes to a temp file; a user's
nvfp4ctl variables are hidden from tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import collection_guard
import session_cache
from nvfp4ctl.env import Env

# Every variable nvfp4ctl reads; a user's own (NVFP4CTL_TASK, NVFP4CTL_TIMEOUT, ...) must not change what a test sees.
_READ_BY_NVFP4CTL = sorted(value for name, value in vars(Env).items() if name.isupper())


def pytest_configure(config: pytest.Config) -> None:
    """One build cache per test session (tests/session_cache.py)."""
    session_cache.choose(config)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's, where it is installed
def pytest_configure_node(node: Any) -> None:  # xdist's WorkerController, in the controller
    session_cache.hand_to_worker(node.config, node.workerinput)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Last of all, also after xdist's workers are done (the controller's runs once they have ended)."""
    session_cache.remove_if_made(config)


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def _torch_extensions_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One per session, so a kernel a submission builds with torch's load_inline (check runs the real one)
    compiles once, however many tests load it; pytest's temporary folders are pruned, ~/.cache is not."""
    return tmp_path_factory.mktemp("torch-extensions")


@pytest.fixture(autouse=True)
def _isolated_environment(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                          _torch_extensions_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees none of the user's nvfp4ctl variables, but the two the suite sets: its own run log (never
    the repository's MEMORY.md) and the session's build cache. torch's extension builds go to the session's
    folder, not the user's ~/.cache/torch_extensions."""
    for name in _READ_BY_NVFP4CTL:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(Env.MEMORY, str(tmp_path_factory.mktemp("runlog") / "MEMORY.md"))
    monkeypatch.setenv(Env.CACHE, session_cache.folder(request.config))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(_torch_extensions_dir))


# The collection guard (tests/collection_guard.py): a whole-suite run fails if a test file or
# tests went missing from the collection.
def pytest_collectreport(report: pytest.CollectReport) -> None:
    collection_guard.record(report)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's, where it is installed
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    collection_guard.record_node_ids(ids)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    collection_guard.enforce(session)


@pytest.fixture(autouse=True)
def _build_names_stay_lazy() -> Iterator[None]:
    """nvfp4ctl.build's names (build_kernel, ...) load on use from their modules. A test that patches the package's
    name leaves the original bound there once monkeypatch undoes it, and every later test's stand-in on the module
    (nvfp4ctl.build.builder.build_kernel) is then bypassed: patch the module, where the package reads it."""
    yield
    package = sys.modules.get("nvfp4ctl.build")
    if package is not None:
        bound = sorted(set(vars(package)) & set(package.__all__))
        assert not bound, f"nvfp4ctl.build.{bound[0]} was set on the package: patch it on its own module instead"


@pytest.fixture(autouse=True)
def _fresh_workspace() -> None:
    """Each test starts like a new nvfp4ctl process: no task file or user folder resolved yet, and the console
    at its default verbosity (a command run with -q by an earlier test left it quiet for direct calls)."""
    from nvfp4ctl import console, workspace

    workspace.reset()
    console.set_verbosity(console.NORMAL)
