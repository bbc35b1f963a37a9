"""The GPU worker's side of tune: jobs the runner's Worker calls as "nvfp4ctl.tune.jobs:<name>".

`measure` loads one candidate (a cached kernel build, or a Python submission), checks it on one
shape with check's own job (first call, then the reuse probe), and only then times it with bench's
own job (the leaderboard's loop, short criterion). `measure_pair` times two candidates back to back
the same way (the search's rematch). A worker keeps every module it loaded, so a candidate is
imported once per GPU however many shapes it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from nvfp4ctl.tune.results import OK, UNSUPPORTED, WRONG

_loaded: dict[str, Callable[[tuple], Any]] = {}


def load_candidate(artifact: dict, problem: str) -> Callable[[tuple], Any]:
    """A candidate through the task problem's C ABI (a kernel build) or harness (a submission)."""
    from nvfp4ctl.runner.targets import import_submission, load_kernel

    key = repr(sorted(artifact.items()))
    if key not in _loaded:
        if artifact["kind"] == "kernel":
            _loaded[key] = load_kernel(Path(artifact["source"]), problem, artifact["arch"], tuple(artifact["defines"]))
        else:
            _loaded[key] = import_submission(Path(artifact["path"]), problem)
    return _loaded[key]


def measure(target: Callable[[tuple], Any] | None, *, artifact: dict | None, case: Any, problem: str, rtol: float,
            atol: float, criterion: dict[str, float], settle_s: float, input_sets: int, device: str = "cuda",
            probe: bool = True) -> dict[str, Any]:
    kernel = target if artifact is None else load_candidate(artifact, problem)
    assert kernel is not None
    wrong = _check(kernel, case, problem, rtol, atol, probe, device)
    if wrong is not None:
        return wrong
    samples = _bench_samples(kernel, case, problem, rtol, atol, criterion, settle_s, input_sets, device)
    if isinstance(samples, str):
        return {"status": WRONG, "message": samples}
    return {"status": OK} | _stats(samples)


def measure_pair(target: Callable[[tuple], Any] | None, *, artifact: dict | None, challenger: dict, case: Any,
                 problem: str, rtol: float, atol: float, criterion: dict[str, float], settle_s: float,
                 input_sets: int, device: str = "cuda", probe: bool = True) -> dict[str, Any]:
    """The current best (`artifact`) and a challenger on one shape, each checked, then timed in the
    order current, challenger, challenger, current: each side's time is the mean of its two timings'
    means, so a drift that is linear over the four cancels. A side that fails gets its own status
    (the other is still timed)."""
    kernels = [target if artifact is None else load_candidate(artifact, problem), load_candidate(challenger, problem)]
    sides: list[dict[str, Any]] = []
    for kernel in kernels:
        assert kernel is not None
        sides.append(_check(kernel, case, problem, rtol, atol, probe, device) or {})
    timings: list[list[dict[str, Any]]] = [[], []]
    for index in (0, 1, 1, 0):
        if sides[index]:
            continue
        found = _bench_samples(kernels[index], case, problem, rtol, atol, criterion, settle_s, input_sets, device)
        if isinstance(found, str):
            sides[index] = {"status": WRONG, "message": found}
        else:
            timings[index].append(_stats(found))
    for index, runs in enumerate(timings):
        if not sides[index]:
            sides[index] = {"status": OK, "us": sum(r["us"] for r in runs) / 2,
                            "err_us": abs(runs[0]["us"] - runs[1]["us"]) / 2 + max(r["err_us"] for r in runs),
                            "runs": sum(r["runs"] for r in runs)}
    return {"status": OK, "current": sides[0], "challenger": sides[1]}


def _check(kernel: Callable[[tuple], Any], case: Any, problem: str, rtol: float, atol: float, probe: bool,
           device: str) -> dict[str, Any] | None:
    """check's own job (first call, then the reuse probe): None if it passed, else the reply saying why not."""
    from nvfp4ctl.check.job import check_case

    checked = check_case(kernel, problem=problem, case=case, rtol=rtol, atol=atol, probe=probe, device=device)
    if checked.refused is not None:  # not wrong: the candidate does not take the shape
        return {"status": UNSUPPORTED, "message": checked.refused}
    return None if checked.passed else {"status": WRONG, "message": _why_wrong(checked)}


def _bench_samples(kernel: Callable[[tuple], Any], case: Any, problem: str, rtol: float, atol: float,
                   criterion: dict[str, float], settle_s: float, input_sets: int, device: str) -> list[float] | str:
    """bench's own job (the leaderboard's loop): the samples in ns, or why the run failed."""
    from nvfp4ctl.bench.jobs import bench_case

    reply = bench_case(kernel, case=case, problem=problem, rtol=rtol, atol=atol, criterion=criterion,
                       device=device, input_sets=input_sets, settle_s=settle_s)
    if "raised" in reply:
        return reply["raised"][0]
    return reply["failure"] if "failure" in reply else list(reply["samples_ns"])


def _stats(samples_ns: list[float]) -> dict[str, Any]:
    from nvfp4ctl.bench.stats import summarize

    stats = summarize(samples_ns).scaled(1e-3)
    return {"us": stats.mean, "err_us": stats.err, "runs": stats.runs}


def _why_wrong(result: Any) -> str:
    if result.raised:
        return result.raised[0]
    if result.problems:
        return result.problems[0]
    wrong = result.comparison
    if wrong is None:
        return f"check failed ({result.phase})"
    from nvfp4ctl.check.render import error_sizes

    return f"{wrong.mismatched} of {wrong.total} outputs wrong ({result.phase}), {error_sizes(wrong)}"
