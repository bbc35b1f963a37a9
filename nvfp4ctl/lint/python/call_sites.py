"""Where a helper's parameter gets an input element: the calls on the timed path that pass it.

`def _ptr(dtype, t, align): ... t.data_ptr()` called as `_ptr(SF, sfa_ref, 32)` and `_ptr(SF, sfb_ref, 32)`
reads the reference scales at those two calls; the helper itself is right wherever it is given the
permuted ones. A rule reports at each call, naming what that call passes, rather than once in the helper.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from nvfp4ctl.lint.python.index import Function, ModuleIndex, element_of, passed_arguments, position

MAX_DEPTH = 3  # helpers calling helpers, as far as a reader follows them


def from_parameter(function: Function, name: ast.Name) -> bool:
    """Does the name hold what the callers pass (a parameter not bound again before this use)?"""
    if name.id not in function.param_bindings:
        return False
    at = position(name)
    return not any(where < at for where, _ in function.events.get(name.id, ()))


def passing(function: Function, parameter: str, wanted: set[int], index: ModuleIndex,
            depth: int = 0) -> Iterator[tuple[ast.expr, int, Function]]:
    """(argument, element, caller) for each argument that hands `parameter` one of the `wanted` elements, in
    the caller that names it: an argument that is itself the caller's parameter is followed to its callers."""
    for caller in index.timed:
        for callee, call in index.callees(caller):
            if call is None or callee.node is not function.node:
                continue
            argument = (passed_arguments(callee, call) or {}).get(parameter)
            if argument is None:
                continue
            element = element_of(caller, argument)
            if isinstance(argument, ast.Name) and depth < MAX_DEPTH and caller.node is not function.node \
                    and from_parameter(caller, argument):
                yield from passing(caller, argument.id, wanted, index, depth + 1)
            elif element in wanted:
                yield argument, element, caller  # type: ignore[misc]  # element is an int here
