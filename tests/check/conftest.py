"""Check tests run on CPU against fake_problem.py and the fake targets in targets/."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from check_fakes import HERE, SMALL_TESTS, FakeTask
from fake_problem import FakeCase


@pytest.fixture(autouse=True)
def _fakes_importable_in_child(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.syspath_prepend(str(HERE))  # spawn children start with the parent's sys.path
    # kept child logs (after a crash) land in the test's tmp folder, not in /tmp
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


@pytest.fixture
def fake_task(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeTask]:
    """Make `check` read a FakeTask and run on CPU (fake_problem's parse_shape builds FakeCases for --shape)."""
    from nvfp4ctl.check import plan
    from nvfp4ctl.runner import targets

    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)

    def install(tests: tuple[FakeCase, ...] = SMALL_TESTS, **fields: Any) -> FakeTask:
        task = FakeTask(tests=tests, **fields)
        monkeypatch.setattr(plan, "load_task_file", lambda path: task)
        # the fake targets lie under this repository's task.yml, which would replace a shipped task
        monkeypatch.setattr(targets, "task_for_submission", lambda loaded, submission: loaded)
        return task

    return install


@pytest.fixture
def empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with no task.yml here or above, no task named in the environment, checks on CPU."""
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    folder = tmp_path / "empty"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder
