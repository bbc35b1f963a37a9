"""The check job, run in the child: generate, reference, poison, call, compare, probe.

The parent sends `CHECK_JOB` through the worker; the result is a small picklable `CaseResult`. The job
reports each phase of each call as it begins (making inputs, the reference, the call, the comparison:
check/progress.py), so that a kill says what was running and only a kernel call is called stuck.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from nvfp4ctl.check.compare import compare, mismatch_mask, poison
from nvfp4ctl.check.output import is_output_buffer, output_mistakes
from nvfp4ctl.check.progress import CALLING, COMPARING, MAKING_INPUTS, REFERENCE, TestPhases
from nvfp4ctl.check.result import FIRST_CALL, PROBE_FRESH, PROBE_REFILLED, REUSED, CaseResult, Comparison
from nvfp4ctl.runner.child import describe_device, is_cuda_error
from nvfp4ctl.runner.raised import describe_raised, refusal_of

if TYPE_CHECKING:
    from nvfp4ctl.problems.base import ProblemBase

# Seeds for the probe's new data, offset like the leaderboard's own (+42 per input set).
PROBE_SEED_STEP = 42


@dataclass(frozen=True)
class _Call:
    comparison: Comparison | None
    problems: tuple[str, ...]
    seconds: float
    raised: tuple[str, ...] = ()  # the call raised: runner.raised.describe_raised's lines
    refused: str | None = None  # the call refused the shape: the constraint it names (runner.raised.refusal_of)


def resolve_problem(name: str) -> ProblemBase:
    """A registered problem ("nvfp4_gemm"), or "package.module:attribute" for one defined elsewhere."""
    from nvfp4ctl.problems import resolve_problem as resolve

    return resolve(name)


def check_case(
    kernel: Callable[[tuple], Any],
    *,
    problem: str,
    case: Any,
    rtol: float,
    atol: float,
    scales: str = "generator",
    probe: bool = True,
    device: str = "cuda",
) -> CaseResult:
    phases = TestPhases(3 if probe else 1)
    with torch.no_grad():
        chosen = resolve_problem(problem)
        with phases.phase(MAKING_INPUTS, call=1):
            data = chosen.make_input(case, device=device, scales=scales)
        first = _call_and_compare(kernel, chosen, data, rtol, atol, device, phases, call=1)
        if first.refused is not None:
            return CaseResult(False, FIRST_CALL, call_s=first.seconds, refused=first.refused)
        if first.raised:
            return CaseResult(False, FIRST_CALL, call_s=first.seconds, raised=first.raised)
        if first.problems or not first.comparison or not first.comparison.passed:
            return CaseResult(False, FIRST_CALL, first.problems, first.comparison, first.seconds)
        if not probe:
            return CaseResult(True, FIRST_CALL, (), first.comparison, first.seconds)
        failed = _probe_reuse(kernel, chosen, case, data, rtol, atol, scales, device, phases)
        if failed is not None:
            return dataclasses.replace(failed, call_s=first.seconds, probed=True)
        return CaseResult(True, FIRST_CALL, (), first.comparison, first.seconds, probed=True)


def _probe_reuse(
    kernel: Callable[[tuple], Any], problem: ProblemBase, case: Any, data: tuple, rtol: float, atol: float,
    scales: str, device: str, phases: TestPhases,
) -> CaseResult | None:
    """Call again with new data in the same tensors, then with a fresh tuple; both must follow it.

    `data` stays alive while the fresh tuple is made, so the fresh tensors get new addresses: a cache
    keyed on data_ptr() or id() then answers with stale results instead of missing by luck.
    """
    with phases.phase(MAKING_INPUTS, call=2):
        problem.refill_input(data, seed=case.seed + PROBE_SEED_STEP, scales=scales)
    refilled = _call_and_compare(kernel, problem, data, rtol, atol, device, phases, call=2, explain=False)
    if failed := _probe_verdict(refilled, PROBE_REFILLED, "the same input tensors (same addresses) were refilled with new data"):
        return failed
    fresh_case = dataclasses.replace(case, seed=case.seed + 2 * PROBE_SEED_STEP)
    with phases.phase(MAKING_INPUTS, call=3):
        fresh_data = problem.make_input(fresh_case, device=device, scales=scales)
    fresh = _call_and_compare(kernel, problem, fresh_data, rtol, atol, device, phases, call=3, explain=False)
    return _probe_verdict(fresh, PROBE_FRESH, f"a fresh input tuple (seed {fresh_case.seed}) was passed")


def _probe_verdict(call: _Call, phase: str, what: str) -> CaseResult | None:
    # a refusal here is of a shape the first call took: the target's code failing, so a raise as any other
    if call.raised:
        return CaseResult(False, phase, raised=call.raised)
    if call.problems:
        return CaseResult(False, phase, tuple(f"after {what}: {p}" for p in call.problems), None)
    assert call.comparison is not None
    if call.comparison.passed:
        return None
    wrong = call.comparison
    message = f"{REUSED}: {what}, and {_not_followed(wrong)} did not follow the new data (the first call passed)"
    return CaseResult(False, phase, (message,), wrong)


def _not_followed(wrong: Comparison) -> str:
    """"16366 of 16384 outputs"; with one output per group, over every group (the comparison itself is
    the first wrong group's): "65464 of 65536 outputs (4 of 4 groups)"."""
    if not wrong.parts:
        return f"{wrong.mismatched} of {wrong.total} outputs"
    mismatched = sum(bad for _, bad, _ in wrong.parts)
    total = sum(size for _, _, size in wrong.parts)
    groups = sum(1 for _, bad, _ in wrong.parts if bad)
    return f"{mismatched} of {total} outputs ({groups} of {len(wrong.parts)} groups)"


def _call_and_compare(
    kernel: Callable[[tuple], Any], problem: ProblemBase, data: tuple, rtol: float, atol: float, device: str,
    phases: TestPhases, call: int, explain: bool = True,
) -> _Call:
    """The call's verdict; `explain`: whether a wrong result gets the problem's reading of it. A probe call
    goes without: its wrong result is an old answer read against new data, which the reuse explains
    alone, and the grouped GEMM's reading compares full outputs between groups."""
    with phases.phase(REFERENCE, call):  # synchronized, so that none of its work runs on into the call's phase
        want = problem.reference(data)
        c = problem.output_of(data)
        several = isinstance(want, list)  # the grouped GEMM: one output per group
        wants, buffers = (want, list(c)) if several else ([want], [c])
        for buffer in buffers:
            poison(buffer)
        _synchronize(device)
    with phases.phase(CALLING, call):
        started = time.perf_counter()
        try:
            out = kernel(data)
            _synchronize(device)  # asynchronous CUDA errors surface here, inside the try
        except Exception as error:  # noqa: BLE001 - the target's own exception is a crash of this test
            if is_cuda_error(error):
                raise  # the context is poisoned: the worker turns this into a crash and a fresh child
            return _Call(None, (), time.perf_counter() - started, raised=describe_raised(error),
                         refused=refusal_of(error))
        seconds = time.perf_counter() - started
    with phases.phase(COMPARING, call):
        return _compared(problem, data, out, wants=wants, buffers=buffers, several=several, seconds=seconds,
                         rtol=rtol, atol=atol, explain=explain)


def _compared(
    problem: ProblemBase, data: tuple, out: Any, *, wants: list, buffers: list, several: bool, seconds: float,
    rtol: float, atol: float, explain: bool,
) -> _Call:
    """The returned output checked: its form, then its values against the reference's."""
    names = problem.output_names(data)
    if several:
        if not isinstance(out, (list, tuple)) or len(out) != len(wants):
            kind = f"{type(out).__name__} of {len(out)}" if isinstance(out, (list, tuple)) else type(out).__name__
            return _Call(None, (f"custom_kernel returned {kind}, expected a list of {len(wants)} tensors "
                                "(the c of every group)",), seconds)
        outs = list(out)
    else:
        outs = [out]
    mistakes = [f"{name}: {m}" if several else m
                for name, o, w in zip(names, outs, wants) for m in output_mistakes(o, w, problem.output_dims)]
    if mistakes:
        return _Call(None, tuple(mistakes), seconds)
    parts = [dataclasses.replace(compare(o, w, rtol, atol, output_is_c=is_output_buffer(o, b)), output=name,
                                 dims=problem.output_dims)
             for name, o, w, b in zip(names, outs, wants, buffers)]
    chosen = next((p for p in parts if not p.passed), None) or max(parts, key=lambda p: p.max_abs_err)
    if several:
        chosen = dataclasses.replace(chosen, parts=tuple((p.output, p.mismatched, p.total) for p in parts))
    if not chosen.passed and explain:
        masks = [mismatch_mask(o, w, rtol, atol) for o, w in zip(outs, wants)]
        # the grouped GEMM reads every group's output at once (which other group's result is this?)
        if several:
            notes = problem.explain(data, outs, wants, masks, rtol=rtol, atol=atol)
        else:
            notes = problem.explain(data, out, wants[0], masks[0], rtol=rtol, atol=atol)
        chosen = dataclasses.replace(chosen, notes=tuple(notes))
    return _Call(chosen, (), seconds)


def _synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()



def device_info(kernel: Callable[[tuple], Any], *, device: str = "cuda", problem: str | None = None) -> str | None:
    """The GPU the child sees ("NVIDIA H100 80GB HBM3 (sm_90)"), or None when CUDA is unusable.

    Also imports the problem, so its import time is not charged to the first test's timeout.
    """
    if problem is not None:
        resolve_problem(problem)
    return describe_device(device)
