"""`nvfp4ctl lint`: the competition rules as a static checker, ruff-style output."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from nvfp4ctl.console import get_console
from nvfp4ctl.errors import ExitCode, UsageError
from nvfp4ctl.options import Choice, choice, path
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.runner.targets import short_path


class OutputFormat(Choice):
    text = "text"
    json = "json"


def command(
    paths: Annotated[Optional[list[Path]], typer.Argument(
        metavar="PATHS", parser=path("a file or folder"),
        help="Files or folders to check (.py .cu .cuh .cpp .h .hpp). Default: your submission and kernel sources"
             " in the task.yml's folder (else the current one).",
        show_default=False)] = None,
    select: Annotated[Optional[list[str]], typer.Option(
        "--select", help="Only these rule codes or prefixes (NV3, NV401), plus NV101 (the stream rule) and NV004 (a"
                        " file that is not text), which always run; repeat or comma-separate.")] = None,
    ignore: Annotated[Optional[list[str]], typer.Option(
        "--ignore", help="Skip these rule codes or prefixes (NV101, the stream rule, and NV004, not text, cannot be"
                        " skipped).")] = None,
    profile: Annotated[Optional[str], typer.Option(
        "--profile", help="Rule profile: default, or cutlass-only (also flags handwritten PTX).")] = None,
    output_format: Annotated[OutputFormat, typer.Option(
        "--format", metavar="[text|json]", parser=choice(OutputFormat),
        help="text (ruff-style) or json.")] = OutputFormat.text,
    list_rules: Annotated[bool, typer.Option(
        "--list-rules", help="Show every rule: id, severity, why, bad/good example, in the words of the task's problem (with paths: the one their files are judged by).")] = False,
    task: Annotated[Optional[Path], typer.Option(
        "--task", metavar="PATH", parser=path(), help="task.yml whose problem's input the Python rules read (default: the nearest"
                                       " from the current folder up).")] = None,
) -> Outcome:
    """Check kernels and submissions against the competition rules before you submit."""
    # Imported here, not at the top, so `nvfp4ctl --help` does not load the lint engine.
    from nvfp4ctl.lint import lint_paths
    from nvfp4ctl.lint.judged_as import say_judged_as
    from nvfp4ctl.lint.render import concise
    from nvfp4ctl.lint.render import json as json_render
    from nvfp4ctl.lint.rule_words import rules_for
    from nvfp4ctl.lint.source import kind_of, link_target
    from nvfp4ctl.lint.targets import log_beside_their_task, plan
    from nvfp4ctl.words import plural

    console = get_console()
    if list_rules:
        problem = _rules_problem(task, paths or [])
        rules = rules_for(problem)
        if output_format is OutputFormat.json:
            console.json(json_render.rules_document(rules, problem))
        else:
            rows = [(r.code, r.severity.value + ("" if r.default_on else f" ({', '.join(r.profiles)})"),
                     r.name, r.why, r.bad, r.good) for r in rules]
            console.table(["id", "severity", "rule", "why", "bad", "good"], rows, title=f"lint rules · {problem}",
                          right_align_from=99, result=True)
        return Outcome(result=f"listed {len(rules)} rules for {problem}")
    lint_plan = plan(paths, select, ignore, profile, task)
    for note in lint_plan.skipped:
        console.warn(note)
    _warn_of_the_submission_here(lint_plan)
    if not lint_plan.paths:
        where = short_path(lint_plan.folder) if lint_plan.folder else "."
        outputs = (f" ({plural(len(lint_plan.compiler_outputs), 'compiler intermediate')} skipped: nvcc -keep output)"
                   if lint_plan.compiler_outputs else "")
        raise UsageError(f"nothing to lint in {where or '.'}: no submission*.py, kernels/ or .cu/.cpp/.h sources{outputs};"
                         " name a file or folder (`nvfp4ctl lint .` checks every .py that defines or imports"
                         " custom_kernel)")
    report = lint_paths(list(lint_plan.paths), lint_plan.config, own_tasks=lint_plan.own_tasks,
                        task_file=lint_plan.task_file, flags=lint_plan.flags)
    log_beside_their_task(lint_plan, report.own_tasks)
    report = replace(report, compiler_outputs=lint_plan.compiler_outputs + report.compiler_outputs)
    for path, line, code in report.unknown_waivers:  # a typo'd waiver leaves its finding standing: say why
        console.warn(f"{short_path(path)}:{line}: ignore[{code}] names no rule: it waives nothing"
                     " (nvfp4ctl lint --list-rules lists the codes)")
    for link in report.broken_links:
        console.warn(f"{short_path(link)}: broken link (to {link_target(link)}); not checked")
    for path, problem, why in report.other_problems:
        say_judged_as(short_path(path), problem, why, lint_plan.config.problem, lint_plan.task_file is not None)
    for path in report.files:
        if kind_of(path) == "text":  # named by the user; a folder walk only finds sources
            console.warn(f'{short_path(path)}: not a Python or C++ source: only NV101 (the word "stream") applies')
    for path in report.not_submissions:
        console.detail(f"{path}: skipped, not a submission (no custom_kernel, not named submission*.py)")
    for path in report.compiler_outputs:
        console.detail(f"{short_path(path)}: skipped, a compiler intermediate (nvcc -keep output), not a source of yours")
    if not report.files:  # "All checks passed (0 files checked)" would read as a clean bill
        raise UsageError(_nothing_found(lint_plan.paths, len(report.not_submissions), len(report.compiler_outputs)))
    # a named folder with nothing to lint among others is what `lint s07` alone refuses: said, and exit 2
    empty = _holding_nothing(lint_plan.paths, report.files) if lint_plan.named else []
    for path in empty:
        console.warn(_nothing_found((path,), _count_under(path, report.not_submissions),
                                    _count_under(path, report.compiler_outputs)))
    if output_format is OutputFormat.json:
        console.json(json_render.payload(report, nothing_to_lint=empty))
    else:
        console.raw(concise.render(report))
        console.detail("checked: " + ", ".join(short_path(p) for p in report.files))
    single = report.files[0] if len(report.files) == 1 else None
    result = concise.counts(report)
    if empty:
        result += f"; nothing to lint in {', '.join(short_path(p) for p in empty)}"
    return Outcome(result=result,
                   exit_code=ExitCode.USAGE if empty else ExitCode.FAILURES if report.errors else ExitCode.OK,
                   target=single, problem=_judged_problem(report, lint_plan))


def _holding_nothing(paths: tuple[Path, ...], checked: tuple[Path, ...]) -> list[Path]:
    """The named folders none of the checked files lies in, by name or by where it resolves (a file checked
    once under another named folder's name, that folder a link to this one, still lies in it)."""
    return [path for path in paths if path.is_dir() and not any(_under(path, file) for file in checked)]


def _under(folder: Path, file: Path) -> bool:
    return folder in file.absolute().parents or folder.absolute() in file.absolute().parents or (
        folder.resolve() in file.resolve().parents)


def _count_under(folder: Path, files: tuple[Path, ...]) -> int:
    return sum(1 for file in files if _under(folder, file))


def _warn_of_the_submission_here(lint_plan: Any) -> None:
    """With no path, lint reads the task's folder: where --task (or a task.yml above) makes that another
    folder, a submission.py here that goes unchecked is said in one line, with how to check it."""
    here = Path.cwd() / "submission.py"
    if lint_plan.folder is None or lint_plan.folder.resolve() == Path.cwd().resolve() or not here.is_file():
        return
    linted = {path.resolve() for path in lint_plan.paths}
    if here.resolve() in linted or Path.cwd().resolve() in linted:
        return
    get_console().warn(f"submission.py here is not checked (lint reads {short_path(lint_plan.folder) or '.'},"
                       f" the task's folder); `nvfp4ctl lint submission.py` checks it")


def _judged_problem(report: Any, lint_plan: Any) -> str | None:
    """The one problem the files were judged by, for the run log's problem column as check and bench fill
    it: a file's own export header or API header, else its folder's task.yml of the user's, whatever problem
    it names (the shipped GEMM's too), else the task in use. None for several, and where only the shipped GEMM
    task stood in (no task.yml of the user's: a default, not the files' problem)."""
    from nvfp4ctl.lint.engine import folder_problem

    task_problem = lint_plan.config.problem if lint_plan.task_file is not None else None
    others = {path: problem for path, problem, _ in report.other_problems}
    own_tasks = report.own_tasks or (None,) * len(report.files)
    judged = {others.get(path) or (folder_problem(own_task) if own_task is not None else task_problem)
              for path, own_task in zip(report.files, own_tasks)}
    return judged.pop() if len(judged) == 1 else None


def _rules_problem(task: Path | None, paths: list[Path]) -> str:
    """The problem whose tuple the rules are told in: the task's, as the findings are, or where paths are named
    (`lint --list-rules dual`) the one lint judges their files by (a task.yml above them, a file's own export
    header); paths of several problems are a UsageError. The rules are documentation: a task.yml found nearby
    that cannot be read leaves them in the GEMM's words, with a warning; one the user named (`--task`) is refused
    as every command refuses it (exit 2)."""
    from nvfp4ctl.problems import DEFAULT_PROBLEM
    from nvfp4ctl.task import load_task
    from nvfp4ctl.workspace import FROM_ENV, FROM_FLAG

    try:
        loaded = load_task(task)
    except UsageError as error:
        if task is not None:
            raise
        get_console().warn(f"{error}; the rules name {DEFAULT_PROBLEM}'s input")
        loaded = None
    problem = getattr(loaded, "problem", None) or DEFAULT_PROBLEM
    if not paths:
        return problem
    from nvfp4ctl.lint.engine import judged_problems
    from nvfp4ctl.words import and_listed

    in_use = loaded.path if loaded is not None and loaded.is_users else None
    own_tasks = loaded is None or loaded.source not in (FROM_FLAG, FROM_ENV)
    judged: dict[str, Path] = {}
    for path in paths:
        if not path.exists():
            raise UsageError(f"no such file or folder: {path}")
        problems = judged_problems(path, in_use, own_tasks)
        for name, file in problems.items():  # a folder of one problem is named as typed, else its files are
            judged.setdefault(name or problem, path if len(problems) == 1 else file)
    if len(judged) > 1:
        named = and_listed([f"{short_path(path) or '.'} is {name}'s" for name, path in judged.items()])
        raise UsageError(f"--list-rules lists one problem's rules: {named}; name paths of one problem")
    return next(iter(judged))


def _nothing_found(paths: tuple[Path, ...], skipped: int, compiler_outputs: int) -> str:
    """The one line for folders that hold nothing lint checks: what it looked for there."""
    from nvfp4ctl.words import plural

    others = f"; not submissions: {plural(skipped, '.py file')} (-v names them)" if skipped else ""
    if compiler_outputs:
        others += f"; {plural(compiler_outputs, 'compiler intermediate')} skipped (nvcc -keep output; name one to check it)"
    return (f"nothing to lint in {', '.join(short_path(p) for p in paths)}: no C++/CUDA source (.cu .cuh .cpp .h .hpp)"
            f" and no submission (a .py file that defines or imports custom_kernel, or is named submission*.py){others}")
