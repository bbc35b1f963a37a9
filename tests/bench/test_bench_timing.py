"""The timing loop on CPU: host pauses that the leaderboard's long L2 clear would hide are timed again."""

from __future__ import annotations

import time
from typing import Any

import pytest

from nvfp4ctl.bench import timing
from nvfp4ctl.bench.clock import HostClock
from nvfp4ctl.bench.flush import LEADERBOARD_FLUSH_S, NoFlush, host_stalled
from nvfp4ctl.bench.stopping import StoppingCriterion

INPUTS = [0, 1, 2]


class HeldFlush:
    """A flush that holds the queue (as CudaFlush does), recording each hold."""

    holds_queue = True

    def __init__(self) -> None:
        self.holds: list[float] = []

    def evict(self) -> None:
        pass

    def hold(self, seconds: float) -> None:
        self.holds.append(seconds)


def _pausing(pauses_s: dict[int, float]) -> Any:
    """A target that sleeps pauses_s[b] seconds in batch b's first call (batches counted from 0)."""
    calls: list[int] = []

    def fn(data: int) -> int:
        batch = len(calls) // len(INPUTS)
        if len(calls) % len(INPUTS) == 0 and batch in pauses_s:
            time.sleep(pauses_s[batch])
        calls.append(data)
        return data

    return fn


def _loop(fn: Any, flush: Any, repeats: int = 4) -> timing.Samples:
    return timing.time_batches(fn, INPUTS, StoppingCriterion(max_repeats=repeats, min_time_s=0.0), flush, HostClock())


def test_host_stalled_only_where_the_leaderboard_clear_would_hide_it() -> None:
    assert host_stalled(host_issue_s=1e-3, head_start_s=0.5e-3)
    assert not host_stalled(host_issue_s=0.3e-3, head_start_s=0.5e-3)
    assert not host_stalled(host_issue_s=0.1, head_start_s=LEADERBOARD_FLUSH_S)  # the leaderboard times it too


def test_a_host_pause_longer_than_the_hold_is_timed_again() -> None:
    flush = HeldFlush()
    samples = _loop(_pausing({2: 0.02}), flush)  # 20 ms in batch 2, whose hold is 200 µs
    assert samples.host_stalls == 1
    assert len(samples.per_call_ns) == len(samples.issue_ns) == 4
    assert max(samples.per_call_ns) < 0.02e9 / len(INPUTS) / 2  # the pause is in no sample
    assert len(flush.holds) == 5  # one more batch than samples


def test_past_the_retime_limit_pauses_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "MAX_HOST_STALL_RETIMES", 1)
    # each pause outlasts the hold sized from the batch before it: the first is retimed, the second counts
    samples = _loop(_pausing({1: 0.01, 2: 0.05}), HeldFlush(), repeats=3)
    assert samples.host_stalls == 1
    assert max(samples.per_call_ns) > 0.05e9 / len(INPUTS)


def test_without_a_hold_nothing_is_retimed() -> None:
    samples = _loop(_pausing({1: 0.01}), NoFlush(), repeats=3)  # CPU runs: the host clock times the host
    assert samples.host_stalls == 0 and max(samples.per_call_ns) > 0.01e9 / len(INPUTS)
