"""The text of a string expression lint can read without running the file: a literal, pieces joined
with + ("CUDA" + "Graph"), an f-string of literals (f"CUDA{'Graph'}"), or a name bound once to one of
those where it is read: in its own function (an assignment, or a parameter's default it is never
assigned over), else in an enclosing one, else at module level, as Python looks it up. Rules that look for an API by name (getattr(torch.cuda, "CUDA" + "Graph"))
read the name the way Python will.
"""

from __future__ import annotations

import ast

from nvfp4ctl.lint.python.index import ModuleIndex, parameter_defaults, parameter_names

Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda

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
        values = bound_values(node, index)
        return folded_string(values[0], index, depth + 1) if len(values) == 1 and values[0] is not None else None
    return None


def bound_values(name: ast.Name, index: ModuleIndex) -> list[ast.AST | None]:
    """What a name may hold where it is read, from the nearest scope binding it: `mode` in
    `def build(fn, mode="max-autotune-no-cudagraphs")` is its default (or what a caller passes), whatever
    another function assigns to its own `mode`. None: a value lint cannot see (a parameter without a
    default, a loop variable)."""
    scope = _scope_of(name, index)
    while scope is not None:
        if name.id in index.declared_global(scope):
            break
        values: list[ast.AST | None] = [v for v in index.assignments(scope, name.id) if _scope_of(v, index) is scope]
        if name.id in parameter_names(scope):
            values.append(parameter_defaults(scope).get(name.id))
        if values:
            return values
        if any(isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Store)
               and _scope_of(n, index) is scope for n in index.walk(scope)):
            return [None]  # bound here some other way (for, with ... as)
        scope = _scope_of(scope, index)
    return [v for v in index.assignments(index.tree, name.id) if _scope_of(v, index) is None]


def _scope_of(node: ast.AST, index: ModuleIndex) -> Scope | None:
    for parent in index.ancestors(node):
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return parent
    return None


def _formatted_part(value: ast.AST, index: ModuleIndex, depth: int) -> str | None:
    """A piece of an f-string: its literal text, or a {…} whose string is known and printed as it is."""
    if isinstance(value, ast.FormattedValue):
        if value.conversion not in (-1, ord("s")) or value.format_spec is not None:
            return None
        return folded_string(value.value, index, depth)
    return folded_string(value, index, depth)
