"""What `check` will run, resolved once: the cases (--only, --shape, --seed) and the timeout."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nvfp4ctl.check.run import CheckItem
from nvfp4ctl.errors import UsageError
from nvfp4ctl.options import DEFAULT_TIMEOUT_S, check_only, parse_shape, resolve_timeout
from nvfp4ctl.workspace import task_file_name

if TYPE_CHECKING:
    from nvfp4ctl.problems.base import ProblemBase

DEFAULT_SHAPE_SEED = 1111  # the seed of every GPU MODE nvfp4_gemm test


def load_task_file(path: Path | None) -> Any:
    from nvfp4ctl.task import load_task  # deferred: keeps `nvfp4ctl --help` light

    return load_task(path)


def select_items(task: Any, only: Sequence[int], shapes: Sequence[str], seed: int | None) -> list[CheckItem]:
    """--only N (1-based, several allowed) picks task.yml tests; --shape adds ad-hoc cases.

    With neither, every task.yml test runs. --seed replaces the seed of every case that runs.
    """
    tests = tuple(task.tests)
    task_file = task_file_name(task.path)
    check_only(only, len(tests), "test", task_file)
    spec = problem_of(task)
    items: list[CheckItem] = []
    chosen = list(dict.fromkeys(only)) if only else ([] if shapes else range(1, len(tests) + 1))
    for number in chosen:
        case = tests[number - 1]
        case = case if seed is None else dataclasses.replace(case, seed=seed)
        items.append(CheckItem(str(number), case, spec.shape_text(case)))
    for position, text in enumerate(shapes, start=1):
        # the problem's own syntax (GEMV M,K; groups M,N,K;...)
        case = spec.parse_shape(text, DEFAULT_SHAPE_SEED if seed is None else seed)
        items.append(CheckItem(f"s{position}", case, spec.shape_text(case)))
    if not items:
        raise UsageError(f"nothing to check: {task_file} has no tests; pass --shape {spec.shape_syntax}")
    return items


def problem_of(task: Any) -> ProblemBase:
    """The task's problem object (a registered name, or "module:attribute" in tests)."""
    from nvfp4ctl.problems import resolve_problem

    return resolve_problem(task.problem)


__all__ = ["DEFAULT_SHAPE_SEED", "DEFAULT_TIMEOUT_S", "load_task_file", "parse_shape", "resolve_timeout", "select_items"]
