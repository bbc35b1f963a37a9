"""Reading a FIFO as a file (`--task <(cat task.yml)`) without waiting for ever on one that no process writes."""

from __future__ import annotations

import errno
import os
import select
from pathlib import Path
from typing import TextIO

from nvfp4ctl.atomic_file import FIFO_READER_WAIT_S

# how long a FIFO's writer may take to open its end and write, as long as the atomic writer waits for a reader
FIFO_WRITER_WAIT_S = FIFO_READER_WAIT_S


def open_fifo_text(path: Path, encoding: str = "utf-8") -> TextIO:
    """The FIFO at `path`, opened to read as text once a writer has written to it (or came and closed it). A
    plain open would wait for a writer for ever; one that has written nothing within FIFO_WRITER_WAIT_S is an
    OSError (ENXIO, "a FIFO that no process writes")."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # at once, writer or not
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        # POLLHUP too where a writer came and went having written nothing: an empty file, read as one
        if not poller.poll(FIFO_WRITER_WAIT_S * 1000):
            raise OSError(errno.ENXIO, "a FIFO that no process writes", str(path))
        os.set_blocking(fd, True)  # a writer slow to fill the pipe is waited for, as a plain read would
        return open(fd, encoding=encoding)
    except BaseException:
        os.close(fd)
        raise
