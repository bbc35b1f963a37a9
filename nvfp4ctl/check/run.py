"""Orchestrates `check` in the parent: one worker, one job per case, verdicts, stop on timeout."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nvfp4ctl.bounded_text import SHOWN_TAIL, TailLimits, shown_cause
from nvfp4ctl.check.progress import CheckProgress, possible_deadlock, timeout_cause, timeout_said
from nvfp4ctl.check.result import CHECK_JOB, DEVICE_JOB, FIRST_CALL, CaseResult
from nvfp4ctl.errors import ExitCode, UsageError
from nvfp4ctl.runner.raised import RAISED, RAISED_PREFIX, UNSUPPORTED, unsupported_line
from nvfp4ctl.runner.targets import TargetSpec
from nvfp4ctl.runner.worker import ChildCrashed, ChildTimeout, JobError, Worker

PASS, FAIL, CRASH, TIMEOUT, NOT_RUN = "pass", "FAIL", "crash", "timeout", "not run"
# a test whose call of custom_kernel raised (RAISED, "raised"): a crash of that test as a CUDA error's, exit 4
CRASHES = (CRASH, RAISED)
# a test whose shape the target refused (UNSUPPORTED, "unsupported"): the target does not pass it, exit 1 as a FAIL
FAILURES = (FAIL, UNSUPPORTED)


def no_gpu(command_line: str = "nvfp4ctl check") -> str:
    """The way out names what the CPU can do, so that a plain-torch submission is not sent to look for a GPU host:
    `command_line`, the user's own as typed (its --only, its --submission), under NVFP4CTL_DEVICE=cpu."""
    return (f"no CUDA GPU found: nvfp4ctl check runs kernels on a GPU; NVFP4CTL_DEVICE=cpu {command_line} runs a torch"
            " submission on the CPU instead (a kernel needs a GPU)")


@dataclass(frozen=True)
class CheckItem:
    id: str  # "3" for task.yml's third test, "s1" for the first --shape
    case: Any  # nvfp4ctl.task.Case (the problem's fields and the seed)
    shape: str  # the problem's words for the shape (ProblemBase.shape_text: "g=2 m=96,128 n=128,256 k=256,512")

    @property
    def label(self) -> str:
        return f"shape {self.id[1:]}" if self.id.startswith("s") else f"test {self.id}"


@dataclass(frozen=True)
class CheckSettings:
    problem: str
    rtol: float
    atol: float
    timeout_s: float
    device: str = "cuda"
    scales: str = "generator"
    probe: bool = True
    listed_cases: tuple[Any, ...] = ()  # the task's tests and benchmarks: what a test too slow could be traded for


@dataclass(frozen=True)
class ItemOutcome:
    item: CheckItem
    verdict: str
    seconds: float | None = None
    result: CaseResult | None = None
    message: str | None = None  # the headline of a crash, timeout or harness error
    log_tail: tuple[str, ...] = ()
    log_path: str | None = None  # the child's full log, kept after a crash or timeout
    # what went wrong in a few words, for the summary line (a wrong result's comes from `result`): an exception's
    # type and first line, a refused shape's constraint, a crash's signal or exit, a timeout's seconds
    cause: str | None = None


@dataclass
class CheckReport:
    outcomes: list[ItemOutcome] = field(default_factory=list)
    gpu: str | None = None
    load_error: str | None = None  # the target could not be loaded at all: nothing ran
    load_log_tail: tuple[str, ...] = ()
    load_log_path: str | None = None  # the child's full log, kept when it said something

    def with_verdict(self, verdict: str) -> list[ItemOutcome]:
        return [o for o in self.outcomes if o.verdict == verdict]

    @property
    def exit_code(self) -> ExitCode:
        if self.with_verdict(TIMEOUT):
            return ExitCode.TIMEOUT
        if any(self.with_verdict(verdict) for verdict in CRASHES) or self.load_error:
            return ExitCode.CRASH
        if any(self.with_verdict(verdict) for verdict in FAILURES):
            return ExitCode.FAILURES
        return ExitCode.OK

    @property
    def summary(self) -> str:
        """One line for the run log, each kind with its first test's cause: "10/10 pass", "9/10 pass, 1 fail
        (test 3: max abs err 0.0312, first wrong at (0, 17, 5))" (render.short_cause), "timeout in test 6 (no
        result after 180 s)", and after a timeout every other kind the table shows: "timeout in test 6 (...),
        1 fail (test 1: ...), 1 raised (test 2: RuntimeError: shape mismatch)"; a shape the target refused: "2/3
        pass, 1 unsupported (test 2: m must be a multiple of 128 (the kernel's tile M))"; a crash: "1 crash
        (test 4: killed by SIGSEGV)"."""
        timeouts = self.with_verdict(TIMEOUT)
        if timeouts:  # the run stopped there: the tests after it were not run, so no pass count
            cause = _cause(timeouts[0])
            said = f"timeout in {timeouts[0].item.label}" + (f" ({cause})" if cause else "")
            return ", ".join([said, *self._not_passed()])
        if self.load_error:
            return f"crash: {self.load_error}"
        return ", ".join([f"{len(self.with_verdict(PASS))}/{len(self.outcomes)} pass", *self._not_passed()])

    def _not_passed(self) -> list[str]:
        parts = []
        for verdict, word in ((FAIL, "fail"), (UNSUPPORTED, UNSUPPORTED), (CRASH, "crash"), (RAISED, RAISED)):
            found = self.with_verdict(verdict)
            if found:
                parts.append(f"{len(found)} {word} ({_ids(found)}{_first_cause(found)})")
        return parts


def _first_cause(failed: Sequence[ItemOutcome]) -> str:
    """": max abs err 0.0312, first wrong at (0, 17, 5)" after one failed test's name; after several, the
    first one's, named: "; test 3: ...". The run log keeps no details: this is what says what went wrong."""
    cause = _cause(failed[0])
    if cause is None:
        return ""
    return f": {cause}" if len(failed) == 1 else f"; {failed[0].item.label}: {cause}"


def _cause(outcome: ItemOutcome) -> str | None:
    """A test's cause cut to bounded_text.MAX_CAUSE: a wrong result's evidence, else the one its outcome noted."""
    from nvfp4ctl.check.render import short_cause

    if outcome.verdict == FAIL and outcome.result is not None:
        return short_cause(outcome.result)
    return None if not outcome.cause else shown_cause(" ".join(outcome.cause.split()))


def _ids(outcomes: Sequence[ItemOutcome]) -> str:
    labels = [o.item.label for o in outcomes]
    if all(label.startswith("test ") for label in labels) and len(labels) > 1:
        return "tests " + ", ".join(label.removeprefix("test ") for label in labels)
    return ", ".join(labels)


def timeout_message(item: CheckItem, timeout_s: float, last: Any = None, smaller_listed: bool = True) -> str:
    """The watchdog's kill in a test, as the job's last report (`last`) tells it: the harness's work (inputs,
    reference, comparison: not the kernel), a kernel call too slow where an earlier one returned, else a
    possible deadlock. `smaller_listed` as timeout_said's."""
    test = f"{item.label} ({item.shape})"
    if not isinstance(last, CheckProgress):  # the job reported nothing: the kernel may be all that ran
        return possible_deadlock(test, timeout_s, None)
    return timeout_said(test, timeout_s, last, smaller_listed) or possible_deadlock(test, timeout_s, last)


def _smaller_listed(item: CheckItem, settings: CheckSettings) -> bool:
    """Whether the task lists a shape of less work than the test's: bench's rule for its own advice."""
    from nvfp4ctl.bench.call_progress import smaller_listed
    from nvfp4ctl.problems import resolve_problem

    return smaller_listed(resolve_problem(settings.problem), item.case, settings.listed_cases)


def run_check(
    items: Sequence[CheckItem],
    target: TargetSpec,
    settings: CheckSettings,
    *,
    on_start: Callable[[CheckItem, bool], None] | None = None,
    on_done: Callable[[ItemOutcome], None] | None = None,
    on_output: Callable[[str], None] | None = None,
    on_progress: Callable[[Any], None] | None = None,
    on_loaded: Callable[[], None] | None = None,
    tail_limits: TailLimits = SHOWN_TAIL,
    no_gpu_line: str | None = None,
) -> CheckReport:
    """Run every item in one child (a fresh one after a crash); stop at the first timeout. `on_start` hears
    each item as it starts and whether the target loads first (in a fresh child, after a crash), `on_loaded`
    each time a child has loaded it, `on_progress` each phase of the test under way as it begins (a
    CheckProgress); `tail_limits` how much of the child's log a crash or timeout shows (-v: more); `no_gpu_line`
    what a child that finds no GPU says (default: no_gpu's)."""
    report = CheckReport()
    preload = (CHECK_JOB.partition(":")[0],)  # torch and the job module, imported under the load timeout
    with Worker(target, settings.timeout_s, settings.device, preload=preload, on_output=on_output,
                on_progress=on_progress, on_loaded=on_loaded, tail_limits=tail_limits) as worker:
        try:
            report.gpu = worker.call(DEVICE_JOB, label="loading the target", timeout_s=worker.load_timeout_s,
                                     device=settings.device, problem=settings.problem)
        except ChildCrashed as error:  # import error, failed build, or a crash while importing
            report.load_error = str(error).splitlines()[0]
            report.load_log_tail = tuple(error.log_tail)
            report.load_log_path = _text(error.log_path)
            report.outcomes = [ItemOutcome(item, NOT_RUN) for item in items]
            return report
        except JobError as error:  # e.g. an unknown problem name
            raise UsageError(f"cannot start the check: {error.text}") from None
        if settings.device == "cuda" and report.gpu is None:
            raise UsageError(no_gpu_line or no_gpu())
        for position, item in enumerate(items):
            if on_start:
                on_start(item, worker.loads_first)
            outcome = _run_item(worker, item, settings)
            report.outcomes.append(outcome)
            if on_done:
                on_done(outcome)
            if outcome.verdict == TIMEOUT:
                report.outcomes += [ItemOutcome(rest, NOT_RUN) for rest in items[position + 1 :]]
                break
    return report


def _run_item(worker: Worker, item: CheckItem, settings: CheckSettings) -> ItemOutcome:
    started = time.monotonic()
    try:
        result: CaseResult = worker.call(
            CHECK_JOB,
            label=f"{item.label} ({item.shape})",
            problem=settings.problem,
            case=item.case,
            rtol=settings.rtol,
            atol=settings.atol,
            scales=settings.scales,
            probe=settings.probe,
            device=settings.device,
        )
    except ChildTimeout as error:  # the test itself, or reloading the target after a crash
        in_test = str(error).startswith("possible deadlock")
        return ItemOutcome(item, TIMEOUT, time.monotonic() - started,
                           message=timeout_message(item, settings.timeout_s, error.progress,
                                                   _smaller_listed(item, settings)) if in_test else str(error),
                           log_tail=tuple(error.log_tail), log_path=_text(error.log_path),
                           cause=timeout_cause(settings.timeout_s, error.progress) if in_test
                           else error.what)
    except ChildCrashed as error:
        headline = str(error).splitlines()[0]
        return ItemOutcome(item, CRASH, time.monotonic() - started, message=headline,
                           log_tail=tuple(error.log_tail), log_path=_text(error.log_path),
                           cause=error.cause or _unlabelled(headline, item))
    except JobError as error:  # the harness itself failed (input generation, reference): say so
        if error.type_name == UsageError.__name__:  # e.g. a --shape the problem cannot generate
            raise UsageError(error.text) from None
        tail = tuple(line for line in error.traceback_text.strip().splitlines()[-6:])
        return ItemOutcome(item, FAIL, time.monotonic() - started,
                           message=f"{item.label}: the check itself failed: {error}", log_tail=tail,
                           cause=f"the check itself failed: {error}")
    if result.refused is not None:  # one line, no traceback: the shape is the input the target declines
        return ItemOutcome(item, UNSUPPORTED, time.monotonic() - started, result=result,
                           message=f"{item.label} ({item.shape}): {unsupported_line(result.refused)}",
                           cause=result.refused)
    if result.raised:
        where = "" if result.phase == FIRST_CALL else f" in the anti-cache probe ({result.phase.removeprefix('probe: ')})"
        in_probe = "" if result.phase == FIRST_CALL else "anti-cache probe: "  # first: a cut keeps it
        return ItemOutcome(item, RAISED, time.monotonic() - started, result=result,
                           message=f"{item.label} ({item.shape}): {result.raised[0]}{where}", log_tail=result.raised[1:],
                           cause=in_probe + result.raised[0].removeprefix(RAISED_PREFIX))
    verdict = PASS if result.passed else FAIL
    return ItemOutcome(item, verdict, time.monotonic() - started, result=result)


def _unlabelled(headline: str, item: CheckItem) -> str:
    """A crash's headline without the test's name in front ("test 2 (m=...) crashed: the child died" -> "the
    child died"), where the worker knew no shorter cause (no exit status)."""
    rest = headline.removeprefix(f"{item.label} ({item.shape})").lstrip(" :")
    return rest.removeprefix("crashed: ") or headline


def _text(path: object) -> str | None:
    return None if path is None else str(path)
