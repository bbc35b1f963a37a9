"""The line end a text file was saved with, so a writer that rebuilds it from its lines keeps that form:
a table saved on Windows (CRLF) is written back CRLF, not turned into LF line by line."""

from __future__ import annotations


def line_end(text: str) -> str:
    """The file's line end, its first line's: "\\r\\n", "\\r" (classic Mac) or "\\n" (also where it has one line)."""
    cut = next((i for i, char in enumerate(text) if char in "\r\n"), -1)
    if cut < 0 or text[cut] == "\n":
        return "\n"
    return "\r\n" if text.startswith("\r\n", cut) else "\r"
