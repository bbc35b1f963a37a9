"""`kill PID` ends a command as Ctrl-C does.

Python's default for SIGTERM is to die at once: no `finally`, no context manager. A check or bench
stopped that way (a CI timeout, a job scheduler) left its run without a run-log line, and what the
watched child had started in its process group (a build, a helper) running. With SIGTERM raising
KeyboardInterrupt the worker closes (the child's whole group is killed), the command ends with
exit 130 and "interrupted" goes into the run log.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """Inside the block SIGTERM raises KeyboardInterrupt; the previous handler is back after it."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)  # raises KeyboardInterrupt
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
