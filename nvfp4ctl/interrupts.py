"""`kill PID`, or the terminal going away, ends a command as Ctrl-C does.

Python's default for SIGTERM and SIGHUP is to die at once: no `finally`, no context manager. A check
or bench stopped that way (a CI timeout, a job scheduler, a closed ssh session) left its run without
a run-log line, and what the watched child had started in its process group (a build, a helper)
running. With these signals raising KeyboardInterrupt the worker closes (the child's whole group is
killed), the command ends with exit 130 and "interrupted" goes into the run log.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# SIGHUP: the terminal is gone (ssh dropped, the window closed)
STOP_SIGNALS = (signal.SIGTERM, *((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ()))


@contextmanager
def stop_signals_as_ctrl_c() -> Iterator[None]:
    """Inside the block SIGTERM and SIGHUP raise KeyboardInterrupt; the previous handlers are back after
    it. A signal the process was started to ignore (`nohup` ignores SIGHUP) stays ignored."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = {}
    try:
        for signum in STOP_SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, signal.default_int_handler)  # raises KeyboardInterrupt
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
