"""The leaderboard's two timing modes, as GPU MODE's eval_better_bench.py `main` runs them.

benchmark:   one warm-up run of the first shape (200 repeats, budget 1e8 ns), then every shape with
             at most 200 repeats and a 10 s budget, no recheck.
leaderboard: a warm-up run of every shape first (1000 repeats, budget 5e8 ns), then every shape
             with at most 1000 repeats, a 30 s budget and the recheck after every repeat.
A budget is the mean time per call × the repeats (bench/stopping.py), not wall time: for µs kernels it
never ends a loop, which stops on its noise, its repeats or 120 s of wall time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BENCHMARK, LEADERBOARD = "benchmark", "leaderboard"
MODES = (BENCHMARK, LEADERBOARD)

# Seconds of the timing loop, untimed, before each shape's timed repeats. The leaderboard's rule
# stops after ~100 ms, so without this a shape is timed in whatever state the work before it left
# the card: on an H100 (2026-11-26) the big shape's main loop stretched from 45.5 to 46.2 µs over
# the first 2 s of steady load at an unchanged reported SM clock, and consecutive benches differed
# by up to 2.5 % on that shape. (The leaderboard's 64 GB randn between repeats keeps its card busy.)
DEFAULT_SETTLE_S = 1.0


@dataclass(frozen=True)
class Mode:
    name: str
    max_repeats: int
    budget_s: float
    recheck: bool
    warm_first_only: bool  # warm the first shape (benchmark) or every shape (leaderboard)
    warm_max_repeats: int
    warm_budget_s: float


MODE_SETTINGS = {
    BENCHMARK: Mode(BENCHMARK, max_repeats=200, budget_s=10.0, recheck=False,
                    warm_first_only=True, warm_max_repeats=200, warm_budget_s=0.1),
    LEADERBOARD: Mode(LEADERBOARD, max_repeats=1000, budget_s=30.0, recheck=True,
                      warm_first_only=False, warm_max_repeats=1000, warm_budget_s=0.5),
}


def run_timeout_key(mode: str) -> str:
    """The task.yml key of GPU MODE's limit for a mode's runs: its benchmark runs' (benchmark_timeout), or
    its ranked runs' (ranked_timeout: 300 s for the grouped GEMM, where the others are 180 s)."""
    from nvfp4ctl.task import BENCHMARK_TIMEOUT, RANKED_TIMEOUT  # the task reader (yaml) only once a bench runs

    return RANKED_TIMEOUT if mode == LEADERBOARD else BENCHMARK_TIMEOUT


def whole_run_limit(task: Any, mode: str) -> tuple[float, str]:
    """(seconds, where they were read) of GPU MODE's limit on a whole run of `mode`, which bench gives each
    shape instead: the task file's key for the run (or its `timeout:`), else the default 180 s."""
    from nvfp4ctl.problems.fields import DEFAULT_TIMEOUT_S
    from nvfp4ctl.workspace import task_file_name

    setting = task.timeout_for(run_timeout_key(mode))
    if setting is None:
        return DEFAULT_TIMEOUT_S, "default"
    return setting[0], f"{task_file_name(task.path)} {setting[1]}"
