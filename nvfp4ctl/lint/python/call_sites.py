"""Where a helper's parameter gets an input element: the calls on the timed path that pass it.

`def _ptr(dtype, t, align): ... t.data_ptr()` called as `_ptr(SF, sfa_ref, 32)` and `_ptr(SF, sfb_ref, 32)`
reads the reference scales at those two calls; the helper itself is right wherever it is given the
permuted ones. A rule reports at each call, naming what that call passes, rather than once in the helper.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

from nvfp4ctl.lint.python.index import (Function, ModuleIndex, element_of, hands_on_own_keywords, keyword_parameters,
                                       passed_arguments, position, view_of)

Argument = ast.expr | ast.keyword  # a **mapping's items come in through its keyword, `**kw`


def from_parameter(function: Function, name: ast.Name) -> bool:
    """Does the name hold what the callers pass (a parameter not bound again before this use)?"""
    if name.id not in function.param_bindings:
        return False
    at = position(name)
    return not any(where < at for where, _ in function.events.get(name.id, ()))


def passing(function: Function, parameter: str, wanted: set[int], index: ModuleIndex) -> list[tuple[Argument, int, Function]]:
    """(argument, element, caller) for each argument that hands `parameter` one of the `wanted` elements, in
    the caller that names it: an argument that is itself the caller's parameter is followed to its callers.
    Found once per helper and parameter: a helper reads its parameter many times, and each read asks."""
    key = ("call sites", id(function.node), parameter)
    found = index.memo.get(key)
    if found is None:
        found = index.memo[key] = list(_passing(function, parameter, index))
    return [(argument, element, caller) for argument, element, caller in found  # type: ignore[attr-defined]
            if element in wanted]


def _passing(function: Function, parameter: str, index: ModuleIndex) -> Iterator[tuple[Argument, int, Function]]:
    """Followed as far as helpers pass the parameter on, each helper's parameter once: helpers calling each
    other (`_f(t)` calling `_g(t)` calling `_f(t)`) end at the calls that give it something else."""
    visited = {(id(function.node), parameter)}
    pending = deque([(function, parameter)])
    while pending:
        helper, name = pending.popleft()
        for argument, element, caller, passed_on in _arguments(helper, name, index):
            if passed_on is not None:
                if (id(caller.node), passed_on) not in visited:
                    visited.add((id(caller.node), passed_on))
                    pending.append((caller, passed_on))
            elif element is not None:
                yield argument, element, caller


def _arguments(function: Function, parameter: str,
               index: ModuleIndex) -> list[tuple[Argument, int | None, Function, str | None]]:
    """(argument, element, caller, passed on) for each call on the timed path that passes the parameter
    something, passed on naming what the caller's own callers give: its parameter (`_f(t)` in `def _g(t)`),
    or the same key of its **kwargs (`_f(**kw)` in `def _g(**kw)`); found once per helper and parameter,
    however many helpers reach it."""
    key = ("call sites: arguments", id(function.node), parameter)
    found = index.memo.get(key)
    if found is None:
        found = index.memo[key] = []
        for caller, call in calls_to(function, index):
            placed = _argument_for(function, parameter, call, caller, index)
            if placed is not None:
                argument, element = placed
                passed_on = argument.id if isinstance(argument, ast.Name) and from_parameter(caller, argument) \
                    else parameter if hands_on_own_keywords(caller, argument) else None
                found.append((argument, element, caller, passed_on))
    return found  # type: ignore[return-value]


def _argument_for(function: Function, parameter: str, call: ast.Call, caller: Function,
                  index: ModuleIndex) -> tuple[Argument, int | None] | None:
    """What a call passes the parameter and which element that is. Through a *starred sequence whose items
    lint knows (`args = (1, sfa_ref, 32); _ptr(*args)`) it is the starred argument, holding the item that
    lands there, as the timed path binds it, and through a **mapping lint sees whole (`kw = dict(t=sfa_ref);
    _ptr(**kw)`) the `**kw`; past a sequence of unknown length, or in another **mapping, nothing."""
    passed = passed_arguments(function, call)
    if passed is not None:
        argument = passed.get(parameter)
        return None if argument is None else (argument, element_of(caller, argument))
    params = function.params()
    at = params.index(parameter) if parameter in params else None
    for place, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            items = view_of(caller, argument.value)
            if at is not None and items is not None and place <= at < place + len(items):
                return argument, items[at - place]
            break  # positions after *args are unknown; keywords still name theirs
        if place == at:
            return argument, element_of(caller, argument)
    value = next((k.value for k in call.keywords if k.arg == parameter), None)
    if value is not None:
        return value, element_of(caller, value)
    for keyword in call.keywords:  # kw = dict(t=sfa_ref); _ptr(**kw): the **kw hands it over
        items = index.splatted(keyword) if keyword.arg is None else None
        if items is not None and parameter in items:
            return keyword, element_of(caller, items[parameter])
    for keyword in call.keywords:  # def _run(**kw): _ptr(**kw): whatever _run's callers gave kw of that key
        if hands_on_own_keywords(caller, keyword):
            return keyword, None
    return None


def keyword_items(function: Function, index: ModuleIndex) -> list[tuple[str, ast.expr, Function]] | None:
    """(key, value, caller) for each item the timed path's calls hand the helper's **kwargs parameter: a
    keyword naming none of its parameters (`_launch(a, sf=sfa_ref)`), or such an item of a **mapping lint
    sees whole (`kw = dict(sf=sfa_ref); _launch(a, **kw)`). None where a call hands it a mapping lint cannot
    see into, which may hold anything."""
    return _keyword_items(function, index, {id(function.node)})


def _keyword_items(function: Function, index: ModuleIndex,
                   visited: set[int]) -> list[tuple[str, ast.expr, Function]] | None:
    """keyword_items, also through helpers handing on their own **kwargs (`def _run(**kw): _launch(a, **kw)`:
    what _run's callers give kw), each helper once."""
    named = keyword_parameters(function.node)
    items: list[tuple[str, ast.expr, Function]] = []
    for caller, call in calls_to(function, index):
        for keyword in call.keywords:
            if keyword.arg is not None:
                if keyword.arg not in named:
                    items.append((keyword.arg, keyword.value, caller))
                continue
            if hands_on_own_keywords(caller, keyword):
                if id(caller.node) in visited:
                    continue
                visited.add(id(caller.node))
                handed_on = _keyword_items(caller, index, visited)
                if handed_on is None:
                    return None
                items.extend(item for item in handed_on if item[0] not in named)
                continue
            splatted = index.splatted(keyword)
            if splatted is None:
                return None
            items.extend((key, value, caller) for key, value in splatted.items() if key not in named)
    return items


def calls_to(function: Function, index: ModuleIndex) -> list[tuple[Function, ast.Call]]:
    """(caller, call) for each call on the timed path to the function, from one pass over the timed path."""
    key = ("call sites", "callers")
    by_callee: dict[int, list[tuple[Function, ast.Call]]] | None = index.memo.get(key)  # type: ignore[assignment]
    if by_callee is None:
        by_callee = index.memo[key] = {}
        for caller in index.timed:
            for callee, call in index.callees(caller):
                if call is not None:
                    by_callee.setdefault(id(callee.node), []).append((caller, call))
    return by_callee.get(id(function.node), [])
