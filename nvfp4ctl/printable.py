"""Text made safe to print: any character that is not printable (ESC, DEL, U+202E) written as its Python
escape (\\x1b, \\u202e), so a user's file or log cannot move the cursor, recolour or reorder the terminal's
text. One spelling for lint's source lines and log's plain records."""

from __future__ import annotations


def escaped(text: str) -> str:
    """text with each character that is not printable written as its escape."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else escape(ch) for ch in text)


def escape(ch: str) -> str:
    """One character's escape: \\x1b, \\u202e or \\U0001f600, as Python writes it in a string."""
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
