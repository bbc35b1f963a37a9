"""Which calls of a Python file run whenever it is imported, read from its tree without running it.

A call runs at import where it sits in a module-level statement, or in a function such a statement calls by
name (an export's `_kernel_module = _compile()`), with no branch on the way: not under an if, a loop, a
match or a try (a fallback may follow), not in a conditional expression's arms, an `and`/`or`'s later operands,
a comprehension's body or a lambda, and not after an if that may return from the function. What the scan
cannot see (a call through an attribute, a name bound twice) counts as not running: a submission is refused
for a call only where it surely runs."""

from __future__ import annotations

import ast
from collections.abc import Iterator

_BRANCHES = tuple(getattr(ast, name) for name in ("If", "For", "AsyncFor", "While", "Try", "TryStar", "Match")
                  if hasattr(ast, name))
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def calls_run_at_import(tree: ast.Module) -> list[ast.Call]:
    """The calls that run on every import of the module `tree`, each function's once."""
    bound = [name for node in ast.walk(tree) for name in _names_bound(node)]
    # a function whose name is bound again anywhere (a fallback `def` under an if) may not be the one called
    functions = {node.name: node for node in tree.body
                 if isinstance(node, _FUNCTIONS) and bound.count(node.name) == 1}
    found = list(_sure_calls_in(tree.body))
    entered: set[str] = set()
    index = 0
    while index < len(found):  # the calls of each function a surely run call names, and theirs in turn
        call = found[index]
        index += 1
        name = call.func.id if isinstance(call.func, ast.Name) else None
        if name in functions and name not in entered:
            entered.add(name)
            found.extend(_sure_calls_in(functions[name].body))
    return found


def _sure_calls_in(statements: list[ast.stmt]) -> Iterator[ast.Call]:
    for statement in statements:
        yield from _sure_calls(statement)
        if not isinstance(statement, _DEFINITIONS) and _may_return(statement):
            return  # what follows runs only where that statement (a branch, a with around one) did not return


def _sure_calls(node: ast.AST) -> Iterator[ast.Call]:
    if isinstance(node, _DEFINITIONS):  # its body runs when called; see calls_run_at_import
        return
    if isinstance(node, _BRANCHES):  # the condition runs, the arms may not
        for field in ("test", "iter", "subject"):
            if isinstance(getattr(node, field, None), ast.AST):
                yield from _sure_calls(getattr(node, field))
        return
    if isinstance(node, ast.IfExp):
        yield from _sure_calls(node.test)
        return
    if isinstance(node, ast.BoolOp):  # `torch.cuda.is_available() and load_inline(...)`
        yield from _sure_calls(node.values[0])
        return
    if isinstance(node, _COMPREHENSIONS):
        yield from _sure_calls(node.generators[0].iter)
        return
    if isinstance(node, ast.Call):
        yield node
    for child in ast.iter_child_nodes(node):
        yield from _sure_calls(child)


def _may_return(node: ast.AST) -> bool:
    """Whether a return sits in `node`, outside the functions it defines."""
    if isinstance(node, ast.Return):
        return True
    return any(_may_return(child) for child in ast.iter_child_nodes(node) if not isinstance(child, _DEFINITIONS))


def _names_bound(node: ast.AST) -> Iterator[str]:
    """The names `node` binds: a def's or class's, an assignment's, an import's."""
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            yield from (name.id for name in ast.walk(target) if isinstance(name, ast.Name))
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        yield from ((alias.asname or alias.name).split(".")[0] for alias in node.names)
