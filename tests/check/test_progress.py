"""What check says of a test the watchdog killed, from the job's last report: the harness's work (inputs,
reference, comparison) is not the kernel; a probe call after one returned is too slow, not stuck; only a call
never seen returning at that pace is a possible deadlock. A --timeout to give where the pace is known."""

from __future__ import annotations

import pytest

from nvfp4ctl.bench.call_progress import late_after_s
from nvfp4ctl.check.progress import (CALLING, COMPARING, MAKING_INPUTS, REFERENCE, CheckProgress, possible_deadlock,
                                     timeout_said)

TEST = "test 2 (m=256 n=128 k=32)"
# the first call's four phases, then the probe's refill and reference: a 3 s kernel, the rest quick
FIRST_CALL_DONE = ((MAKING_INPUTS, 0.1), (REFERENCE, 0.2), (CALLING, 3.0), (COMPARING, 0.1))
PROBE_READY = FIRST_CALL_DONE + ((MAKING_INPUTS, 0.1), (REFERENCE, 0.2))


def test_a_kill_in_the_first_making_has_no_pace_to_suggest_a_timeout_from() -> None:
    said = timeout_said(TEST, 180.0, CheckProgress(MAKING_INPUTS, 0.1, 1, 3))
    assert said == ("test 2 (m=256 n=128 k=32): making its inputs ran past the 180 s timeout (not the kernel); the child"
                    " was killed; give a larger --timeout, or check a smaller --shape")


def test_a_kill_in_the_harness_of_the_tasks_smallest_shape_is_told_the_timeout_alone() -> None:
    """No shape of less work listed (bench.call_progress.smaller_listed): "check a smaller --shape" is no advice."""
    said = timeout_said(TEST, 180.0, CheckProgress(REFERENCE, 0.1, 1, 3, ((MAKING_INPUTS, 0.1),)), smaller_listed=False)
    assert said == ("test 2 (m=256 n=128 k=32): computing the reference ran past the 180 s timeout (not the kernel); the"
                    " child was killed; give a larger --timeout")


def test_a_kill_in_the_probe_makings_suggests_a_timeout_for_what_is_left() -> None:
    # the fresh tuple, 120 s in: killed 60 s into it (longer than the 50 s the first took), then its reference,
    # call and comparison at the first call's pace: 120 + 60 + 3.3 s, 1.25 x that, to the next ten
    first = ((MAKING_INPUTS, 50.0), (REFERENCE, 0.2), (CALLING, 3.0), (COMPARING, 0.1))
    fresh = timeout_said(TEST, 180.0, CheckProgress(MAKING_INPUTS, 120.0, 3, 3, first + first))
    assert fresh == ("test 2 (m=256 n=128 k=32): making the anti-cache probe's inputs ran past the 180 s timeout (not the"
                     " kernel); the child was killed; its inputs took 50 s to make, so the test needs about 183 s at the"
                     " pace seen: give --timeout 230 or more, or --no-probe")
    # never a --timeout at or below the one that was too short
    assert timeout_said(TEST, 3.0, CheckProgress(MAKING_INPUTS, 1.0, 2, 3, ((MAKING_INPUTS, 0.5),))).endswith(
        "give --timeout 10 or more, or --no-probe")


def test_a_kill_in_the_reference_is_not_the_kernel() -> None:
    said = timeout_said(TEST, 3.0, CheckProgress(REFERENCE, 0.1, 1, 3, ((MAKING_INPUTS, 0.1),)))
    assert said == ("test 2 (m=256 n=128 k=32): computing the reference ran past the 3 s timeout (not the kernel); the"
                    " child was killed; give a larger --timeout, or check a smaller --shape")
    # the probe's: the first reference gives the pace; killed at 10 s, then call 2's call and comparison, call 3's
    # four phases: 10 + 3.1 + 3.4 s
    probe = timeout_said(TEST, 10.0, CheckProgress(REFERENCE, 3.5, 2, 3, FIRST_CALL_DONE + ((MAKING_INPUTS, 0.1),)))
    assert probe is not None and probe.startswith(
        "test 2 (m=256 n=128 k=32): computing the reference of call 2 of 3 (the anti-cache probe's) ran past the 10 s"
        " timeout (not the kernel); the child was killed; the reference took 0.20 s, so the test needs about 16 s")
    assert probe.endswith("give --timeout 30 or more, or --no-probe")


def test_a_kill_in_a_comparison_is_not_the_kernel() -> None:
    said = timeout_said(TEST, 7.0, CheckProgress(COMPARING, 3.3, 1, 1, FIRST_CALL_DONE[:3]))
    assert said == ("test 2 (m=256 n=128 k=32): comparing the output ran past the 7 s timeout (not the kernel); the"
                    " child was killed; give a larger --timeout, or check a smaller --shape")


def test_a_probe_call_after_one_returned_is_too_slow_not_stuck() -> None:
    # killed at 7.2 s, 3.6 s into call 2 of a 3 s kernel, then its comparison and call 3's four phases (3.5 s):
    # about 10.7 s
    said = timeout_said(TEST, 7.2, CheckProgress(CALLING, 3.6, 2, 3, PROBE_READY))
    assert said == ("test 2 (m=256 n=128 k=32): too slow for the 7.2 s timeout, not stuck: 3.00 s per call, and the"
                    " anti-cache probe makes 3 calls per test (call 2 was under way, the earlier returned), about 11 s"
                    " in all at the pace seen; the child was killed; give --timeout 20 or more, or --no-probe")


def test_a_call_never_seen_returning_stays_a_possible_deadlock() -> None:
    first = CheckProgress(CALLING, 0.3, 1, 3, FIRST_CALL_DONE[:2])
    assert timeout_said(TEST, 7.0, first) is None
    assert possible_deadlock(TEST, 7.0, first) == ("possible deadlock in test 2 (m=256 n=128 k=32): no result after 7 s;"
                                                   " the child was killed")
    # a probe call far past the first's time (bench's rule: 3 x it + a slack as long, 2 s to 10 s): it no longer returns
    stuck = CheckProgress(CALLING, 3.6, 2, 3, PROBE_READY)
    assert timeout_said(TEST, 180.0, stuck) is None
    assert possible_deadlock(TEST, 180.0, stuck) == (
        "possible deadlock in test 2 (m=256 n=128 k=32): no result after 180 s; call 2 of 3 (the anti-cache probe's)"
        " ran 176 s, where an earlier call returned in 3.00 s; the child was killed")


def test_the_bar_says_each_phase_in_the_kill_message_s_words() -> None:
    assert CheckProgress(MAKING_INPUTS, 0.0, 1, 3).describe() == "making its inputs"
    assert CheckProgress(CALLING, 0.3, 1, 1).describe() == "calling the kernel"
    assert CheckProgress(MAKING_INPUTS, 3.5, 3, 3, PROBE_READY).describe() == "making the anti-cache probe's inputs"
    assert CheckProgress(REFERENCE, 3.5, 2, 3).describe() == "computing the reference of call 2 of 3 (the anti-cache probe's)"
    assert CheckProgress(CALLING, 3.6, 2, 3, PROBE_READY).describe() == (
        "calling the kernel again, call 2 of 3 (the anti-cache probe's)")


# a first call that compiled (60 s, Triton or CuTe DSL JIT), then the probe's refill and reference
COMPILED = ((MAKING_INPUTS, 0.1), (REFERENCE, 0.2), (CALLING, 60.0), (COMPARING, 0.1))
COMPILED_PROBE_READY = COMPILED + ((MAKING_INPUTS, 0.1), (REFERENCE, 0.2))
# then a 1 s call 2 and call 3's inputs and reference
SECOND_RETURNED = COMPILED_PROBE_READY + ((CALLING, 1.0), (COMPARING, 0.1), (MAKING_INPUTS, 0.1), (REFERENCE, 0.2))


def test_where_a_second_call_returned_the_pace_is_the_calls_after_the_first() -> None:
    """A hang 20 s into call 3, after a 60 s first call (a compile) and a 1 s second: it was "too slow, not
    stuck" within 3 x 60 + 10 s; at the later calls' pace (3 x 1 + 2 s) it is a possible deadlock."""
    hung = CheckProgress(CALLING, 62.1, 3, 3, SECOND_RETURNED)
    assert timeout_said(TEST, 82.0, hung) is None
    assert possible_deadlock(TEST, 82.0, hung) == (
        "possible deadlock in test 2 (m=256 n=128 k=32): no result after 82 s; call 3 of 3 (the anti-cache probe's)"
        " ran 20 s, where call 2 returned in 1.00 s (the first, with any compile, in 60 s); the child was killed")
    # within that pace it is too slow, and what is left counts the later calls' pace, not the first's
    slow = timeout_said(TEST, 66.0, hung)
    assert slow == ("test 2 (m=256 n=128 k=32): too slow for the 66 s timeout, not stuck: 1.00 s per call after the"
                    " first, and the anti-cache probe makes 3 calls per test (call 3 was under way, the earlier returned),"
                    " about 66 s in all at the pace seen; the child was killed; give --timeout 90 or more, or --no-probe")
    assert timeout_said(TEST, 70.0, hung) is None  # 7.9 s into a 1 s call: within the fixed 10 s slack, stuck now


def test_a_kill_after_a_long_first_call_alone_names_a_compile_and_a_possible_hang() -> None:
    """Only the first call returned, in 60 s: it may have compiled, so its pace may not hold; "too slow, not
    stuck" was said of a hang after a slow first compile. Both readings now, and what tells them apart."""
    said = timeout_said(TEST, 160.0, CheckProgress(CALLING, 60.7, 2, 3, COMPILED_PROBE_READY))
    assert said == ("test 2 (m=256 n=128 k=32): call 2 of 3 (the anti-cache probe's) ran 99 s until the 160 s timeout,"
                    " where the first call returned in 60 s: too slow for the timeout at that pace (about 220 s in all),"
                    " or a possible deadlock, as the first call may have included a compile (Triton, CuTe DSL) that"
                    " later calls skip; the child was killed; give --timeout 280 or more to tell which, or --no-probe")
    # far past even the first call's pace: a possible deadlock, whose message says the first call may have compiled
    stuck = CheckProgress(CALLING, 60.7, 2, 3, COMPILED_PROBE_READY)
    assert timeout_said(TEST, 300.0, stuck) is None
    assert possible_deadlock(TEST, 300.0, stuck) == (
        "possible deadlock in test 2 (m=256 n=128 k=32): no result after 300 s; call 2 of 3 (the anti-cache probe's)"
        " ran 239 s, where the first call, which may have included a compile (Triton, CuTe DSL) that later calls"
        " skip, returned in 60 s; the child was killed")


def test_a_first_call_alone_of_at_most_10_s_is_the_pace_with_no_word_of_a_compile() -> None:
    """10 s is bench's slack: a first call within it is the pace, compile or not, and a kill far past it says so."""
    quick = ((MAKING_INPUTS, 0.1), (REFERENCE, 0.2), (CALLING, 10.0), (COMPARING, 0.1), (MAKING_INPUTS, 0.1),
             (REFERENCE, 0.2))
    stuck = CheckProgress(CALLING, 10.7, 2, 3, quick)
    assert timeout_said(TEST, 60.0, stuck) is None
    assert possible_deadlock(TEST, 60.0, stuck) == (
        "possible deadlock in test 2 (m=256 n=128 k=32): no result after 60 s; call 2 of 3 (the anti-cache probe's)"
        " ran 49 s, where an earlier call returned in 10 s; the child was killed")


@pytest.mark.parametrize(("per_call_s", "ran_s", "slow"), [
    (0.05, 1.0, True),  # a probe call a second into a 50 ms kernel: it may still return
    (0.05, 8.0, False),  # hung 8 s before the kill where a call takes 50 ms: a possible deadlock (was "too slow")
    (1.0, 4.5, True),
    (1.0, 6.0, False),
    (8.0, 31.0, True),  # slow calls keep the full slack: 3 × 8 s + 8 s
    (8.0, 33.0, False),
])
def test_the_slack_for_a_probe_call_grows_with_the_pace_as_bench_s_does(per_call_s: float, ran_s: float,
                                                                         slow: bool) -> None:
    """Bench's rule, one helper for both: the call's time 3 times over, plus a slack as long as that time, 2 s
    at least and 10 s at most; a fixed 10 s slack called a hang that began within ~10 s of the kill too slow."""
    done = ((MAKING_INPUTS, 0.1), (REFERENCE, 0.2), (CALLING, per_call_s), (COMPARING, 0.1), (MAKING_INPUTS, 0.1),
            (REFERENCE, 0.2))
    began_s = 0.7 + per_call_s
    said = timeout_said(TEST, began_s + ran_s, CheckProgress(CALLING, began_s, 2, 3, done))
    assert (said is not None and "not stuck" in said) is slow
    assert (said is None) is (ran_s > late_after_s(per_call_s))
