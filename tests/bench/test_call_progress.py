"""The watchdog's reading of a bench job's progress (bench/call_progress.py): what counts as a pace, when
a job is still running, and the --timeout suggested to a shape too slow for its timeout."""

from __future__ import annotations

import dataclasses

import pytest

from nvfp4ctl.bench.call_progress import CallProgress, CallTracker, LoopBound, suggested_timeout_s, too_slow
from nvfp4ctl.bench.modes import MODE_SETTINGS
from nvfp4ctl.bench.session import max_wall_s
from nvfp4ctl.bench.stopping import StoppingCriterion

BENCHMARK = MODE_SETTINGS["benchmark"]


def _loops(timeout_s: float, settle_s: float = 1.0) -> tuple[LoopBound, ...]:
    """The benchmark mode's loops of the first shape, as bench passes them (session._payload)."""
    warm = StoppingCriterion(max_repeats=BENCHMARK.warm_max_repeats, budget_s=BENCHMARK.warm_budget_s,
                             max_wall_s=max_wall_s(timeout_s))
    timed = StoppingCriterion(max_repeats=BENCHMARK.max_repeats, budget_s=BENCHMARK.budget_s,
                              max_wall_s=max_wall_s(timeout_s))
    return (LoopBound.of("warm-up", warm, wall_from_timeout=True),
            LoopBound.of("settle", StoppingCriterion.for_wall_time(settle_s), wall_from_timeout=False),
            LoopBound.of("timing", timed, wall_from_timeout=True))


def test_a_gpu_kernel_stuck_in_its_first_batch_is_not_said_slow(reports: list[CallProgress]) -> None:
    """A 50 s correctness pass (50 references, the checks, a first call's JIT) counted as call time let the
    warm-up's first report wait a whole "sample" of 50 s: a kernel hung in its first warm-up batch, killed
    130 s later, was said too slow, "1.00 s per call", not stuck. The pass's calls count, not its seconds."""
    tracker = CallTracker(50, _loops(180))
    tracker.passed(50)
    assert not reports[-1].still_running(5.0) and reports[-1].calls == 50
    assert reports[-1].describe() == "correctness pass, 50 of at least 500 calls"  # no pace yet
    tracker.enter("warm-up")
    assert not reports[-1].still_running(130.0)
    tracker.batch_done(20_000.0)  # a synchronized batch of 20 µs calls: now it runs, at that pace
    assert reports[-1].still_running(1.0) and not reports[-1].still_running(130.0)
    for _ in range(99):
        tracker.batch_done(20_000.0)
    assert reports[-1].describe() == "warm-up, 5050 calls, 20.00 µs per call"  # was 5.96 ms after a 30 s pass


def test_the_cpu_counts_each_call_of_the_pass_as_its_pace(reports: list[CallProgress]) -> None:
    tracker = CallTracker(2, _loops(180))
    counted = tracker.counting(lambda data: data)
    counted(1)
    assert reports[-1].paced_calls == 1 and reports[-1].still_running(1.0)


def _last(per_call_s: float, timeout_s: float, phase: str = "timing", samples_done: int = 1) -> CallProgress:
    """A CPU job killed in its `phase` at `timeout_s`, every call `per_call_s`, 50 calls a sample."""
    loops = _loops(timeout_s)
    sample_s = 50 * per_call_s
    pass_s = sample_s + 1.0  # the calls and the references
    before = sum(loop.most_s(per_call_s, sample_s, timeout_s) for loop in loops[:2]) if phase == "timing" else 0.0
    began = pass_s + before
    calls = 50 + samples_done * 50
    return CallProgress(phase, calls, calls, calls * per_call_s, 50, 50 * (1 + 9), began + samples_done * sample_s,
                        sample_s, sample_s, began, loops)


def _job_s(per_call_s: float, timeout_s: float) -> float:
    """The job's length when it runs to its end under `timeout_s`: the pass, then each loop as
    StoppingCriterion stops it, the CPU's samples all alike (so the noise never stops them)."""
    sample_s = 50 * per_call_s
    total = sample_s + 1.0
    for loop in _loops(timeout_s):
        criterion = StoppingCriterion(max_repeats=loop.max_repeats, budget_s=loop.budget_s, max_noise=0.0,
                                      max_wall_s=max_wall_s(timeout_s) if loop.wall_from_timeout else loop.max_wall_s)
        elapsed = 0.0
        while not criterion.is_finished():
            elapsed += sample_s
            criterion.add(per_call_s * 1e9, elapsed)
        total += elapsed
    return total


@pytest.mark.parametrize("per_call_s", [0.002, 0.01, 0.05, 0.3, 1.8])
def test_the_suggested_timeout_is_enough_for_the_loops_run_to_their_caps(per_call_s: float) -> None:
    """A shape on the CPU killed at --timeout 8 was told --timeout 40, then 80: the suggestion counted the
    least samples (3 a loop) where the timed loop runs to its budget, 200 repeats or its wall cap (80% of the
    timeout, at most 120 s); the job needed about 150 s. Followed, the suggestion now does."""
    suggested = suggested_timeout_s(8, _last(per_call_s, 8))
    assert suggested % 10 == 0 and suggested > 8
    assert _job_s(per_call_s, suggested) <= suggested, (suggested, _job_s(per_call_s, suggested))


def test_a_shape_whose_timed_loop_runs_to_its_wall_cap_is_told_so() -> None:
    last = _last(0.02, 8)  # 1 s samples: 200 repeats would take 200 s, the wall cap stops the loop first
    assert suggested_timeout_s(8, last) >= 150  # where the cap stops growing with the timeout (120 s)
    said = too_slow("bench 256x1024x2048", 8, last)
    assert "their wall caps (the timed loop's is 80% of the timeout, at most 120 s)" in said, said
    assert said.endswith(f"give --timeout {suggested_timeout_s(8, last)} or more")


def test_the_least_time_a_gpu_job_needs_is_paced_by_its_batches_wall_time() -> None:
    """"about X s in all" multiplied the calls left by the kernel's event time, where a batch also clears L2
    and holds the queue: a job said to need less than its own samples' wall time implies."""
    job = CallProgress("timing", calls=100, paced_calls=100, paced_s=100 * 20e-6, calls_per_sample=50,
                       calls_needed=350, elapsed_s=10.0, next_within_s=1.0, sample_wall_s=0.5)
    assert job.expected_s() == pytest.approx(10.0 + 250 * 0.5 / 50)


def test_the_suggested_timeout_counts_the_minute_the_input_sets_took() -> None:
    """The timeout runs from the job's start: a shape whose input sets took 60 s to make needs them on top."""
    ran = _last(0.01, 8)
    last = dataclasses.replace(ran, elapsed_s=ran.elapsed_s + 60, phase_began_s=ran.phase_began_s + 60, inputs_s=60.0)
    suggested = suggested_timeout_s(8, last)
    assert 60 + _job_s(0.01, suggested) <= suggested, (suggested, _job_s(0.01, suggested))
    said = too_slow("bench 256x1024x2048", 8, last)
    assert " in all (making its input sets took 60 s), but its loops repeat" in said, said
    assert "making its input sets" not in too_slow("bench 256x1024x2048", 8, ran)


def test_a_job_killed_while_making_its_input_sets_is_told_what_making_them_takes() -> None:
    from nvfp4ctl.bench.call_progress import INPUTS, too_slow_making_inputs

    making = CallProgress(INPUTS, calls=0, paced_calls=0, paced_s=0.0, calls_per_sample=50, calls_needed=350,
                          elapsed_s=8.0, next_within_s=2.0, inputs_s=8.0, sets_made=4)
    assert making.describe() == "making its input sets, 4 of 50"
    said = too_slow_making_inputs("bench 256x1024x2048", 8, making)
    assert said == ("bench 256x1024x2048 is too slow for the 8 s timeout, not stuck: it was still making its input sets"
                    " (4 of 50 made in 8.00 s, 2.00 s each), before the kernel's first call; making all 50 takes about"
                    " 100 s, and its calls come on top; time a smaller --shape, or give --timeout 130 or more")
    first = dataclasses.replace(making, sets_made=0)
    assert too_slow_making_inputs("bench 256x1024x2048", 8, first) == (
        "bench 256x1024x2048 is too slow for the 8 s timeout, not stuck: it was still making the first of its 50"
        " input sets, before the kernel's first call; time a smaller --shape, or give a larger --timeout")


@pytest.mark.parametrize(("next_within_s", "silent_s", "slow"), [
    (0.05, 1.0, True),  # a report or two late: the calls still return
    (0.05, 8.0, False),  # hung 8 s before the kill where a call takes 50 ms: a possible deadlock (was "too slow")
    (1.0, 4.5, True),
    (1.0, 6.0, False),
    (20.0, 65.0, True),  # slow calls keep the full slack: 3 × 20 s + 10 s
    (20.0, 75.0, False),
])
def test_the_slack_for_a_late_report_grows_with_the_pace(next_within_s: float, silent_s: float, slow: bool) -> None:
    from types import SimpleNamespace

    from nvfp4ctl.bench.session import _slow_not_stuck

    last = dataclasses.replace(_last(0.05, 25.0), next_within_s=next_within_s)
    assert last.still_running(silent_s) is slow
    killed = SimpleNamespace(progress=last, progress_age_s=silent_s, log_tail="", log_path=None)
    said = _slow_not_stuck(killed, "bench 128x7168x16384", 25.0)
    assert (said is not None and "too slow for the 25 s timeout, not stuck" in str(said)) is slow


def test_a_cpu_job_that_cannot_end_in_its_timeout_stops_once_its_pace_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU bench of the benchmark shapes ran 3 minutes to the watchdog's kill, where its first calls already
    showed that 350 calls of 1 s each could never end within 180 s."""
    from nvfp4ctl.bench import call_progress
    from nvfp4ctl.bench.call_progress import CannotFinish

    now = [13.0]  # the input sets took 13 s
    monkeypatch.setattr(call_progress.time, "perf_counter", lambda: now[0])
    tracker = CallTracker(50, _loops(180), started=0.0, timeout_s=180)
    now[0] = 33.0
    tracker.returned(1, 20.0, next_within_s=20.0)  # a first call's one-off cost (a JIT) sets no pace to judge by
    for second in range(34, 51):  # judged once 3 calls after the first returned, and 18 s (a tenth of 180 s) since it
        now[0] = float(second)
        tracker.returned(1, 1.0, next_within_s=1.0)
    now[0] = 51.0
    with pytest.raises(CannotFinish) as stopped:
        tracker.returned(1, 1.0, next_within_s=1.0)
    last = stopped.value.progress
    assert last.calls == 19 and last.elapsed_s == 51.0
    said = too_slow("bench 128x7168x16384", 180, last)
    # the pace said is the later calls': the first one's 20 s would have it ask for a --timeout of hours
    assert said.startswith("bench 128x7168x16384 is too slow for the 180 s timeout, not stuck: 1.00 s per call"
                           " (19 calls returned)"), said
    assert "about 532 s in all" in said, said  # 51 s so far, 481 calls left at 1 s, no check timed yet
    assert said.endswith(f"or give --timeout {suggested_timeout_s(180, last)} or more")


def test_a_cpu_job_that_fits_or_has_no_timeout_runs_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.bench import call_progress

    now = [1.0]
    monkeypatch.setattr(call_progress.time, "perf_counter", lambda: now[0])
    fits = CallTracker(50, _loops(180), started=0.0, timeout_s=180)
    unjudged = CallTracker(50, _loops(180), started=0.0)  # a GPU job's: the watchdog alone judges it
    for _ in range(3):
        fits.returned(1, 0.1, next_within_s=0.1)  # 500 calls of 0.1 s: 50 s, well within 180 s
        unjudged.returned(1, 10.0, next_within_s=10.0)
    assert fits.calls == unjudged.calls == 3


def test_a_cpu_job_counts_no_check_it_has_not_timed_against_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before any output was checked, each of the 50 checks left counted as long as a call: a submission slower
    than its check (0.1 s calls, references of a few ms) was stopped as needing 5 s more than it did, though
    it would end within its timeout. Once a check is timed, the checks left count at its cost."""
    from nvfp4ctl.bench import call_progress

    now = [2.0]  # the first call (and the input sets) took 2 s
    monkeypatch.setattr(call_progress.time, "perf_counter", lambda: now[0])
    tracker = CallTracker(50, _loops(55), started=0.0, timeout_s=55)
    tracker.returned(1, 2.0, next_within_s=2.0)
    now[0] = 2.1
    tracker.returned(1, 0.1, next_within_s=0.1)  # 2.1 s + 498 calls of 0.1 s: 51.9 s, within 55 s
    assert tracker.calls == 2 and tracker.least_s() == pytest.approx(51.9)
    now[0] = 2.2
    tracker.checked(0.05)  # one check of 50 ms: the 49 left count at it
    assert tracker.least_s() == pytest.approx(2.2 + 498 * 0.1 + 49 * 0.05)


def test_a_cpu_job_that_stops_itself_says_the_least_time_its_bound_judged_by(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound counts a check not made yet as nothing, where the message counted each at a call's pace: a shape
    stopped as needing 51 s of a 50 s timeout was said to need "about 56 s in all", a figure the bound never found."""
    from nvfp4ctl.bench import call_progress
    from nvfp4ctl.bench.call_progress import CannotFinish, duration_text

    now = [1.0]  # the input sets took 1 s
    monkeypatch.setattr(call_progress.time, "perf_counter", lambda: now[0])
    tracker = CallTracker(10, _loops(50), started=0.0, timeout_s=50)
    now[0] = 1.5
    tracker.returned(1, 0.5, next_within_s=0.5)
    for call in range(2, 11):  # judged from 5 s (a tenth of 50 s) after the first returned
        now[0] = 1.0 + call * 0.5
        tracker.returned(1, 0.5, next_within_s=0.5)
    now[0] = 6.5
    bound_s = 6.5 + 89 * 0.5  # 100 calls at least (the pass, 3 samples of each of 3 loops), 89 left, no check timed
    with pytest.raises(CannotFinish) as stopped:
        tracker.returned(1, 0.5, next_within_s=0.5)
    assert tracker.least_s() == pytest.approx(bound_s) and bound_s > 50
    said = too_slow("bench 256x1024x2048", 50, stopped.value.progress)
    assert f"about {duration_text(bound_s)} in all" in said, said


@pytest.mark.parametrize("warming_up_s", [(0.06, 0.08), (0.06, 0.08, 0.07, 0.09, 0.1)])  # the latter on a busy host
def test_a_cpu_job_whose_next_calls_are_still_warming_up_runs_on(monkeypatch: pytest.MonkeyPatch,
                                                                  warming_up_s: tuple[float, ...]) -> None:
    """torch's CPU warm-up made the second call slow too: a shape of 0.4 ms calls was stopped after its second,
    "too slow for the 20 s timeout, not stuck: 60.21 ms per call (2 calls returned)", exit 3. The pace is judged
    once 3 calls after the first have returned and a tenth of the timeout has passed, the fastest setting it."""
    from nvfp4ctl.bench import call_progress

    now = [0.0]
    monkeypatch.setattr(call_progress.time, "perf_counter", lambda: now[0])
    tracker = CallTracker(50, _loops(20), started=0.0, timeout_s=20)
    for seconds in warming_up_s + (0.0004,) * 60:  # 500 calls at 70 ms would take 35 s
        now[0] += seconds
        tracker.returned(1, seconds, next_within_s=seconds)
    assert tracker.calls == len(warming_up_s) + 60 and tracker.least_s() < 20


def test_a_cpu_job_of_slow_calls_alone_still_stops_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls of 60 ms each against a 1 s timeout: 500 of them can never fit, said after 4 calls (0.24 s)."""
    from nvfp4ctl.bench import call_progress
    from nvfp4ctl.bench.call_progress import CALLS_BEFORE_JUDGING, CannotFinish

    now = [0.0]
    monkeypatch.setattr(call_progress.time, "perf_counter", lambda: now[0])
    tracker = CallTracker(50, _loops(1), started=0.0, timeout_s=1)
    with pytest.raises(CannotFinish) as stopped:
        for _ in range(10):
            now[0] += 0.06
            tracker.returned(1, 0.06, next_within_s=0.06)
    assert stopped.value.progress.calls == 1 + CALLS_BEFORE_JUDGING
    said = too_slow("bench 128x256x256", 1, stopped.value.progress)
    assert said.startswith("bench 128x256x256 is too slow for the 1 s timeout, not stuck: 60.00 ms per call"
                           f" ({1 + CALLS_BEFORE_JUDGING} calls returned)"), said


def test_a_shape_with_no_smaller_one_listed_is_told_the_timeout_alone() -> None:
    """bench --shape 128,256,256 on the CPU was told "time a smaller --shape" though no task shape is smaller."""
    from nvfp4ctl.bench.call_progress import INPUTS, too_slow_making_inputs

    last = _last(0.02, 8)
    suggested = suggested_timeout_s(8, last)
    said = too_slow("bench 128x256x256", 8, last, smaller_listed=False)
    assert said.endswith(f" s; give --timeout {suggested} or more") and "smaller" not in said, said
    assert too_slow("bench 128x256x256", 8, last).endswith(f"; time a smaller --shape, or give --timeout {suggested} or more")
    making = CallProgress(INPUTS, calls=0, paced_calls=0, paced_s=0.0, calls_per_sample=50, calls_needed=350,
                          elapsed_s=8.0, next_within_s=2.0, inputs_s=8.0, sets_made=4)
    assert too_slow_making_inputs("bench 128x256x256", 8, making, smaller_listed=False).endswith(
        "before the kernel's first call; making all 50 takes about 100 s, and its calls come on top; give --timeout 130"
        " or more")
    first = dataclasses.replace(making, sets_made=0)
    assert too_slow_making_inputs("bench 128x256x256", 8, first, smaller_listed=False).endswith(
        "before the kernel's first call; give a larger --timeout")


def test_a_smaller_shape_is_advice_only_where_the_task_lists_one() -> None:
    from nvfp4ctl.bench.session import smaller_listed
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.task import Case

    problem = get_problem("nvfp4_gemm")
    listed = (Case(m=128, n=256, k=256, l=1, seed=1111), Case(m=128, n=7168, k=16384, l=1, seed=1111))
    assert not smaller_listed(problem, listed[0], listed)  # the task's smallest
    assert not smaller_listed(problem, Case(m=128, n=64, k=256, l=1, seed=1111), listed)  # smaller than any listed
    assert smaller_listed(problem, listed[1], listed)
    assert smaller_listed(problem, listed[0], ())  # no task shapes to judge by: the advice stands
