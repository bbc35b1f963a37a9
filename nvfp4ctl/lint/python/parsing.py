"""A user's Python as lint reads it: parsed, never imported, and quiet about the file's own warnings."""

from __future__ import annotations

import ast
import warnings

# what ast.parse raises for a file it cannot read: the last two for one nested too deeply for the parser
PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


def parsed_quietly(text: str, filename: str = "<unknown>") -> ast.Module:
    """`text`'s tree; raises one of PARSE_ERRORS where it is not Python this interpreter reads."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in users' strings are not ours to report
        return ast.parse(text, filename=filename)
