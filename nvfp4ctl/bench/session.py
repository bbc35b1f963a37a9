"""The parent's side of a bench: one Worker, one call per shape (the watchdog applies per shape).

Order: this GPU's ceilings (cached), the mode's warm-ups, every shape settled and timed, then every
shape profiled (kernel time per call), so the profiler is never attached while the timings are taken.
A wrong result is FailuresFound (exit 1); an exception raised by the target's call is a KernelCrash
(exit 4) with its traceback, as check says it, unless it refuses the shape (the bindings' "unsupported
shape ..."): then an UnsupportedShape, the input the target does not take (exit 2); a timeout or crash
comes from the Worker as KernelTimeout / KernelCrash (exit 3 / 4). Once a shape is timed, such an error
comes as BenchStopped, which holds it and the report of the shapes timed before it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nvfp4ctl.bench.calibration import Ceilings
from nvfp4ctl.bench.call_progress import smaller_listed
from nvfp4ctl.bench.modes import DEFAULT_SETTLE_S, Mode  # noqa: F401  (DEFAULT_SETTLE_S: kept here for its users)
from nvfp4ctl.bench.results import STEP_WORDS, BenchReport, ShapeResult, StoppedShape
from nvfp4ctl.errors import FailuresFound, KernelCrash, KernelTimeout, NvfpError, UsageError
from nvfp4ctl.printable import shown
from nvfp4ctl.runlog import CPU_DEVICE_LABEL, detect_gpu

JOBS = "nvfp4ctl.bench.jobs"
WALL_LIMIT_SHARE = 0.8  # of the watchdog timeout: a slow shape stops on its own before being killed


class TargetRaised(KernelCrash):
    """The target's call raised: a crash (exit 4), worded "raised" as check's verdict is."""

    @classmethod
    def of(cls, label: str, raised: Sequence[str]) -> TargetRaised:
        """The headline and traceback lines the job sent (runner/raised.py's describe_raised), the run log
        keeping the exception's type and message as check's cell does: cut to MAX_CAUSE characters."""
        from nvfp4ctl.bounded_text import shown_cause
        from nvfp4ctl.runner.raised import RAISED_PREFIX

        headline, *trace = raised
        # the exception's message as the terminal shows it (ESC as \x1b), in the error and in the run log's cell
        error = cls("\n".join([f"bench {label}: {shown(headline)}", *(f"  {line}" for line in trace)]))
        error.logged = f"bench {label}: {RAISED_PREFIX}{shown_cause(headline.removeprefix(RAISED_PREFIX))}"
        return error


class UnsupportedShape(UsageError):
    """The target refused a shape it documents it does not take: an input it cannot run (exit 2), no crash."""


class BenchStopped(Exception):
    """An error at one shape after others were timed: `error` is what the command exits with, `report`
    what the run measured before it (report.stopped names the shape)."""

    def __init__(self, error: NvfpError, report: BenchReport) -> None:
        super().__init__(str(error))
        self.error = error
        self.report = report


def max_wall_s(timeout_s: float) -> float:
    """How long one shape's timed repeats may run: under the watchdog, and at most the leaderboard's 120 s."""
    return min(120.0, WALL_LIMIT_SHARE * timeout_s)


@dataclass(frozen=True)
class BenchPlan:
    cases: tuple[Any, ...]  # task.Case
    mode: Mode
    problem: str
    rtol: float
    atol: float
    timeout_s: float
    max_repeats: int
    max_noise: float
    recalibrate: bool = False
    device: str = "cuda"
    settle_s: float = 0.0  # untimed seconds of the loop before each shape's timed repeats
    listed_cases: tuple[Any, ...] = ()  # the task's tests and benchmarks: what a shape too slow could be traded for

    def criterion(self, max_repeats: int, budget_s: float) -> dict[str, float]:
        return {"max_repeats": max_repeats, "max_noise": self.max_noise, "budget_s": budget_s,
                "max_wall_s": max_wall_s(self.timeout_s)}

    def steps(self) -> list[tuple[str, Any]]:
        """(kind, case) per worker call after calibration: warm-ups, timed shapes, then profiles."""
        warm = [] if self.mode.warm_first_only else [("warm", case) for case in self.cases]
        profile = [("profile", case) for case in self.cases] if self.device == "cuda" else []
        return warm + [("time", case) for case in self.cases] + profile


def run_bench(plan: BenchPlan, worker: Any, target_label: str,
              on_step: Callable[[str], None] = lambda _: None) -> BenchReport:
    from nvfp4ctl.problems import resolve_problem

    started = time.perf_counter()
    problem = resolve_problem(plan.problem)
    ceilings, calibration_error = None, None
    if plan.device == "cuda":
        on_step("calibration")
        try:
            ceilings = Ceilings(**_call(worker, "calibrate", "calibration", plan.timeout_s,
                                        {"recalibrate": plan.recalibrate}))
        except FailuresFound as error:  # the timings stand without this GPU's ceilings
            calibration_error = str(error)
    timed: list[tuple[Any, dict[str, Any]]] = []
    profiles: list[dict[str, Any] | None] = []

    def report(stopped: StoppedShape | None = None) -> BenchReport:
        shown = profiles + [None] * (len(timed) - len(profiles))
        results = [ShapeResult.from_job(case, reply, profile, problem) for (case, reply), profile in zip(timed, shown)]
        # a CPU run is labelled so whatever GPU the machine has: its times are never compared with a GPU's
        gpu = CPU_DEVICE_LABEL if plan.device == "cpu" else worker.gpu or detect_gpu()
        return BenchReport(target=target_label, gpu=gpu, mode=plan.mode.name,
                           shapes=tuple(results), ceilings=ceilings, wall_s=time.perf_counter() - started,
                           calibration_error=calibration_error, device=plan.device, stopped=stopped)

    kind, key, label = "", "", ""
    try:
        for kind, case in plan.steps():
            # the key names the shape in the run log; the label in what is shown (the GEMV's "4096x7168 l=8")
            key, label = problem.key(case), problem.label(case)
            smaller = smaller_listed(problem, case, plan.listed_cases)
            on_step(f"{STEP_WORDS[kind]} {label}")
            if kind == "profile":
                head_start_s = timed[len(profiles)][1]["flush"]["head_start_s"]
                profiles.append(_call(worker, "device_time", f"profile {label}", plan.timeout_s,
                                      {"case": case, "problem": plan.problem, "head_start_s": head_start_s}, smaller))
                continue
            payload = _payload(plan, case, kind, warm_here=kind == "time" and not timed and plan.mode.warm_first_only)
            reply = _call(worker, "bench_case", f"bench {label}", plan.timeout_s, payload, smaller)
            if "unsupported" in reply:
                from nvfp4ctl.runner.raised import unsupported_line

                raise UnsupportedShape(f"bench {label}: {unsupported_line(shown(reply['unsupported']))}")
            if "raised" in reply:
                raise TargetRaised.of(label, reply["raised"])
            if "failure" in reply:
                raise FailuresFound(f"bench {label}: {reply['failure']}")
            if "too_slow" in reply:  # what the watchdog would have said, at its kill
                from nvfp4ctl.bench.call_progress import too_slow

                raise KernelTimeout(too_slow(f"bench {label}", plan.timeout_s, reply["too_slow"], smaller))
            if kind == "time":
                if _timed_nothing(reply["samples_ns"]):  # no mean to rank, no geomean over it
                    raise FailuresFound(f"bench {label} timed 0.0 µs per call: the call launched no GPU work?")
                timed.append((case, reply))
    except (FailuresFound, KernelCrash, KernelTimeout, UnsupportedShape) as error:
        if not timed:  # nothing measured: the error alone says it all
            raise
        stopped = StoppedShape(key=key, label=label, step=kind, verdict=_verdict(error),
                               message=str(error).splitlines()[0], planned=len(plan.cases))
        raise BenchStopped(error, report(stopped)) from None
    return report()


def _timed_nothing(samples_ns: list[float]) -> bool:
    """Every repeat's event pair measured 0 ns: nothing ran between the events."""
    return not samples_ns or sum(samples_ns) <= 0


def _verdict(error: NvfpError) -> str:
    """check's verdict word for the error: a stopped shape is marked as check's table marks a test."""
    from nvfp4ctl.check.run import CRASH, FAIL, TIMEOUT  # loaded when a shape stops: check.run brings its runner
    from nvfp4ctl.runner.raised import RAISED, UNSUPPORTED

    if isinstance(error, KernelTimeout):
        return TIMEOUT
    if isinstance(error, TargetRaised):
        return RAISED
    if isinstance(error, UnsupportedShape):
        return UNSUPPORTED
    return CRASH if isinstance(error, KernelCrash) else FAIL


def _payload(plan: BenchPlan, case: Any, kind: str, warm_here: bool) -> dict[str, Any]:
    mode = plan.mode
    warm = plan.criterion(mode.warm_max_repeats, mode.warm_budget_s)
    timed = plan.criterion(plan.max_repeats, mode.budget_s)
    return {
        "case": case, "problem": plan.problem, "rtol": plan.rtol, "atol": plan.atol, "device": plan.device,
        "criterion": warm if kind == "warm" else timed,
        "warmup": warm if warm_here else None,
        "recheck": mode.recheck and kind == "time",
        "settle_s": plan.settle_s if kind == "time" else 0.0,
        "shape_timeout_s": plan.timeout_s,  # a CPU job stops itself once its pace says it cannot end in time
    }


def _call(worker: Any, job: str, label: str, timeout_s: float, payload: dict[str, Any],
          smaller_listed: bool = True) -> dict[str, Any]:
    """`smaller_listed`: whether a kill of a job too slow, not stuck, may advise a smaller --shape (too_slow's)."""
    from nvfp4ctl.runner.worker import ChildTimeout, JobError

    try:
        return worker.call(f"{JOBS}:{job}", label=label, timeout_s=timeout_s, **payload)
    except ChildTimeout as error:
        raise _slow_not_stuck(error, label, timeout_s, smaller_listed) or error from None
    except JobError as error:
        if error.type_name == UsageError.__name__:  # e.g. a shape whose inputs do not fit the GPU
            raise UsageError(error.text) from None
        raise FailuresFound(f"{label}: {error}") from error



def _slow_not_stuck(error: Any, label: str, timeout_s: float, smaller_listed: bool = True) -> Any:
    """The watchdog's kill of a job whose calls were still returning, said as what it is: a shape too slow
    for the timeout (a timeout still, exit 3), with its pace and what to change; None for a stuck one."""
    from nvfp4ctl.bench.call_progress import INPUTS, CallProgress, too_slow, too_slow_making_inputs
    from nvfp4ctl.runner.worker import ChildTimeout

    last = error.progress
    if isinstance(last, CallProgress) and last.phase == INPUTS:  # the kernel was not called yet: nothing to be stuck in
        said = too_slow_making_inputs(label, timeout_s, last, smaller_listed)
        return ChildTimeout(f"{said}; the child was killed", error.log_tail, error.log_path, last, error.progress_age_s)
    if not isinstance(last, CallProgress) or error.progress_age_s is None or not last.still_running(error.progress_age_s):
        return None
    said = too_slow(label, timeout_s, last, smaller_listed)
    return ChildTimeout(f"{said}; the child was killed", error.log_tail, error.log_path, last, error.progress_age_s)
