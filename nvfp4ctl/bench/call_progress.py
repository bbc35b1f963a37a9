"""How far a bench_case job has come, as it reports to the parent (runner/progress.py), and what the
parent makes of it when the watchdog fires: a job whose calls still return is too slow for the timeout
(a large shape on the CPU, say), not stuck.

On the CPU every call is counted and timed as it returns (a call there is synchronous, and its timing
says nothing of the leaderboard's); on a GPU a call returns before its kernel ends, so only what a
synchronization proved counts: the correctness pass once checked (its calls, not its seconds: they hold
50 references, the checks and a first call's JIT), each timed batch, which alone gives the pace. Until
a pace is known nothing is said to be still running.

The job's seconds run from its start, as the watchdog's timeout does: the input sets made before the
first call count, and so do the correctness pass's checks left after its calls (a reference computed on
the CPU for each output). While the input sets are made the job reports each one: a job killed then had
not called the kernel yet, so it is too slow for the timeout, never a possible deadlock.

On the CPU the job need not wait for the watchdog: once the pace is known, a shape whose least work cannot
end within the timeout stops at once (CannotFinish), said as the watchdog would say it. The pace it judges by
is the fastest call after the job's first, which may carry a one-off cost (a lazy initialisation, a JIT), and it
judges only once CALLS_BEFORE_JUDGING such calls have returned and JUDGING_AFTER_SHARE of the timeout has passed
since the first returned: torch's warm-up on the CPU may slow the next calls too (60 ms each, then 0.4 ms), the
more so on a busy host, and one or two of them would stop a shape that fits. A shape truly too slow still stops
long before the watchdog's kill."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nvfp4ctl.runner import progress
from nvfp4ctl.words import plural, seconds_text

# A report later than this many times the expected wait for the next, plus a slack, means nothing
# returns any more: stuck, not slow. The slack covers what the pace does not show (reports sent at most
# every progress.REPORT_EVERY_S, a host's pause) and grows with the pace from MIN_SLACK_S up to SLACK_S:
# a fixed 10 s let a job of 50 ms calls that hung 8 s before the kill read as too slow, not stuck.
LATE_FACTOR = 3.0
MIN_SLACK_S = 2.0
SLACK_S = 10.0
CALLS_BEFORE_JUDGING = 3  # calls after the first that a CPU job's pace needs before it may stop the job
JUDGING_AFTER_SHARE = 0.1  # and the share of its timeout that must have passed since the first call returned
TIMEOUT_MARGIN = 1.25  # the --timeout suggested over the time the job may need at the pace measured
PASS = "correctness pass"
INPUTS = "making its input sets"  # before the first call: the harness's work, not the kernel's
PROFILE = "profiling"  # device_time's calls under the profiler: uncounted, so a kill there stays a possible deadlock


class CannotFinish(Exception):
    """A CPU job whose least work, at the pace of its calls, ends past the timeout: `progress` is where it stood."""

    def __init__(self, progress: CallProgress) -> None:
        super().__init__("the shape cannot end within its timeout")
        self.progress = progress


@dataclass(frozen=True)
class LoopBound:
    """What stops one loop of batches at the latest (bench/stopping.py): its repeats, its budget (the
    per-call mean × the samples) and its wall cap, which for the warm-up and timed loops follows the
    timeout (session.max_wall_s) and for the settle loop is its own length."""

    phase: str
    min_repeats: int
    max_repeats: int
    budget_s: float
    max_wall_s: float
    wall_from_timeout: bool

    @classmethod
    def of(cls, phase: str, criterion: Any, wall_from_timeout: bool) -> LoopBound:
        return cls(phase, criterion.min_repeats, criterion.max_repeats, criterion.budget_s, criterion.max_wall_s,
                   wall_from_timeout)

    def least_samples(self) -> int:
        return min(self.min_repeats, self.max_repeats)

    def most_s(self, per_call_s: float, sample_s: float, timeout_s: float) -> float:
        """The longest this loop runs at this pace: the first cap it reaches, plus one sample."""
        from nvfp4ctl.bench.session import max_wall_s

        wall_s = max_wall_s(timeout_s) if self.wall_from_timeout else self.max_wall_s
        by_budget = self.budget_s / per_call_s + 1 if per_call_s > 0 else math.inf
        by_wall = wall_s / sample_s + 1 if sample_s > 0 else math.inf
        samples = max(self.least_samples(), min(self.max_repeats, by_budget, by_wall) + 1)
        return samples * sample_s


@dataclass(frozen=True)
class CallProgress:
    phase: str  # "correctness pass", "warm-up", "settle", "timing"
    calls: int  # calls known to have returned in this job
    paced_calls: int  # of those, the calls whose time was measured: each CPU call, each synchronized batch's
    paced_s: float  # the seconds those took
    calls_per_sample: int  # a sample is one call on each input set
    calls_needed: int  # the fewest calls the job makes: the correctness pass and the least samples of each loop
    elapsed_s: float  # seconds since the job began
    next_within_s: float  # how long the next report may take (a call on the CPU, a batch on a GPU)
    sample_wall_s: float = 0.0  # the last batch's wall time, batch to batch (0 before one returned)
    phase_began_s: float = 0.0  # when the loop under way began, in the job's seconds
    loops: tuple[LoopBound, ...] = ()  # the job's loops of batches, in their order
    inputs_s: float = 0.0  # the seconds its input sets took to make, before the first call (in elapsed_s)
    checks: int = 0  # outputs of the correctness pass checked against their references
    checked_s: float = 0.0  # the seconds those checks took
    sets_made: int = 0  # input sets made so far, while the phase is INPUTS (a sample's calls: one on each)
    first_call_s: float | None = None  # the pass's first call, made on the first set before the rest: its seconds
    stop_bound_s: float | None = None  # a CPU job that stopped itself (CannotFinish): the least time its bound found

    @property
    def per_call_s(self) -> float:
        return self.paced_s / self.paced_calls if self.paced_calls else 0.0

    @property
    def sample_s(self) -> float:
        """A sample's wall time: a batch's as measured, else its calls' (the CPU's correctness pass)."""
        return self.sample_wall_s or self.per_call_s * self.calls_per_sample

    def describe(self) -> str:
        """For the progress line: "correctness pass, 12 of at least 350 calls, 1.80 s per call"."""
        if self.phase == INPUTS:
            return f"{self.phase}, {self.sets_made} of {self.calls_per_sample}"
        if not self.calls:
            return self.phase
        counted = (f"{self.calls} of at least {self.calls_needed} calls" if self.calls < self.calls_needed
                   else f"{self.calls} calls")
        paced = f", {duration_text(self.per_call_s)} per call" if self.paced_calls else ""
        return f"{self.phase}, {counted}{paced}"

    def still_running(self, silent_s: float) -> bool:
        """Whether the job was still making progress `silent_s` after this report; never before a pace was
        measured (on a GPU, before a timed batch returned): a kernel stuck in its first batch is not slow."""
        return self.paced_calls > 0 and silent_s <= late_after_s(self.next_within_s)

    def checks_left_s(self) -> float:
        """What the correctness pass's checks not made yet will take: at the pace of those made, else (none
        made yet) a call's, as a reference computes the product the call does; none past the pass."""
        if self.phase != PASS:
            return 0.0
        per_check_s = self.checked_s / self.checks if self.checks else self.per_call_s
        return max(0, self.calls_per_sample - self.checks) * per_check_s

    def expected_s(self) -> float:
        """The least time the job needs in all, at the pace measured so far: by a sample's wall time (on a GPU
        a batch's, with its L2 clear and hold, as the sample figure beside it), not the kernel's own time; the
        input sets' making and the pass's checks included."""
        pace = self.sample_s / self.calls_per_sample if self.calls_per_sample else self.per_call_s
        return self.elapsed_s + max(0, self.calls_needed - self.calls) * pace + self.checks_left_s()

    def least_in_all_s(self) -> float:
        """The least time the message says: a CPU job that stopped itself says what its bound judged by (checks
        not made counting nothing), so the figure said is the one found past the timeout; else expected_s."""
        return self.expected_s() if self.stop_bound_s is None else self.stop_bound_s

    def most_s(self, timeout_s: float) -> float:
        """The longest the job may run at the pace measured so far, its loops' wall caps set from `timeout_s`."""
        phases = [loop.phase for loop in self.loops]
        if self.phase in phases:
            began, ahead = self.phase_began_s, self.loops[phases.index(self.phase):]
        else:  # still in the correctness pass: its calls, then its checks
            began = self.elapsed_s + max(0, self.calls_per_sample - self.calls) * self.per_call_s + self.checks_left_s()
            ahead = self.loops
        return began + sum(loop.most_s(self.per_call_s, self.sample_s, timeout_s) for loop in ahead)


def late_after_s(next_within_s: float) -> float:
    """The silence past which a job whose next report was due within `next_within_s` has stopped: a hang
    well past its pace is a possible deadlock however close to the kill it began."""
    return LATE_FACTOR * next_within_s + min(SLACK_S, max(MIN_SLACK_S, next_within_s))


def suggested_timeout_s(timeout_s: float, last: CallProgress) -> int:
    """The least --timeout (a multiple of 10 s, above the one that ran out) under which the job fits with
    TIMEOUT_MARGIN to spare, its loops running to their caps; the loops' wall caps grow with the timeout
    up to the leaderboard's 120 s, so each candidate is judged with its own."""
    first = (math.floor(timeout_s / 10) + 1) * 10
    ceiling = least_timeout_s(timeout_s, last.most_s(math.inf))
    return next(t for t in range(first, ceiling + 10, 10) if TIMEOUT_MARGIN * last.most_s(t) <= t)


def least_timeout_s(timeout_s: float, needed_s: float) -> int:
    """The --timeout to suggest for work that needs `needed_s` at the pace measured: a multiple of 10 s above
    the one that ran out, with TIMEOUT_MARGIN to spare (check's messages too)."""
    first = (math.floor(timeout_s / 10) + 1) * 10
    return max(first, math.ceil(TIMEOUT_MARGIN * needed_s / 10) * 10)


def too_slow(label: str, timeout_s: float, last: CallProgress, smaller_listed: bool = True) -> str:
    """The watchdog's message for a job whose calls were still returning. `smaller_listed`: the task lists a shape
    of less work than this one, so a smaller --shape is advice that applies (else only --timeout is)."""
    samples = max(0, (last.calls_needed - last.calls_per_sample) // last.calls_per_sample)
    suggested = suggested_timeout_s(timeout_s, last)
    return (f"{label} is too slow for the {seconds_text(timeout_s)} timeout, not stuck: {duration_text(last.per_call_s)} per call"
            f" ({plural(last.calls, 'call')} returned); a sample is {plural(last.calls_per_sample, 'call')}"
            f" ({duration_text(last.sample_s)}), and the shape needs at least"
            f" {last.calls_needed} calls (the correctness pass's {last.calls_per_sample}, then"
            f" {plural(samples, 'sample')}), about {duration_text(last.least_in_all_s())} in all{_inputs_part(last)}, but its loops repeat"
            f" until their noise, budget or repeat limits or their wall caps (the timed loop's is 80% of the"
            f" timeout, at most 120 s): up to about {duration_text(last.most_s(suggested))};"
            f" {_advice(f'--timeout {suggested} or more', smaller_listed)}")


def too_slow_making_inputs(label: str, timeout_s: float, last: CallProgress, smaller_listed: bool = True) -> str:
    """The watchdog's message for a job killed while it made its input sets: the kernel was not called yet.
    `smaller_listed` as too_slow's."""
    total = last.calls_per_sample
    called = last.first_call_s is not None
    if not last.sets_made or (called and last.sets_made == 1):
        which = "second" if called else "first"
        return (f"{label} is too slow for the {seconds_text(timeout_s)} timeout, not stuck: it was still making the {which} of its"
                f" {plural(total, 'input set')}, {_first_call_part(last)};"
                f" {_advice('a larger --timeout', smaller_listed)}")
    per_set_s = last.inputs_s / last.sets_made
    making_s = per_set_s * total
    suggested = least_timeout_s(timeout_s, making_s + (last.first_call_s or 0.0))
    return (f"{label} is too slow for the {seconds_text(timeout_s)} timeout, not stuck: it was still making its input sets"
            f" ({last.sets_made} of {total} made in {duration_text(last.inputs_s)}, {duration_text(per_set_s)} each),"
            f" {_first_call_part(last)}; making all {total} takes about {duration_text(making_s)}, and its calls come on top;"
            f" {_advice(f'--timeout {suggested} or more', smaller_listed)}")


def smaller_listed(problem: Any, case: Any, listed: tuple[Any, ...]) -> bool:
    """Whether a smaller --shape is advice for a shape too slow for its timeout (bench's, check's): the task lists
    one of less work (fewer flops), or lists none to judge by. The task's smallest (128x256x256 of nvfp4_gemm's)
    has none to go to."""
    return not listed or any(problem.flops(other) < problem.flops(case) for other in listed)


def _advice(timeout: str, smaller_listed: bool) -> str:
    """What to change: a smaller --shape only where the task lists one (timing this shape needs the timeout)."""
    return f"time a smaller --shape, or give {timeout}" if smaller_listed else f"give {timeout}"


def _first_call_part(last: CallProgress) -> str:
    if last.first_call_s is None:
        return "before the kernel's first call"
    return f"after the kernel's first call, on the first set ({duration_text(last.first_call_s)})"


def _inputs_part(last: CallProgress) -> str:
    """The input sets' making, named where it took long enough to matter to the timeout."""
    return f" (making its input sets took {duration_text(last.inputs_s)})" if last.inputs_s >= 1.0 else ""


class CallTracker:
    """The child's side: counts what returned and reports it (at most every progress.REPORT_EVERY_S)."""

    def __init__(self, calls_per_sample: int, loops: tuple[LoopBound, ...], started: float | None = None,
                 timeout_s: float | None = None) -> None:
        """`started`: when the job began (time.perf_counter), its input sets made since; None: now. `timeout_s`:
        the watchdog's, for a job that stops itself (CannotFinish) once its pace says it cannot end in time."""
        now = time.perf_counter()
        self.timeout_s = timeout_s
        self._fastest_later_s: float | None = None  # per call, of the calls after the job's first
        self._first_paced = (0, 0.0)  # (calls, seconds) of the job's first paced return
        self._first_paced_at = 0.0  # when it returned (time.perf_counter)
        self.first_call_s: float | None = None  # the pass's first call, on the first set before the rest are made
        self._first_call_began = 0.0
        self.calls_per_sample = calls_per_sample
        self.loops = loops
        self.calls_needed = calls_per_sample * (1 + sum(loop.least_samples() for loop in loops))
        self.phase = PASS
        self.calls = 0
        self.paced_calls = 0
        self.paced_s = 0.0
        self.next_within_s = 0.0
        self.sample_wall_s = 0.0
        self.checks = 0
        self.checked_s = 0.0
        self.sets_made = 0
        self._started = now if started is None else started  # the watchdog's timeout runs from the job's start
        self._inputs_s = now - self._started
        self._phase_began = self._started
        self._last_batch = self._started

    def making_inputs(self) -> None:
        """The job starts making its input sets (the tracker made at the job's start): said at once, so that a
        kill before the first call says what the job was doing."""
        self.phase = INPUTS
        self._report(0.0, now=True)

    def made_input_set(self, seconds: float) -> None:
        """One input set made, in `seconds`: the next may take as long."""
        self.sets_made += 1
        self._report(seconds)

    def first_call(self) -> None:
        """The pass's first call begins, on the first input set alone: a kill in it is the kernel's (stuck, where
        nothing returned), not the making of the sets."""
        self.phase = PASS
        self._first_call_began = time.perf_counter()
        self._inputs_s = self._first_call_began - self._started  # the first set's making, so far
        self._report(0.0, now=True)

    def first_call_returned(self) -> None:
        """The first call returned: the rest of the input sets are made, its seconds not theirs."""
        self.first_call_s = time.perf_counter() - self._first_call_began
        self.phase = INPUTS
        self._report(0.0, now=True)

    def inputs_made(self, then: str = PASS) -> None:
        """Every input set made: `then` begins (bench_case's correctness pass, device_time's PROFILE), and the
        making's seconds count in the job's time."""
        self.phase = then
        self._inputs_s = time.perf_counter() - self._started - (self.first_call_s or 0.0)
        self._report(0.0, now=True)

    def counting(self, target: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """`target`, each call counted as it returns: for the correctness pass on the CPU, where calls block
        (never around timed calls, which it would slow down)."""

        def counted(data: Any) -> Any:
            began = time.perf_counter()
            output = target(data)
            took = time.perf_counter() - began
            self.returned(1, took, next_within_s=took)
            return output

        return counted

    def checked(self, seconds: float) -> None:
        """One output of the correctness pass checked against its reference, which took `seconds`."""
        self.checks += 1
        self.checked_s += seconds
        self._report(max(seconds, self.next_within_s))

    def returned(self, calls: int, seconds: float, next_within_s: float) -> None:
        """`calls` returned in `seconds`, a measured pace."""
        if self.paced_calls:  # the first call may carry a one-off cost: it sets no pace to judge by
            per_call_s = seconds / calls
            self._fastest_later_s = min(per_call_s, self._fastest_later_s or per_call_s)
        else:
            self._first_paced = (calls, seconds)
            self._first_paced_at = time.perf_counter()
        self.calls += calls
        self.paced_calls += calls
        self.paced_s += seconds
        self._report(next_within_s)
        if self.timeout_s is not None and self._pace_judges() and (least_s := self.least_s()) > self.timeout_s:
            # the message's pace leaves the first call out too: a JIT's 20 s would make it ask for hours
            first_calls, first_s = self._first_paced
            raise CannotFinish(dataclasses.replace(self._progress(next_within_s), paced_calls=self.paced_calls - first_calls,
                                                   paced_s=self.paced_s - first_s, stop_bound_s=least_s))

    def _pace_judges(self) -> bool:
        """Whether enough calls after the first, over enough of the timeout, returned for their pace to stop the job."""
        later_calls = self.paced_calls - self._first_paced[0]
        since_first_s = time.perf_counter() - self._first_paced_at
        return (later_calls >= CALLS_BEFORE_JUDGING and self.timeout_s is not None
                and since_first_s >= JUDGING_AFTER_SHARE * self.timeout_s)

    def least_s(self) -> float:
        """The least time the job needs in all, every call left as fast as its fastest call after the first,
        and each check left as fast as those made (none made yet: nothing, as a check's cost is not the call's:
        a slow submission's reference is quick); 0 before such a call returned."""
        if self._fastest_later_s is None:
            return 0.0
        pace = self._fastest_later_s
        elapsed_s = time.perf_counter() - self._started
        checks_left = self.calls_per_sample - self.checks if self.phase == PASS else 0
        per_check_s = min(pace, self.checked_s / self.checks) if self.checks else 0.0
        return elapsed_s + max(0, self.calls_needed - self.calls) * pace + max(0, checks_left) * per_check_s

    def passed(self, calls: int) -> None:
        """A GPU's correctness pass checked: its calls are known to have ended, and give no pace."""
        self.calls += calls
        self._report(self.next_within_s)

    def enter(self, phase: str) -> None:
        """A loop of batches starts: its first report comes after a whole sample."""
        self.phase = phase
        self._phase_began = self._last_batch = time.perf_counter()
        self._report(max(self.per_sample_s(), self.sample_wall_s), now=True)

    def batch_done(self, per_call_ns: float) -> None:
        """A batch synchronized: a sample's calls returned (on a GPU the first proof that its kernels ended).
        Called outside the timed window."""
        now = time.perf_counter()
        self.sample_wall_s, self._last_batch = now - self._last_batch, now
        seconds = per_call_ns * 1e-9 * self.calls_per_sample
        self.returned(self.calls_per_sample, seconds,
                      next_within_s=max(seconds, self.sample_wall_s, self.per_sample_s()))

    def per_sample_s(self) -> float:
        return self.paced_s / self.paced_calls * self.calls_per_sample if self.paced_calls else 0.0

    def _report(self, next_within_s: float, now: bool = False) -> None:
        self.next_within_s = next_within_s
        progress.report(self._progress(next_within_s), now=now)

    def _progress(self, next_within_s: float) -> CallProgress:
        elapsed_s = time.perf_counter() - self._started
        # still making them: all the time so far, but the first call's
        inputs_s = elapsed_s - (self.first_call_s or 0.0) if self.phase == INPUTS else self._inputs_s
        return CallProgress(self.phase, self.calls, self.paced_calls, self.paced_s, self.calls_per_sample,
                            self.calls_needed, elapsed_s, next_within_s, self.sample_wall_s,
                            self._phase_began - self._started, self.loops, inputs_s, self.checks, self.checked_s,
                            self.sets_made, self.first_call_s)


def duration_text(value: float) -> str:
    """"12 s", "1.80 s", "2.50 ms", "3.20 µs": a duration in a watchdog's message (check's too)."""
    if value >= 10:
        return f"{value:.0f} s"
    if value >= 0.1:
        return f"{value:.2f} s"
    if value >= 1e-4:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.2f} µs"
