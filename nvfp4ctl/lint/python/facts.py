"""The input tuple as the Python rules see it: length, reference vs permuted scales, B operands, output.

Set once per lint run from the task's problem (`using(problem)`), read by index.py, timed.py and
caching.py through `current()`. A context variable rather than an argument threaded through every
helper: the rules stay as they are and a dual-GEMM file gets dual-GEMM indices in every message.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from nvfp4ctl.problems import DEFAULT_PROBLEM



@dataclass(frozen=True)
class TupleFacts:
    problem: str
    names: tuple[str, ...]
    reference: tuple[int, ...]  # reference-scale indices, paired in order with `permuted`
    permuted: tuple[int, ...]
    b_operands: tuple[int, ...]
    output: int | None

    @property
    def length(self) -> int:
        return len(self.names)

    def name(self, index: int) -> str:
        return self.names[index] if 0 <= index < len(self.names) else f"element {index}"

    def permuted_for(self, reference: int) -> int:
        return self.permuted[self.reference.index(reference)]

    def indices(self, which: tuple[int, ...]) -> str:
        return ", ".join(str(i) for i in which)

    def permuted_words(self) -> str:
        """"sfa_permuted/sfb_permuted (data[4], data[5])"."""
        names = "/".join(self.name(i) for i in self.permuted)
        return f"{names} ({', '.join(f'data[{i}]' for i in self.permuted)})"


def facts_for(problem: str | None) -> TupleFacts:
    from nvfp4ctl.problems import get_problem

    layout = get_problem(problem or DEFAULT_PROBLEM).layout
    return TupleFacts(problem or DEFAULT_PROBLEM, layout.names, layout.reference_scales, layout.permuted_scales,
                      layout.b_operands, layout.output)


_CURRENT: contextvars.ContextVar[TupleFacts | None] = contextvars.ContextVar("nvfp4ctl_tuple_facts", default=None)


def current() -> TupleFacts:
    found = _CURRENT.get()
    return found if found is not None else facts_for(DEFAULT_PROBLEM)


@contextmanager
def using(problem: str | None) -> Iterator[TupleFacts]:
    token = _CURRENT.set(facts_for(problem))
    try:
        yield _CURRENT.get()  # type: ignore[misc]
    finally:
        _CURRENT.reset(token)
