"""Device time per call from the profiler (kernel time only), as DeepGEMM's `bench_kineto` does.

We profile the leaderboard's own pattern (flush, head start, 50 calls back to back), sum the
duration of every device activity (kernels, memsets, copies) in the window and subtract what the
flush launched (found through the profiler range we put around it). What remains, divided by the
number of calls, is the GPU's busy time per call; the leaderboard time minus this is the idle time
between kernels inside the timed window.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

FLUSH_RANGE = "nvfp4ctl.flush"
# Kernel names of our flush, used only when the profiler failed to attribute them to FLUSH_RANGE.
FLUSH_KERNEL_HINTS = ("spin_kernel", "FillFunctor")
# The head-start hold (torch.cuda._sleep) is no dispatcher op, so the profiler attaches its kernel to
# no range (seen on an H100, torch 2.11): it is always found by name.
HOLD_KERNEL = "spin_kernel"


@dataclass(frozen=True)
class DeviceActivity:
    name: str
    duration_us: float


@dataclass(frozen=True)
class DeviceTime:
    us_per_call: float
    kernels_per_call: float
    top_kernels: list[tuple[str, int]]  # (name, launches) of the target's kernels, most frequent first
    approximate: bool  # the flush was found by kernel name, not by profiler range

    def to_dict(self) -> dict[str, Any]:
        return {"us_per_call": self.us_per_call, "kernels_per_call": self.kernels_per_call,
                "top_kernels": [list(pair) for pair in self.top_kernels], "approximate": self.approximate}


def split_device_time(
    every: Sequence[DeviceActivity], flush: Sequence[DeviceActivity], calls: int
) -> DeviceTime | None:
    """Per-call device time of the target: all device activity minus the flush's."""
    if calls <= 0 or not every:
        return None
    approximate = not flush
    if approximate:
        flush = [a for a in every if any(hint in a.name for hint in FLUSH_KERNEL_HINTS)]
    else:
        flush = [a for a in flush if HOLD_KERNEL not in a.name] + [a for a in every if HOLD_KERNEL in a.name]
    names = Counter(a.name for a in every)
    names.subtract(Counter(a.name for a in flush))
    target_total = sum(a.duration_us for a in every) - sum(a.duration_us for a in flush)
    launches = sum(count for count in names.values() if count > 0)
    return DeviceTime(
        us_per_call=max(0.0, target_total) / calls,
        kernels_per_call=launches / calls,
        top_kernels=[(name, count) for name, count in names.most_common(3) if count > 0],
        approximate=approximate,
    )


def profile_device_time(
    fn: Callable[[Any], Any], inputs: Sequence[Any], flush: Any, head_start_s: float, batches: int = 2
) -> DeviceTime | None:
    """Profile `batches` leaderboard repeats on CUDA and return the target's device time per call."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(batches):
            torch.cuda.synchronize()
            with record_function(FLUSH_RANGE):
                flush.evict()
                flush.hold(head_start_s)
            for data in inputs:
                fn(data)
            torch.cuda.synchronize()
    events = prof.events()
    every = [_activity(e) for e in events if _on_device(e)]
    flush_ranges = [e for e in events if e.name == FLUSH_RANGE and not _on_device(e)]
    flushed = [DeviceActivity(k.name, float(k.duration)) for e in flush_ranges for k in _kernels_below(e)]
    return split_device_time(every, flushed, calls=batches * len(inputs))


def _on_device(event: Any) -> bool:
    from torch.autograd import DeviceType

    if event.name == FLUSH_RANGE or getattr(event, "is_user_annotation", False):
        return False  # the range's own span on the GPU timeline is not work
    return event.device_type != DeviceType.CPU


def _activity(event: Any) -> DeviceActivity:
    return DeviceActivity(event.name, float(event.time_range.elapsed_us()))


def _kernels_below(event: Any) -> Iterable[Any]:
    """The device activities the profiler attached to a CPU range and to every op inside it."""
    yield from event.kernels
    for child in event.cpu_children:
        yield from _kernels_below(child)
