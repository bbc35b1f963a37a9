"""Whether a submission.py can give GPU MODE its `custom_kernel`, judged from its text alone.

A file that is not Python, or that never defines the name, is the user's input, not a crash of their
kernel: the parent says so in one line (exit 2) before a child, torch or a GPU is involved. Nothing
here runs the file. Where the text cannot tell (a star import, a name set through globals() or
setattr), the file is let through and the child judges it after its import.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from pathlib import Path

from nvfp4ctl.errors import UnloadableSubmission
from nvfp4ctl.submission_text import read_submission

ENTRY_POINT = "custom_kernel"

# Names through which a module can bind a global without a statement that says which: their use makes
# a missing definition something only the import can tell.
_DYNAMIC_BINDERS = frozenset({"globals", "vars", "setattr", "exec", "eval", "__import__", "locals"})


def refuse_broken_submission(path: Path, shown: str) -> None:
    """A UsageError, FILE:LINE: message, for a submission that is not valid Python or that defines no
    `custom_kernel` anywhere at its top level. `shown` is the path as the user's messages name it."""
    source = read_submission(path, shown)  # UTF-8, as build reads it: a coding cookie does not change it
    try:
        tree = compile(source, str(path), "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        raise UnloadableSubmission(f"{shown}:{error.lineno or 1}: not valid Python ({error.msg})") from None
    except ValueError as error:  # a NUL byte, on Pythons before 3.12 (later ones raise SyntaxError)
        raise UnloadableSubmission(f"{shown}: not valid Python ({error})") from None
    if binding_lines(tree) or _may_bind_dynamically(tree):
        return
    raise UnloadableSubmission(missing_message(tree, shown))


def binding_lines(tree: ast.Module) -> list[int]:
    """The lines where the module's own top level binds `custom_kernel` (def, class, assignment,
    import, for/with/except targets), in any branch of an if, try, with, for, while or match."""
    return [node.lineno for node in _top_level(tree.body) if ENTRY_POINT in _bound_names(node)]


def missing_message(tree: ast.Module, shown: str) -> str:
    """What to say where nothing binds `custom_kernel`; a top-level function whose name is close
    (custom_kernal, customkernel) is named with its line, the likely typo."""
    misspelt = misspelt_entry_point(tree)
    if misspelt is not None:
        return f"{shown}:{misspelt.lineno}: {misspelt_words(misspelt.name)}: GPU MODE calls {ENTRY_POINT}(data)"
    return f"{shown}: defines no {ENTRY_POINT}(data) function, which GPU MODE calls"


def misspelt_entry_point(tree: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The top-level function whose name is close to `custom_kernel` (custom_kernal, customkernel), the
    likely typo where nothing binds it, else None; check and lint both name it."""
    functions = {node.name: node for node in _top_level(tree.body)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    close = difflib.get_close_matches(ENTRY_POINT, functions, n=1, cutoff=0.8)
    return functions[close[0]] if close else None


def misspelt_words(name: str) -> str:
    return f"defines {name}(), not {ENTRY_POINT}()"


def not_callable_message(path: Path, shown: str, value: object) -> str:
    """What to say where the imported module's `custom_kernel` is no function (None, a tensor, a
    module-level result), pointing at the top-level line that last binds it."""
    try:
        lines = binding_lines(ast.parse(path.read_bytes(), str(path)))
    except (OSError, SyntaxError, ValueError):
        lines = []
    where = f"{shown}:{lines[-1]}" if lines else shown
    text = repr(value)
    what = text if len(text) <= 40 else f"a {type(value).__name__}"
    return f"{where}: {ENTRY_POINT} is not a function (it is {what}): GPU MODE calls {ENTRY_POINT}(data)"


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement that runs in the module's own namespace: the body and the branches of its
    compound statements, not the bodies of its functions and classes."""
    for node in body:
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _top_level(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield handler  # type: ignore[misc]  # an except clause binds its `as` name
            yield from _top_level(handler.body)
        for case in getattr(node, "cases", None) or []:
            yield from _top_level(case.body)


def _bound_names(node: ast.AST) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if isinstance(node, ast.ExceptHandler):
        return {node.name} if node.name else set()
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    names = {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
    # a walrus in a top-level expression binds in the module too
    names |= {walrus.target.id for walrus in _own_expressions(node) if isinstance(walrus, ast.NamedExpr)}
    return names


def _own_expressions(node: ast.AST) -> Iterator[ast.AST]:
    """The expressions of a statement itself, not of the statements nested in it (walked on their own)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.stmt, ast.excepthandler, ast.Lambda)):
            continue
        yield child
        yield from _own_expressions(child)


def _may_bind_dynamically(tree: ast.Module) -> bool:
    """A star import, a `global custom_kernel` in a function, the name as a string (setattr(module,
    "custom_kernel", ...)), as an attribute (sys.modules[__name__].custom_kernel = ...) or as a match
    pattern's capture, a call of a binder such as globals(), or a module __getattr__ (PEP 562): the text
    alone cannot say it is missing."""
    if any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__getattr__"
           for node in _top_level(tree.body)):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == ENTRY_POINT:
            return True
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == ENTRY_POINT:
            return True
        if isinstance(node, ast.MatchMapping) and node.rest == ENTRY_POINT:
            return True
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and ENTRY_POINT in node.names:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and ENTRY_POINT in node.value:
            return True
        if isinstance(node, ast.Name) and node.id in _DYNAMIC_BINDERS:
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("__dict__", "__setattr__"):
            return True
    return False
