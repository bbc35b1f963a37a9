"""The leaderboard's statistics over per-call durations, and the geometric mean that ranks.

`summarize` is GPU MODE's `calculate_stats` (eval_better_bench.py): sample standard deviation
(n - 1), standard error of the mean, best and worst. Units are whatever the samples are in (ns).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Stats:
    runs: int
    mean: float
    std: float
    err: float  # standard error of the mean: std / sqrt(runs)
    best: float
    worst: float

    @property
    def rel_err(self) -> float:
        return self.err / self.mean if self.mean else math.inf

    def scaled(self, factor: float) -> Stats:
        """The same statistics in another unit (ns -> µs is 1e-3)."""
        return Stats(self.runs, self.mean * factor, self.std * factor, self.err * factor,
                     self.best * factor, self.worst * factor)

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def summarize(durations: Sequence[float]) -> Stats:
    if not durations:
        raise ValueError("no durations to summarize")
    runs = len(durations)
    mean = sum(durations) / runs
    variance = sum((x - mean) ** 2 for x in durations)
    # The leaderboard divides by runs - 1 unguarded; it never sees fewer than 3 runs. We may (tests).
    std = math.sqrt(variance / (runs - 1)) if runs > 1 else 0.0
    return Stats(runs=runs, mean=mean, std=std, err=std / math.sqrt(runs),
                 best=float(min(durations)), worst=float(max(durations)))


def geomean(values: Sequence[float]) -> float:
    """The ranking number (GPU MODE `ranking_by: geom`)."""
    if not values or any(v <= 0 for v in values):
        raise ValueError("geomean needs positive values")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def geomean_err(means: Sequence[float], errs: Sequence[float]) -> float:
    """Standard error of the geomean by first-order propagation: rel_err = sqrt(sum rel_i^2) / n."""
    rel = math.sqrt(sum((e / m) ** 2 for m, e in zip(means, errs))) / len(means)
    return geomean(means) * rel
