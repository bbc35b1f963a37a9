"""The child's side of a bench: jobs the runner's Worker calls as "nvfp4ctl.bench.jobs:<name>".

`bench_case` is one benchmark shape, end to end, as GPU MODE's `_run_single_benchmark`: 50 input
sets (seed += 42 before each), one correctness pass over all 50 outputs (each call on a clone),
then timed repeats until the criterion stops. The pass's first call is made as soon as the first set
is, before the other 49: a shape the target refuses is said at once, not after the making of all 50. One addition, on by default: before the timed
repeats, the same loop runs untimed for `settle_s` seconds (session.DEFAULT_SETTLE_S says why).
`device_time` profiles a shape separately.
Returns plain dicts (picklable); a wrong result comes back as {"failure": "..."}, an exception raised by
the target's call as {"raised": [headline, traceback lines...]} (a crash of the shape, as in check), and
where that exception refuses the shape, "unsupported" beside it: the constraint it names.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from nvfp4ctl.bench import calibration
from nvfp4ctl.bench.call_progress import PROFILE, CallTracker, CannotFinish, LoopBound
from nvfp4ctl.bench.clock import CudaClock, HostClock
from nvfp4ctl.bench.correctness import Mismatch, first_mismatch
from nvfp4ctl.bench.flush import CudaFlush, NoFlush
from nvfp4ctl.bench.kineto import profile_device_time
from nvfp4ctl.bench.stopping import StoppingCriterion
from nvfp4ctl.bench.timing import time_batches
from nvfp4ctl.errors import UsageError
from nvfp4ctl.runner.child import is_cuda_error
from nvfp4ctl.runner.raised import TargetRaised, raised_from

Kernel = Callable[[tuple], Any]


class WrongResult(Exception):
    """A wrong output in the correctness pass or a leaderboard-mode recheck."""


def calibrate(target: Kernel, *, recalibrate: bool = False) -> dict[str, Any]:
    """This GPU's ceilings, from the cache unless `recalibrate` (the target is not called)."""
    import torch  # noqa: F401  (describe_device reads the GPU through the torch this child has loaded)

    from nvfp4ctl.runner.child import describe_device

    return calibration.ceilings_for(describe_device("cuda") or "unknown GPU", recalibrate).to_dict()


def bench_case(
    target: Kernel,
    *,
    case: Any,
    problem: str,
    rtol: float,
    atol: float,
    criterion: dict[str, float],
    warmup: dict[str, float] | None = None,
    recheck: bool = False,
    device: str = "cuda",
    input_sets: int | None = None,
    settle_s: float = 0.0,
    shape_timeout_s: float | None = None,
) -> dict[str, Any]:
    """`shape_timeout_s`: the watchdog's timeout, for a CPU job to stop itself once its pace says it cannot
    end in time ({"too_slow": its CallProgress}); a GPU job leaves the judgement to the watchdog."""
    try:
        return _bench_case(target, case=case, problem=problem, rtol=rtol, atol=atol, criterion=criterion,
                           warmup=warmup, recheck=recheck, device=device, input_sets=input_sets, settle_s=settle_s,
                           shape_timeout_s=shape_timeout_s)
    except TargetRaised as raised:  # a shape refused comes with its constraint: the parent's input error
        return {"raised": list(raised.lines)} | ({} if raised.refused is None else {"unsupported": raised.refused})
    except CannotFinish as late:
        return {"too_slow": late.progress}


def _bench_case(
    target: Kernel, *, case: Any, problem: str, rtol: float, atol: float, criterion: dict[str, float],
    warmup: dict[str, float] | None, recheck: bool, device: str, input_sets: int | None, settle_s: float,
    shape_timeout_s: float | None,
) -> dict[str, Any]:
    started = time.perf_counter()
    spec = _problem(problem)
    seeds = spec.timing.seeds(case.seed, input_sets)  # GEMMs 50 sets (+42 each), grouped 15, GEMV 1
    timed_criterion = StoppingCriterion(**criterion)
    # the warm-up's and the timed loop's wall caps are set from the watchdog's timeout (session.max_wall_s)
    loops = ([LoopBound.of("warm-up", StoppingCriterion(**warmup), wall_from_timeout=True)] if warmup is not None
             else []) + ([LoopBound.of("settle", StoppingCriterion.for_wall_time(settle_s), wall_from_timeout=False)]
                         if settle_s > 0 else []) + [LoopBound.of("timing", timed_criterion, wall_from_timeout=True)]
    on_cuda = device == "cuda"
    # the watchdog's timeout counts the inputs' making; a GPU's calls are paced by batches alone, and stay the watchdog's
    tracker = CallTracker(len(seeds), tuple(loops), started=started, timeout_s=None if on_cuda else shape_timeout_s)
    # the CPU's calls block: each return is news; a GPU's are known to have ended once checked
    pass_target = target if on_cuda else tracker.counting(target)
    tracker.making_inputs()  # a kill from here to the first call is of a job too slow, not of a stuck kernel
    inputs = make_input_sets(spec, case, seeds[:1], device, on_made=tracker.made_input_set)
    clock = CudaClock() if on_cuda else HostClock()
    # the pass's first call, on the first set alone: a refusal of the shape ends the job before the rest are made.
    # On a GPU it returns once launched: the (untimed) synchronization keeps a hang or fault in it the kernel's,
    # said while the phase is the first call, not a stall of the next set's making behind it
    tracker.first_call()
    first_output = pass_calls(pass_target, inputs, then=clock.synchronize)
    tracker.first_call_returned()
    inputs = make_input_sets(spec, case, seeds, device, on_made=tracker.made_input_set, made=inputs)
    tracker.inputs_made()
    generated = time.perf_counter()
    try:
        expected = correctness_pass(pass_target, spec, inputs, seeds, rtol, atol, on_checked=tracker.checked,
                                    outputs=first_output)
    except WrongResult as wrong:
        return {"failure": str(wrong)}
    checked = time.perf_counter()
    first_call_s = tracker.first_call_s or 0.0  # the pass's, though made among the input sets
    if on_cuda:  # the pass's seconds are references, checks and a first call's JIT: no pace
        tracker.passed(len(inputs))

    flush = CudaFlush(device) if on_cuda else NoFlush()
    if warmup is not None:  # the leaderboard's warm-up run: same loop, thrown away
        tracker.enter("warm-up")
        time_batches(target, inputs, StoppingCriterion(**warmup), flush, clock, on_batch=tracker.batch_done)
    settle_started = time.perf_counter()
    if settle_s > 0:
        tracker.enter("settle")
        time_batches(target, inputs, StoppingCriterion.for_wall_time(settle_s), flush, clock,
                     on_batch=tracker.batch_done)
    settled = time.perf_counter()
    fresh = FreshInputs(spec, case, device, rtol, atol) if recheck and spec.timing.leaderboard_fresh_seed_step else None
    check = fresh.check if fresh else _recheck(spec, expected, seeds, rtol, atol) if recheck else None
    tracker.enter("timing")
    try:
        samples = time_batches(target, inputs, timed_criterion, flush, clock, check, on_batch=tracker.batch_done,
                               next_inputs=fresh.next if fresh else None)
    except WrongResult as wrong:
        return {"failure": f"recheck: {wrong}"}
    return {
        "samples_ns": samples.per_call_ns,
        "issue_ns": samples.issue_ns,
        "reason": samples.reason,
        "flush": flush.describe() | {"head_start_s": samples.head_start_s},
        "host_stalls": samples.host_stalls,
        "phases_s": {"generate": generated - started - first_call_s, "correctness": checked - generated + first_call_s,
                     "warm-up": settle_started - checked, "settle": settled - settle_started,
                     "timing": time.perf_counter() - settled},
    }


def make_input_sets(spec: Any, case: Any, seeds: list[int], device: str,
                    on_made: Callable[[float], None] = lambda seconds: None, made: list[Any] | None = None) -> list[Any]:
    """A shape's input sets, all held at once as the leaderboard's loop holds them. Where some fit this
    GPU but not all of them together, that is this shape on this GPU: a UsageError (exit 2) saying how
    many fitted and what torch said (how much this process holds), not a failure of the kernel. The
    first set's out-of-memory is make_input's to judge. `on_made` hears of each set made and its seconds;
    `made`: the sets of the first seeds, made already (the first, before the pass's first call)."""
    import torch

    inputs: list[Any] = list(made or [])
    for seed in seeds[len(inputs):]:
        began = time.perf_counter()
        try:
            inputs.append(spec.make_input(dataclasses.replace(case, seed=seed), device=device))
        except torch.OutOfMemoryError as error:
            if not inputs:
                raise
            fitted = len(inputs)
            inputs.clear()  # give the memory back before the parent's next job in this child
            said = str(error).strip().splitlines()[0] if str(error).strip() else "out of memory"
            raise UsageError(f"{spec.shape_text(case)}: its {len(seeds)} input sets do not fit in {device} memory"
                             f" together ({fitted} did; the leaderboard's loop holds all of them): {said}") from None
        on_made(time.perf_counter() - began)
    return inputs


def device_time(target: Kernel, *, case: Any, problem: str, head_start_s: float, device: str = "cuda",
                input_sets: int | None = None) -> dict[str, Any]:
    """The profiler's kernel time per call on fresh copies of the 50 input sets.

    A job of its own, run after every shape is timed, so the profiler (CUPTI) is never attached
    while the leaderboard numbers are taken.
    """
    started = time.perf_counter()
    spec = _problem(problem)
    seeds = spec.timing.seeds(case.seed, input_sets)
    tracker = CallTracker(len(seeds), (), started=started)
    tracker.making_inputs()  # as bench_case's: a kill while they are made is of a job too slow, not of a stuck kernel
    inputs = make_input_sets(spec, case, seeds, device, on_made=tracker.made_input_set)
    tracker.inputs_made(then=PROFILE)
    found, error = None, None
    try:
        found = profile_device_time(target, inputs, CudaFlush(device), head_start_s)
    except Exception as failure:  # noqa: BLE001 - the timings stand without the profiler's view
        if is_cuda_error(failure):
            raise
        error = f"{type(failure).__name__}: {failure}"
    return {"device_time": found.to_dict() if found else None, "profiler_error": error,
            "profile_s": time.perf_counter() - started}


def _problem(name: str) -> Any:
    from nvfp4ctl.problems import resolve_problem

    return resolve_problem(name)


def correctness_pass(target: Kernel, spec: Any, inputs: list[tuple], seeds: list[int],
                     rtol: float, atol: float, on_checked: Callable[[float], None] = lambda seconds: None,
                     outputs: list[Any] | None = None) -> list[Any]:
    """Call the target on a clone of every input set, then check all 50 outputs; return the references.
    `on_checked` hears of each output checked and the seconds its check took (the reference's, on the CPU).
    `outputs`: those of the first sets, called already (bench_case's first call)."""
    done = list(outputs or [])
    outputs = done + pass_calls(target, inputs[len(done):])
    expected = []
    for index, (data, output) in enumerate(zip(inputs, outputs)):
        began = time.perf_counter()
        want = spec.reference(data)
        _raise_if_wrong(first_mismatch(output, want, rtol, atol, spec.output_dims), index, seeds)
        expected.append(want)
        on_checked(time.perf_counter() - began)
    return expected


def pass_calls(target: Kernel, inputs: list[tuple], then: Callable[[], None] = lambda: None) -> list[Any]:
    """The correctness pass's calls, each on a clone of its input set: their outputs, unchecked. `then` (a
    device synchronization) runs after them, an error it raises taken as theirs."""
    try:
        outputs = [target(clone_data(data)) for data in inputs]
        then()
        return outputs
    except CannotFinish:  # the CPU job's own stop, from its call counter: no exception of the target's
        raise
    except Exception as error:  # noqa: BLE001 - the target's own exception is a crash of the shape
        if is_cuda_error(error):
            raise  # the context is poisoned: the worker turns this into a crash
        raise raised_from(error) from error


def _recheck(spec: Any, expected: list[Any], seeds: list[int], rtol: float, atol: float) -> Callable[[list[Any]], None]:
    """Leaderboard mode's re-check after every repeat, on all 50 outputs (GPU MODE's looks at the last)."""

    def check(outputs: list[Any]) -> None:
        for index, (output, want) in enumerate(zip(outputs, expected)):
            _raise_if_wrong(first_mismatch(output, want, rtol, atol, spec.output_dims), index, seeds)

    return check


class FreshInputs:
    """eval.py's leaderboard loop (the GEMV's): before every timed repeat a new input set, the seed stepped on
    from the task's (test.args["seed"] += 13), and that repeat's output checked against its own reference, so
    a result cached by the input's address or reused from an earlier call fails instead of timing a lookup."""

    def __init__(self, spec: Any, case: Any, device: str, rtol: float, atol: float) -> None:
        self.spec, self.case, self.device, self.rtol, self.atol = spec, case, device, rtol, atol
        self.seed = case.seed
        self.repeats = 0
        self._check_copy: Any = None

    def next(self) -> list[Any]:
        self.seed += self.spec.timing.leaderboard_fresh_seed_step
        self.repeats += 1
        data = self.spec.make_input(dataclasses.replace(self.case, seed=self.seed), device=self.device)
        self._check_copy = clone_data(data)  # eval.py checks against a copy taken before the call
        return [data]

    def check(self, outputs: list[Any]) -> None:
        want = self.spec.reference(self._check_copy)
        problem = first_mismatch(outputs[0], want, self.rtol, self.atol, self.spec.output_dims)
        if problem is not None:
            text = problem.describe() if isinstance(problem, Mismatch) else problem
            raise WrongResult(f"repeat {self.repeats}'s fresh input set (seed {self.seed}): {text}")


def _raise_if_wrong(problem: Mismatch | str | None, index: int, seeds: list[int]) -> None:
    if problem is None:
        return
    text = problem.describe() if isinstance(problem, Mismatch) else problem
    raise WrongResult(f"input set {index + 1} of {len(seeds)} (seed {seeds[index]}): {text}")


def clone_data(data: Any) -> Any:
    """GPU MODE's `_clone_data`: tensors cloned, containers rebuilt, everything else as is."""
    import torch

    if isinstance(data, tuple):
        return tuple(clone_data(x) for x in data)
    if isinstance(data, list):
        return [clone_data(x) for x in data]
    if isinstance(data, dict):
        return {k: clone_data(v) for k, v in data.items()}
    return data.clone() if isinstance(data, torch.Tensor) else data
