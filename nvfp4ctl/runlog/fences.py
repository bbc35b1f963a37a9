"""Closing a fenced code block the user left open where the run's line goes.

A traceback pasted at the end of MEMORY.md after ``` and never closed runs on, as CommonMark reads it, to the end of
the file: every run's line appended there (and the run log's heading, where the file had none) was code in a
Markdown viewer, and a heading inside it is none, so each append made the section again. The block's closing
fence is written where the user's text in it ends, above any line the log wrote into it before, so those are
read as runs (`log` read them in the open block too) and the heading they sit under counts.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from nvfp4ctl.runlog.entry import RunEntry, looks_like_a_run
from nvfp4ctl.runlog.section import PREAMBLE, _block_tokens, _closes, _is_heading, _lines_with_breaks, _LogEnd

if TYPE_CHECKING:
    from markdown_it.token import Token

# A line that may open a fence (up to three spaces, then ``` or ~~~): without one below where a piece can be parsed
# from, the usual append, nothing more is parsed
_MAYBE_A_FENCE = re.compile(rb"(?<![^\r\n]) {0,3}(?:```|~~~)")


def with_an_open_fence_closed(existing: bytes, end: _LogEnd | None, line_break: bytes) -> bytes | None:
    """`existing` with the closing fence line of the fenced code block of the top level left open at its end (the
    same character, as many of it, on a line of its own) written where the user's text in it ends
    (_after_the_users_text); None where the run's line goes elsewhere (`end`, the log's end, before a section of
    the user's: no block of the top level is open there, or that heading would be in it) or no such block is open.
    A fence in a list item or a block quote needs none: the run's line, in the first column, ends it."""
    if end is None:  # no run log yet: its heading goes at the end, below all of the notes
        parsed_from: int | None = 0
    else:
        parsed_from = end.parsed_from if end.at == len(existing) else None
    if parsed_from is None or _MAYBE_A_FENCE.search(existing, parsed_from) is None:
        return None
    piece = existing[parsed_from:]
    lines = list(_lines_with_breaks(piece))
    if (open_fence := _open_at_the_end(_block_tokens(piece), lines)) is None:
        return None
    markup, opening = open_fence
    at = parsed_from + sum(len(line) for line in lines[: _after_the_users_text(lines, opening)])
    before = line_break if at == len(existing) and not existing.endswith((b"\n", b"\r")) else b""
    return existing[:at] + before + markup.encode() + line_break + existing[at:]


def _open_at_the_end(tokens: list[Token], lines: list[bytes]) -> tuple[str, int] | None:
    """The fence (```, ~~~~) and opening line of the fenced code block of the top level among `tokens` that reaches
    the last of `lines` with no closing fence; None where there is none."""
    for token in tokens:
        if token.type != "fence" or token.level != 0 or token.map is None or token.map[1] < len(lines):
            continue
        first, past = token.map
        if past - first < 2 or not _closes(lines[past - 1], token):
            return token.markup, first
    return None


def _after_the_users_text(lines: list[bytes], opening: int) -> int:
    """The number of the line after the last one of the user's in the block opened at line `opening`: the lines
    below it are blank or what the log wrote (runs' lines, its heading and preamble) while the block was open."""
    past = len(lines)
    while past > opening + 1 and _written_by_the_log(lines[past - 1]):
        past -= 1
    return past


def _written_by_the_log(line: bytes) -> bool:
    text = line.decode("utf-8", errors="replace").rstrip("\r\n")
    return (not text.strip() or RunEntry.from_line(text) is not None or looks_like_a_run(text)
            or _is_heading(text) or text.strip() == PREAMBLE)
