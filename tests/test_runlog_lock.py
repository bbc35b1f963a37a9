"""Where the run log's lock lives: the cache's locks/, else a private folder in the system's temporary
folder. A shared cache's locks/ that another user made (not writable to this one, or holding their lock
file of mode 644) must not cost the log its line. The other user is a stand-in: os.open refusing as the
file system refuses a user who is not the owner (these tests may run as root, whom no mode bit stops)."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.cli import app
from nvfp4ctl.runlog import appending
from nvfp4ctl.check import plan
from test_cli import ThreeTests


def _refusing_under(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    """os.open in the run log's lock lookup refusing every path under `folders`."""
    real = os.open

    def refusing(path, flags, mode=0o777, **kwargs):
        if any(Path(path).parent == folder for folder in folders):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path, flags, mode, **kwargs)

    monkeypatch.setattr(appending.os, "open", refusing)


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache" / "locks").mkdir(parents=True)  # there, as another user's shared cache has it
    return tmp_path / "cache"


def test_a_locks_folder_that_refuses_the_lock_falls_back_to_the_temporary_folder(
        cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(appending.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    _refusing_under(monkeypatch, cache / "locks")
    memory = tmp_path / "MEMORY.md"
    lock = runlog.lock_path(memory)
    assert lock.parent == tmp_path / "tmp" / f"nvfp4ctl-locks-{os.getuid()}"
    runlog.append(runlog.RunEntry(time="2026-11-28 10:00", command="nvfp4ctl check", target="-", commit="-", gpu="cpu",
                                  exit_code="0", result="ok"), memory)
    assert [run.command for run in runlog.read(memory)] == ["nvfp4ctl check"]  # the line is there


def test_no_place_for_the_lock_names_the_cache_setting_not_the_run_logs(
        cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.setattr(plan, "load_task_file", lambda path: ThreeTests())
    fallback = tmp_path / "tmp" / f"nvfp4ctl-locks-{os.getuid()}"
    monkeypatch.setattr(appending.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    _refusing_under(monkeypatch, cache / "locks", fallback)
    monkeypatch.delenv("NVFP4CTL_MEMORY")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", "check", "--only", "0"])
    result = CliRunner().invoke(app, ["check", "--only", "0"])
    said = " ".join(result.output.split())
    assert "warning: run log not written" in said and "no folder for the run log's lock" in said, said
    # another MEMORY.md's lock is taken in the same places: only another cache helps
    assert "set NVFP4CTL_MEMORY" not in said and "point NVFP4CTL_CACHE at a folder you can write" in said
