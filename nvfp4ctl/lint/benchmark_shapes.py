"""The benchmark shapes NV702 looks for, in the words of a task's problem (its `benchmark_dims`): the GEMM's
(m, n, k), the GEMV's (m, k, l), each group's (m, n, k) of a grouped GEMM's benchmarks."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from nvfp4ctl.problems import DEFAULT_PROBLEM, get_problem

Shape = tuple[int, ...]


def dims_of(problem: str | None) -> tuple[str, ...]:
    """The names of a benchmark shape's numbers under `problem` (None: the default problem's)."""
    return tuple(get_problem(problem or DEFAULT_PROBLEM).benchmark_dims)


def task_shapes(task: Any | None) -> tuple[Shape, ...] | None:
    """The task's benchmark shapes over its problem's dims; None where it has none (a task.yml without
    benchmarks): the problem's shipped ones stand in then (shipped_shapes)."""
    cases = getattr(task, "benchmarks", None) or ()
    dims = dims_of(getattr(task, "problem", None))
    shapes: list[Shape] = []
    for case in cases:
        values = [getattr(case, dim, None) for dim in dims]
        if all(isinstance(v, int) for v in values):
            shapes.append(tuple(values))  # type: ignore[arg-type]
        elif all(isinstance(v, tuple) for v in values):  # grouped: each group's shape
            shapes.extend(zip(*values))  # type: ignore[arg-type]
    return tuple(shapes) or None


@lru_cache(maxsize=None)
def shipped_shapes(problem: str) -> tuple[Shape, ...]:
    """A problem's benchmark shapes, from the task.yml nvfp4ctl ships for it: read and parsed once per
    process, not once per file named for that problem (a folder of starters, each a yaml parse)."""
    from nvfp4ctl.task import load_shipped_task

    return task_shapes(load_shipped_task(get_problem(problem).task_file)) or ()
