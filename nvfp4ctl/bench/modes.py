"""The leaderboard's two timing modes, as GPU MODE's eval_better_bench.py `main` runs them.

benchmark:   one warm-up run of the first shape (200 repeats, budget 1e8 ns), then every shape with
             at most 200 repeats and a 10 s budget, no recheck.
leaderboard: a warm-up run of every shape first (1000 repeats, budget 5e8 ns), then every shape
             with at most 1000 repeats, a 30 s budget and the recheck after every repeat.
"""

from __future__ import annotations

from dataclasses import dataclass

BENCHMARK, LEADERBOARD = "benchmark", "leaderboard"
MODES = (BENCHMARK, LEADERBOARD)


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
