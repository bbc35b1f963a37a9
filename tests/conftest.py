"""Shared test setup: `gpu` tests skip cleanly without a CUDA GPU; the run log goes to a temp file."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator

import pytest

import collection_guard


def pytest_configure(config: pytest.Config) -> None:
    """One build cache per test session: each kernel compiles once, however many tests load it."""
    os.environ.setdefault("NVFP4CTL_CACHE", tempfile.mkdtemp(prefix="nvfp4ctl-test-cache-"))


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


@pytest.fixture(autouse=True)
def _isolated_run_log(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run by tests must never append to the repository's own MEMORY.md."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path_factory.mktemp("runlog") / "MEMORY.md"))


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
