"""What `check` will run, resolved once: the cases (--only, --shape, --seed) and the timeout."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nvfp4ctl.check.run import CheckItem
from nvfp4ctl.errors import UsageError
from nvfp4ctl.options import DEFAULT_TIMEOUT_S, parse_shape, resolve_timeout

DEFAULT_SHAPE_SEED = 1111  # the seed of every GPU MODE nvfp4_gemm test


def load_task_file(path: Path | None) -> Any:
    from nvfp4ctl.task import load_task  # deferred: keeps `nvfp4ctl --help` light

    return load_task(path)


def select_items(task: Any, only: Sequence[int], shapes: Sequence[str], seed: int | None) -> list[CheckItem]:
    """--only N (1-based, several allowed) picks task.yml tests; --shape adds ad-hoc cases.

    With neither, every task.yml test runs. --seed replaces the seed of every case that runs.
    """
    tests = tuple(task.tests)
    for number in only:
        if not 1 <= number <= len(tests):
            span = f"1-{len(tests)}" if tests else "none"
            raise UsageError(f"--only {number}: task.yml has {len(tests)} tests ({span})")
    spec = problem_of(task)
    items: list[CheckItem] = []
    chosen = list(dict.fromkeys(only)) if only else ([] if shapes else range(1, len(tests) + 1))
    for number in chosen:
        case = tests[number - 1]
        case = case if seed is None else dataclasses.replace(case, seed=seed)
        items.append(CheckItem(str(number), case, _shape_text(spec, case)))
    for position, text in enumerate(shapes, start=1):
        case = _shape_case(spec, text, DEFAULT_SHAPE_SEED if seed is None else seed)
        items.append(CheckItem(f"s{position}", case, _shape_text(spec, case)))
    if not items:
        syntax = getattr(spec, "shape_syntax", "M,N,K")
        raise UsageError(f"nothing to check: task.yml has no tests; pass --shape {syntax}")
    return items


def problem_of(task: Any) -> Any:
    """The task's problem object (a registered name, or "module:attribute" in tests)."""
    from nvfp4ctl.problems import resolve_problem

    return resolve_problem(task.problem)


def _shape_case(spec: Any, text: str, seed: int) -> Any:
    if hasattr(spec, "parse_shape"):
        return spec.parse_shape(text, seed)  # the problem's own syntax (GEMV M,K; groups M,N,K;...)
    m, n, k, l = parse_shape(text)
    return _make_case(m, n, k, l, seed)


def _shape_text(spec: Any, case: Any) -> str:
    return spec.shape_text(case) if hasattr(spec, "shape_text") else ""


def _make_case(m: int, n: int, k: int, l: int, seed: int) -> Any:
    from nvfp4ctl.task import Case

    return Case(m=m, n=n, k=k, l=l, seed=seed)


__all__ = ["DEFAULT_SHAPE_SEED", "DEFAULT_TIMEOUT_S", "load_task_file", "parse_shape", "resolve_timeout", "select_items"]
