"""The CUTLASS lookup an `nvfp4ctl export` of a CUTLASS kernel carries: `extra_include_paths=_include_dirs()`,
a function the file runs at import to find the headers on the machine it runs on.

build reads a submission without running it, so it cannot know what the lookup returns; it needs not:
for code that brings no CUTLASS of its own, build adds this machine's (submission_build._adds_cutlass),
as the lookup finds the leaderboard machine's. Only the export's own lookup is taken so: the file must
carry the export header, and the name must be bound once, by the export's definition as written. A
function of the user's, or an export whose lookup was edited, stays a non-static include path that
build warns of. An older export of a kernel without CUTLASS called a lookup that returns `[]`: read as no
folders."""

from __future__ import annotations

import ast
from functools import lru_cache


def is_export_lookup(value: ast.expr, tree: ast.Module, text: str) -> bool:
    """Whether `value`, an extra_include_paths argument, is an export's call of its CUTLASS lookup."""
    definition = _export_lookup_definition(value, tree, text)
    return definition is not None and ast.dump(definition) == _written_lookup()


def returns_no_folders(value: ast.expr, tree: ast.Module, text: str) -> bool:
    """Whether `value` is the call of an older export's `_include_dirs` for a kernel without CUTLASS, whose
    definition returns a literal empty list (`return []`, export's text until it left the argument out):
    no folders, as static as `extra_include_paths=[]`."""
    definition = _export_lookup_definition(value, tree, text)
    if definition is None or definition.args.args or definition.args.vararg or definition.args.kwarg \
            or definition.args.kwonlyargs or definition.args.posonlyargs or definition.decorator_list:
        return False
    body = definition.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # its docstring
    return (len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, (ast.List, ast.Tuple))
            and not body[0].value.elts)


def _export_lookup_definition(value: ast.expr, tree: ast.Module, text: str) -> ast.FunctionDef | None:
    """The definition `value` calls where it is the call of the lookup's name, with no arguments, in a file
    export wrote, and that name is bound once, by a function defined at the file's top; else None."""
    from nvfp4ctl.export import CUTLASS_LOOKUP_FUNCTION, export_lines  # export loads its build inputs: only here

    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == CUTLASS_LOOKUP_FUNCTION
            and not value.args and not value.keywords):
        return None
    if export_lines(text) is None:
        return None
    bindings = list(_bindings(tree, CUTLASS_LOOKUP_FUNCTION))
    if len(bindings) == 1 and isinstance(bindings[0], ast.FunctionDef) and bindings[0] in tree.body:
        return bindings[0]
    return None


def _bindings(tree: ast.Module, name: str) -> list[ast.AST]:
    """Every node that binds `name` anywhere in the file: a def or class, an assignment or deletion, an import."""
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            found.append(node)
        elif isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            found.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
            found.append(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            found.append(node)  # a function that rebinds the module's name
    return found


@lru_cache(maxsize=1)
def _written_lookup() -> str:
    """The lookup's definition as export writes it, as a syntax tree's dump (its layout aside)."""
    from nvfp4ctl.export import CUTLASS_LOOKUP

    [definition] = ast.parse(CUTLASS_LOOKUP).body
    return ast.dump(definition)
