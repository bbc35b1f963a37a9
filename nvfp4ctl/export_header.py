"""The first line of a file `nvfp4ctl export` wrote: what marks it as an export, and which problem it is for.

Export reads it to refuse writing over another problem's export; lint, check and build read it to judge an
exported submission by its own problem. Kept apart from export.py, which loads the build inputs, so that
reading a file's header costs no more than reading its first line.
"""

from __future__ import annotations

import re

from nvfp4ctl.preamble import past_preamble

# in the first line of every file `export` writes; a file without it is the user's own work
EXPORT_MARK = "exported by `nvfp4ctl export`"
_EXPORTED_FOR = re.compile(r"GPU MODE (\w+) submission:")


def export_lines(text: str) -> tuple[str, str] | None:
    """An export's own first line (past a UTF-8 byte order mark and a `#!` line put above it: the docstring's,
    or the plain-torch export's comment), which carries the export mark, and the text below it, whose hash that
    line records; None for a file export did not write. One test for export's refusals and build's reading of
    the CUTLASS lookup (build.export_lookup)."""
    first, _, body = past_preamble(text).partition("\n")
    return (first, body) if EXPORT_MARK in first else None


def exported_problem(text: str) -> str | None:
    """The known problem an export (export_lines' test: the docstring's first line, naming the problem's kernel
    API function, or the plain-torch export's comment, naming the problem) was written for, as its first line
    names it; None for a file export did not write, or one naming no known problem."""
    lines = export_lines(text)
    found = _EXPORTED_FOR.search(lines[0]) if lines is not None else None
    if found is None:
        return None
    from nvfp4ctl.problems import all_problems

    return next((each.name for each in all_problems() if found.group(1) in
                 (each.name, each.kernel_api.function if each.kernel_api is not None else None)), None)
