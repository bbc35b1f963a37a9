"""Where a Python rule's finding stands in the file: over a syntax tree node, or over a line's code."""

from __future__ import annotations

import ast

from nvfp4ctl.lint.diagnostic import Finding
from nvfp4ctl.lint.source import SourceFile


def node_finding(source: SourceFile, node: ast.AST, code: str, message: str) -> Finding:
    """A finding at the node's start, as wide as the node where it ends on its own line; 1 character wide for
    a node over several lines (its start is the place to show)."""
    # every node a rule reports is an expression or statement, with a place; ast.AST's stub declares none
    line, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
    start = source.ast_offset(line, col)
    width = 1
    end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if end_line == line and end_col is not None:
        width = max(source.ast_offset(end_line, end_col) - start, 1)
    return Finding(start, code, message, width)


def line_finding(source: SourceFile, line: int, code: str, message: str) -> Finding:
    """A finding that spans the line's code, from its first non-blank character."""
    text = source.line_text(line)
    start = source.line_starts[line - 1] + len(text) - len(text.lstrip())
    return Finding(start, code, message, max(len(text.strip()), 1))
