"""`nvfp4ctl log`: the most recent run-log entries from MEMORY.md as a table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvfp4ctl import runlog
from nvfp4ctl.console import get_console
from nvfp4ctl.errors import UsageError
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.project import memory_path


def _short_target(target: str) -> str:
    """File name and hash only: the full path is in MEMORY.md."""
    path, at, digest = target.rpartition("@")
    return f"{Path(path).name}@{digest[:8]}" if at else Path(target).name or target


def command(
    last: Annotated[int, typer.Option("-n", "--last", help="How many entries to show.")] = 20,
) -> Outcome:
    """Show the most recent entries of the run log in MEMORY.md."""
    if last < 1:
        raise UsageError(f"-n must be at least 1, got {last}")
    memory = memory_path()
    entries = runlog.read(memory, last)
    console = get_console()
    if not entries:
        console.info(f"no runs logged yet in {memory}")
        return Outcome(result="empty")
    problems = any(e.problem for e in entries)  # a column only once some run recorded its problem
    console.table(
        ["time (UTC)", "command", "target", "commit", "gpu", "exit", "result"] + (["problem"] if problems else []),
        [[e.time.replace("T", " ").rstrip("Z"), e.command, _short_target(e.target), e.commit, e.gpu,
          e.exit_code, e.result] + ([e.problem or "-"] if problems else []) for e in entries],
        title=f"{len(entries)} most recent runs ({memory})",
        right_align_from=5,
    )
    return Outcome(result=f"{len(entries)} entries")
