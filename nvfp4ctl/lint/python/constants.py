"""Module-level integer constants a file indexes its input with: `SFA_IDX = 2`, then `data[SFA_IDX]`;
`A, B, SFA_REF, SFB_REF, SFA, SFB, C = range(7)`, then `data[SFA_REF]`; and module-level tuples an except
clause names (`ERRORS = (KeyError, IndexError)`, then `except ERRORS:`).

Found once per lint run of a file (`indexing_with(tree)`) and read by index.py when it works out which
tuple element an index names. A context variable, as facts.py's layout is, so the helpers that read
indices keep their signatures. Only a name bound by module-level statements alone, each to the same
number (once, or again to that number), and never a parameter counts: one assigned anywhere else, or
to another number, may hold another number where it is read.
"""

from __future__ import annotations

import ast
import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

_CONSTANTS: contextvars.ContextVar[dict[str, int]] = contextvars.ContextVar("nvfp4ctl_index_constants", default={})


def constant(name: str) -> int | None:
    """The integer a module-level constant of the file being linted holds, None for any other name."""
    return _CONSTANTS.get().get(name)


@contextmanager
def indexing_with(tree: ast.Module) -> Iterator[dict[str, int]]:
    token = _CONSTANTS.set(module_integers(tree))
    try:
        yield _CONSTANTS.get()
    finally:
        _CONSTANTS.reset(token)


def module_integers(tree: ast.Module) -> dict[str, int]:
    """name -> int for each name a top-level statement binds to an integer (`X = 2`, `X: int = 2`, `A, B
    = 0, 1`, `A, B, C = range(3)`, `= range(1, 4)`) and nothing else binds anywhere in the file; a
    name such statements bind more than once counts only where they all give it the same integer."""
    found: dict[str, list[int]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            pairs = [(statement.target, statement.value)]
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            pairs = _pairs(statement.targets[0], statement.value)
        else:
            continue
        for target, value in pairs:
            number = integer(value)
            if number is not None:
                found.setdefault(target.id, []).append(number)
    bindings: dict[str, int] = {}
    for node in ast.walk(tree):
        for name in _bound_names(node):
            bindings[name] = bindings.get(name, 0) + 1
    # bound again to another number, which binding a call reads depends on when it runs; bound again
    # to the same number, every binding gives it
    return {name: numbers[0] for name, numbers in found.items()
            if bindings.get(name) == len(numbers) and len(set(numbers)) == 1}


def module_tuples(tree: ast.Module) -> dict[str, tuple[ast.Tuple, ast.stmt]]:
    """name -> (tuple literal, its statement) for each name one top-level statement binds to a tuple
    (`ERRORS = (KeyError, IndexError)`, `ERRORS: tuple = ...`) and nothing else binds anywhere in the file."""
    found: dict[str, tuple[ast.Tuple, ast.stmt]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                and isinstance(statement.value, ast.Tuple):
            found[statement.target.id] = (statement.value, statement)
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Tuple):
            found[statement.targets[0].id] = (statement.value, statement)
    bindings: dict[str, int] = {}
    for node in ast.walk(tree):
        for name in _bound_names(node):
            bindings[name] = bindings.get(name, 0) + 1
    return {name: bound for name, bound in found.items() if bindings.get(name) == 1}


def integer(node: ast.AST) -> int | None:
    """4 for 4, -1 for -1 (a unary minus in the ast); None for anything else (a name, a float, True)."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1
    return sign * node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _pairs(target: ast.AST, value: ast.AST) -> list[tuple[ast.Name, ast.AST]]:
    """(name, value) for each name of a plain or unpacking assignment whose values lint can list."""
    if isinstance(target, ast.Name):
        return [(target, value)]
    if not isinstance(target, (ast.Tuple, ast.List)) or not all(isinstance(t, ast.Name) for t in target.elts):
        return []
    values: list[ast.AST] | None = None
    if isinstance(value, (ast.Tuple, ast.List)):
        values = list(value.elts)
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "range" and not value.keywords:
        bounds = [integer(arg) for arg in value.args]
        if 1 <= len(bounds) <= 3 and None not in bounds and bounds[2:] != [0]:
            values = [ast.Constant(number) for number in range(*bounds)]  # type: ignore[arg-type]
    if values is None or len(values) != len(target.elts):
        return []
    return list(zip(target.elts, values))  # type: ignore[arg-type]


def _bound_names(node: ast.AST) -> list[str]:
    """Names a node binds: assignment and loop targets, parameters, imports, defs, global/nonlocal."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)  # a function that declares it global may rebind it
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    return []
