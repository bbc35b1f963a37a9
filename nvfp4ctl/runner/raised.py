"""An exception raised by the target's own call: a crash of that call (exit 4), said alike by check and bench.

Only the call of custom_kernel counts: an exception of the harness (input generation, the reference)
stays the harness's. One exception is no crash: the refusal of a shape the target documents it does
not take, which every binding of the project raises from its kernel's `<name>_unsupported` as
ValueError("unsupported shape (m=7, n=..., k=..., l=1): m must be a multiple of 128 (the kernel's tile
M)") (kernels/common/*_binding.cpp; the grouped GEMM's "unsupported groups: ..."). Torch-free, so the
parent can read what the child sends.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path

from nvfp4ctl.project import PACKAGE_DIR, SHIPPED_DIR

RAISED = "raised"  # check's verdict word for a test whose call raised
UNSUPPORTED = "unsupported"  # check's verdict word for a test whose shape the target refused
# the bindings' refusal: "unsupported shape (m=7, ...): <constraint>", "unsupported groups: <constraint>"
_REFUSAL = re.compile(r"unsupported (?:shape|groups)\b(?: \([^)]*\))?(?::\s*(?P<constraint>.*))?", re.DOTALL)
TRACE_LINES = 15  # as many of the traceback's last lines as a crash shows of its child's log


class TargetRaised(Exception):
    """The target's call raised: `lines` is the headline, then the target's part of the traceback."""

    def __init__(self, lines: tuple[str, ...], refused: str | None = None) -> None:
        super().__init__(lines[0])
        self.lines = lines
        self.refused = refused  # the constraint, where the call refused the shape (refusal_of)


def describe_raised(error: BaseException) -> tuple[str, ...]:
    """("custom_kernel raised ValueError: k must be a multiple of 256", "Traceback ...", ...).

    nvfp4ctl's own frames are dropped from the top, the file that made the call and any other between it
    and the target (bench's call counter wraps the target on the CPU): what is left starts in the
    target, the code to read. The kernels and submissions nvfp4ctl ships are targets, not the harness,
    also where a wheel keeps them inside the package.
    """
    text = str(error).strip().splitlines()
    headline = f"custom_kernel raised {type(error).__name__}" + (f": {text[0]}" if text else "")
    frames = error.__traceback__
    while frames is not None and _harness_frame(frames.tb_frame.f_code.co_filename):
        frames = frames.tb_next
    trace = "".join(traceback.format_exception(type(error), error, frames)).rstrip().splitlines()
    return (headline, *trace[-TRACE_LINES:])


def _harness_frame(filename: str) -> bool:
    folders = Path(filename).resolve().parents
    return PACKAGE_DIR in folders and SHIPPED_DIR not in folders


def refusal_of(error: BaseException) -> str | None:
    """The constraint a shape refusal names ("m must be a multiple of 128 (the kernel's tile M)"), or None
    for any other exception. A ValueError whose message starts "unsupported shape" is read as one, a
    custom_kernel's own too: that is what the project's bindings raise."""
    if not isinstance(error, ValueError):
        return None
    text = str(error).strip()
    found = _REFUSAL.match(text)
    if found is None:
        return None
    constraint = " ".join((found.group("constraint") or "").split())
    return constraint or text


def unsupported_line(constraint: str) -> str:
    """How check and bench say a refused shape: the target's input, not its crash."""
    return f"the target does not take this shape: {constraint}"


def raised_from(error: BaseException) -> TargetRaised:
    return TargetRaised(describe_raised(error), refusal_of(error))
