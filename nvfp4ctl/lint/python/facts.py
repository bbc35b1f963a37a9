"""The input tuple as the Python rules see it: the task's problem's `TupleLayout` (problems/records.py).

Set once per lint run from the task's problem (`using(problem)`), read by index.py, timed.py and
caching.py through `current()`. A context variable rather than an argument threaded through every
helper: the rules stay as they are and a dual-GEMM file gets dual-GEMM indices in every message.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from nvfp4ctl.problems import DEFAULT_PROBLEM
from nvfp4ctl.problems.records import TupleLayout


def layout_for(problem: str | None) -> TupleLayout:
    from nvfp4ctl.problems import get_problem

    return get_problem(problem or DEFAULT_PROBLEM).layout


_CURRENT: contextvars.ContextVar[TupleLayout | None] = contextvars.ContextVar("nvfp4ctl_tuple_layout", default=None)
_PROBLEM: contextvars.ContextVar[str] = contextvars.ContextVar("nvfp4ctl_lint_problem", default=DEFAULT_PROBLEM)


def current() -> TupleLayout:
    found = _CURRENT.get()
    return found if found is not None else layout_for(DEFAULT_PROBLEM)


def problem() -> str:
    """The name of the problem whose layout current() is (for messages)."""
    return _PROBLEM.get()


def fitting(size: int) -> list[str]:
    """The problems whose input tuple has `size` elements."""
    from nvfp4ctl.problems import all_problems

    return [p.name for p in all_problems() if len(p.layout.names) == size]


@contextmanager
def using(problem: str | None) -> Iterator[TupleLayout]:
    token = _CURRENT.set(layout_for(problem))
    name = _PROBLEM.set(problem or DEFAULT_PROBLEM)
    try:
        yield _CURRENT.get()  # type: ignore[misc]
    finally:
        _PROBLEM.reset(name)
        _CURRENT.reset(token)
