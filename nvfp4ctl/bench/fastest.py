"""Which of several targets was fastest at each shape, from the trends `log --trend` draws.

Only trends timed alike are compared: one GPU, one problem, one set of timing settings (a quick
`--max-repeats 3` run's numbers, or another card's, would crown the wrong file). Each target's cell is
its best logged mean over the runs its trend shows, with that run's number as the trend's legends count
it, so the try can be found in the plot above.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from nvfp4ctl.bench.trend import GEOMEAN, Trend


@dataclass(frozen=True)
class Best:
    mean: float  # µs, the lowest mean the target's trend shows for the shape
    run: int  # its run's number: 1 = the oldest run the trend shows
    fastest: bool  # the lowest of the row, where the row's times can be compared


@dataclass(frozen=True)
class ShapeRow:
    key: str  # the log's key, or GEOMEAN
    bests: list[Best | None]  # one per target of the standing; None: that target's runs never timed the shape
    compared: bool  # False: a geomean row whose targets' geomeans are over different sets of shapes


@dataclass(frozen=True)
class Standing:
    gpu: str
    problem: str
    settings: str  # as Trend.settings: "" for bench's defaults
    targets: list[str]
    rows: list[ShapeRow]


def standings(trends: Sequence[Trend], wanted: Collection[str] = (), with_geomean: bool = False) -> list[Standing]:
    """One standing per GPU, problem and timing settings that two or more of `trends` share, in the order their
    first trend comes; its targets in the trends' order, its shapes as their trends list them (`wanted`: only
    those keys), the geomean last."""
    groups: dict[tuple[str, str, str], list[Trend]] = {}
    for trend in trends:
        groups.setdefault((trend.gpu, trend.problem, trend.settings), []).append(trend)
    return [_standing(group, wanted, with_geomean) for group in groups.values() if len(group) > 1]


def _standing(group: list[Trend], wanted: Collection[str], with_geomean: bool) -> Standing:
    listed = dict.fromkeys(key for trend in group for key in trend.keys(with_geomean)
                           if key != GEOMEAN and (not wanted or key in wanted))
    keys = list(listed)
    if any(GEOMEAN in trend.keys(with_geomean) for trend in group) and (not wanted or GEOMEAN in wanted):
        keys.append(GEOMEAN)
    # a geomean over other shapes than another target's is no faster or slower than it
    same_set = len({trend.geomean_shapes() for trend in group}) == 1
    rows = [_row(group, key, compared=key != GEOMEAN or same_set) for key in keys]
    first = group[0]
    return Standing(first.gpu, first.problem, first.settings, [trend.target for trend in group], rows)


def _row(group: list[Trend], key: str, compared: bool) -> ShapeRow:
    found = [_best_of(trend.series(key)) for trend in group]
    means = [best[0] for best in found if best is not None]
    lowest = min(means) if compared and len(means) > 1 else None
    return ShapeRow(key, [None if best is None else Best(best[0], best[1], best[0] == lowest) for best in found],
                    compared)


def _best_of(values: Sequence[float | None]) -> tuple[float, int] | None:
    """The lowest value and its run's number (the first run of a tie, as the trend's summary names it)."""
    present = [value for value in values if value is not None]
    if not present:
        return None
    best = min(present)
    return best, values.index(best) + 1
