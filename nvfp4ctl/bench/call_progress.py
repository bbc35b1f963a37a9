"""How far a bench_case job has come, as it reports to the parent (runner/progress.py), and what the
parent makes of it when the watchdog fires: a job whose calls still return is too slow for the timeout
(a large shape on the CPU, say), not stuck.

On the CPU every call is counted as it returns (a call there is synchronous, and its timing says nothing
of the leaderboard's); on a GPU a call returns before its kernel ends, so only what a synchronization
proved counts: the correctness pass once checked, each timed batch."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nvfp4ctl.runner import progress
from nvfp4ctl.words import plural

# A report later than this many times the expected wait for the next (plus SLACK_S: a reference
# computed, inputs made) means nothing returns any more: stuck, not slow.
LATE_FACTOR = 3.0
SLACK_S = 10.0
TIMEOUT_MARGIN = 1.25  # the --timeout suggested over the time the job is expected to need


@dataclass(frozen=True)
class CallProgress:
    phase: str  # "correctness pass", "warm-up", "settle", "timing"
    calls: int  # calls known to have returned in this job
    call_s: float  # the seconds those calls took
    calls_per_sample: int  # a sample is one call on each input set
    calls_needed: int  # the fewest calls the job makes: the correctness pass and the least samples of each loop
    elapsed_s: float  # seconds since the job began
    next_within_s: float  # how long the next report may take (a call on the CPU, a batch on a GPU)

    @property
    def per_call_s(self) -> float:
        return self.call_s / self.calls if self.calls else 0.0

    def describe(self) -> str:
        """For the progress line: "correctness pass, 12 of at least 350 calls, 1.80 s per call"."""
        if not self.calls:
            return self.phase
        counted = (f"{self.calls} of at least {self.calls_needed} calls" if self.calls < self.calls_needed
                   else f"{self.calls} calls")
        return f"{self.phase}, {counted}, {_seconds(self.per_call_s)} per call"

    def still_running(self, silent_s: float) -> bool:
        """Whether the job was still making progress `silent_s` after this report."""
        return self.calls > 0 and silent_s <= LATE_FACTOR * self.next_within_s + SLACK_S

    def expected_s(self) -> float:
        """The least time the job needs in all, at the pace measured so far."""
        return self.elapsed_s + max(0, self.calls_needed - self.calls) * self.per_call_s


def too_slow(label: str, timeout_s: float, last: CallProgress) -> str:
    """The watchdog's message for a job whose calls were still returning."""
    samples = max(0, (last.calls_needed - last.calls_per_sample) // last.calls_per_sample)
    suggested = math.ceil(TIMEOUT_MARGIN * last.expected_s() / 10.0) * 10
    return (f"{label} is too slow for the {timeout_s:g} s timeout, not stuck: {_seconds(last.per_call_s)} per call"
            f" ({plural(last.calls, 'call')} returned); a sample is {plural(last.calls_per_sample, 'call')}"
            f" ({_seconds(last.calls_per_sample * last.per_call_s)}), and the shape needs at least"
            f" {last.calls_needed} calls (the correctness pass's {last.calls_per_sample}, then"
            f" {plural(samples, 'sample')}), about"
            f" {_seconds(last.expected_s())} in all; time a smaller --shape, or give --timeout {suggested:g} or more")


class CallTracker:
    """The child's side: counts what returned and reports it (at most every progress.REPORT_EVERY_S)."""

    def __init__(self, calls_per_sample: int, calls_needed: int) -> None:
        self.calls_per_sample = calls_per_sample
        self.calls_needed = calls_needed
        self.phase = "correctness pass"
        self.calls = 0
        self.call_s = 0.0
        self.next_within_s = 0.0
        self._started = time.perf_counter()

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
        self._report(max(seconds, self.next_within_s))

    def returned(self, calls: int, seconds: float, next_within_s: float) -> None:
        self.calls += calls
        self.call_s += seconds
        self._report(next_within_s)

    def enter(self, phase: str) -> None:
        """A loop of batches starts: its first report comes after a whole sample."""
        self.phase = phase
        self._report(self.per_sample_s(), now=True)

    def batch_done(self, per_call_ns: float) -> None:
        """A batch synchronized: a sample's calls returned (on a GPU the first proof that its kernels ended)."""
        seconds = per_call_ns * 1e-9 * self.calls_per_sample
        self.returned(self.calls_per_sample, seconds, next_within_s=max(seconds, self.per_sample_s()))

    def per_sample_s(self) -> float:
        return self.call_s / self.calls * self.calls_per_sample if self.calls else 0.0

    def _report(self, next_within_s: float, now: bool = False) -> None:
        self.next_within_s = next_within_s
        progress.report(CallProgress(self.phase, self.calls, self.call_s, self.calls_per_sample, self.calls_needed,
                                     time.perf_counter() - self._started, next_within_s), now=now)


def _seconds(value: float) -> str:
    if value >= 10:
        return f"{value:.0f} s"
    if value >= 0.1:
        return f"{value:.2f} s"
    return f"{value * 1e3:.2f} ms"
