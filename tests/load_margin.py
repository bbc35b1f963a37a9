"""Wall-clock bounds on a latency (how soon a hung child is killed) that hold on a loaded machine.

Such a bound cannot become a CPU-time budget: the wait itself is what it guards. But every step of
that wait (the parent waking from its poll, the killed child being reaped) queues behind the other
processes of `pytest -n 16` or a busy CI runner, so the margin over the configured timeout grows
with the load measured around the wait; on an idle machine the bound stays tight."""

from __future__ import annotations

import os
import time

_SAMPLE_CPU_S = 0.05


def slowdown() -> float:
    """How many times longer CPU work takes in wall time here and now than on an idle core (>= 1):
    the larger of a short busy loop's wall / CPU seconds (the load right now) and the run queue per
    usable core over the last minute (the load the loop's 50 ms may have missed)."""
    wall, cpu = time.perf_counter(), time.thread_time()
    while time.thread_time() - cpu < _SAMPLE_CPU_S:
        pass
    measured = (time.perf_counter() - wall) / (time.thread_time() - cpu)
    queued = os.getloadavg()[0] / len(os.sched_getaffinity(0))
    return max(1.0, measured, queued)


def latency_bound(expected_s: float, margin_s: float, *slowdowns: float) -> float:
    """`expected_s` plus `margin_s` stretched by the worst of `slowdowns` (measured before and after
    the wait, as the load may change during it)."""
    return expected_s + margin_s * max(1.0, *slowdowns)
