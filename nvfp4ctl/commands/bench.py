"""`nvfp4ctl bench`: the leaderboard's own timing of the benchmark shapes, and what the numbers mean."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nvfp4ctl import options
from nvfp4ctl.bounded_text import SHOWN_TAIL, VERBOSE_TAIL, clipped_line
from nvfp4ctl.bench.modes import BENCHMARK, DEFAULT_SETTLE_S, LEADERBOARD, run_timeout_key, whole_run_limit
from nvfp4ctl.console import VERBOSE, get_console
from nvfp4ctl.errors import UsageError, error_line, os_reason
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.problems import DEFAULT_PROBLEM, get_problem
from nvfp4ctl.usage_hints import typed_command_line
from nvfp4ctl.workspace import memory_path, note_problem, task_file_name
from nvfp4ctl.words import plural, seconds_text

# --json's "version", as lint's and dump's documents carry one: raised when a key changes meaning or goes away
JSON_VERSION = 1

if TYPE_CHECKING:  # the timing machinery is imported when the command runs, so `--help` stays fast
    from nvfp4ctl.bench import history
    from nvfp4ctl.bench.results import BenchReport
    from nvfp4ctl.bench.settings import TimingSettings
    from nvfp4ctl.runlog import RunEntry
    from nvfp4ctl.progress_lines import ProgressLines
    from nvfp4ctl.progress_step import ProgressStep
    from nvfp4ctl.runner.targets import TargetSpec
    from nvfp4ctl.task import Case, Task

CPU_SHAPE = "128,256,256"  # small enough for a CPU: the task's benchmark shapes take minutes per call there


def no_gpu(command_line: str, shapes_given: bool) -> str:
    """The way out without a GPU: `command_line`, the user's own as typed (its --submission, --mode; not its
    --only), under NVFP4CTL_DEVICE=cpu, with a small --shape added where it gives none, as a CPU bench of the
    task's benchmark shapes cannot end within its limit."""
    small = "" if shapes_given else f" --shape {CPU_SHAPE}"
    return (f"no CUDA GPU found: nvfp4ctl bench times kernels on a GPU; NVFP4CTL_DEVICE=cpu {command_line}{small}"
            f" times a torch submission on the CPU instead ({'' if shapes_given else 'a small shape: '}CPU times,"
            " not the leaderboard's; a kernel needs a GPU)")


class ModeChoice(options.Choice):
    benchmark = BENCHMARK
    leaderboard = LEADERBOARD


def command(
    submission: Annotated[Path | None, typer.Option("--submission", metavar="PATH", parser=options.path(), help="A GPU MODE submission.py to time.")] = None,
    kernel: Annotated[Path | None, typer.Option("--kernel", metavar="PATH", parser=options.path(), help="A kernel source (.cu) to build and time; 'default': nvfp4ctl's own for this GPU.")] = None,
    task: Annotated[Path | None, typer.Option("--task", metavar="PATH", parser=options.path(), help="task.yml to read the benchmarks from.")] = None,
    only: Annotated[list[options.Numbers] | None, typer.Option("--only", metavar="N", parser=options.numbers(), help="Time only benchmark N (1-based, task.yml order); repeat or comma-separate for several (--only 1,3).")] = None,
    shape: Annotated[list[str] | None, typer.Option("--shape", metavar="SHAPE", help="Time an ad-hoc shape, after the --only benchmarks if any: M,N,K[,L] (GEMV M,K[,L]; grouped M1,N1,K1;M2,N2,K2); repeatable.")] = None,
    mode: Annotated[ModeChoice, typer.Option("--mode", metavar="<benchmark|leaderboard>", parser=options.choice(ModeChoice), help="benchmark: the problem's leaderboard loop, each shape repeated until err/mean is under --max-noise, its repeats run out, the mean per call × repeats passes 10 s (kernel time, not wall time) or 120 s of wall time pass; leaderboard: its stricter mode (more repeats, 30 s of kernel time, recheck every repeat).")] = ModeChoice.benchmark,
    max_repeats: Annotated[int | None, typer.Option("--max-repeats", metavar="N", min=1, parser=options.integer(1), help="Most timed repeats per shape (default: the problem's loop, e.g. 200 for the GEMM; 1000 in leaderboard mode).")] = None,
    max_noise: Annotated[float, typer.Option("--max-noise", metavar="PCT", parser=options.percentage(), help="Stop a shape once err/mean is below this many percent.")] = 0.1,
    settle: Annotated[float | None, typer.Option("--settle", metavar="S", parser=options.seconds(), show_default=False, help=f"Run each shape untimed this long before timing it, so the card reaches a steady state under the kernel's load (default: {DEFAULT_SETTLE_S:g}; 0: the leaderboard's loop alone).")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", metavar="S", parser=options.seconds(zero=False), help="Seconds per shape before it is stopped, as a possible deadlock or as too slow for the limit (exit 3 either way; default: NVFP4CTL_TIMEOUT, else task.yml's benchmark_timeout, ranked_timeout in leaderboard mode, else its timeout, else 180).")] = None,
    recalibrate: Annotated[bool, typer.Option("--recalibrate", help="Measure this GPU's TFLOP/s and TB/s again.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print everything as JSON instead of tables.")] = False,
) -> Outcome:
    """Time the benchmark shapes the way the leaderboard does, then explain the numbers."""
    from nvfp4ctl.bench.session import BenchPlan, BenchStopped, run_bench
    from nvfp4ctl.bench.settings import TimingSettings
    from nvfp4ctl.build.read_once import reading_once
    from nvfp4ctl.build.toolchain import require_torch
    from nvfp4ctl.runner.cpu_target import refuse_cuda_kernel_on_cpu
    from nvfp4ctl.runner.gpu import gpu_present, run_device
    from nvfp4ctl.runner.targets import (refuse_broken_target, refuse_unloadable, resolve_target, task_for_target,
                                         task_label_and_reason)
    from nvfp4ctl.runner.load_limit import load_limit
    from nvfp4ctl.runner.worker import ChildCrashed, ChildTimeout, Worker
    from nvfp4ctl.task import load_task, run_limit

    with reading_once():  # a --kernel and its headers are read once, for its task, its problem and its warnings
        loaded = task_for_target(load_task(task), submission, kernel)
        note_problem(loaded.problem)  # first: a submission that cannot load is logged with the problem too
        target = resolve_target(submission, kernel, loaded, read_source=False)
    problem = get_problem(loaded.problem)
    # option mistakes first, then the submission's own, then "no GPU" (as check)
    cases = select_cases(loaded, options.flat(only), shape or [])
    timeout_s, timeout_source, note = run_limit(loaded, timeout, run_timeout_key(mode.value))
    if note is not None:
        get_console().warn(note)
    load_s, load_source = load_limit(timeout_s)
    refuse_broken_target(target)
    device = run_device()
    require_torch()  # the child imports it to load the target: before "no GPU", which would hide it
    refuse_cuda_kernel_on_cpu(target, device, "bench")
    if device == "cuda" and not gpu_present():
        # the --only benchmarks cannot end on a CPU, beside a --shape as much as alone: the line goes without them
        raise UsageError(no_gpu(typed_command_line("bench", without="--only"), bool(shape)))
    refuse_unloadable(target)
    settings = problem.bench_mode(mode.value)  # the problem's loop: repeats and warm-ups differ
    if device != "cuda" and settle:  # None: not given
        # settling brings the card's clocks and temperature to the kernel's load; a CPU has no such state to wait for
        get_console().warn(f"--settle {settle:g}: settling applies on a GPU only; the CPU times each shape at once")
    plan = BenchPlan(cases=cases, mode=settings, problem=loaded.problem, rtol=loaded.rtol, atol=loaded.atol,
                     timeout_s=timeout_s,
                     max_repeats=max_repeats or settings.max_repeats, max_noise=max_noise / 100.0,
                     recalibrate=recalibrate, device=device, settle_s=(DEFAULT_SETTLE_S if settle is None else settle) if device == "cuda" else 0.0,
                     listed_cases=loaded.tests + loaded.benchmarks)
    console = get_console()
    if not json:  # --json keeps stdout for the document alone
        settled = seconds_text(plan.settle_s) if device == "cuda" else "none (GPU only)"
        console.info(f"bench · {problem.name} · target {target.label} · task {task_label_and_reason(loaded)}"
                     f" · {plural(len(cases), 'shape')}"
                     f" · mode {mode.value} · {plural(problem.timing.input_sets, 'input set')} per sample ({problem.timing.source})"
                     f" · settle {settled} · timeout {seconds_text(plan.timeout_s)} per shape ({timeout_source})"
                     f" · load limit {seconds_text(load_s)} ({load_source})", style="dim")
    verbose = console.verbosity >= VERBOSE
    echo = (lambda line: console.detail(f"  [child] {clipped_line(line, VERBOSE_TAIL.chars)}")) if verbose else None
    from nvfp4ctl.progress_lines import progress_lines

    total = len(plan.steps()) + (1 if device == "cuda" else 0)  # the GPU's calibration is a step of its own
    steps = _Steps()
    try:
        with (Worker(target, plan.timeout_s, device=device, on_output=echo, on_loaded=steps.loaded,
                     on_progress=steps.news,
                     tail_limits=VERBOSE_TAIL if verbose else SHOWN_TAIL) as worker, console.progress() as progress,
              progress_lines(console, total) as lines):
            steps.show_on(progress, total, lines)
            report = run_bench(plan, worker, target.label, on_step=steps.step)
    except (ChildCrashed, ChildTimeout) as error:
        raise _with_child_log(error) from None
    except BenchStopped as stopped:  # the shapes timed before the error are shown, then the error's line
        error = _with_child_log(stopped.error) if isinstance(stopped.error, (ChildCrashed, ChildTimeout)) else stopped.error
        if json:
            console.json({"version": JSON_VERSION} | stopped.report.to_dict()
                         | {"comparison": None, "binding_hints": [], "error": error_line(str(error)), "exit_code": int(error.exit_code)})
        else:
            show_stopped(stopped.report)
        raise error from None
    log_read = True
    timed_with = TimingSettings(mode.value, max_repeats, DEFAULT_SETTLE_S if settle is None else settle, max_noise)
    other_settings: list[RunEntry] = []  # later benches than the one compared, timed otherwise
    try:
        # CPU times are compared with nothing: two of the same code differ by tens of percent
        comparison = None if report.on_cpu else compare_with_log(report, target.path, problem.name, timed_with,
                                                                 other_settings)
    except OSError as error:  # NVFP4CTL_MEMORY naming a folder, say: the timings just taken still stand
        memory = memory_path()
        console.warn(f"cannot read the run log {memory}: {os_reason(error, memory)}; no comparison with the"
                     " previous bench")
        comparison, log_read = None, False
    hints = _binding_hints(report, target)
    passed_over = other_settings[0] if other_settings else None
    if json:
        console.json({"version": JSON_VERSION} | report.to_dict()
                     | {"comparison": _comparison_dict(comparison), "not_compared": _not_compared_dict(passed_over, problem.name),
                        "binding_hints": hints})
    else:
        not_compared = _not_compared_line(passed_over, timed_with, problem.name) if passed_over is not None else None
        show(report, comparison, plan.max_noise, hints, log_read, not_compared)
    from nvfp4ctl.bench import render

    if (past := render.past_whole_run_limit(report, *whole_run_limit(loaded, mode.value))) is not None:
        console.warn(past)
    return Outcome(result=report.result_line(), target=target.path, target_source=target.source, gpu=report.gpu,
                   problem=problem.name)


def _with_child_log(error: Any) -> Any:
    """The same crash or timeout, its message ending in the child's last lines (a timeout's carries none)
    and the path of its full log, which the worker keeps: the first line stays the run log's result."""
    from nvfp4ctl.runner.worker import ChildTimeout

    lines = str(error).splitlines()
    if isinstance(error, ChildTimeout):
        lines += [f"  {line}" for line in error.log_tail]
    if error.log_path is not None:
        lines.append(f"  full child log: {error.log_path}")
    return type(error)("\n".join(lines), error.log_tail, error.log_path)


def compare_with_log(report: BenchReport, target: Path, problem: str | None = None,
                     settings: TimingSettings | None = None,
                     other_settings: list[RunEntry] | None = None) -> history.Comparison | None:
    """The previous bench of the same target file, problem, GPU and timing settings, from MEMORY.md's run log;
    `other_settings` receives the later ones timed otherwise (history.find_previous)."""
    from nvfp4ctl import runlog
    from nvfp4ctl.bench import history
    from nvfp4ctl.tool_version import tool_version
    from nvfp4ctl.workspace import user_folder

    memory = memory_path()
    floor = runlog.TimeFloor()  # read from the end, parsing no line older than the bench found
    with closing(runlog.newest_first(memory, floor=floor)) as newest_first:
        previous = history.find_previous(newest_first, target, report.gpu, [s.key for s in report.shapes],
                                         user_folder(), problem, runlog.log_folder_of(memory), settings,
                                         other_settings, floor)
    if previous is None:
        return None
    return history.compare(previous, history.Timing(report.geomean_us, report.geomean_err_us), report.timings(),
                           runlog.file_digest(target), tool_version())


def select_cases(task: Task, only: Sequence[int], shapes: Sequence[str]) -> tuple[Case, ...]:
    """--only N (1-based, repeatable) and --shape (repeatable), as check takes them: the benchmarks named, then
    the shapes, each shape once; neither: every benchmark."""
    if not task.benchmarks and not shapes:
        raise UsageError(f"{task_file_name(task.path)}: no benchmarks to time (add a benchmarks: list or use --shape)")
    options.check_only(only, len(task.benchmarks), "benchmark", task_file_name(task.path))
    named = [task.benchmarks[number - 1] for number in dict.fromkeys(only)]
    if not shapes:
        return tuple(named) if only else task.benchmarks
    seed = task.benchmarks[0].seed if task.benchmarks else 1111
    cases = named + [parse_shape(text, seed, task.problem) for text in shapes]
    keys = [get_problem(task.problem).key(case) for case in cases]
    unique: dict[str, Case] = {}
    for key, case in zip(keys, cases):  # each shape once ("128,128,256" = "128x128x256", a named benchmark's too)
        unique.setdefault(key, case)
    return tuple(unique.values())


def parse_shape(text: str, seed: int, problem: str = DEFAULT_PROBLEM) -> Case:
    """--shape in the problem's syntax (GEMMs M,N,K[,L]; GEMV M,K[,L]; grouped M1,N1,K1;M2,N2,K2)."""
    return get_problem(problem).parse_shape(text, seed)


def _binding_hints(report: BenchReport, target: TargetSpec) -> list[str]:
    """For a host-bound submission: its load_inline/load calls that build the binding at -O0."""
    from nvfp4ctl.bench.binding_hint import unoptimised_bindings

    if target.kind != "submission" or not any(s.host_bound for s in report.shapes):
        return []
    return unoptimised_bindings(target.path)


def show(report: BenchReport, comparison: history.Comparison | None, max_noise: float,
         binding_hints: Sequence[str] = (), log_read: bool = True, not_compared: str | None = None) -> None:
    """`not_compared`: the line saying that a later bench than the one compared was timed with other settings."""
    from nvfp4ctl.bench import render

    console = get_console()
    _show_timings(report)
    if report.on_cpu:
        console.warn(render.CPU_CAVEAT)
    else:
        if not_compared is not None:
            console.info(not_compared)
        if comparison is not None:
            console.table(*render.comparison_table(comparison, report.labels()), title=render.comparison_title(comparison))
        elif log_read:  # an unreadable log was said already
            these = " with these settings" if not_compared is not None else ""
            console.info(f"no earlier bench of this target on this GPU{these} in the run log to compare with")
    for line in [*render.notes(report), *binding_hints]:
        console.warn(line)
    for line in render.stop_notes(report, max_noise):
        console.detail(line)
    ceilings = render.ceilings_line(report)
    if ceilings:
        console.info(ceilings)
    console.ok(f"{'CPU ' if report.on_cpu else ''}geomean {report.geomean_us:.3f} µs ± {report.geomean_err_us:.3f} over {plural(len(report.shapes), 'shape')}")


def _show_timings(report: BenchReport, state: str = "") -> None:
    """The timing table, and the per-call table where the profiler timed the kernels."""
    from nvfp4ctl.bench import render

    console = get_console()
    title = f"{report.target} on {report.gpu} ({report.mode} mode, {report.wall_s:.1f} s{state})"
    console.table(*render.timing_table(report), title=title)
    if any(s.device is not None for s in report.shapes):
        console.table(*render.device_table(report), title="per call: leaderboard time vs kernel time (profiler)")


def show_stopped(report: BenchReport) -> None:
    """A bench stopped by an error at one shape: what it timed before, never compared with earlier benches
    (a geomean over part of the set is none of theirs)."""
    from nvfp4ctl.bench import render

    console = get_console()
    _show_timings(report, ", stopped")
    if report.on_cpu:
        console.warn(render.CPU_CAVEAT)
    for line in render.notes(report):
        console.warn(line)
    console.warn(render.stopped_line(report))


class _Steps:
    """Until the target has loaded the step says it loads first (the worker starts its child on the first call,
    and a load_inline build runs minutes); then the job's own news follows it (calls returned, time per call:
    bench/call_progress.py). A step is done when the next starts: its call returned."""

    def __init__(self) -> None:
        self._shown: ProgressStep | None = None
        self._loaded = False

    def show_on(self, progress: Any, total: int, lines: ProgressLines) -> None:
        from nvfp4ctl.progress_step import ProgressStep

        self._shown = ProgressStep(progress, total, lines, "starting")

    def step(self, description: str) -> None:
        assert self._shown is not None, "show_on comes before the first step"
        if self._shown.started:  # a step ended: its call returned, so the target had loaded
            self._shown.advance()
            self._loaded = True
        self._shown.show(description, None if self._loaded else f"{description} (loading the target first)")

    def loaded(self) -> None:
        self._loaded = True
        if self._shown is not None and self._shown.started:  # said at once: how long the load took is news
            self._shown.show_line()

    def news(self, value: Any) -> None:
        if self._shown is not None:  # news before the first step is none of a step's: ProgressStep drops it
            self._shown.news(value)


def _not_compared_line(entry: RunEntry, now: TimingSettings, problem: str) -> str:
    """"the previous bench of this target on this GPU (2026-11-28T16:00:00Z) used --max-repeats 3, this one the
    default settings: not compared"."""
    from nvfp4ctl.bench.settings import not_compared, settings_of

    return (f"the previous bench of this target on this GPU ({entry.time}) {not_compared(settings_of(entry.command), now, problem)}:"
            " not compared")


def _not_compared_dict(entry: RunEntry | None, problem: str) -> dict[str, Any] | None:
    """--json's "not_compared": the latest bench passed over for its timing settings, later than the one compared."""
    if entry is None:
        return None
    from nvfp4ctl.bench.settings import settings_of

    return {"time": entry.time, "commit": entry.commit, "settings": settings_of(entry.command).options(problem)}


def _comparison_dict(comparison: history.Comparison | None) -> dict[str, Any] | None:
    if comparison is None:
        return None
    return {
        "previous": {"time": comparison.entry.time, "commit": comparison.entry.commit,
                     "result": comparison.entry.result, "same_code": comparison.same_code,
                     "nvfp4ctl": comparison.entry.tool or None},
        "deltas": [{"name": d.name, "before_us": d.before.mean, "before_err_us": d.before.err,
                    "now_us": d.after.mean, "now_err_us": d.after.err, "change_pct": d.pct,
                    "noise_us": d.noise, "verdict": d.verdict} for d in comparison.deltas],
    }
