"""An exception raised by the target's own call: a crash of that call (exit 4), said alike by check and bench,
and where its traceback starts: in the target, nvfp4ctl's own frames above it dropped, for an exception
the call raised (describe_raised) as for a CUDA error read from the child's log (crash_trace).

Only the call of custom_kernel counts: an exception of the harness (input generation, the reference)
stays the harness's. One exception is no crash: the refusal of a shape the target documents it does
not take, which every binding of the project raises from its kernel's `<name>_unsupported` as
ValueError("unsupported shape (m=7, n=..., k=..., l=1): m must be a multiple of 128 (the kernel's tile
M)") (kernels/common/*_binding.cpp; the grouped GEMM's "unsupported groups: ..."). Torch-free, so the
parent can read what the child sends.
"""

from __future__ import annotations

import re
import sysconfig
import traceback
from pathlib import Path

from nvfp4ctl.bounded_text import MAX_HEADLINE, SHOWN_TAIL, clipped_line, message_head
from nvfp4ctl.project import PACKAGE_DIR, SHIPPED_DIR

RAISED = "raised"  # check's verdict word for a test whose call raised
RAISED_PREFIX = "custom_kernel raised "  # describe_raised's headline, before the exception's type and first line
UNSUPPORTED = "unsupported"  # check's verdict word for a test whose shape the target refused
# the bindings' refusal: "unsupported shape (m=7, ...): <constraint>", "unsupported groups: <constraint>"
_REFUSAL = re.compile(r"unsupported (?:shape|groups)\b(?: \([^)]*\))?(?::\s*(?P<constraint>.*))?", re.DOTALL)
TRACE_LINES = 15  # as many of the traceback's last lines as a crash shows of its child's log
_TRACEBACK = "Traceback (most recent call last):"
_FRAME_FILE = re.compile(r'\s*File "(?P<file>[^"]+)", line \d+')  # a frame's first line in a traceback
# what follows a CUDA error's traceback in which no frame is the target's (crash_trace)
LATER_CALL_NOTE = ("no frame of the target in this traceback: CUDA reports a kernel's fault at a later call, so the"
                   " failing kernel is the target's last launch before it")


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
    headline = f"{RAISED_PREFIX}{type(error).__name__}" + (f": {clipped_line(text[0], MAX_HEADLINE)}" if text else "")
    frames = error.__traceback__
    while frames is not None and _harness_frame(frames.tb_frame.f_code.co_filename):
        frames = frames.tb_next
    trace = "".join(traceback.format_exception(type(error), error, frames)).rstrip().splitlines()
    return (headline, *_message_cut(trace, error)[-TRACE_LINES:])


def _message_cut(trace: list[str], error: BaseException) -> list[str]:
    """The traceback's lines with the exception's own (its type and message, last) cut to their first lines,
    each to a bounded length (bounded_text.message_head): a message of a megabyte, or of thousands of lines,
    would fill the terminal and push the frames out of the lines kept. Short, it is left as it is."""
    said = "".join(traceback.format_exception_only(type(error), error)).rstrip().splitlines()
    if not said or trace[-len(said):] != said:
        return [clipped_line(line, SHOWN_TAIL.chars) for line in trace]
    return [*trace[:-len(said)], *message_head(said)]


def crash_trace(lines: list[str]) -> list[str]:
    """The lines of a child's log that end in a CUDA error, with its traceback (the last one) cut as
    describe_raised cuts a raised one's: nvfp4ctl's frames dropped from the top, so that it starts in the
    target. Where no frame of the target follows them (CUDA reported the fault at nvfp4ctl's own later
    call, a synchronize or the comparison's, and the trace ends there or in torch), the whole traceback
    stays and LATER_CALL_NOTE follows it, last, so that a tail of the lines keeps it: cut, the trace
    would show nothing of who failed."""
    header = next((index for index in range(len(lines) - 1, -1, -1) if lines[index].strip() == _TRACEBACK), None)
    if header is None:
        return lines
    frames = _frames_after(lines, header)
    harness = 0
    while harness < len(frames) and _harness_frame(frames[harness][1]):
        harness += 1
    if not any(_targets_frame(file) for _, file in frames[harness:]):  # torch's own wrappers may come first
        return [*lines, LATER_CALL_NOTE]
    return [*lines[:header + 1], *lines[frames[harness][0]:]]


def _frames_after(lines: list[str], header: int) -> list[tuple[int, str]]:
    """(index of its `File "..."` line, its file) for each frame of the traceback whose header is at
    `header`: the lines below it indented deeper, up to its exception line."""
    depth = len(lines[header]) - len(lines[header].lstrip())
    frames: list[tuple[int, str]] = []
    index = header + 1
    while index < len(lines) and len(lines[index]) - len(lines[index].lstrip()) > depth:
        found = _FRAME_FILE.match(lines[index])
        if found is not None:
            frames.append((index, found.group("file")))
        index += 1
    return frames


def _harness_frame(filename: str) -> bool:
    folders = Path(filename).resolve().parents
    return PACKAGE_DIR in folders and SHIPPED_DIR not in folders


# Where an installed library's code lies (torch's, Python's own): a frame there called from nvfp4ctl is
# not the target's, though it is not nvfp4ctl's either.
_LIBRARY_FOLDERS = frozenset(Path(sysconfig.get_paths()[name]).resolve() for name in ("stdlib", "platstdlib"))


def _targets_frame(filename: str) -> bool:
    """Neither nvfp4ctl's harness nor a library's: the target's file or one it imports from beside it."""
    if filename.startswith("<"):  # "<frozen importlib._bootstrap>", "<string>"
        return False
    path = Path(filename).resolve()
    if PACKAGE_DIR in path.parents:  # nvfp4ctl's: its harness, or a shipped kernel (a target)
        return not _harness_frame(filename)
    return not any(folder.name in ("site-packages", "dist-packages") or folder in _LIBRARY_FOLDERS
                   for folder in path.parents)


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
