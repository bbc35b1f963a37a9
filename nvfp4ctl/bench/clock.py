"""Time a batch: CUDA event pairs on the default queue (as the leaderboard records them), or the host clock."""

from __future__ import annotations

import time
from typing import Any


class CudaClock:
    """Event pairs on the default queue, as the leaderboard records them."""

    def __init__(self) -> None:
        import torch

        self._torch = torch

    def synchronize(self) -> None:
        self._torch.cuda.synchronize()

    def pair(self) -> tuple[Any, Any]:
        event = self._torch.cuda.Event
        return event(enable_timing=True), event(enable_timing=True)

    @staticmethod
    def elapsed_ns(begin: Any, end: Any) -> float:
        return begin.elapsed_time(end) * 1e6


class _HostMark:
    def __init__(self) -> None:
        self.ns = 0

    def record(self) -> None:
        self.ns = time.perf_counter_ns()


class HostClock:
    """CPU runs (tests): the same interface over perf_counter."""

    def synchronize(self) -> None:
        pass

    def pair(self) -> tuple[_HostMark, _HostMark]:
        return _HostMark(), _HostMark()

    @staticmethod
    def elapsed_ns(begin: _HostMark, end: _HostMark) -> float:
        return float(end.ns - begin.ns)
