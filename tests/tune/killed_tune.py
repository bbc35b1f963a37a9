"""A stand-in tune (a Python script starting a pool whose tasks hang, each writing `<pid>.pid` into its folder)
killed with SIGKILL once its tasks run: every process below it must end, and its stdout with them."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from process_tree import alive, descendants, until

REPO = Path(__file__).resolve().parents[2]


def kill_and_see_everything_below_end(script: str, folder: Path, started: int, start_limit_s: float,
                                      check_started: Callable[[set[int], set[int]], None]) -> None:
    """Run `script` (formatted with repo, fakes and folder) until `started` pid files are in `folder` (its tasks
    running), hand their pids and every process below the tune to `check_started`, kill the tune with SIGKILL,
    and assert that all of them end within 5 s and that nothing holds the tune's stdout."""
    source = script.format(repo=str(REPO), fakes=str(REPO / "tests" / "tune"), folder=str(folder))
    tune = subprocess.Popen([sys.executable, "-c", source], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    below: set[int] = set()
    try:
        assert until(lambda: len(list(folder.glob("*.pid"))) == started, start_limit_s), "the stand-ins never started"
        below = descendants(tune.pid)
        check_started({int(p.stem) for p in folder.glob("*.pid")}, below)
        os.kill(tune.pid, signal.SIGKILL)
        tune.wait(10)
        assert until(lambda: not any(alive(pid) for pid in below), 5), [p for p in below if alive(p)]
        # and nothing holds the tune's stdout: a reader of the pipe sees its end
        assert select.select([tune.stdout], [], [], 5)[0] and tune.stdout.read() == b""
    finally:
        for pid in [tune.pid, *below, *(int(p.stem) for p in folder.glob("*.pid"))]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        tune.stdout.close()
        tune.wait(10)
