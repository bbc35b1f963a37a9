"""Where a file's own first line is: past what an editor or a user puts above it. Export, lint and task
detection read a header on that line (the export mark, a starter's docstring, GPU MODE's `# name:`), build,
export and tune a kernel's `// nvfp4ctl:` marks, and one rule for all of them keeps a file that one of them
recognises recognised by the others."""

from __future__ import annotations

BYTE_ORDER_MARK = "\ufeff"


def past_byte_order_mark(text: str) -> str:
    """`text` past a UTF-8 byte order mark at its start, which an editor may save and nvcc and python skip:
    the file's first line starts after it. Every `// nvfp4ctl:` mark (arch=, no-tensor-op, never-run-on,
    knob) is read through this, so a mark on that line is still a comment line of its own."""
    return text.removeprefix(BYTE_ORDER_MARK)


def leading_byte_order_mark(text: str) -> str:
    """The byte order mark `text` starts with, "" for none: a writer that finds its marks past it
    (past_byte_order_mark) puts it back before the lines it rewrote, so the file keeps the form it was saved in."""
    return BYTE_ORDER_MARK if text.startswith(BYTE_ORDER_MARK) else ""


def past_preamble(text: str) -> str:
    """`text` from the line its docstring may open: past a UTF-8 byte order mark and a `#!` line, which an
    editor or a user adds (the docstring is still the module's, and the headers below are still line 1's)."""
    text = past_byte_order_mark(text)
    return text.partition("\n")[2] if text.startswith("#!") else text
