"""A job's progress, from the child to the parent, so the watchdog can tell a job that runs on from one
that is stuck: a job that knows work has finished (a call returned, a batch synchronized) calls
`report(value)`; in a child that sends ("progress", value) to the parent, which keeps the job's latest
value and when it came (`Worker`, `ChildTimeout.progress`). Outside a child (a test calling a job
directly) it does nothing. `value` is the job's own picklable record; the runner does not read it."""

from __future__ import annotations

import time
from multiprocessing.connection import Connection
from typing import Any

# a job may report after every call: the parent needs the latest news, not every one of them
REPORT_EVERY_S = 0.5

_channel: Connection | None = None
_last_sent = float("-inf")


def attach(conn: Connection) -> None:
    """The child's pipe to the parent (child_main, once)."""
    global _channel
    _channel = conn


def report(value: Any, *, now: bool = False) -> None:
    """Tell the parent `value`, unless a report went less than REPORT_EVERY_S ago (`now`: whatever the time)."""
    global _last_sent
    if _channel is None:
        return
    at = time.monotonic()
    if not now and at - _last_sent < REPORT_EVERY_S:
        return
    _last_sent = at
    _channel.send(("progress", value))
