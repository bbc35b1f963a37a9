"""An exception raised by the target's own call: a crash of that call (exit 4), said alike by check and bench.

Only the call of custom_kernel counts: an exception of the harness (input generation, the reference)
stays the harness's. Torch-free, so the parent can read what the child sends.
"""

from __future__ import annotations

import traceback
from pathlib import Path

RAISED = "raised"  # check's verdict word for a test whose call raised
TRACE_LINES = 15  # as many of the traceback's last lines as a crash shows of its child's log


class TargetRaised(Exception):
    """The target's call raised: `lines` is the headline, then the target's part of the traceback."""

    def __init__(self, lines: tuple[str, ...]) -> None:
        super().__init__(lines[0])
        self.lines = lines


def describe_raised(error: BaseException, caller: str) -> tuple[str, ...]:
    """("custom_kernel raised ValueError: k must be a multiple of 256", "Traceback ...", ...).

    The frames of `caller` (the harness file that made the call) are dropped from the top: what is
    left starts in the target, the code to read.
    """
    text = str(error).strip().splitlines()
    headline = f"custom_kernel raised {type(error).__name__}" + (f": {text[0]}" if text else "")
    frames = error.__traceback__
    while frames is not None and Path(frames.tb_frame.f_code.co_filename) == Path(caller):
        frames = frames.tb_next
    trace = "".join(traceback.format_exception(type(error), error, frames)).rstrip().splitlines()
    return (headline, *trace[-TRACE_LINES:])


def raised_from(error: BaseException, caller: str) -> TargetRaised:
    return TargetRaised(describe_raised(error, caller))
