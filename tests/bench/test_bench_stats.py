import math

import pytest

from leaderboard_loop import calculate_stats
from nvfp4ctl.bench.stats import geomean, geomean_err, summarize


def test_summarize_matches_the_leaderboard_formula() -> None:
    durations = [10_000.0, 10_400.0, 9_800.0, 10_100.0]
    ours = summarize(durations)
    theirs = calculate_stats(durations)
    assert ours.to_dict() == pytest.approx(theirs)
    assert ours.runs == 4 and ours.mean == pytest.approx(10_075.0)
    assert ours.std == pytest.approx(math.sqrt(sum((d - 10_075.0) ** 2 for d in durations) / 3))
    assert ours.err == pytest.approx(ours.std / 2)
    assert (ours.best, ours.worst) == (9_800.0, 10_400.0)


def test_summarize_one_sample_has_no_spread() -> None:
    assert summarize([5.0]).std == 0.0


def test_scaled_changes_units_only() -> None:
    stats = summarize([1000.0, 3000.0]).scaled(1e-3)
    assert (stats.mean, stats.best, stats.worst, stats.runs) == (2.0, 1.0, 3.0, 2)


def test_geomean_and_its_error() -> None:
    assert geomean([98.1, 30.2, 17.0]) == pytest.approx((98.1 * 30.2 * 17.0) ** (1 / 3))
    # 1 % error on each of three shapes -> sqrt(3) % / 3 on the geomean
    err = geomean_err([100.0, 10.0, 1.0], [1.0, 0.1, 0.01])
    assert err / 10.0 == pytest.approx(math.sqrt(3) * 0.01 / 3)
    with pytest.raises(ValueError):
        geomean([1.0, 0.0])


def test_task_speed_of_light_geomean() -> None:
    assert geomean([8.994, 2.354, 1.333]) == pytest.approx(3.04, abs=0.01)  # FACTS.md: geomean ≈ 3.04 µs
