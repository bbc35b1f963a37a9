"""What a bench found, as data: per-shape timings, device time, rooflines, geomean; JSON out.

Units: µs for times, TFLOP/s and TB/s for rates, percentages as 0-100 floats.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nvfp4ctl.bench.calibration import Ceilings
from nvfp4ctl.bench.history import Timing, result_line
from nvfp4ctl.bench.kineto import DeviceTime
from nvfp4ctl.bench.stats import Stats, geomean, geomean_err, summarize

if TYPE_CHECKING:
    from nvfp4ctl.problems.base import ProblemBase

SOL_LABEL = "B200 @1.5 GHz"
STEP_WORDS = {"warm": "warming", "time": "timing", "profile": "profiling"}  # a shape's steps, as progress says them
HOST_BOUND_RATIO = 1.0  # the CPU needs at least as long to issue a call as the GPU to run it


@dataclass(frozen=True)
class ShapeResult:
    m: int
    n: int
    k: int
    l: int
    seed: int
    sol_us: float | None
    stats: Stats  # µs per call, the leaderboard's numbers
    reason: str  # why the repeats stopped
    issue_us: float  # median CPU time to issue one call
    device: DeviceTime | None  # profiler: kernel time per call
    # The problem's own name and counts for the shape (dual: two GEMMs; group: summed over groups).
    key: str
    flop: float
    bytes: float
    raw: dict[str, Any] = field(default_factory=dict, compare=False)  # flush settings, phase times
    label: str = ""  # how tables and lines name the shape (Problem.label); empty: its key
    dims: tuple[str, ...] = ()  # what each part of the key is (Problem.key_dims): the GEMV's m, k, l

    @property
    def shown(self) -> str:
        return self.label or self.key

    @classmethod
    def from_job(cls, case: Any, reply: dict[str, Any], profile: dict[str, Any] | None,
                 problem: ProblemBase) -> ShapeResult:
        profile = profile or {}
        device = profile.get("device_time")
        return cls(
            m=case.m, n=case.n, k=case.k, l=case.l, seed=case.seed, sol_us=problem.sol_us(case),
            key=problem.key(case), label=problem.label(case), dims=problem.key_dims(case), flop=problem.flops(case), bytes=problem.bytes_moved(case),
            stats=summarize(reply["samples_ns"]).scaled(1e-3),
            reason=reply["reason"],
            issue_us=statistics.median(reply["issue_ns"]) * 1e-3,
            device=DeviceTime(device["us_per_call"], device["kernels_per_call"],
                              [tuple(pair) for pair in device["top_kernels"]], device["approximate"]) if device else None,
            raw={"flush": reply.get("flush"),
                 "phases_s": (reply.get("phases_s") or {}) | {"profile": profile.get("profile_s")},
                 "profiler_error": profile.get("profiler_error"),
                 "host_stalls": reply.get("host_stalls", 0)},
        )

    @property
    def tflops(self) -> float:
        return self.flop / (self.stats.mean * 1e-6) / 1e12

    @property
    def tbps(self) -> float:
        return self.bytes / (self.stats.mean * 1e-6) / 1e12

    @property
    def pct_sol(self) -> float | None:
        return 100.0 * self.sol_us / self.stats.mean if self.sol_us else None

    def floor_us(self, ceilings: Ceilings) -> tuple[float, str]:
        """This GPU's roofline time for the shape and what binds it ("compute" or "memory")."""
        compute = self.flop / (ceilings.tflops * 1e12) * 1e6
        memory = self.bytes / (ceilings.tbps * 1e12) * 1e6
        return (compute, "compute") if compute >= memory else (memory, "memory")

    def pct_ceiling(self, ceilings: Ceilings) -> float:
        return 100.0 * self.floor_us(ceilings)[0] / self.stats.mean

    @property
    def gap_us(self) -> float | None:
        """Leaderboard time minus device time: GPU idle inside the timed window, per call."""
        return self.stats.mean - self.device.us_per_call if self.device else None

    @property
    def host_bound(self) -> bool:
        return self.device is not None and self.issue_us >= HOST_BOUND_RATIO * self.device.us_per_call

    def to_dict(self, ceilings: Ceilings | None, on_cpu: bool = False) -> dict[str, Any]:
        floor = self.floor_us(ceilings) if ceilings else None
        # a CPU time says nothing of a GPU's rates, nor measured against a B200's speed of light
        rates = {"tflops": None, "tbps": None, "sol_us": None, "pct_sol": None} if on_cpu else {
            "tflops": self.tflops, "tbps": self.tbps, "sol_us": self.sol_us, "pct_sol": self.pct_sol}
        return {
            "shape": self.key, "dims": list(self.dims), "label": self.shown, "m": self.m, "n": self.n, "k": self.k, "l": self.l, "seed": self.seed,
            "us": self.stats.to_dict(), "stopped": self.reason,
            "device_us_per_call": self.device.us_per_call if self.device else None,
            "gap_us_per_call": self.gap_us, "issue_us_per_call": self.issue_us, "host_bound": self.host_bound,
            "kernels": self.device.to_dict() if self.device else None,
            **rates, "sol_label": SOL_LABEL,
            "floor_us": floor[0] if floor else None, "bound_by": floor[1] if floor else None,
            "pct_ceiling": self.pct_ceiling(ceilings) if ceilings else None,
            **self.raw,
        }


@dataclass(frozen=True)
class StoppedShape:
    """The shape a bench stopped at, by a wrong result, a refusal, a raise, a crash or a timeout: the shapes timed
    before it stand, and a geomean over fewer shapes than planned is none of the task's."""

    key: str
    step: str  # a key of STEP_WORDS: what the bench was doing with the shape
    verdict: str  # "FAIL", "unsupported", "raised", "crash" or "timeout", as check's table words them
    message: str  # the error's first line
    planned: int  # the shapes the bench was to time
    label: str = ""  # how tables and lines name the shape (Problem.label); empty: its key

    @property
    def shown(self) -> str:
        return self.label or self.key

    def to_dict(self) -> dict[str, Any]:
        return {"shape": self.key, "step": self.step, "verdict": self.verdict, "message": self.message,
                "planned_shapes": self.planned}


@dataclass(frozen=True)
class BenchReport:
    target: str
    gpu: str
    mode: str
    shapes: tuple[ShapeResult, ...]
    ceilings: Ceilings | None
    wall_s: float
    calibration_error: str | None = None
    device: str = "cuda"  # "cpu": NVFP4CTL_DEVICE=cpu, times that say nothing of the leaderboard's
    stopped: StoppedShape | None = None  # the run ended on an error at this shape

    @property
    def on_cpu(self) -> bool:
        return self.device == "cpu"

    @property
    def partial(self) -> bool:
        """Stopped before every planned shape was timed: no geomean stands for the set."""
        return self.stopped is not None and len(self.shapes) < self.stopped.planned

    @property
    def geomean_us(self) -> float:
        return geomean([s.stats.mean for s in self.shapes])

    @property
    def geomean_err_us(self) -> float:
        return geomean_err([s.stats.mean for s in self.shapes], [s.stats.err for s in self.shapes])

    @property
    def sol_geomean_us(self) -> float | None:
        sols = [s.sol_us for s in self.shapes]
        return geomean(sols) if all(sols) else None  # type: ignore[arg-type]

    @property
    def roofline(self) -> Ceilings | None:
        """The ceilings a % of this GPU is read against: none where the fp16 one is no roofline for the arch."""
        if self.ceilings is None or self.ceilings.roofline_withheld is not None:
            return None
        return self.ceilings

    def labels(self) -> dict[str, str]:
        """Shape key -> how tables name it: bench's comparison with the run log goes by key."""
        return {s.key: s.shown for s in self.shapes}

    def timings(self) -> list[tuple[str, Timing]]:
        return [(s.key, Timing(s.stats.mean, s.stats.err)) for s in self.shapes]

    def result_line(self) -> str:
        """The run-log line a later bench compares against (history.parse_result_line reads it), each shape named as
        the tables name it (the GEMV's "4096x7168 l=8"; every other problem's label is its key)."""
        return result_line(Timing(self.geomean_us, self.geomean_err_us),
                           [(s.shown, Timing(s.stats.mean, s.stats.err)) for s in self.shapes])

    def to_dict(self) -> dict[str, Any]:
        whole = not self.partial
        return {
            "target": self.target, "gpu": self.gpu, "device": self.device, "mode": self.mode,
            "geomean_us": self.geomean_us if whole else None, "geomean_err_us": self.geomean_err_us if whole else None,
            "sol_geomean_us": None if self.on_cpu or not whole else self.sol_geomean_us, "sol_label": SOL_LABEL,
            "ceilings": self.ceilings.to_dict() if self.ceilings else None,
            "calibration_error": self.calibration_error,
            "roofline_withheld": self.ceilings.roofline_withheld if self.ceilings else None,
            "shapes": [s.to_dict(self.roofline, self.on_cpu) for s in self.shapes],
            "stopped": self.stopped.to_dict() if self.stopped else None,
            "wall_s": self.wall_s,
        }
