"""What the check job tells the parent while a test runs (runner/progress.py), and what a kill means then.

A test is up to three calls of the kernel (the first, then the anti-cache probe's refill and fresh tuple),
each in four phases: making its inputs, computing the reference, the call itself, comparing its output. The
job says when each phase begins and how long those that ended took. A kill outside a call is the harness
too slow for the timeout, not the kernel; a kill in a call after an earlier call returned (at bench's pace
rule: not far past that call's time) is the kernel too slow, not stuck. Only a call that never came back
at a pace seen is a possible deadlock. The first call includes any JIT compile (Triton, CuTe DSL), so the
calls after it give the pace where one returned; a long first call alone gives none to trust, and a kill
then names both readings. The parent unpickles these records: this module stays importable without torch."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from nvfp4ctl.bench.call_progress import SLACK_S, duration_text, late_after_s, least_timeout_s
from nvfp4ctl.runner import progress
from nvfp4ctl.words import seconds_text

MAKING_INPUTS = "making its inputs"
REFERENCE = "computing the reference"
CALLING = "calling the kernel"
COMPARING = "comparing the output"
PHASES = (MAKING_INPUTS, REFERENCE, CALLING, COMPARING)  # each call's, in their order
# A first call longer than this (bench's slack) may have spent it compiling (Triton, CuTe DSL JIT), which the
# calls after it skip: its time alone is no pace to call a later call slow rather than stuck by.
COMPILE_SUSPECT_S = SLACK_S


@dataclass(frozen=True)
class CheckProgress:
    phase: str  # one of PHASES
    elapsed_s: float  # since the job began, when this phase began (the watchdog's timeout counts from there too)
    call: int = 1  # the call this phase serves, 1-based: 2 and 3 are the anti-cache probe's
    calls: int = 1  # the calls the test makes: 3 with the probe, else 1
    took: tuple[tuple[str, float], ...] = ()  # each phase that ended so far and its seconds, in their order

    def longest_s(self, phase: str) -> float | None:
        """The longest an ended `phase` took, None where none ended."""
        seconds = [s for p, s in self.took if p == phase]
        return max(seconds) if seconds else None

    def call_times(self) -> list[float]:
        """The seconds of each kernel call that returned, the first first."""
        return [s for p, s in self.took if p == CALLING]

    def call_pace_s(self) -> float | None:
        """A kernel call's time at the pace seen: the longest of the calls after the first where one returned
        (the first includes any JIT compile), else the first's; None before a call returned."""
        calls = self.call_times()
        if len(calls) > 1:
            return max(calls[1:])
        return calls[0] if calls else None

    def needed_s(self, timeout_s: float) -> float:
        """The least the test needs in all at the pace seen: the time to this phase's start, this phase at the
        longest it took before (a call at call_pace_s) or as long as it ran until the kill, each phase left at
        the longest its kind took, each call left at call_pace_s (a kind never ended counts nothing)."""
        ran_s = max(0.0, timeout_s - self.elapsed_s)
        position = (self.call - 1) * len(PHASES) + PHASES.index(self.phase)
        ahead = [PHASES[i % len(PHASES)] for i in range(position + 1, self.calls * len(PHASES))]
        return self.elapsed_s + max(ran_s, self._phase_s(self.phase)) + sum(self._phase_s(phase) for phase in ahead)

    def _phase_s(self, phase: str) -> float:
        return (self.call_pace_s() if phase == CALLING else self.longest_s(phase)) or 0.0

    def describe(self) -> str:
        """What is under way, in the kill message's words: the progress bar's news (as bench's CallProgress
        says its own), e.g. "making its inputs", "computing the reference of call 2 of 3 (the anti-cache
        probe's)"."""
        if self.call == 1:
            return self.phase
        if self.phase == MAKING_INPUTS:
            return "making the anti-cache probe's inputs"
        if self.phase == CALLING:
            return f"calling the kernel again, call {self.call} of {self.calls} (the anti-cache probe's)"
        return f"{self.phase} of call {self.call} of {self.calls} (the anti-cache probe's)"


@dataclass
class TestPhases:
    """The child's side: says each phase as it begins, with the seconds of those that ended."""

    calls: int
    started: float = field(default_factory=time.perf_counter)  # the job's start, as the watchdog's timeout
    took: list[tuple[str, float]] = field(default_factory=list)

    @contextmanager
    def phase(self, phase: str, call: int) -> Iterator[None]:
        began = time.perf_counter()
        progress.report(CheckProgress(phase, began - self.started, call, self.calls, tuple(self.took)), now=True)
        yield
        self.took.append((phase, time.perf_counter() - began))


def timeout_said(test: str, timeout_s: float, last: CheckProgress, smaller_listed: bool = True) -> str | None:
    """The watchdog's message for a kill in `test` ("test 2 (m=… n=… k=…)") whose last report was `last`;
    None for a call that never came back where one returned before it (past bench's late_after_s at that
    call's pace), or never returned at all: a possible deadlock. `smaller_listed`: the task lists a shape of
    less work than this test's (bench.call_progress.smaller_listed), so a smaller --shape is advice that applies."""
    if last.phase != CALLING:
        return _not_the_kernel(test, timeout_s, last, smaller_listed)
    per_call_s = last.call_pace_s()
    ran_s = timeout_s - last.elapsed_s
    if per_call_s is None or ran_s > late_after_s(per_call_s):
        return None
    needed_s = last.needed_s(timeout_s)
    suggested = least_timeout_s(timeout_s, needed_s)
    calls = last.call_times()
    if len(calls) == 1 and calls[0] > COMPILE_SUSPECT_S:
        return (f"{test}: call {last.call} of {last.calls} (the anti-cache probe's) ran {duration_text(ran_s)} until the"
                f" {seconds_text(timeout_s)} timeout, where the first call returned in {duration_text(calls[0])}: too slow"
                f" for the timeout at that pace (about {needed_s:.0f} s in all), or a possible deadlock, as the first call"
                " may have included a compile (Triton, CuTe DSL) that later calls skip; the child was killed; give"
                f" --timeout {suggested} or more to tell which, or --no-probe")
    pace = " after the first" if len(calls) > 1 else ""
    return (f"{test}: too slow for the {seconds_text(timeout_s)} timeout, not stuck: {duration_text(per_call_s)} per call{pace},"
            f" and the anti-cache probe makes {last.calls} calls per test (call {last.call} was under way, the"
            f" earlier returned), about {needed_s:.0f} s in all at the pace seen; the child was"
            f" killed; give --timeout {suggested} or more, or --no-probe")


def timeout_cause(timeout_s: float, last: object) -> str:
    """A kill in a test in a few words, for the summary line that the run log keeps: what ran past the limit
    where it was the harness ("computing the reference ran past 180 s"), a call too slow for it where an
    earlier one returned, else "no result after 180 s" (a possible deadlock)."""
    if not isinstance(last, CheckProgress):
        return f"no result after {seconds_text(timeout_s)}"
    if last.phase != CALLING:
        return f"{last.describe()} ran past {seconds_text(timeout_s)}"
    if timeout_said("", timeout_s, last) is not None:
        return f"too slow for {seconds_text(timeout_s)}"
    return f"no result after {seconds_text(timeout_s)}"


def possible_deadlock(test: str, timeout_s: float, last: CheckProgress | None) -> str:
    """A call that never came back: which one, and the earlier calls' time where one returned."""
    said = f"possible deadlock in {test}: no result after {seconds_text(timeout_s)}"
    calls = [] if last is None else last.call_times()
    if last is not None and last.phase == CALLING and calls:
        said += (f"; call {last.call} of {last.calls} (the anti-cache probe's) ran {duration_text(timeout_s - last.elapsed_s)},"
                 f" where {_returned(calls)}")
    return f"{said}; the child was killed"


def _returned(calls: list[float]) -> str:
    """The calls that returned, as the pace is read from them: "an earlier call returned in 3.00 s", or "call
    2 returned in 1.00 s (the first, with any compile, in 60 s)"; a first call alone over COMPILE_SUSPECT_S
    is said to have maybe compiled, as timeout_said says it within that call's pace."""
    if len(calls) == 1 and calls[0] > COMPILE_SUSPECT_S:
        return (f"the first call, which may have included a compile (Triton, CuTe DSL) that later calls skip,"
                f" returned in {duration_text(calls[0])}")
    if len(calls) == 1:
        return f"an earlier call returned in {duration_text(calls[0])}"
    after = "call 2 returned in" if len(calls) == 2 else f"calls 2 to {len(calls)} returned in at most"
    return f"{after} {duration_text(max(calls[1:]))} (the first, with any compile, in {duration_text(calls[0])})"


_TOOK = {MAKING_INPUTS: "its inputs took {} to make", REFERENCE: "the reference took {}",
         COMPARING: "a comparison took {}"}


def _not_the_kernel(test: str, timeout_s: float, last: CheckProgress, smaller_listed: bool = True) -> str:
    """A kill while the harness worked (inputs, reference, comparison): "test 2 (m=… n=… k=…): computing the
    reference ran past the 180 s timeout (not the kernel); ...", with a --timeout that would do where a phase
    of that kind ended already and gives the pace."""
    said = f"{test}: {last.describe()} ran past the {seconds_text(timeout_s)} timeout (not the kernel); the child was killed"
    longest_s = last.longest_s(last.phase)
    if longest_s is None:  # none of its kind ended: nothing tells how long this one takes
        return f"{said}; give a larger --timeout" + (", or check a smaller --shape" if smaller_listed else "")
    needed_s = last.needed_s(timeout_s)
    no_probe = ", or --no-probe" if last.call > 1 else ""
    return (f"{said}; {_TOOK[last.phase].format(duration_text(longest_s))}, so the test needs about {needed_s:.0f} s"
            f" at the pace seen: give --timeout {least_timeout_s(timeout_s, needed_s)} or more{no_probe}")
