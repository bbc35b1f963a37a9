"""The worker's rematch job on fakes: both candidates checked, then timed current, challenger,
challenger, current; each side's time the mean of its two timings (a linear drift cancels), a side
that fails its check reported alone."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from nvfp4ctl.check import job as check_job
from nvfp4ctl.tune import jobs
from nvfp4ctl.tune.results import OK, UNSUPPORTED, WRONG

SETTINGS = {"case": None, "problem": "nvfp4_gemm", "rtol": 1e-3, "atol": 1e-3, "criterion": {}, "settle_s": 0.0,
            "input_sets": 1}


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch):
    order: list[str] = []
    wrong: set[str] = set()
    monkeypatch.setattr(jobs, "load_candidate", lambda artifact, problem: artifact["name"])

    def check_case(kernel, **_):
        return SimpleNamespace(passed=kernel not in wrong, problems=[f"{kernel} is wrong"], raised=(), refused=None,
                               comparison=None, phase="first call")

    def bench_samples(kernel, *_):
        order.append(kernel)
        drift = 1.0 - 0.01 * len(order)  # every timing 1 % faster than the one before
        base = {"current": 10.0, "challenger": 9.0}[kernel]
        return [base * drift * 1e3] * (3 if len(order) % 2 else 5)  # uneven repeat counts, in ns

    monkeypatch.setattr(check_job, "check_case", check_case)
    monkeypatch.setattr(jobs, "_bench_samples", bench_samples)
    return order, wrong


def test_current_challenger_challenger_current_and_a_linear_drift_cancels(fakes) -> None:
    order, _ = fakes
    reply = jobs.measure_pair(None, artifact={"name": "current"}, challenger={"name": "challenger"}, **SETTINGS)
    assert order == ["current", "challenger", "challenger", "current"]
    assert reply["status"] == OK
    current, challenger = reply["current"], reply["challenger"]
    assert current["us"] == pytest.approx(10.0 * (0.99 + 0.96) / 2) and current["runs"] == 3 + 5
    assert challenger["us"] == pytest.approx(9.0 * (0.98 + 0.97) / 2) and challenger["runs"] == 5 + 3
    assert current["us"] / challenger["us"] == pytest.approx(10 / 9)  # the drift is gone from the ratio


def test_a_side_that_fails_its_check_is_reported_alone_and_the_other_still_timed(fakes) -> None:
    order, wrong = fakes
    wrong.add("current")
    reply = jobs.measure_pair(None, artifact={"name": "current"}, challenger={"name": "challenger"}, **SETTINGS)
    assert reply["current"] == {"status": WRONG, "message": "current is wrong"}
    assert reply["challenger"]["status"] == OK and order == ["challenger", "challenger"]


def test_a_candidate_that_refuses_the_shape_is_unsupported_with_its_constraint_not_wrong() -> None:
    """A binding's refusal of a shape its kernel does not take was "wrong: custom_kernel raised ValueError: ..."."""
    from nvfp4ctl.task import Case

    def refusing(data):
        raise ValueError("unsupported shape (m=128, n=128, k=256, l=1): m must be a multiple of 256 (the kernel's tile M)")

    reply = jobs._check(refusing, Case(m=128, n=128, k=256, l=1, seed=1111), "nvfp4_gemm", 1e-3, 1e-3, True, "cpu")
    assert reply == {"status": UNSUPPORTED, "message": "m must be a multiple of 256 (the kernel's tile M)"}


def test_a_candidate_whose_wrong_values_are_all_nan_gets_no_error_size_of_zero() -> None:
    from nvfp4ctl.check.result import Comparison

    nan_everywhere = Comparison(shape=(128, 128), mismatched=16384, max_abs_err=0.0, max_rel_err=0.0,
                                nan_got=16384, inf_got=0, nan_want=0, inf_want=0, unwritten=16384, first=(),
                                tile_wrong=((16384,),), tile_size=((16384,),), nonfinite_wrong=16384)
    checked = SimpleNamespace(raised=(), problems=(), comparison=nan_everywhere, phase="first call")
    assert jobs._why_wrong(checked) == "16384 of 16384 outputs wrong (first call), all 16384 wrong are NaN or Inf"
