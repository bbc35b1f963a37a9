"""Text made safe to print: any character that is not printable (ESC, DEL, U+202E) written as its Python
escape (\\x1b, \\u202e), so a user's file or log cannot move the cursor, recolour or reorder the terminal's
text. One spelling for lint's source lines, log's plain records and every table's cells.

A byte of a path or an argument that is not UTF-8 (Python holds b"\\xff" as the lone surrogate \\udcff) is
written `\\xff` everywhere, in messages, tables and the run log alike (escaped_bytes), so the name a message
shows is the name the run log keeps."""

from __future__ import annotations

import re

from rich.control import strip_control_codes


def escaped(text: str) -> str:
    """text with each character that is not printable written as its escape."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else escape(ch) for ch in text)


def escape(ch: str) -> str:
    """One character's escape: \\x1b, \\u202e or \\U0001f600, as Python writes it in a string; a byte that
    was not UTF-8 as the byte (\\xff), as escaped_bytes writes it."""
    code = ord(ch)
    if _is_surrogate(code):
        return _byte_escape(code)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: str) -> str:
    """text as a terminal gets it from rich: the control characters rich strips (BEL, backspace, CR, form and
    line tabulations) stripped as it strips them, any other character that is not printable escaped, so
    what rich would have passed on (ESC above all) cannot ring, move the cursor or recolour the terminal."""
    return escaped(strip_control_codes(text))


def shown_within(text: str, limit: int) -> str:
    """text as `shown` writes it in at most `limit` characters, "…" marking a cut, which falls before an
    escape it would split: a half escape (`\\u20…`) reads as text that was never there."""
    pieces = [ch if ch.isprintable() else escape(ch) for ch in strip_control_codes(text)]
    if sum(len(piece) for piece in pieces) <= limit:
        return "".join(pieces)
    kept: list[str] = []
    room = limit - 1  # the "…"
    for piece in pieces:
        if len(piece) > room:
            break
        kept.append(piece)
        room -= len(piece)
    return "".join(kept).rstrip() + "…"


# a tab in a cell is whitespace, expanded to rich's own tab stops (every 8 columns), not an escape
CELL_TAB_SIZE = 8


def shown_in_cell(text: str) -> str:
    """A table cell's text: each line as `shown` writes it, the line breaks kept and its tabs expanded, so a
    cell of several lines (lint's bad and good examples) still reads as lines within its cell."""
    if text.isprintable():
        return text
    return "\n".join(shown(line.expandtabs(CELL_TAB_SIZE)) for line in text.split("\n"))


def escaped_bytes(text: str) -> str:
    """`text` with each byte that was not UTF-8 (a lone surrogate) written `\\xff`, every other character
    as it is: for a message that may hold a path or an argument, and for the run log, which is UTF-8 and
    could not encode the surrogate itself. A path typed to find a logged run is compared so."""
    return _SURROGATE.sub(_escaped_byte, text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _is_surrogate(code: int) -> bool:
    return 0xD800 <= code <= 0xDFFF


def _escaped_byte(found: re.Match[str]) -> str:
    return _byte_escape(ord(found[0]))


def _byte_escape(code: int) -> str:
    """`\\xff` for the byte surrogateescape decoded to \\udcff, `\\ud800` for any other lone surrogate."""
    return f"\\x{code - 0xdc00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"
