"""What a target wrote (its child's log, an exception's message) cut to a size a terminal and a run log hold.

A submission that prints megabytes before it crashes, or raises with a megabyte message, is the user's code
at work, not something to echo back whole: each shown line is cut to a number of characters and a child
log's tail to a number of lines, every cut saying how much it left out; the kept child log holds the rest.
A run log's result cell is cut too (printable.shown_within, never inside an escape), so one run cannot make a
line of a megabyte. Short text passes through as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nvfp4ctl.words import plural

MAX_CAUSE = 80  # characters of a failure's cause in a summary line or a run log's cell: the details hold the rest
MAX_RESULT_CELL = 4000  # characters of any run log result cell: a check of every kind of failure, a bench of dozens of shapes fit
MAX_HEADLINE = 400  # characters of an exception's first line in a headline (a load error's hint fits)
MESSAGE_LINES = 5  # lines of an exception's message shown under its traceback


@dataclass(frozen=True)
class TailLimits:
    """How much of a child's log a crash or timeout shows: its last `lines` lines, each cut to `chars`."""

    lines: int
    chars: int


SHOWN_TAIL = TailLimits(lines=15, chars=300)  # a few kB at most
VERBOSE_TAIL = TailLimits(lines=60, chars=2000)  # -v: more, still bounded


def bounded_cause(text: str, limit: int = MAX_CAUSE) -> str:
    """A cause cut to `limit` characters, "…" marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def shown_cause(text: str, limit: int = MAX_CAUSE) -> str:
    """A cause of the target's own words (an exception's message) as printable.shown writes it, then cut: ESC
    or U+202E goes into the run log's cell as `\\x1b`, `\\u202e`, as the terminal shows it, so that reading the
    log (cat, an editor's terminal) cannot recolour or reorder its text. The cut never splits an escape."""
    from nvfp4ctl.printable import shown_within

    return shown_within(text, limit)


def clipped_line(line: str, limit: int) -> str:
    """`line` cut to `limit` characters, followed by how many it left out: "xxx… [+4194004 characters]"."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… [+{plural(len(line) - limit, 'character')}]"


def clipped_tail(lines: Sequence[str], limits: TailLimits) -> list[str]:
    """The last `limits.lines` of `lines`, each cut to `limits.chars`; where earlier ones were left out, a
    first line says how many."""
    kept = [clipped_line(line, limits.chars) for line in lines[-limits.lines:]] if limits.lines > 0 else []
    left_out = len(lines) - len(kept)
    return ([f"… [{plural(left_out, 'earlier line')} not shown]"] if left_out else []) + kept


def message_head(lines: Sequence[str], limits: TailLimits = TailLimits(MESSAGE_LINES, SHOWN_TAIL.chars)) -> list[str]:
    """An exception message's first `limits.lines` lines, each cut to `limits.chars`; where later ones were
    left out, a last line says how many."""
    kept = [clipped_line(line, limits.chars) for line in lines[: limits.lines]]
    left_out = len(lines) - len(kept)
    return kept + ([f"… [{plural(left_out, 'more line')} of the message not shown]"] if left_out else [])
