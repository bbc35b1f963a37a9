"""The leaderboard's L2 clear, made cheap: evict L2, then give the host the same head start.

GPU MODE clears L2 with `torch.randn((16000, 1024, 1024))` (64 GB) and records the start event
right after it without synchronizing. That randn does two things: it evicts L2, and, because it
runs for milliseconds on the GPU, the CPU queues all 50 calls before the start event fires, so
the timed window holds back-to-back kernels and hides the Python wrapper's launch cost (up to the
randn's length). We evict by writing a buffer several times the L2 size, then hold the queue with
a spin kernel (`torch.cuda._sleep`) for as long as the CPU needed to issue the last batch, capped
at the randn's length on a B200; that reproduces both effects in a fraction of the time.
"""

from __future__ import annotations

from typing import Any

L2_MULTIPLE = 4  # bytes written per flush, as a multiple of the L2 size
MIN_FLUSH_BYTES = 256 << 20  # Triton's do_bench flush; more than L2 on every card we know
# Estimated length of the 67 GB randn on a B200, the cap on the head start: torch.randn is bound by
# its Philox + Box-Muller math at roughly 1-2 TB/s on Hopper/Blackwell, so tens of milliseconds.
# The fidelity test prints the scaled randn's length on the card it runs on.
LEADERBOARD_FLUSH_S = 0.040
HEAD_START_MARGIN = 1.5  # × the CPU time the last batch took to issue
HEAD_START_FLOOR_S = 200e-6
FIRST_HEAD_START_S = 2e-3  # before any batch was measured


def next_head_start(host_issue_s: float, cap_s: float = LEADERBOARD_FLUSH_S) -> float:
    """How long to hold the queue before the start event, given the last batch's CPU issue time."""
    return min(cap_s, max(HEAD_START_FLOOR_S, HEAD_START_MARGIN * host_issue_s + 50e-6))


def host_stalled(host_issue_s: float, head_start_s: float, cap_s: float = LEADERBOARD_FLUSH_S) -> bool:
    """Whether the GPU may have waited for the CPU inside the timed window although the leaderboard's
    L2 clear would have hidden it: the CPU issued the batch more slowly than the hold lasted (a pause
    of the host, e.g. the scheduler or a garbage collection), and the hold was shorter than that clear.
    Past the clear's length the leaderboard times the same wait, so such a sample stands."""
    return host_issue_s > head_start_s and head_start_s < cap_s


class CudaFlush:
    """Evict L2 by a write of L2_MULTIPLE × L2 bytes, then spin for the head start (default queue)."""

    holds_queue = True  # the timed batch runs behind a hold, so a host pause longer than it shows

    def __init__(self, device: str = "cuda") -> None:
        import torch

        self._torch = torch
        l2_bytes = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0)
        self.l2_bytes = l2_bytes
        self.flush_bytes = max(MIN_FLUSH_BYTES, L2_MULTIPLE * l2_bytes)
        self._buffer = torch.empty(self.flush_bytes // 4, dtype=torch.int32, device=device)
        self.cycles_per_s = self._measure_clock()

    def evict(self) -> None:
        self._buffer.zero_()

    def hold(self, seconds: float) -> None:
        if seconds > 0:
            self._torch.cuda._sleep(int(seconds * self.cycles_per_s))

    def _measure_clock(self) -> float:
        """Spin-kernel cycles per second at the current clocks (the head start needs no precision)."""
        torch = self._torch
        cycles = 2_000_000
        torch.cuda._sleep(cycles)  # warm: first launch, clocks up
        rates = []
        for _ in range(3):
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            torch.cuda._sleep(cycles)
            end.record()
            end.synchronize()
            rates.append(cycles / (begin.elapsed_time(end) * 1e-3))
        return sorted(rates)[1]

    def describe(self) -> dict[str, Any]:
        return {"l2_bytes": self.l2_bytes, "flush_bytes": self.flush_bytes,
                "spin_cycles_per_s": self.cycles_per_s, "head_start_cap_s": LEADERBOARD_FLUSH_S}


class NoFlush:
    """CPU runs (tests): nothing to evict, nothing to hold."""

    l2_bytes = flush_bytes = 0
    holds_queue = False  # the host clock times the host: there is no GPU to wait

    def evict(self) -> None:
        pass

    def hold(self, seconds: float) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"l2_bytes": 0, "flush_bytes": 0}
