import random

import pytest

from leaderboard_loop import should_stop
from nvfp4ctl.bench.stopping import BUDGET, CONVERGED, MAX_REPEATS, WALL_LIMIT, StoppingCriterion


def _feed(criterion: StoppingCriterion, samples: list[float], step_s: float) -> int:
    criterion.reset()
    for index, sample in enumerate(samples):
        criterion.add(sample, (index + 1) * step_s)
        if criterion.is_finished():
            return index + 1
    return len(samples)


def _leaderboard_runs(samples: list[float], step_s: float, max_repeats: int, max_time_ns: float) -> int:
    durations: list[float] = []
    for i in range(max_repeats):
        durations.append(samples[i])
        if should_stop(i, durations, (i + 1) * step_s * 1e9, max_time_ns):
            break
    return len(durations)


@pytest.mark.parametrize("noise", [0.0, 0.001, 0.01, 0.05])
@pytest.mark.parametrize("step_s", [0.001, 0.02, 0.7])
def test_same_number_of_repeats_as_the_leaderboard(noise: float, step_s: float) -> None:
    rng = random.Random(7)
    samples = [10_000.0 * (1 + rng.gauss(0, noise)) for _ in range(200)]
    ours = _feed(StoppingCriterion(max_repeats=200, budget_s=10.0), samples, step_s)
    assert ours == _leaderboard_runs(samples, step_s, 200, 10e9)


def test_needs_three_samples_and_100_ms() -> None:
    criterion = StoppingCriterion()
    criterion.add(1000.0, 0.5)
    criterion.add(1000.0, 0.6)
    assert not criterion.is_finished()  # identical samples, but only two
    criterion.reset()
    for elapsed in (0.01, 0.02, 0.03, 0.04):
        criterion.add(1000.0, elapsed)
    assert not criterion.is_finished()  # converged, but not 100 ms yet
    criterion.add(1000.0, 0.2)
    assert criterion.reason == CONVERGED


def test_budget_is_mean_per_call_times_runs() -> None:
    criterion = StoppingCriterion(budget_s=1e-4)  # 100 µs of "mean × runs"
    for index, sample in enumerate([40_000.0, 20_000.0, 60_000.0]):
        criterion.add(sample, 0.2 * (index + 1))
    assert criterion.reason == BUDGET  # 3 × 40 µs = 120 µs > 100 µs, noise still high


def test_wall_limit_and_max_repeats() -> None:
    criterion = StoppingCriterion(max_wall_s=1.0)
    for index, sample in enumerate([1.0, 2.0, 3.0]):
        criterion.add(sample, 0.6 * (index + 1))
    assert criterion.reason == WALL_LIMIT
    criterion = StoppingCriterion(max_repeats=4, min_time_s=100.0)
    for sample in (1.0, 2.0, 3.0, 4.0):
        criterion.add(sample, 0.01)
    assert criterion.reason == MAX_REPEATS and len(criterion.samples_ns) == 4


def test_settle_criterion_runs_for_its_wall_time_whatever_the_noise() -> None:
    criterion = StoppingCriterion.for_wall_time(0.5)
    for elapsed in (0.1, 0.2, 0.3, 0.4, 0.5):
        criterion.add(1000.0, elapsed)  # no noise at all: the leaderboard's rule would have stopped
        assert not criterion.is_finished()
    criterion.add(1000.0, 0.6)
    assert criterion.reason == WALL_LIMIT


def test_a_target_timing_zero_stops_without_dividing_by_its_mean() -> None:
    """A call that launches no GPU work times 0 every repeat: no noise, so the loop ends once it may."""
    criterion = StoppingCriterion()
    assert _feed(criterion, [0.0] * 10, step_s=0.05) == 3 and criterion.reason == CONVERGED
