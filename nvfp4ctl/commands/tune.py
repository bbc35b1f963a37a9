"""`nvfp4ctl tune`: search a kernel's declared knobs per shape and write the winners into its table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nvfp4ctl import options
from nvfp4ctl.console import VERBOSE, get_console
from nvfp4ctl.errors import ExitCode
from nvfp4ctl.outcome import Outcome

# Short timing: bench's loop and statistics with fewer repeats and a short settle, for ranking.
SHORT_CRITERION = {"max_repeats": 20, "max_noise": 0.002, "budget_s": 10.0}
SHORT_SETTLE_S = 0.3
INPUT_SETS = 50  # the leaderboard's batch: one event pair around 50 calls


class ShapeSet(options.Choice):
    tests = "tests"
    benchmarks = "benchmarks"
    all = "all"


def command(
    kernel: Annotated[Path | None, typer.Option("--kernel", metavar="PATH", parser=options.path(), help="Kernel source (.cu) whose knobs to tune; default: nvfp4ctl's kernel for this GPU.")] = None,
    shapes: Annotated[ShapeSet, typer.Option("--shapes", metavar="<tests|benchmarks|all>", parser=options.choice(ShapeSet), help="task.yml shapes to tune for.")] = ShapeSet.all,
    budget: Annotated[float | None, typer.Option("--budget", metavar="S", parser=options.seconds(zero=False), help="Stop the timed search after this many seconds (between knobs); the best so far is kept.")] = None,
    gpus: Annotated[int | None, typer.Option("--gpus", metavar="N", parser=options.integer(1), help="Time on this many local GPUs, one worker each (default: all).")] = None,
    compile_only: Annotated[bool, typer.Option("--compile-only", help="Build every candidate of one round and report registers, shared memory and spills; no GPU.")] = False,
    knobs: Annotated[str | None, typer.Option("--knobs", metavar="A,B", help="Search only these knobs, each by its full name, without the prefix all knobs share, or as tune's tables name it (SPLIT).")] = None,
    rounds: Annotated[int, typer.Option("--rounds", metavar="N", min=1, parser=options.integer(1), help="Coordinate-descent rounds over all knobs (stops early when nothing changes).")] = 1,
    fresh: Annotated[bool, typer.Option("--fresh", help="Ignore what an earlier run of the same tune (interrupted or finished) already measured.")] = False,
    no_write: Annotated[bool, typer.Option("--no-write", help="Report the winners, leave the dispatch table as it is.")] = False,
    task: Annotated[Path | None, typer.Option("--task", metavar="PATH", parser=options.path(), help="task.yml to read the shapes from.")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", metavar="S", parser=options.seconds(zero=False), help="Seconds per candidate and shape before it counts as a deadlock (default: NVFP4CTL_TIMEOUT, else task.yml's benchmark_timeout as for bench, else its timeout:, else 180).")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the report as JSON instead of tables.")] = False,
) -> Outcome:
    """Try each knob's values per shape (checked, then timed short), write the winners into the dispatch table."""
    from nvfp4ctl.interrupts import stop_signals_as_ctrl_c  # also set by the CLI; here for callers of command()

    with stop_signals_as_ctrl_c():  # `kill PID`: pools closed, workers killed, exit 130 (interrupts.py)
        return _tune(kernel, shapes, budget, gpus, compile_only, knobs, rounds, fresh, no_write, task, timeout, json)


def _tune(kernel: Path | None, shapes: ShapeSet, budget: float | None, gpus: int | None, compile_only: bool,
          knobs: str | None, rounds: int, fresh: bool, no_write: bool, task: Path | None, timeout: float | None,
          json: bool) -> Outcome:
    from nvfp4ctl.tune import setup
    from nvfp4ctl.tune.progress import WorkBar

    console = get_console()
    run = setup.prepare(kernel, shapes.value, task, gpus, compile_only, timeout, knobs, write=not no_write)
    for note in run.notes:
        console.warn(note)
    if run.compile_only:
        for unused in timed_search_only(budget, gpus, fresh, rounds):
            console.warn(unused)
    if not json:  # --json keeps stdout for the document alone
        console.info(run.headline(), style="dim")
    settings = setup.TimingSettings(criterion=SHORT_CRITERION, settle_s=SHORT_SETTLE_S, input_sets=INPUT_SETS)
    with console.progress() as progress, WorkBar(progress, run.progress_total(),
                                                  say=console.progress_line if console.draws_no_bar else None) as bar:
        report = setup.execute(run, settings, budget, rounds, fresh, on_progress=bar.step,
                               on_work=bar.expect)
        bar.end()
    for note in report.notes:
        console.warn(note)
    if json:
        from nvfp4ctl.tune.render import to_dict

        console.json(to_dict(report))
    else:
        show(report, run.label, verbose=console.verbosity >= VERBOSE)
    return outcome_of(report, run.chosen_by, run.task.problem)


def timed_search_only(budget: float | None, gpus: int | None, fresh: bool, rounds: int) -> list[str]:
    """A warning for each option given that only the timed search reads, which a compile-only tune
    takes without using: the user learns it did nothing. Every such option is listed here, and only here."""
    given = [  # (given, the option as typed, why compile-only has no use for it)
        (budget is not None, f"--budget {budget or 0:g}", "compile-only builds the whole round"),  # no search to stop
        (gpus is not None, f"--gpus {gpus}", "compile-only times nothing"),  # no GPU worker starts
        (rounds != 1, f"--rounds {rounds}", "compile-only builds one round"),  # a round repeats only on a timed change
        (fresh, "--fresh", "compile-only resumes nothing, it builds the whole round again"),  # no resume state
    ]
    return [f"{option} applies to the timed search only: {why}" for used, option, why in given if used]


def show(report: Any, label: str, verbose: bool) -> None:
    from nvfp4ctl.tune import render

    console = get_console()
    resumed = render.resumed_line(report)
    if resumed:
        console.info(resumed, style="dim")
    if report.compile_only:
        compiled = render.compiled_builds(report)  # the table and its notes compare with one reference build
        columns, rows = render.compile_table(report, compiled)
        console.table(columns, rows, title=f"{label}: {len(rows)} candidate builds ({report.wall_s:.1f} s)", right_align_from=2,
                      whole=(0,))
        if whose := render.kernel_note(report, compiled):
            console.info(whose)
        for line in render.kernel_changes(report, None if verbose else render.kernel_compare.NAMES_SHOWN, compiled):
            console.info(line)
        if smem := render.smem_note(report, compiled):
            console.info(smem, style="dim")
        if apart := render.apart_line(report):
            console.info(apart, style="dim")
        for line in render.same_code_lines(report):
            console.info(line)
        for line in render.rejections(report):
            console.info(line)
        if report.table_note:
            console.info(report.table_note)
        console.ok(render.result_line(report))
        return
    for shape in report.shapes:
        columns, rows, left = render.ranked_table(report, shape, None if verbose else render.TOP)
        title = report.shown(shape) + (f" ({left} more, -v shows all)" if left else "")
        console.table(columns, rows, title=title, right_align_from=2)
    if apart := render.apart_line(report):
        console.info(apart, style="dim")
    if report.search and report.search.rematches:
        columns, rows = render.rematch_table(report)
        console.table(columns, rows, title="rematches: each lead timed again, back to back with the current best",
                      right_align_from=3)
    columns, rows, _ = render.summary_rows(report)
    console.table(columns, rows, title=f"{label} on {report.gpu or 'GPU'}: winners ({report.wall_s:.1f} s)")
    busy = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in report.gpu_busy_s.items())
    if busy:
        away = f"; {report.stolen} task(s) timed away from their shape's home GPU" if len(report.gpu_busy_s) > 1 else ""
        console.info(f"GPU time: {busy}{away}", style="dim")
    if report.search and report.search.stopped:
        console.warn(report.search.stopped)
    if report.table_note:
        console.info(report.table_note)
    console.ok(render.result_line(report))


def outcome_of(report: Any, chosen_by: str, problem: str) -> Outcome:
    """Exit 1 when the shipped build is wrong somewhere, before or after the new table; else 0. `problem`: the
    one tuned for (its task's), the run log's problem cell, as check's and bench's."""
    from nvfp4ctl.tune import render

    if report.compile_only:
        failed = report.shipped_build_rejected
    else:
        failed = any(r is not None and not r.ok for r in (report.current(s) for s in report.shapes))
        failed |= any(not r.ok for r in report.new_table.values())
    return Outcome(result=render.result_line(report), exit_code=ExitCode.FAILURES if failed else ExitCode.OK,
                   target=report.knobs.source, target_source=chosen_by, gpu=report.gpu, problem=problem)
