"""Putting a run's line into MEMORY.md while an editor may be saving it in place.

Editors such as nano and VS Code save in place: they truncate the file, then write the whole text. A copy
moved over the file (os.replace) from a read made between the two is the truncated text plus the line, and
the editor's write then goes to the old file, which nothing names any more: the notes were lost. So a line
that goes at the end of the file is appended to the file itself (O_APPEND, one write): an editor saving at the
same time overwrites that line at worst, never the notes, and hard links stay linked. A line that must go
before a section of the user's still replaces the file, but only while the file is the one read.
"""

from __future__ import annotations

import os
import stat
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.runlog.files import _previous_bytes


class ChangedWhileWritten(Exception):
    """MEMORY.md changed between the read and the write (an editor saving it): the line is not put in."""


@dataclass(frozen=True)
class ReadFile:
    """MEMORY.md's bytes and the status of the file they were read from (None: no regular file was read,
    as for one not there yet or a device)."""

    data: bytes
    status: os.stat_result | None
    mode: int | None = None  # the st_mode found (a file, a device, a FIFO, a folder); None: nothing was there


def read_whole(memory: Path) -> ReadFile:
    """`memory`'s bytes, with the status that goes with them; ChangedWhileWritten where the file changed
    during the read."""
    try:
        mode = memory.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    if mode is None or not stat.S_ISREG(mode):  # none yet, a device or a FIFO (never opened to be read), a folder
        return ReadFile(_previous_bytes(memory), None, mode)
    with open(memory, "rb") as handle:
        before = os.fstat(handle.fileno())
        data = handle.read()
        after = os.fstat(handle.fileno())
    if not _same_file(before, after) or len(data) != after.st_size:
        raise ChangedWhileWritten(f"{memory} changed while it was read")
    return ReadFile(data, after, after.st_mode)


def _same_file(one: os.stat_result, other: os.stat_result) -> bool:
    """Whether two statuses are of one file with the same size and time of change (an editor's save
    changes the time even where it keeps the size)."""
    return (os.path.samestat(one, other) and one.st_size == other.st_size
            and one.st_mtime_ns == other.st_mtime_ns)


def append_in_place(memory: Path, read: ReadFile, tail: bytes) -> None:
    """`tail` appended to the file `read` was read from, in one write; ChangedWhileWritten, nothing
    written, where `memory` is no longer that file as it was read. A write that fails part-way (a full
    disk, Ctrl-C) takes back what it wrote where nothing else has written since."""
    assert read.status is not None
    fd = os.open(memory, os.O_WRONLY | os.O_APPEND)  # through a symlink, to the file it names
    try:
        if not _same_file(os.fstat(fd), read.status):
            raise ChangedWhileWritten(f"{memory} changed while it was written")
        written = 0
        try:
            while written < len(tail):
                written += os.write(fd, tail[written:])
        except BaseException:
            with suppress(OSError):
                if written and os.fstat(fd).st_size == read.status.st_size + written:
                    os.ftruncate(fd, read.status.st_size)
            raise
    finally:
        os.close(fd)


def still_the_file_read(memory: Path, read: ReadFile) -> None:
    """ChangedWhileWritten where `memory` is no longer the file `read` came from, as it was read (or is
    there now where none was): called right before a new copy replaces it."""
    try:
        now: os.stat_result | None = os.stat(memory)
    except FileNotFoundError:
        now = None
    if now is None and read.status is None:
        return
    if now is None or read.status is None or not _same_file(now, read.status):
        raise ChangedWhileWritten(f"{memory} changed while it was written")
