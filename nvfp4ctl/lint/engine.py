"""Lint files: read (never import or run), apply the rules for the file's kind, filter by the
config and waivers, and turn findings into Diagnostics."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from nvfp4ctl.lint import stream
from nvfp4ctl.lint.benchmark_shapes import task_shapes
from nvfp4ctl.lint.config import LintConfig, LintFlags, parse_section
from nvfp4ctl.lint.cpp import rules as cpp_rules
from nvfp4ctl.lint.diagnostic import Diagnostic, Finding, LintReport
from nvfp4ctl.lint.included_headers import stream_in_included_headers
from nvfp4ctl.lint.python.check import check as check_python
from nvfp4ctl.lint.rules import RULES_BY_CODE
from nvfp4ctl.lint.source import SourceFile, discover, read_source
from nvfp4ctl.lint.submission import FOLDER_REASON, is_submission, names_its_problem
from nvfp4ctl.lint.waivers import is_waived, line_waivers, unknown_waivers
from nvfp4ctl.not_text import not_text_message
from nvfp4ctl.problems import DEFAULT_PROBLEM
from nvfp4ctl.workspace import find_task_upwards, forget_on_reset, task_folder


_KNOWN_CODES = tuple(RULES_BY_CODE)


def own_problem(source: SourceFile) -> tuple[str, str] | None:
    """(problem, why) for a Python file that names its own problem: an export header, else the one
    problem's C ABI its code uses, else a file name that starts with a problem's name; None for a
    file judged as the task's problem."""
    if source.kind != "python":
        return None
    return names_its_problem(source.text, source.path)


def config_for(source: SourceFile, config: LintConfig) -> LintConfig:
    """The config for one file: a file that names its own problem (own_problem) is judged by it."""
    return _judged_as(own_problem(source), config)


def _judged_as(own: tuple[str, str] | None, config: LintConfig) -> LintConfig:
    """config, or for a file whose own problem (own_problem's answer) is another, that problem's."""
    if own is None or own[0] == config.problem:
        return config
    return replace(config, problem=own[0], benchmark_shapes=())  # that problem's own (LintConfig), not the task's


def _folder_task(folder: Path, task_file: Path | None) -> Path | None:
    """The nearest task.yml above `folder` as the user named it (a linked file or folder is judged where the link
    lies, not where it leads) where that is not the task in use (a GPU MODE folder linted from another one,
    `lint gemm dual` from the repo root), resolved; None where there is none. One that cannot be read or parsed
    is the UsageError `lint` in its folder gives (_parsed_task)."""
    found = find_task_upwards(folder, links_kept=True)
    own = found.resolve() if found is not None else None
    if own is None or own == task_file:
        return None
    _parsed_task(own)
    return own


@lru_cache(maxsize=None)
def _parsed_task(task_file: Path) -> Any:
    """A task.yml other than the one in use, parsed once per file and command (a folder of submissions under
    one). One that cannot be read or parsed is a UsageError, as in its own folder: its problem and `lint:`
    settings quietly dropped would judge the folder's files by others."""
    from nvfp4ctl.task import load_folder_task

    return load_folder_task(task_file)


@lru_cache(maxsize=None)
def _folder_config(task_file: Path, flags: LintFlags) -> LintConfig:
    """The config a folder's own task.yml gives its files, as `nvfp4ctl lint` run in that folder gives it:
    its problem, benchmark shapes and `lint:` settings, under the command line's flags. A `lint:` section
    that is wrong is exit 2 here as there, not settings quietly dropped."""
    task = _parsed_task(task_file)
    section = parse_section(task.lint, task_folder(task.path), task.lint_at)
    return flags.over(section, task_shapes(task), getattr(task, "problem", None))


def folder_problem(task_file: Path) -> str:
    """The problem a folder's own task.yml (lint_paths' `own_tasks`) judges its files by, as _folder_config gives it."""
    return getattr(_parsed_task(task_file), "problem", None) or DEFAULT_PROBLEM


def judged_problems(path: Path, in_use: Path | None, own_tasks: bool) -> dict[str | None, Path]:
    """The problems `lint PATH` judges PATH's files by where the path, not the task in use (`in_use`; None:
    nvfp4ctl's shipped one), decides them, each with the first file judged by it; None for the task in use's.
    A file's is its own; a folder's, those of the files lint checks in it (every C++ file, every submission), each
    as lint_paths judges it (judged_files), so a folder over task.ymls of three problems is no one problem's; a
    folder holding nothing lint checks is its task.yml's. `--list-rules PATH` lists the rules in its words."""
    in_use = in_use.resolve() if in_use is not None else None
    judged: dict[str | None, Path] = {}
    for file in judged_files([path], in_use, own_tasks, [], [], []):
        judged.setdefault(file.problem, file.path)
    if judged:
        return judged
    found = _folder_task(path.absolute(), in_use) if own_tasks else None
    return {folder_problem(found) if found is not None else None: path}


@dataclass(frozen=True)
class JudgedFile:
    """A file lint checks and what it is judged by."""

    path: Path
    source: SourceFile
    own_task: Path | None  # the task.yml above it where that is not the one in use (lint_paths' own_tasks)
    own: tuple[str, str] | None  # (problem, why) where the file or its own task.yml decides it

    @property
    def problem(self) -> str | None:
        """The problem its findings are told in; None for the task in use's."""
        if self.own is not None:
            return self.own[0]
        return folder_problem(self.own_task) if self.own_task is not None else None


def judged_files(paths: list[Path], in_use: Path | None, own_tasks: bool, not_submissions: list[Path],
                 broken: list[Path], compiler_outputs: list[Path]) -> Iterator[JudgedFile]:
    """The files lint checks under paths (named files as given; in folders every C++ file and every submission),
    each with the task.yml above it other than `in_use` (resolved; with own_tasks) and the problem it names itself
    or that task.yml gives it. A .py file of a folder that is no submission goes to not_submissions, and what
    discover leaves out to broken and compiler_outputs."""
    named = {path.resolve() for path in paths if path.is_file()}
    for path in discover(paths, broken, compiler_outputs):
        source = read_source(path)
        if source.kind == "python" and path.resolve() not in named and not is_submission(path, source.text):
            not_submissions.append(path)
            continue
        # the file's own task.yml, settings included, where it is not the one in use: each file is judged as
        # `nvfp4ctl lint` in its own folder judges it
        own_task = _folder_task(path.absolute().parent, in_use) if own_tasks else None
        own = own_problem(source)
        # a file under its own task.yml is that task's (an export of the dual GEMM under dual/task.yml): its export
        # header or C ABI only agrees with it, which is no news worth a warning
        if own_task is not None and source.kind == "python" and (own is None or own[0] == folder_problem(own_task)):
            own = (folder_problem(own_task), FOLDER_REASON)
        yield JudgedFile(path, source, own_task, own)


# a folder's task.yml is read once per command: the next one (a test's, an editor's lint_paths) reads it as it is then
forget_on_reset(_parsed_task.cache_clear)
forget_on_reset(_folder_config.cache_clear)


def lint_source(source: SourceFile, config: LintConfig) -> list[Diagnostic]:
    return _diagnostics(source, config_for(source, config))


def _diagnostics(source: SourceFile, config: LintConfig) -> list[Diagnostic]:
    """The findings of one file under the config already chosen for it."""
    findings: list[Finding] = list(stream.check(source.text))
    not_text = source.not_text()
    if not_text is not None:
        offset, why = not_text
        findings.append(Finding(offset, "NV004", f"{not_text_message(source.path.name, why)}; only the text rules ran"))
    elif source.kind == "python":
        findings += check_python(source, config)
    elif source.kind == "cpp":
        kernel_source = source.path.name if source.path.suffix.lower() == ".cu" else None
        findings += cpp_rules.check(cpp_rules.Fragment(source.text, 0), config, kernel_source)
    diagnostics: dict[tuple[int, str], Diagnostic] = {}
    # One copy of a line and one read of its waivers, however many findings it holds: a copy per
    # finding made a long line of many findings (nvcc's output, a minified file) quadratic in time and memory.
    lines: dict[int, tuple[str, tuple[str, ...]]] = {}
    for finding in findings:
        if not config.enabled(finding.code) or (finding.offset, finding.code) in diagnostics:
            continue
        rule = RULES_BY_CODE[finding.code]
        line, col = source.position(finding.offset)
        if line not in lines:
            text = source.line_text(line)
            lines[line] = text, line_waivers(text)
        text, waived = lines[line]
        if rule.waivable and is_waived(finding.code, waived):
            continue
        diagnostics[(finding.offset, finding.code)] = Diagnostic(
            source.path, line, col, finding.code, rule.severity, finding.message, text, finding.width)
    return sorted(diagnostics.values(), key=lambda d: (d.line, d.col, d.code))


def lint_paths(paths: list[Path], config: LintConfig, *, own_tasks: bool = False,
               task_file: Path | None = None, flags: LintFlags = LintFlags()) -> LintReport:
    """Lint named files as given, and in folders every C++ file and every submission-like .py file.
    With own_tasks a Python file under a task.yml other than `task_file` (the one in use; None:
    nvfp4ctl's shipped one) that names no problem itself is judged by that task.yml's problem, and every file
    under such a task.yml by its `lint:` settings, `flags` (the command line's) over them."""
    in_use = task_file.resolve() if task_file else None
    diagnostics: list[Diagnostic] = []
    checked: list[Path] = []
    not_submissions: list[Path] = []
    broken: list[Path] = []
    other_problems: list[tuple[Path, str, str]] = []
    compiler_outputs: list[Path] = []
    unknown: list[tuple[Path, int, str]] = []
    own_tasks_of_files: list[Path | None] = []
    for judged in judged_files(paths, in_use, own_tasks, not_submissions, broken, compiler_outputs):
        path, source, own = judged.path, judged.source, judged.own
        checked.append(path)
        own_tasks_of_files.append(judged.own_task)
        file_config = _folder_config(judged.own_task, flags) if judged.own_task is not None else config
        if own is not None and own[0] != config.problem:
            other_problems.append((path, *own))
        diagnostics.extend(_diagnostics(source, _judged_as(own, file_config)))
        if source.not_text() is None:
            unknown.extend((path, line, code) for line, code in unknown_waivers(source.text, _KNOWN_CODES))
    # a kernel's headers from outside what was linted end up in its exported submission: the word counts there too
    diagnostics.extend(stream_in_included_headers(checked))
    return LintReport(tuple(diagnostics), tuple(checked), tuple(not_submissions), tuple(broken), tuple(other_problems),
                      tuple(compiler_outputs), tuple(unknown), tuple(own_tasks_of_files))


def lint_text(text: str, path: str | Path = "submission.py", config: LintConfig | None = None) -> list[Diagnostic]:
    """Lint text as if it were the file `path` (tests, editors)."""
    return lint_source(SourceFile(Path(path), text), config or LintConfig())
