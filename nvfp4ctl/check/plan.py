"""What `check` will run, resolved once: the cases (--only, --shape, --seed) and the timeout."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nvfp4ctl.check.run import CheckItem
from nvfp4ctl.env import Env, env_str
from nvfp4ctl.errors import UsageError

DEFAULT_TIMEOUT_S = 180.0
DEFAULT_SHAPE_SEED = 1111  # the seed of every GPU MODE nvfp4_gemm test


def load_task_file(path: Path | None) -> Any:
    from nvfp4ctl.task import load_task  # deferred: keeps `nvfp4ctl --help` light

    return load_task(path)


def parse_shape(text: str) -> tuple[int, int, int, int]:
    """"M,N,K" or "M,N,K,L" (also with x or spaces) -> (m, n, k, l)."""
    parts = [p for p in text.replace("x", ",").replace(" ", ",").split(",") if p]
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in (3, 4) or any(n <= 0 for n in numbers):
        raise UsageError(f"--shape {text}: expected M,N,K or M,N,K,L as positive integers, e.g. --shape 128,7168,16384")
    m, n, k = numbers[:3]
    return m, n, k, numbers[3] if len(numbers) == 4 else 1


def select_items(task: Any, only: Sequence[int], shapes: Sequence[str], seed: int | None) -> list[CheckItem]:
    """--only N (1-based, several allowed) picks task.yml tests; --shape adds ad-hoc cases.

    With neither, every task.yml test runs. --seed replaces the seed of every case that runs.
    """
    tests = tuple(task.tests)
    for number in only:
        if not 1 <= number <= len(tests):
            span = f"1-{len(tests)}" if tests else "none"
            raise UsageError(f"--only {number}: task.yml has {len(tests)} tests ({span})")
    items: list[CheckItem] = []
    chosen = list(dict.fromkeys(only)) if only else ([] if shapes else range(1, len(tests) + 1))
    for number in chosen:
        case = tests[number - 1]
        items.append(CheckItem(str(number), case if seed is None else dataclasses.replace(case, seed=seed)))
    for position, text in enumerate(shapes, start=1):
        m, n, k, l = parse_shape(text)
        items.append(CheckItem(f"s{position}", _make_case(m, n, k, l, DEFAULT_SHAPE_SEED if seed is None else seed)))
    if not items:
        raise UsageError("nothing to check: task.yml has no tests; pass --shape M,N,K")
    return items


def _make_case(m: int, n: int, k: int, l: int, seed: int) -> Any:
    from nvfp4ctl.task import Case

    return Case(m=m, n=n, k=k, l=l, seed=seed)


def resolve_timeout(flag: float | None, task_timeout_s: float | None) -> tuple[float, str]:
    """Seconds per test and where they came from: --timeout > NVFP4CTL_TIMEOUT > task.yml > 180."""
    if flag is not None:
        if flag <= 0:
            raise UsageError(f"--timeout {flag:g}: expected seconds > 0")
        return flag, "--timeout"
    from_env = env_str(Env.TIMEOUT)
    if from_env is not None:
        try:
            seconds = float(from_env)
        except ValueError:
            seconds = -1.0
        if seconds <= 0:
            raise UsageError(f"{Env.TIMEOUT}={from_env}: expected seconds > 0")
        return seconds, Env.TIMEOUT
    if task_timeout_s is not None and task_timeout_s != DEFAULT_TIMEOUT_S:
        return float(task_timeout_s), "task.yml"
    return DEFAULT_TIMEOUT_S, "default"
