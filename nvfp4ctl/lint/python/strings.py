"""The text of a string expression lint can read without running the file: a literal, pieces joined
with + ("CUDA" + "Graph"), an f-string of literals (f"CUDA{'Graph'}"), or a name the file assigns
once to one of those. Rules that look for an API by name (getattr(torch.cuda, "CUDA" + "Graph"))
read the name the way Python will.
"""

from __future__ import annotations

import ast

from nvfp4ctl.lint.python.index import ModuleIndex

_NAME_DEPTH = 3  # names followed through names: NAME = PREFIX + "Graph", PREFIX = "CUDA"


def folded_string(node: ast.AST, index: ModuleIndex, depth: int = 0) -> str | None:
    """The string an expression always evaluates to, None where lint cannot tell (a name assigned
    more than once or never, a call, a number)."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = folded_string(node.left, index, depth)
        right = folded_string(node.right, index, depth) if left is not None else None
        return left + right if right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [_formatted_part(value, index, depth) for value in node.values]
        return None if None in parts else "".join(parts)  # type: ignore[arg-type]
    if isinstance(node, ast.Name) and depth < _NAME_DEPTH:
        values = index.assignments(index.tree, node.id)
        return folded_string(values[0], index, depth + 1) if len(values) == 1 else None
    return None


def _formatted_part(value: ast.AST, index: ModuleIndex, depth: int) -> str | None:
    """A piece of an f-string: its literal text, or a {…} whose string is known and printed as it is."""
    if isinstance(value, ast.FormattedValue):
        if value.conversion not in (-1, ord("s")) or value.format_spec is not None:
            return None
        return folded_string(value.value, index, depth)
    return folded_string(value, index, depth)
