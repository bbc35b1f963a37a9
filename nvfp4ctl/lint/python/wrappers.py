"""Is a value an object made around an input, with no data computed: `from_dlpack(a)`, `a.view(torch.uint8)`,
`make_ptr(dtype, a.data_ptr(), ...)`, `from_dlpack(a).mark_layout_dynamic()`, a tuple of them, or what a
helper of the file makes so around its parameter (`def _wrap(t): return from_dlpack(t)`)?

NV302 speaks of such a value apart from data computed from an input: kept by the input's address, it does
not skip any work; it hands a later tensor at the same address a wrapper of the old one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from nvfp4ctl.lint.python.index import TUPLE, Function, ModuleIndex, call_name, element_of

WRAPPING_FUNCTIONS = {"from_dlpack", "make_ptr", "as_strided"}  # CuTe DSL's runtime, torch's
WRAPPING_METHODS = {"view", "view_as", "as_strided", "unsqueeze", "squeeze", "permute", "transpose", "t", "detach",
                    "mark_layout_dynamic", "mark_compact_shape_dynamic", "data_ptr", "__dlpack__"}
LOOKUP_METHODS = {"get", "setdefault", "pop"}  # what a kept container hands back by key
MAX_DEPTH = 8  # names, tuples, helpers and method chains, each a step; a name bound to itself stops here

IsRoot = Callable[[ast.Name], bool]


def made_around_input(value: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """Is the value only wrappers or views of the input's tensors (at least one), nothing computed?"""
    def is_input(name: ast.Name) -> bool:
        return element_of(function, name) not in (None, TUPLE)

    return _wrapper(value, function.node, is_input, index, 0)


def _wrapper(value: ast.AST, scope: ast.AST, is_root: IsRoot, index: ModuleIndex, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, (ast.Tuple, ast.List)):
        parts = [e for e in value.elts if not isinstance(e, ast.Constant)]
        return bool(parts) and all(_wrapper(e, scope, is_root, index, depth + 1) for e in parts)
    if isinstance(value, ast.Name):
        assigned = [v for v in index.assignments(scope, value.id) if not _lookup_or_none(v)]
        return bool(assigned) and all(_wrapper(v, scope, is_root, index, depth + 1) for v in assigned)
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Attribute) and value.func.attr in WRAPPING_METHODS:
        return _around(value.func.value, scope, is_root, index, depth + 1)
    name = call_name(value)
    arguments = [*value.args, *(k.value for k in value.keywords)]
    if name in WRAPPING_FUNCTIONS:
        return any(_around(argument, scope, is_root, index, depth + 1) for argument in arguments)
    helper = index.functions.get(name) if isinstance(value.func, ast.Name) else None
    if helper is not None and _wraps_a_parameter(helper, index, depth + 1):
        return any(_around(argument, scope, is_root, index, depth + 1) for argument in arguments)
    return False


def _around(node: ast.AST, scope: ast.AST, is_root: IsRoot, index: ModuleIndex, depth: int) -> bool:
    """The input itself, or a wrapper of it (from_dlpack(a.view(torch.uint8)))."""
    if isinstance(node, ast.Name) and is_root(node):
        return True
    return _wrapper(node, scope, is_root, index, depth)


def _wraps_a_parameter(helper: ast.FunctionDef | ast.AsyncFunctionDef, index: ModuleIndex, depth: int) -> bool:
    """Does every return of a helper give a wrapper of one of its parameters? Found once per helper and
    depth (the answer depends on nothing else): a file keeps `_wrap(x)` at many places, each asking."""
    key = ("wraps a parameter", id(helper), depth)
    found = index.memo.get(key)
    if found is None:
        found = index.memo[key] = _returns_wrap_a_parameter(helper, index, depth)
    return bool(found)


def _returns_wrap_a_parameter(helper: ast.FunctionDef | ast.AsyncFunctionDef, index: ModuleIndex, depth: int) -> bool:
    arguments = helper.args
    parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    returns = [n.value for n in index.own_returns(helper)]
    return bool(returns) and all(value is not None and _wrapper(
        value, helper, lambda name: name.id in parameters, index, depth) for value in returns)


def _lookup_or_none(value: ast.AST) -> bool:
    """`args = _args.get(key)`, `args = None`: what the cache held, not what is put in it."""
    if isinstance(value, ast.Constant) and value.value is None:
        return True
    return isinstance(value, ast.Subscript) or (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in LOOKUP_METHODS)
