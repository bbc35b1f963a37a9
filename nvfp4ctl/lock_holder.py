"""Who holds a lock file, written beside it by the holder, so that a process that gives up waiting can
name it in its one-line timeout (the build cache's entries, tune's dispatch table). The lock file itself
cannot hold this: filelock empties it on every open."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

UNKNOWN = "another process (not known which)"


@contextmanager
def holding(holder: Path, doing: str, building: str | None = None) -> Iterator[None]:
    """This process named as the holder (say_holder) while the lock just taken is held, and the holder file
    removed however the work ends: one left behind would name a holder long gone to the next who waits."""
    say_holder(holder, doing, building)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            holder.unlink()


def say_holder(holder: Path, doing: str, building: str | None = None) -> None:
    """Writes this process as the holder, `doing` what ("building k.cu (sm_90a)"). The host, as a shared
    cache's pids are each their machine's; the process's start time where /proc has it, as a pid is reused
    once it ends. `building` is kept too for an older nvfp4ctl sharing the cache, which reads that key
    alone. Best effort: a shared locks/ that refuses the file leaves the holder unknown, not the work
    stopped."""
    said: dict[str, object] = {"pid": os.getpid(), "host": socket.gethostname(), "doing": doing,
                               "since": time.strftime("%Y-%m-%d %H:%M:%S")}
    if building:
        said["building"] = building
    if (started := start_time(os.getpid())) is not None:
        said["started"] = started
    with contextlib.suppress(OSError):
        holder.unlink(missing_ok=True)  # a holder file another member left may not be theirs to write over
        holder.write_text(json.dumps(said) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Holder:
    """A lock's holder, as its holder file says."""

    pid: int
    host: str
    doing: str
    since: str
    started: int | None  # /proc/<pid>/stat's start time, where the holder's machine has one

    @property
    def here(self) -> bool:
        return self.host == socket.gethostname()


def holder_of(holder: Path) -> Holder | None:
    """Who holds a lock, as its holder file says; None where that is unknown or stale: a process of this
    machine that has ended, or whose pid another process has taken since (another start time). The lock
    then is someone's that wrote no holder file. Another machine's pid is not judged here: it is that
    machine's."""
    try:
        said = json.loads(holder.read_text(encoding="utf-8"))
        doing = str(said["doing"]) if "doing" in said else f"building {said['building']}"  # an older nvfp4ctl's
        started = said.get("started")
        found = Holder(int(said["pid"]), str(said["host"]), doing, str(said["since"]),
                       None if started is None else int(started))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if found.here and (not alive(found.pid) or _reused(found.pid, found.started)):
        return None
    return found


def holder_said(holder: Path) -> str:
    """Who holds a lock, as its holder wrote it; UNKNOWN where that is unknown or stale."""
    found = holder_of(holder)
    if found is None:
        return UNKNOWN
    return f"nvfp4ctl pid {found.pid} on {found.host}, {found.doing} since {found.since}"


def _reused(pid: int, started: int | None) -> bool:
    """Whether this machine's `pid` is another process than the one that started at `started`; False where
    either start time is unknown (an older holder file, no /proc)."""
    now = start_time(pid)
    return started is not None and now is not None and now != started


def started_by(pid: int, ancestor: int) -> bool:
    """Whether this machine's `pid` descends from `ancestor` (a child, or a child's child: a worker's own
    helper), by the parents /proc names; False where it cannot tell."""
    seen: set[int] = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        parent = _parent(pid)
        if parent is None:
            return False
        if parent == ancestor:
            return True
        pid = parent
    return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process, or no pid at all: not ours to judge
        return True
    return True


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields from the third (state) on; None where there is no such file (the process
    has ended, or no /proc: not Linux). The second, the command's name in parentheses, may hold spaces."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None
    return text[text.rfind(")") + 1:].split()


def start_time(pid: int) -> int | None:
    """When `pid` started, in clock ticks after boot (stat's 22nd field): what tells a process from a later
    one given the same pid. None where unknown."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields is not None else None
    except (IndexError, ValueError):
        return None


def _parent(pid: int) -> int | None:
    """`pid`'s parent (stat's 4th field); None where unknown."""
    fields = _stat_fields(pid)
    try:
        return int(fields[1]) if fields is not None else None
    except (IndexError, ValueError):
        return None
