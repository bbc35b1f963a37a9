"""The timing core: GPU MODE's loop (eval_better_bench.py `_run_single_benchmark`), raw samples out.

Per repeat: synchronize, clear L2, record the start event, call the target once on each of the 50
input sets back to back, record the end event, synchronize; the sample is the elapsed time / 50.
The criterion decides when to stop. An optional `recheck` sees the repeat's outputs outside the
timed window (leaderboard mode). A repeat whose CPU issue outlasted its head start is timed again
(up to MAX_HOST_STALL_RETIMES per loop): the GPU may have idled waiting for a paused host, which
the leaderboard's long L2 clear hides. Statistics and formatting live elsewhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from nvfp4ctl.bench.flush import FIRST_HEAD_START_S, host_stalled, next_head_start
from nvfp4ctl.bench.stopping import StoppingCriterion
from nvfp4ctl.runner.child import is_cuda_error
from nvfp4ctl.runner.raised import raised_from


# Host pauses retimed per loop; past this many the pauses are the target's own (a wrapper that
# blocks), and its samples count as they are.
MAX_HOST_STALL_RETIMES = 20


class Flush(Protocol):
    holds_queue: bool

    def evict(self) -> None: ...
    def hold(self, seconds: float) -> None: ...


class Clock(Protocol):
    def synchronize(self) -> None: ...
    def pair(self) -> tuple[Any, Any]: ...
    def elapsed_ns(self, begin: Any, end: Any) -> float: ...


@dataclass(frozen=True)
class Samples:
    per_call_ns: list[float]  # one per repeat: event time / number of calls
    issue_ns: list[float]  # one per repeat: CPU time to issue the calls, per call
    reason: str  # why the criterion stopped (stopping.CONVERGED, ...)
    wall_s: float
    head_start_s: float  # the last hold before the start event
    host_stalls: int = 0  # repeats timed again: the CPU issued the batch more slowly than its hold


def time_batches(
    fn: Callable[[Any], Any],
    inputs: Sequence[Any],
    criterion: StoppingCriterion,
    flush: Flush,
    clock: Clock,
    recheck: Callable[[list[Any]], None] | None = None,
    on_batch: Callable[[float], None] | None = None,
    next_inputs: Callable[[], Sequence[Any]] | None = None,
) -> Samples:
    """`on_batch` hears of each sample kept (ns per call), outside the timed window: the job's progress.
    `next_inputs`, where given, makes each repeat's input sets before it (eval.py's leaderboard loop)."""
    criterion.reset()
    per_call: list[float] = []
    issue: list[float] = []
    head_start_s = FIRST_HEAD_START_S
    host_stalls = 0
    loop_start = time.perf_counter_ns()
    while not criterion.is_finished():
        if next_inputs is not None:
            inputs = next_inputs()
        clock.synchronize()
        outputs = []
        flush.evict()
        flush.hold(head_start_s)  # the CPU queues the whole batch before the start event fires
        begin, end = clock.pair()
        begin.record()
        issue_start = time.perf_counter_ns()
        try:
            for data in inputs:
                outputs.append(fn(data))
        except Exception as error:  # noqa: BLE001 - the target's own exception is a crash of the shape
            if is_cuda_error(error):
                raise
            raise raised_from(error) from error
        issue_ns = time.perf_counter_ns() - issue_start
        end.record()
        clock.synchronize()
        if recheck is not None:
            recheck(outputs)  # raises on a wrong result
        held_s, head_start_s = head_start_s, next_head_start(issue_ns / 1e9)
        if flush.holds_queue and host_stalled(issue_ns / 1e9, held_s) and host_stalls < MAX_HOST_STALL_RETIMES:
            host_stalls += 1
            continue
        per_call.append(clock.elapsed_ns(begin, end) / len(inputs))
        issue.append(issue_ns / len(inputs))
        criterion.add(per_call[-1], (time.perf_counter_ns() - loop_start) / 1e9)
        if on_batch is not None:
            on_batch(per_call[-1])
    return Samples(per_call, issue, criterion.reason or "", (time.perf_counter_ns() - loop_start) / 1e9, head_start_s,
                   host_stalls)
