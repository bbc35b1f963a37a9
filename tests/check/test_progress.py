"""What check says of a test killed while its inputs were made: no possible deadlock, and a --timeout to give
where a making that finished gives the pace."""

from __future__ import annotations

from nvfp4ctl.check.progress import MAKING_INPUTS, CheckProgress, making_inputs_timeout

TEST = "test 2 (m=256 n=128 k=32)"


def test_a_kill_in_the_first_making_has_no_pace_to_suggest_a_timeout_from() -> None:
    said = making_inputs_timeout(TEST, 180.0, CheckProgress(MAKING_INPUTS, 0.1, (), 2))
    assert said == ("test 2 (m=256 n=128 k=32): making its inputs ran past the 180 s timeout (not the kernel); the child"
                    " was killed; give a larger --timeout, or check a smaller --shape")


def test_a_kill_in_the_probe_makings_suggests_a_timeout_for_the_makings_left() -> None:
    # the fresh tuple (none left after it): 120 s in, 50 s a making, 170 s needed, 1.25 x that, to the next ten
    fresh = making_inputs_timeout(TEST, 180.0, CheckProgress(MAKING_INPUTS, 120.0, (50.0, 10.0), 0))
    assert fresh.startswith("test 2 (m=256 n=128 k=32): making the anti-cache probe's inputs ran past the 180 s timeout"
                            " (not the kernel); the child was killed; ")
    assert fresh.endswith("its inputs took 50.0 s to make, so the test needs about 170 s, its calls on top:"
                          " give --timeout 220 or more, or --no-probe")
    # the refill, with the fresh tuple still to make: the same 170 s
    refill = making_inputs_timeout(TEST, 180.0, CheckProgress(MAKING_INPUTS, 70.0, (50.0,), 1))
    assert refill.endswith("so the test needs about 170 s, its calls on top: give --timeout 220 or more, or --no-probe")
    # never a --timeout at or below the one that was too short
    assert making_inputs_timeout(TEST, 180.0, CheckProgress(MAKING_INPUTS, 10.0, (1.0,), 0)).endswith(
        "give --timeout 190 or more, or --no-probe")
