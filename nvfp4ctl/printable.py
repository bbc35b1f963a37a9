"""Text made safe to print: any character that is not printable (ESC, DEL, U+202E) written as its Python
escape (\\x1b, \\u202e), so a user's file or log cannot move the cursor, recolour or reorder the terminal's
text. One spelling for lint's source lines, log's plain records and every table's cells."""

from __future__ import annotations

from rich.control import strip_control_codes


def escaped(text: str) -> str:
    """text with each character that is not printable written as its escape."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else escape(ch) for ch in text)


def escape(ch: str) -> str:
    """One character's escape: \\x1b, \\u202e or \\U0001f600, as Python writes it in a string."""
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: str) -> str:
    """text as a terminal gets it from rich: the control characters rich strips (BEL, backspace, CR, form and
    line tabulations) stripped as it strips them, any other character that is not printable escaped, so
    what rich would have passed on (ESC above all) cannot ring, move the cursor or recolour the terminal."""
    return escaped(strip_control_codes(text))


# a tab in a cell is whitespace, expanded to rich's own tab stops (every 8 columns), not an escape
CELL_TAB_SIZE = 8


def shown_in_cell(text: str) -> str:
    """A table cell's text: each line as `shown` writes it, the line breaks kept and its tabs expanded, so a
    cell of several lines (lint's bad and good examples) still reads as lines within its cell."""
    if text.isprintable():
        return text
    return "\n".join(shown(line.expandtabs(CELL_TAB_SIZE)) for line in text.split("\n"))
