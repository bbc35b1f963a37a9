"""Where a file's own first line is: past what an editor or a user puts above it. Export, lint and task
detection read a header on that line (the export mark, a starter's docstring, GPU MODE's `# name:`), and
one rule for all of them keeps a file that one of them recognises recognised by the others."""

from __future__ import annotations


def past_preamble(text: str) -> str:
    """`text` from the line its docstring may open: past a UTF-8 byte order mark and a `#!` line, which an
    editor or a user adds (the docstring is still the module's, and the headers below are still line 1's)."""
    text = text.removeprefix("\ufeff")
    return text.partition("\n")[2] if text.startswith("#!") else text
