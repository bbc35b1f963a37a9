"""`nvfp4ctl build`: compile kernels (cached), report registers/smem/stack/spills and the tensor-core op."""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from nvfp4ctl.console import VERBOSE, get_console
from nvfp4ctl.errors import ExitCode, UsageError
from nvfp4ctl.build.report import narrower_note, not_needed_note
from nvfp4ctl.kernel_cells import byte_size, cache_cell, spills_text, time_cell
from nvfp4ctl.options import Choice, choice, path
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.workspace import note_problem, note_target_digest, user_folder, users_kernels_dir
from nvfp4ctl.words import first_few, plural

if TYPE_CHECKING:  # the build machinery is imported when the command runs, so `--help` stays fast
    from nvfp4ctl.build import BuildReport
    from nvfp4ctl.commands.build_target import BuildTarget


def _named_sources(sources: list[Path] | None, submission: Path | None) -> list[Path] | None:
    """SOURCE, or `--submission PATH` (check's and bench's spelling) as that one SOURCE; never both."""
    if submission is None:
        return sources
    if sources:
        named = " ".join(str(path) for path in sources)
        raise UsageError(f"build takes the file to build as SOURCE or as --submission PATH, not both"
                         f" (got {named} and --submission {submission})")
    return [submission]


class ArchChoice(Choice):
    sm_90a = "sm_90a"
    sm_100a = "sm_100a"
    all = "all"


def _each_file_read_once(command: Callable[..., Outcome]) -> Callable[..., Outcome]:
    """The whole command within one read_once.reading_once: the target's problem (its load() sources) and
    its build read the same files."""
    @functools.wraps(command)  # typer reads the options from the wrapped signature
    def within(*args: Any, **kwargs: Any) -> Outcome:
        from nvfp4ctl.build.read_once import reading_once

        with reading_once():
            return command(*args, **kwargs)

    return within


@_each_file_read_once
def command(
    sources: Annotated[
        list[Path] | None,
        typer.Argument(metavar="SOURCES", parser=path(), help="Kernel .cu files, or one submission.py (its load_inline/load sources or CuTe DSL kernels). Default: every kernel in a kernels/ folder's sm90/ and sm100/ where it has any; else the submission check would run.", show_default=False),
    ] = None,
    arch: Annotated[
        ArchChoice, typer.Option("--arch", metavar="<sm_90a|sm_100a|all>", parser=choice(ArchChoice), help="Build for sm_90a or sm_100a only; 'all': each kernel for its own arch.")
    ] = ArchChoice.all,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Full compiler output and every function's resources.")] = False,
    python: Annotated[str | None, typer.Option("--python", help="CuTe DSL submissions: a Python with nvidia-cutlass-dsl (default: this one).")] = None,
    submission_time: Annotated[
        bool,
        typer.Option("--submission-time", help="Kernel sources (.cu): also time `python submission.py` of each built kernel's export (fresh, uncached; the leaderboard allows 120 s)."),
    ] = False,
    task: Annotated[Path | None, typer.Option("--task", metavar="PATH", parser=path(), help="task.yml in use, as for check: the problem a submission is judged (and a CuTe DSL one traced) by; with no SOURCE, the folder whose submission or kernels/ are built (default: the nearest).")] = None,
    submission: Annotated[Path | None, typer.Option("--submission", metavar="PATH", parser=path(), help="The submission.py to build, as check and bench name it: the same as giving it as SOURCE.", show_default=False)] = None,
) -> Outcome:
    """Compile kernels or a submission.py into the build cache (cross-compiles without a GPU) and check their SASS."""
    from nvfp4ctl.build import CompileError, build_kernel
    from nvfp4ctl.build.builder import has_build
    from nvfp4ctl.build.cache import CacheFolderRemoved
    from nvfp4ctl.build.compile import CompileTimeout
    from nvfp4ctl.build.read_once import reading_once
    from nvfp4ctl.build.sources import kernel_not_text_warnings, override_note_of, shadow_note_of
    from nvfp4ctl.build.temporary_folder import require_places_a_compile_writes
    from nvfp4ctl.progress_lines import progress_lines

    from nvfp4ctl.commands.build_target import (headers, note_logged_target, resolve_build_target,
                                                say_its_own_problem, warn_of_the_submission_here)

    console = get_console()
    verbose = verbose or console.verbosity >= VERBOSE
    chosen = resolve_build_target(_named_sources(sources, submission), task)  # as check resolves it: the target, why, and its task's problem

    def announce(kernel_problems: dict[Path, Any | None] | None = None) -> None:
        """The header, said once the file and the options passed their checks: a refusal stays one line."""
        if chosen.has_header:
            for line in headers(chosen, kernel_problems or {}):
                console.info(line, style="dim")
        if chosen.note:
            console.info(f"note: {chosen.note}")
        say_its_own_problem(chosen)
        warn_of_the_submission_here(chosen)

    if chosen.problem is not None:
        if submission_time:  # it times a kernel's export; a submission's compile is the budget line's, never a silent no-op
            raise UsageError(f"--submission-time applies to kernel sources (.cu), timing `python submission.py` of their"
                             f" export; for {chosen.sources[0].name}, build's `compile:` line is its compile time")
        from nvfp4ctl.commands.build_submission import build_submission

        if (digest := _submission_digest(chosen.sources[0])) is not None:  # read for its problem: the bytes built
            note_target_digest(digest)
        outcome = build_submission(chosen.sources[0], None if arch.value == "all" else arch.value, verbose, python,
                                   chosen.problem, announce)
        # the run log's problem: the one the build judged by, where a task.yml of the user's or the file named it;
        # its hash: the one noted, of the bytes kept, else of those the build read
        return dataclasses.replace(outcome, target_source=chosen.logged_source or None,
                                   problem=None if chosen.stand_in else chosen.problem,
                                   target_digest=digest if digest is not None else _submission_digest(chosen.sources[0]))
    plan = _plan(list(chosen.sources), arch.value)
    if chosen.kernels is not None:  # the kernels a bare build builds are known now: one of them is its target
        note_logged_target(chosen, [source for source, _ in plan])
    kernel_problems = _kernel_problems(plan)  # each kernel's, read once for the run log, the header and the notes
    problem = _kernels_problem(plan, kernel_problems)
    if problem is not None:  # before the compiles: an interrupted build logs it too
        note_problem(problem)
    announce(kernel_problems)
    if not chosen.sources and (loose := _loose_note()) is not None:
        console.info(f"note: {loose}")
    rows: list[list[object]] = []
    built: list[BuildReport] = []
    failures: dict[str, str] = {}  # kernel file -> its first problem
    timed_out: list[str] = []  # kernel files whose compile ran past its limit: the run's exit is 3
    skipped: list[str] = []
    # a kernel compiles for tens of seconds (CUTLASS's for minutes): without a bar, plain lines say which.
    # reading_once: a kernel's build is planned once (files read and hashed), for its warnings, its line and its build
    with console.progress() as progress, progress_lines(console, len(plan)) as lines, reading_once():
        # before the compiles, which may take minutes; a header several kernels include is said once
        for not_text in dict.fromkeys(not_text for source in dict.fromkeys(source for source, _ in plan)
                                      for not_text in kernel_not_text_warnings(source)):
            console.warn(not_text)
        for note in dict.fromkeys(note for source in dict.fromkeys(source for source, _ in plan)
                                  for note in (override_note_of(source), shadow_note_of(source)) if note is not None):
            console.info(f"note: {note}")
        if any(has_build(source, target) is False for source, target in plan):
            require_places_a_compile_writes()
        if (digest := _logged_digest(plan, chosen)) is not None:  # the bytes built, for a Ctrl-C's line too
            note_target_digest(digest)
        task = progress.add_task("building", total=len(plan))
        for source, target in plan:
            step = (f"{source.name} ({target}): built before, taken from nvfp4ctl's build cache"
                    if has_build(source, target) else f"compiling {source.name} ({target})")
            progress.update(task, description=step)
            lines.show(step)
            started = time.perf_counter()
            try:
                report = build_kernel(source, target, verbose=verbose)
            except CompileTimeout as error:  # the compiler was stopped: no error of the kernel's to show
                console.error(f"{source.name} ({target}): {error}")
                failures.setdefault(source.name, "compile timeout")
                timed_out.append(source.name)
                rows.append(_failed_row(source, target, time.perf_counter() - started, "compile timeout"))
            except CompileError as error:
                console.error(str(error))
                if verbose:
                    console.raw(error.log)
                failures.setdefault(source.name, "compile error")
                rows.append(_failed_row(source, target, time.perf_counter() - started, "compile error"))
            except UsageError as error:
                if sources or isinstance(error, CacheFolderRemoved):  # the user's setup must change, not the kernel's
                    raise
                # a project kernel this machine cannot build (the GPU machine may lack the CUTLASS wheel)
                console.warn(f"skipped {source.name}: {error}")
                skipped.append(source.name)
                rows.append(_failed_row(source, target, time.perf_counter() - started, "skipped"))
            else:
                report = _for_its_problem(report, kernel_problems.get(source))
                built.append(report)
                rows.append(_row(report, time.perf_counter() - started))
                for issue in report.problems():
                    failures.setdefault(source.name, issue)
            progress.advance(task)
            lines.advance()
    console.table(["kernel", "arch", "regs", "static smem", "stack", "spills", "tensor op", "time", "cache"], rows, right_align_from=2,
                  whole=(0,))
    for report in built:
        if whose := _whose_figures(report):
            console.info(f"note: {report.source.name} ({report.arch}): {whose}")
        if report.compile_busy and not report.cache_hit:  # a hit's row is this run's time: -v tells its first compile's
            console.info(f"note: {report.source.name} ({report.arch}): {_inflated_note(report)}")
        if (narrower := narrower_note(report.tensor_op, report.arch)) is not None:
            console.info(f"note: {report.source.name} ({report.arch}): {narrower}")
        if report.tensor_op.not_needed:
            problem_name = _problem_name(kernel_problems.get(report.source))
            console.info(f"note: {report.source.name}: {not_needed_note(report, problem_name)}")
        for issue in report.problems():
            console.error(f"{report.source.name} ({report.arch}): {issue}")
        if verbose:
            _show_details(report)
    if submission_time:
        for report in built:
            _show_submission_time(report, failures)
    outcome = dataclasses.replace(_outcome(plan, built, failures, skipped, timed_out, chosen), problem=problem)
    if outcome.exit_code == ExitCode.OK:  # a failure's lines are above; -q hides the table, not the result
        console.ok(outcome.result)
    return outcome


def _submission_digest(submission: Path) -> str | None:
    """The run log's content hash of the submission as the build read it (once, for its problem and its
    sources); None where it read nothing (a refusal), the file then hashed as it is."""
    from nvfp4ctl.build.read_once import bytes_read
    from nvfp4ctl.content_digest import content_digest

    built = bytes_read(Path(os.path.abspath(submission)))
    return content_digest(built) if built is not None else None


def _kernel_problems(plan: list[tuple[Path, str]]) -> dict[Path, Any | None]:
    """Each kernel's problem (build.sources.kernel_problem: the one whose API header it includes, None for
    none), read once; a kernel whose text cannot be read is left out (its build says why)."""
    from nvfp4ctl.build.sources import kernel_problem

    problems: dict[Path, Any | None] = {}
    for source, _ in plan:
        if source not in problems:
            try:
                problems[source] = kernel_problem(source)
            except OSError:
                continue
    return problems


def _kernels_problem(plan: list[tuple[Path, str]], kernel_problems: dict[Path, Any | None]) -> str | None:
    """The problem the run log names for kernel sources: the one whose API header each includes (none: the
    GEMM, whose C ABI calls it), as the header line says; None where they are several problems' (the cell
    holds one) or a text cannot be read (its build says why)."""
    from nvfp4ctl.runner.targets import kernel_problem_name

    if any(source not in kernel_problems for source, _ in plan):
        return None
    names = {kernel_problem_name(kernel_problems[source]) for source, _ in plan}
    return names.pop() if len(names) == 1 else None


def _for_its_problem(report: BuildReport, problem: Any | None) -> BuildReport:
    """A kernel's problem is the one whose API header it includes (none: the GEMM): for a problem bound by
    memory (the GEMV) a missing tensor-core op is a note, not a failure."""
    if report.tensor_op.present or report.tensor_op.declared_none:
        return report
    if problem is None or problem.needs_tensor_op:
        return report
    return dataclasses.replace(report, tensor_op=dataclasses.replace(report.tensor_op, needed=False))


def _inflated_note(report: BuildReport) -> str:
    """A compile whose wall time load on this machine inflated (its CPU time well below it): the CPU time
    is the fairer figure of what the kernel costs to compile, as build submission.py's budget line says."""
    return (f"compiled in {report.compile_s:.1f} s of wall time, inflated by load here (a busy machine):"
            f" its CPU time {report.compile_cpu_s:.1f} s (the compiler's and its tools', and build's own)")


def _compile_time(report: BuildReport) -> str:
    """-v's figure of the first compile: its wall time, and its CPU time where measured (an entry made
    before it was measured has none)."""
    if report.compile_cpu_s is None:
        return f"{report.compile_s:.1f} s"
    busy = " (inflated by load: a busy machine)" if report.compile_busy else ""
    return f"{report.compile_s:.1f} s, {report.compile_cpu_s:.1f} s of CPU{busy}"


def _problem_name(problem: Any | None) -> str:
    return problem.name if problem is not None else "the GEMM"


def _show_submission_time(report: BuildReport, failures: dict[str, str]) -> None:
    from nvfp4ctl.build.submission_time import time_submission
    from nvfp4ctl.progress_lines import progress_lines

    console = get_console()
    console.info(f"timing python submission.py of {report.source.name} (fresh, nothing cached) ...")
    # stdout's line above says it starts; a log of stderr alone hears of the minutes it may take too
    with progress_lines(console) as lines:
        lines.show(f"timing python submission.py of {report.source.name}")
        timed = time_submission(report.source, report.arch)
    line = timed.summary(report.source.name)
    if timed.outcome == "failed":
        console.error(line)
        failures.setdefault(report.source.name, "its exported submission did not compile")
    else:
        console.info(line)


def _plan(sources: list[Path], arch: str) -> list[tuple[Path, str]]:
    """(file, arch) pairs: given files for --arch (or their own arch), else the project's kernels."""
    from nvfp4ctl.build.sources import checked_source, declared_arch, default_kernels, loose_kernels, resolve_arch

    if sources:
        return [(path, resolve_arch(path, None if arch == "all" else arch, arch_all=arch == "all")) for path in map(checked_source, sources)]
    kernels = users_kernels_dir()
    if kernels is None:
        from nvfp4ctl.project import shipped

        # a wheel's kernels sit deep in site-packages: name the folder, so one can be copied or built from there
        raise UsageError(f"nothing to build in {user_folder()}: no submission.py and no kernels/ folder;"
                         f" pass a SOURCE (a kernel .cu or a submission.py; nvfp4ctl's own kernels are in"
                         f" {shipped('kernels')})")
    plan = [(path, own) for path in default_kernels(kernels) if (own := declared_arch(path)) and arch in ("all", own)]
    if not plan:
        where = f"{kernels}/sm90 or sm100" + ("" if arch == "all" else f" for {arch}")
        loose = loose_kernels(kernels)
        itself = (f" ({kernels} itself holds {', '.join(path.name for path in loose)}: name it)" if len(loose) == 1 else
                  f" ({kernels} itself holds {plural(len(loose), 'kernel')}: name them)" if loose else "")
        raise UsageError(f"no kernels to build in {where}{itself}; pass a SOURCE")
    return plan


def _loose_note() -> str | None:
    """A bare build builds kernels/sm90/ and kernels/sm100/: the .cu files in kernels/ itself, which lint
    checks, are named with how to build one, not passed over without a word."""
    from nvfp4ctl.build.compiler_errors import display_path
    from nvfp4ctl.build.sources import loose_kernels

    kernels = users_kernels_dir()
    loose = loose_kernels(kernels) if kernels is not None else []
    if not loose:
        return None
    names = [display_path(path) for path in loose]
    return (f"not built: {first_few(names, 5).replace('; ', ', ')} ({plural(len(loose), 'kernel')} in"
            f" {display_path(kernels)}/ itself, outside sm90/ and sm100/); build one with `nvfp4ctl build {names[0]}`")


def _row(report: BuildReport, seconds: float) -> list[object]:
    main = report.main_kernel
    op = report.tensor_op
    if op.shown is not None:
        tensor = Text(op.shown, style="green")
    elif op.declared_none:
        tensor = Text("none (declared)")
    elif op.not_needed:
        tensor = Text("none (not needed)")
    else:
        tensor = Text(f"no {op.expected}" if op.checked else "not checked", style="bold red")
    return [
        report.source.name,
        report.arch,
        main.registers if main else "-",
        byte_size(main.shared_bytes) if main else "-",
        byte_size(report.stack_bytes),
        spills_text(report.spill_bytes),
        tensor,
        time_cell(seconds, report.built_meanwhile),
        cache_cell(report.cache_hit, report.built_meanwhile),
    ]


def _whose_figures(report: BuildReport) -> str | None:
    """Which kernel the row's regs and static smem belong to, where the file has several: the sm_90a
    file's 208 registers and 32 KiB are its direct mma.sync kernel's, shown beside the HGMMA its wgmma
    kernels hold, and read as the GEMM's. None for a file with one kernel, whose row says it all."""
    kernels = report.named_kernels()
    main = report.main_kernel
    if len(kernels) < 2 or main is None:
        return None
    name = next(name for name, f in kernels if f is main)
    return (f"regs and static smem are those of {name}, the most registers of its {len(kernels)} kernels;"
            " the tensor op is the file's whole SASS (-v: each kernel's)")


def _failed_row(source: Path, arch: str, seconds: float, why: str) -> list[object]:
    return [source.name, arch, "-", "-", "-", "-", Text(why, style="bold red"), f"{seconds:.1f} s", "-"]


def _show_details(report: BuildReport) -> None:
    console = get_console()
    console.table(["function", "kind", "regs", "static smem", "stack", "spill st", "spill ld"], _detail_rows(report),
                  title=f"{report.source.name} ({report.arch})", right_align_from=2, whole=(0,))
    console.detail(f"tensor-core ops in the SASS: {', '.join(report.tensor_op.found) or 'none'}")
    console.detail(f"cache entry: {report.entry} (build.log, kernel.sass.gz, report.json); first compile took {_compile_time(report)}")


def _detail_rows(report: BuildReport) -> list[list[object]]:
    """-v's rows: every function of the build, each instantiation of a template on its own row."""
    from nvfp4ctl.build.kernel_names import readable_names

    names = readable_names([f.name for f in report.functions])
    return [
        [name, "kernel" if f.entry else "function", f.registers, byte_size(f.shared_bytes),
         byte_size(f.stack_bytes), spills_text(f.spill_stores), spills_text(f.spill_loads)]
        for name, f in zip(names, report.functions)
    ]


def _outcome(plan: list[tuple[Path, str]], built: list[BuildReport], failures: dict[str, str], skipped: list[str],
             timed_out: list[str], chosen: BuildTarget) -> Outcome:
    from nvfp4ctl.commands.build_target import logged_target

    logged = logged_target(chosen, [source for source, _ in plan])
    assert logged is not None  # a plan holds a kernel at least (_plan refuses an empty one)
    target, why = logged
    outcome = _outcome_of(plan, built, failures, skipped, timed_out, target)
    return dataclasses.replace(outcome, target_source=why or None, target_digest=_logged_digest(plan, chosen))


def _logged_digest(plan: list[tuple[Path, str]], chosen: BuildTarget) -> str | None:
    """The run log's content hash of a kernel build's target: its one kernel's as the build read it
    (builder.built_digest), not as the file is when the line is written; None for a folder, whose cell has none."""
    from nvfp4ctl.build.builder import built_digest
    from nvfp4ctl.commands.build_target import logged_target

    logged = logged_target(chosen, [source for source, _ in plan])
    return built_digest(*plan[0]) if logged is not None and logged[0] == plan[0][0] else None


def _outcome_of(plan: list[tuple[Path, str]], built: list[BuildReport], failures: dict[str, str], skipped: list[str],
                timed_out: list[str], target: Path) -> Outcome:
    if failures:
        # a compile stopped at its limit is a timeout (exit 3) whatever else failed, as check's timeout is
        name, problem = (timed_out[0], failures[timed_out[0]]) if timed_out else next(iter(failures.items()))
        result = f"{len(failures)} of {plural(len(plan), 'kernel')} failed ({name}: {problem})"
        return Outcome(result=result, exit_code=ExitCode.TIMEOUT if timed_out else ExitCode.FAILURES, target=target)
    if not built:
        return Outcome(result=f"nothing built, {len(skipped)} skipped", exit_code=ExitCode.USAGE, target=target)
    arches = ", ".join(dict.fromkeys(report.arch for report in built))
    spilled = sum(report.spill_bytes for report in built)
    cached = sum(report.cache_hit for report in built)
    noun = "kernel" if len(built) == 1 else "kernels"
    result = f"{len(built)} {noun} built ({arches}), {byte_size(spilled)} of spills" + (f", {cached} cached" if cached else "")
    result += f", {len(skipped)} skipped ({', '.join(skipped)})" if skipped else ""
    return Outcome(result=result, target=target)
