"""The three ways a user picks a task for a run, for tests that must hold whichever one was used."""

from __future__ import annotations

from pathlib import Path

import pytest

WAYS = ["--task", "$NVFP4CTL_TASK", "task.yml here"]


def choose_task(how: str, task: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Pick `task` the way `how` names (one of WAYS): the arguments to add, an environment variable set, or a
    copy as `folder`/task.yml."""
    if how == "--task":
        return ["--task", str(task)]
    if how == "$NVFP4CTL_TASK":
        monkeypatch.setenv("NVFP4CTL_TASK", str(task))
        return []
    (folder / "task.yml").write_text(task.read_text())
    return []
