"""`nvfp4ctl check`: run the target on task.yml's tests in a watched child and explain any mismatch."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from nvfp4ctl.console import VERBOSE, Console, get_console
from nvfp4ctl.errors import ExitCode, UsageError
from nvfp4ctl.options import Choice, Numbers, choice, flat, integer, numbers, path, seconds
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.problems import DEFAULT_PROBLEM, refuse_gemm_only
from nvfp4ctl.problems.fields import MAX_SEED
from nvfp4ctl.project import BYO_KERNEL_DOC
from nvfp4ctl.runner.gpu import first_gpu, gpu_present, run_device
from nvfp4ctl.usage_hints import typed_command_line
from nvfp4ctl.words import plural, seconds_text
from nvfp4ctl.workspace import note_problem

if TYPE_CHECKING:  # the check machinery is imported when the command runs, so `--help` stays fast
    from nvfp4ctl.check.run import CheckItem, CheckReport, CheckSettings, ItemOutcome
    from nvfp4ctl.progress_lines import ProgressLines
    from nvfp4ctl.runner.targets import TargetSpec


class Scales(Choice):
    generator = "generator"
    full = "full"


def command(
    only: Annotated[list[Numbers] | None, typer.Option("--only", metavar="N", parser=numbers(), help="Run task.yml test N (1-based); repeat or comma-separate for several (--only 1,3).")] = None,
    shape: Annotated[list[str] | None, typer.Option("--shape", metavar="SHAPE", help="Ad-hoc case in the problem's syntax: M,N,K[,L] (GEMV M,K[,L]; grouped M1,N1,K1;M2,N2,K2); repeatable.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", metavar="S", min=0, max=MAX_SEED, parser=integer(0, MAX_SEED), help="Seed for every case run (default: task.yml's; 1111 for --shape).")] = None,
    scales: Annotated[Scales, typer.Option("--scales", metavar="<generator|full>", parser=choice(Scales), help="generator: what the problem's GPU MODE generator draws (GEMM {0,1,2,3}, GEMV {0,1,2}, grouped GEMM {1,2},"
                 " dual GEMM rand [0,1) in e4m3); full: the whole e4m3 range.")] = Scales.generator,
    submission: Annotated[Path | None, typer.Option("--submission", metavar="PATH", parser=path(), help="A GPU MODE submission.py to check.")] = None,
    kernel: Annotated[Path | None, typer.Option("--kernel", metavar="PATH", parser=path(), help="A kernel source (.cu) to build and check; 'default': nvfp4ctl's own for this GPU.")] = None,
    task: Annotated[Path | None, typer.Option("--task", metavar="PATH", parser=path(), help="task.yml to use (ours or GPU MODE's).")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", metavar="S", parser=seconds(zero=False), help="Seconds per test (its inputs, reference, kernel calls and comparisons) before it is stopped (default: NVFP4CTL_TIMEOUT, else task.yml's test_timeout, else its timeout, else 180).")] = None,
    no_probe: Annotated[bool, typer.Option("--no-probe", help="Skip the anti-cache probe (second calls with new data).")] = False,
    dump: Annotated[bool, typer.Option("--dump", help=f"Collect the kernel's `nvfp4ctl:umma` lines and run them through the UMMA decoder and model (nvfp4_gemm only; {BYO_KERNEL_DOC}).")] = False,
) -> Outcome:
    """Check a kernel's output against the exact reference on task.yml's tests."""
    from nvfp4ctl.build.read_once import reading_once
    from nvfp4ctl.build.toolchain import require_torch
    from nvfp4ctl.check import plan
    from nvfp4ctl.check.run import CheckSettings, no_gpu
    from nvfp4ctl.runner.cpu_target import refuse_cuda_kernel_on_cpu
    from nvfp4ctl.runner.load_limit import load_limit
    from nvfp4ctl.runner.targets import refuse_broken_target, refuse_unloadable, resolve_target, task_for_target
    from nvfp4ctl.task import TEST_TIMEOUT, run_limit

    console = get_console()
    with reading_once():  # a --kernel and its headers are read once, for its task, its problem and its warnings
        loaded = task_for_target(plan.load_task_file(task), submission, kernel)
        note_problem(loaded.problem)  # first: a submission that cannot load is logged with the problem too
        target = resolve_target(submission, kernel, loaded, read_source=False)
    # every mistake in the options is said before the submission's own mistakes and "no GPU": the
    # command line is the first thing to fix, on a laptop too
    items = plan.select_items(loaded, flat(only), shape or [], seed)
    timeout_s, timeout_source, note = run_limit(loaded, timeout, TEST_TIMEOUT)
    if note is not None:
        console.warn(note)
    load_s, load_source = load_limit(timeout_s)
    if dump:  # the model replays one GEMM tile on the GEMM's inputs
        refuse_gemm_only(f"--dump decodes and simulates an {DEFAULT_PROBLEM} kernel's MMAs", loaded.problem)
    refuse_broken_target(target)
    device = run_device()
    require_torch()  # the child imports it to load the target: before "no GPU", which would hide it
    refuse_cuda_kernel_on_cpu(target, device, "check")
    no_gpu_line = no_gpu(typed_command_line("check"))
    if device == "cuda" and not gpu_present():
        raise UsageError(no_gpu_line)
    refuse_unloadable(target)
    gpu = first_gpu() if device == "cuda" else None
    settings = CheckSettings(problem=loaded.problem, rtol=loaded.rtol, atol=loaded.atol, timeout_s=timeout_s,
                             device=device, scales=scales.value, probe=not no_probe,
                             listed_cases=loaded.tests + loaded.benchmarks)
    limits = f"timeout {seconds_text(timeout_s)} ({timeout_source}) · load limit {seconds_text(load_s)} ({load_source})"
    console.info(_config_line(target.label, loaded, items, limits, gpu.describe() if gpu else device, settings),
                 style="dim")
    _warn_of_the_word(console, target)
    dumped: list[str] = []
    report = _run_with_progress(console, items, target, settings, dumped.append if dump else None, no_gpu_line)
    _show(console, report)
    summary, exit_code = report.summary, report.exit_code
    if dump and items:  # the one hook of --dump: the child's output lines, after the run
        from nvfp4ctl.commands.umma_view import show_dump_lines

        case = items[0].case
        dump_summary, dump_ok = show_dump_lines(dumped, case.m, case.n, case.k, case.seed, batches=case.l)
        summary = f"{summary}; {dump_summary}"
        exit_code = exit_code if dump_ok or exit_code != ExitCode.OK else ExitCode.FAILURES
    return Outcome(result=summary, exit_code=exit_code, target=target.path, target_source=target.source,
                   gpu=report.gpu or (gpu.describe() if gpu else None), problem=loaded.problem)


def _warn_of_the_word(console: Console, target: Any) -> None:
    """A submission the leaderboard would refuse unread ("stream" in code.lower()) may still pass
    here: say so before the results, since a pass would suggest it is ready to send."""
    from nvfp4ctl.lint.stream import WORD, first_line
    from nvfp4ctl.runner.targets import SUBMISSION, short_path

    if target.kind != SUBMISSION:
        return
    if found := first_line(target.path.read_text(encoding="utf-8", errors="replace")):
        line, count = found
        times = f" ({count} times)" if count > 1 else ""
        console.warn(f"{short_path(target.path)}:{line}: the word {WORD!r}{times}: the leaderboard refuses this file"
                     " unread; `nvfp4ctl lint` shows every one")


def _config_line(target: str, task: Any, items: list[CheckItem], limits: str, device: str,
                 settings: CheckSettings) -> str:
    """Everything the run depends on, on one line (saved in the terminal scrollback with the results)."""
    from nvfp4ctl.runner.targets import task_label_and_reason

    shapes = sum(1 for item in items if item.id.startswith("s"))
    picked = f"{len(items) - shapes} of {plural(len(task.tests), 'test')}" + (f" + {shapes} --shape" if shapes else "")
    return (
        f"check · {settings.problem} · target {target} · task {task_label_and_reason(task)} ({picked})"
        f" · {limits} · device {device}"
        f" · scales {settings.scales} · probe {'on' if settings.probe else 'off'}"
    )


def _run_with_progress(console: Console, items: list[CheckItem], target: TargetSpec, settings: CheckSettings,
                       collect: Any = None, no_gpu_line: str | None = None) -> CheckReport:
    from nvfp4ctl.bounded_text import SHOWN_TAIL, VERBOSE_TAIL, clipped_line
    from nvfp4ctl.check.run import run_check
    from nvfp4ctl.progress_lines import progress_lines

    verbose = console.verbosity >= VERBOSE
    show = (lambda line: console.detail(f"  [child] {clipped_line(line, VERBOSE_TAIL.chars)}")) if verbose else None
    echo = show if collect is None else (lambda line: (collect(line), show and show(line)))
    # the load (a load_inline build: minutes) and each test (up to its watchdog's 180 s) block in the
    # child: without a bar, plain lines say which one runs
    with console.progress() as progress, progress_lines(console, len(items)) as lines:
        steps = _TestSteps(progress, len(items), lines)
        return run_check(
            items, target, settings,
            on_start=lambda item, loads_first: steps.start(f"{item.label} ({item.shape})", loads_first),
            on_done=lambda outcome: steps.done(),
            on_output=echo,
            on_progress=steps.news,
            on_loaded=steps.loaded,
            tail_limits=VERBOSE_TAIL if verbose else SHOWN_TAIL,
            no_gpu_line=no_gpu_line,
        )


class _TestSteps:
    """The target's load, then each test, whose phase (making its inputs, the reference, a call, a comparison:
    check/progress.py) follows its name as bench's news follows its step. A test after a crash loads the target
    again in a fresh child first (a load_inline build: minutes), and its name says so until the load ends, in
    bench's words. A test is done when its outcome comes."""

    def __init__(self, progress: Any, total: int, lines: ProgressLines) -> None:
        from nvfp4ctl.progress_step import ProgressStep

        self._shown = ProgressStep(progress, total, lines, "loading the target")
        self._shown.show_line()  # the load reports nothing: news is a test's, from its start on
        self._test = ""  # the test under way, by its name alone

    def start(self, step: str, loads_first: bool) -> None:
        self._test = step
        self._shown.show(f"{step} (loading the target first)" if loads_first else step)

    def loaded(self) -> None:
        """A child has loaded the target: a test that waited on it goes by its own name again, said at once
        (how long the load took is news). The first load, before any test, is a step of its own."""
        if self._shown.started and self._shown.step != self._test:
            self._shown.show(self._test)

    def done(self) -> None:
        self._shown.advance()

    def news(self, value: Any) -> None:
        self._shown.news(value)


def _show(console: Console, report: CheckReport) -> None:
    from nvfp4ctl.check.render import repeated_crashes
    from nvfp4ctl.check.run import CRASH, FAIL, PASS, TIMEOUT
    from nvfp4ctl.runner.raised import RAISED, UNSUPPORTED

    if report.load_error:
        console.fail(report.load_error)
        console.raw("\n".join("  " + line for line in report.load_log_tail) or "  (the child wrote nothing)")
        if report.load_log_path:  # the tail is the last lines; a build's first error may be far above
            console.raw(f"  full child log: {report.load_log_path}")
        console.fail(f"{_tests(len(report.outcomes))} not run: the target could not be loaded")
        return
    not_passed = (FAIL, UNSUPPORTED, CRASH, RAISED, TIMEOUT)  # each said below the table
    console.table(["#", "shape", "verdict", "max abs err", "time"], [_row(o) for o in report.outcomes],
                  right_align_from=3)
    repeats = repeated_crashes(report.outcomes)
    for index, outcome in enumerate(report.outcomes):
        if index in repeats:
            same = "exception" if outcome.verdict == RAISED else "crash"
            console.fail(f"{outcome.item.label} ({outcome.item.shape}): same {same} as {repeats[index]}")
            if outcome.log_path:
                console.raw(f"  full child log: {outcome.log_path}")
        elif outcome.verdict in not_passed:
            _details(console, outcome)
    not_run = [o for o in report.outcomes if o.verdict not in (PASS, *not_passed)]
    if not_run:
        console.fail(f"{_tests(len(not_run), 'remaining ')} not run after the timeout: "
                     + ", ".join(o.item.label for o in not_run))
    if report.exit_code == ExitCode.OK:
        console.ok(report.summary)
    else:
        console.fail(report.summary)


def _tests(count: int, adjective: str = "") -> str:
    return f"{count} {adjective}test{'' if count == 1 else 's'}"


def _row(outcome: ItemOutcome) -> list:
    from nvfp4ctl.check.render import error_cell
    from nvfp4ctl.check.result import FIRST_CALL
    from nvfp4ctl.check.run import CRASH, FAIL, PASS, TIMEOUT
    from nvfp4ctl.runner.raised import RAISED, UNSUPPORTED

    result = outcome.result
    # a probe's comparison reads an old result against new data: its verdict is the reuse, its errors no size
    measured = result.comparison if result and result.phase == FIRST_CALL else None
    error = error_cell(measured) if measured else "-"
    seconds = f"{outcome.seconds:.2f} s" if outcome.seconds is not None else "-"
    style = {PASS: "green", FAIL: "bold red", UNSUPPORTED: "bold red", CRASH: "bold red", RAISED: "bold red",
             TIMEOUT: "bold red"}.get(outcome.verdict, "dim")
    verdict = Text(outcome.verdict, style=style)
    return [outcome.item.id, outcome.item.shape, verdict, error, seconds]


def _details(console: Console, outcome: ItemOutcome) -> None:
    from nvfp4ctl.check.render import comparison_lines
    from nvfp4ctl.check.result import FIRST_CALL
    from nvfp4ctl.check.run import CRASH, TIMEOUT
    from nvfp4ctl.runner.raised import RAISED, UNSUPPORTED

    item = outcome.item
    if outcome.verdict in (UNSUPPORTED, CRASH, RAISED, TIMEOUT) or outcome.result is None:
        console.fail(outcome.message or f"{item.label}: {outcome.verdict}")
        lines = [f"  {line}" for line in outcome.log_tail]
        if outcome.log_path:
            lines.append(f"  full child log: {outcome.log_path}")
        if lines:
            console.raw("\n".join(lines))
        return
    result = outcome.result
    where = "" if result.phase == FIRST_CALL else f" in the anti-cache probe ({result.phase.removeprefix('probe: ')})"
    console.fail(f"{item.label} ({item.shape}, seed {item.case.seed}): FAIL{where}")
    lines = list(result.problems) + (comparison_lines(result.comparison, with_errors=result.phase == FIRST_CALL)
                                     if result.comparison else [])
    console.raw("\n".join("  " + line for line in lines))
