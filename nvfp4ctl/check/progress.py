"""What the check job tells the parent while a test runs (runner/progress.py), and what a kill means then.

The job says when it starts and when it ends making a test's inputs (the first call's, then the anti-cache
probe's refill and fresh tuple). A kill between the two came while the harness made inputs, before the
kernel's next call: the test is too slow to make for the timeout, not a kernel stuck, so no possible
deadlock is claimed. The parent unpickles these records: this module stays importable without torch."""

from __future__ import annotations

import math
from dataclasses import dataclass

MAKING_INPUTS = "making its inputs"
CALLING = "calling the kernel"  # the reference, the call and its comparison: a kill here may be a deadlock
TIMEOUT_MARGIN = 1.25  # the --timeout suggested over the time the test may need at the pace measured


@dataclass(frozen=True)
class CheckProgress:
    phase: str  # MAKING_INPUTS or CALLING
    elapsed_s: float  # since the job began, when this phase began (the watchdog's timeout counts from there too)
    made_s: tuple[float, ...] = ()  # the seconds each making so far took, the first call's inputs first
    makings_left: int = 0  # makings to come after this one: the probe's refill and fresh tuple


def making_inputs_timeout(test: str, timeout_s: float, last: CheckProgress) -> str:
    """The watchdog's message for a test killed while its inputs were made: "test 2 (m=… n=… k=…): making its
    inputs ran past the 180 s timeout (not the kernel); ...", with a --timeout that would do where a making
    finished already and gives the pace."""
    what = "making the anti-cache probe's inputs" if last.made_s else "making its inputs"
    said = f"{test}: {what} ran past the {timeout_s:g} s timeout (not the kernel); the child was killed"
    if not last.made_s:  # no making finished: nothing tells how long this one takes
        return f"{said}; give a larger --timeout, or check a smaller --shape"
    per_making_s = max(last.made_s)
    needed_s = last.elapsed_s + per_making_s * (1 + last.makings_left)
    first = (math.floor(timeout_s / 10) + 1) * 10
    suggested = max(first, math.ceil(TIMEOUT_MARGIN * needed_s / 10) * 10)
    return (f"{said}; its inputs took {per_making_s:.1f} s to make, so the test needs about {needed_s:.0f} s, its"
            f" calls on top: give --timeout {suggested} or more, or --no-probe")
