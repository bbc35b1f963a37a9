"""When to stop repeating: the leaderboard's rule as a criterion object (reset / add / is_finished).

GPU MODE's loop (eval_better_bench.py `_run_single_benchmark`), per repeat i = 0, 1, ...:
after the sample is added, if i > 1 (at least 3 samples) and more than 100 ms of wall time have
passed since the timed loop began, stop when err/mean < 0.1 %, or mean × runs > the budget, or
120 s of wall time have passed; and never run more than max_repeats. Note: mean is per call, so
"mean × runs" is 1/50 of the GPU time measured, not wall time; for µs kernels the budget never
triggers and the run ends on noise or on max_repeats.

Parameter names follow the flags (`--max-repeats`, `--max-noise`); the rest are the leaderboard's
constants, kept as parameters so tests can shrink them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nvfp4ctl.bench.stats import Stats, summarize

CONVERGED, BUDGET, WALL_LIMIT, MAX_REPEATS = "converged", "budget", "wall-limit", "max-repeats"


@dataclass
class StoppingCriterion:
    max_repeats: int = 200  # 1000 in leaderboard mode
    max_noise: float = 0.001  # stop when err / mean falls below this (0.1 %)
    budget_s: float = 10.0  # stop when mean × runs exceeds this (30 s in leaderboard mode)
    min_repeats: int = 3  # the leaderboard's `i > 1`
    min_time_s: float = 0.1  # the leaderboard's `total_bm_duration > 1e8` ns
    max_wall_s: float = 120.0  # the leaderboard's `total_bm_duration > 120e9` ns
    samples_ns: list[float] = field(default_factory=list, init=False)
    elapsed_s: float = field(default=0.0, init=False)
    reason: str | None = field(default=None, init=False)

    @classmethod
    def for_wall_time(cls, seconds: float) -> "StoppingCriterion":
        """Repeat for `seconds` of wall time whatever the noise (the settle phase before timing)."""
        return cls(max_repeats=1 << 30, max_noise=0.0, budget_s=float("inf"), min_time_s=0.0, max_wall_s=seconds)

    def reset(self) -> None:
        self.samples_ns = []
        self.elapsed_s = 0.0
        self.reason = None

    def add(self, sample_ns: float, elapsed_s: float) -> None:
        """One per-call duration (ns) and the wall time since the timed loop began."""
        self.samples_ns.append(sample_ns)
        self.elapsed_s = elapsed_s
        self.reason = self._decide()

    def is_finished(self) -> bool:
        return self.reason is not None

    def stats(self) -> Stats:
        return summarize(self.samples_ns)

    def _decide(self) -> str | None:
        runs = len(self.samples_ns)
        if runs >= self.min_repeats and self.elapsed_s > self.min_time_s:
            stats = self.stats()
            # a target that launches no GPU work times 0 every repeat: no noise left (the parent refuses it)
            if stats.mean == 0 or stats.err / stats.mean < self.max_noise:
                return CONVERGED
            if stats.mean * stats.runs > self.budget_s * 1e9:
                return BUDGET
            if self.elapsed_s > self.max_wall_s:
                return WALL_LIMIT
        if runs >= self.max_repeats:
            return MAX_REPEATS
        return None
