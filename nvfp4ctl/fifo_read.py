"""Reading a FIFO as a file (`--task <(cat task.yml)`, `mkfifo f1`), never waiting for ever on one no process writes.

Two kinds, told apart by the link the path leads through:
- a process substitution's pipe (`/dev/fd/63`, a link to `pipe:[...]`) is open already: its writer is
  attached or has closed, so the read ends as a file's does, however slow the writer;
- a named FIFO in the filesystem has a writer only once some process opens it, which may never happen: one
  that no process opens for writing within FIFO_WRITER_WAIT_S is an OSError (ENXIO), and once one has, the
  read waits for it as a plain read would.
"""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path
from typing import TextIO

from nvfp4ctl.atomic_file import FIFO_READER_WAIT_S

# how long a named FIFO's writer may take to open its end, as long as the atomic writer waits for a reader
FIFO_WRITER_WAIT_S = FIFO_READER_WAIT_S
_LINKS_FOLLOWED = 40  # as many as the kernel follows in one path


def open_fifo_text(path: Path, encoding: str = "utf-8") -> TextIO:
    """The FIFO at `path`, opened to read as text: an anonymous pipe at once, a named FIFO once a process has
    opened it for writing (see the module's docstring)."""
    if anonymous_pipe(path):
        return open(path, encoding=encoding)  # the kernel waits for no writer on a pipe's open
    return open(_opened_once_a_writer_is(path), encoding=encoding)


def anonymous_pipe(path: Path) -> bool:
    """Whether `path` leads, through its links, to a pipe with no name (`/dev/fd/63` -> `pipe:[4026]`)."""
    current = os.fspath(path)
    for _ in range(_LINKS_FOLLOWED):
        try:
            target = os.readlink(current)
        except OSError:  # no link: a FIFO with a name in the filesystem
            return False
        if target.startswith("pipe:["):
            return True
        current = os.path.join(os.path.dirname(current), target)
    return False


def _opened_once_a_writer_is(path: Path) -> int:
    """A blocking read descriptor of the named FIFO at `path`, opened once a writer opened its end; an OSError
    (ENXIO) where none did within FIFO_WRITER_WAIT_S. The open is the kernel's wait for a writer, so it runs
    on a thread: a nonblocking open and a poll would tell a writer that opened and has sent nothing yet from
    none at all."""
    opened: list[int] = []
    failed: list[OSError] = []

    def open_to_read() -> None:
        try:
            opened.append(os.open(path, os.O_RDONLY))
        except OSError as error:
            failed.append(error)

    opener = threading.Thread(target=open_to_read, daemon=True)  # daemon: one left waiting never holds the exit
    opener.start()
    opener.join(FIFO_WRITER_WAIT_S)
    if not opener.is_alive():
        if failed:
            raise failed[0]
        return opened[0]
    try:  # the waiting open returns once a writer comes: one of ours, closed at once
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # the open has not reached the kernel yet: the daemon thread waits on, holding nothing
    opener.join(FIFO_WRITER_WAIT_S)
    for descriptor in opened:
        os.close(descriptor)
    raise OSError(errno.ENXIO, "no process opened it for writing", str(path))
