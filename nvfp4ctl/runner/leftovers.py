"""The processes a child started in a session of their own (`subprocess.Popen(..., start_new_session=True)`, a
daemon's double fork): killing the child's process group cannot reach them, and once the child is gone they
belong to init. Each child gets a tag in its environment, which every program it or its descendants exec
inherits; at the child's end, whatever ended it, every process that carries the tag is killed.

A tag, rather than making the parent a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a subreaper adopts the
orphans of every descendant, the compilers of a build and tune's other workers' among them, and must reap them
itself beside subprocess's and multiprocessing's own waits, yet still cannot tell whose orphan each one is; the
tag tells, wherever the orphan was re-parented, and also to the group reaper when nvfp4ctl itself was killed.
A program started with an environment of its own (`Popen(..., env={...})` without the tag) is not found."""

from __future__ import annotations

import os
import secrets
import signal
from pathlib import Path

CHILD_TAG = "NVFP4CTL_CHILD_TAG"  # set in the child only; nvfp4ctl never reads it from the user
_ROUNDS = 3  # a process that forked while the list was read is found in the next round


def new_tag() -> str:
    return f"{os.getpid()}-{secrets.token_hex(8)}"


def tagged(tag: str) -> list[int]:
    """The processes whose environment, as they were exec'd, holds CHILD_TAG=tag (this one excepted)."""
    entry = f"{CHILD_TAG}={tag}".encode()
    found = []
    for folder in Path("/proc").glob("[0-9]*"):
        pid = int(folder.name)
        if pid == os.getpid():
            continue
        try:
            environment = (folder / "environ").read_bytes()
        except OSError:  # gone meanwhile, or another user's
            continue
        if entry in environment.split(b"\0"):
            found.append(pid)
    return found


def kill_tagged(tag: str) -> None:
    """SIGKILL every process that carries `tag` (no-op where there is no /proc)."""
    for _ in range(_ROUNDS):
        pids = tagged(tag)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
