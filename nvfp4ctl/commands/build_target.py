"""What `nvfp4ctl build` builds and for which problem, resolved as `check` resolves them: the target and
why it was chosen, the task in use (a submission's own task.yml where nvfp4ctl's shipped one would
stand in; another problem's task.yml found from the current folder is exit 2 naming the --task to pass),
said on the header line and noted for the run log before anything compiles, so a Ctrl-C logs it too."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from nvfp4ctl.console import get_console
from nvfp4ctl.env import Env, env_str
from nvfp4ctl.words import plural
from nvfp4ctl.workspace import (FROM_FLAG, log_beside, note_target, short_path, user_folder,
                                users_kernels_dir)

SUBMISSION_FILE = "submission.py"
GIVEN = "given"  # a SOURCE typed on the command line: the run log names it without a reason, as before


@dataclass(frozen=True)
class BuildTarget:
    sources: tuple[Path, ...]  # what to build; () for every kernel of `kernels`
    shown: str  # the target as the header names it
    why: str  # how it was chosen: "beside task.yml", "current folder", "given", ...
    task: Any | None = None  # the task in use (None for kernel sources: each kernel's API header decides)
    problem: str | None = None  # the problem a submission is judged by
    kernels: Path | None = None  # the kernels/ folder built with no SOURCE
    stand_in: bool = False  # the problem is only the shipped task's: no task.yml of the user's, nothing in the file
    # why a bare build took this target over the kernels/ folder there, or that a kernel given twice is built once
    note: str = ""
    own_reason: str = ""  # why `problem` is the submission's own, not the task's: "its nvfp4ctl export header", ...

    @property
    def logged_source(self) -> str:
        return "" if self.why == GIVEN else self.why

    @property
    def kernel_sources(self) -> tuple[Path, ...]:
        """The kernel sources (.cu) given, each judged by the problem whose API header it includes; () for
        anything else."""
        if self.task is None and self.sources and all(path.suffix == ".cu" for path in self.sources):
            return self.sources
        return ()

    @property
    def has_header(self) -> bool:
        """Whether the header lines have something to say: a task, a kernels/ folder, or the kernels' problems."""
        return bool(self.why) and (self.task is not None or self.kernels is not None or bool(self.kernel_sources))


def resolve_build_target(sources: list[Path] | None, task_flag: Path | None) -> BuildTarget:
    """The target of one `build`: a submission (named or found by check's folder rules) with its task
    and problem, the kernel sources named, or the user's kernels/ folder."""
    from nvfp4ctl.errors import UsageError

    if sources and any(path.suffix == ".py" for path in sources):
        if len(sources) != 1:
            named = ", ".join(str(path) for path in sources)
            raise UsageError(f"build takes one submission (.py) or any number of kernel sources (.cu); got {named}")
        return _noted(_submission_target(sources[0], task_flag))
    if sources:
        if task_flag is not None or env_str(Env.TASK) is not None:
            # a kernel's API header decides its problem, yet a task chosen on purpose (--task, $NVFP4CTL_TASK)
            # naming no readable task file is refused before anything compiles, as check and bench refuse it
            from nvfp4ctl.task import load_task

            load_task(task_flag)
        sources, twice = _each_kernel_once(sources)
        from nvfp4ctl.runner.targets import kernels_task_file

        if (home := kernels_task_file(sources, task_flag)) is not None:  # the task check runs them on, as its runs log
            log_beside(home)
        shown = str(sources[0]) if len(sources) == 1 else ", ".join(str(path) for path in sources)
        return _noted(BuildTarget(tuple(sources), shown, GIVEN, note=twice))
    return _noted(_found_target(task_flag))


def _each_kernel_once(sources: list[Path]) -> tuple[list[Path], str]:
    """The kernels given, each once (by the file it is: `a.cu a.cu`, or a link and its target), in the order
    first given, and the note saying which were named more than once ("" for none): built twice, they read as two."""
    named: dict[Path, list[Path]] = {}
    for source in sources:
        named.setdefault(source.resolve(), []).append(source)
    again = [_named_again(resolved, names) for resolved, names in named.items() if len(names) > 1]
    if not again:
        return sources, ""
    return [names[0] for names in named.values()], f"{'; '.join(again)}: built once"


def _named_again(resolved: Path, names: list[Path]) -> str:
    """"a.cu is named twice", "l.cu leads to a.cu", "l.cu and m.cu both lead to a.cu": one kernel's names."""
    spelled = list(dict.fromkeys(str(name) for name in names))
    times = "twice" if len(names) == 2 else f"{len(names)} times"
    if len(spelled) == 1:
        return f"{spelled[0]} is named {times}"
    target = short_path(resolved)
    # a name whose path, `..` folded, is the file's own is the file spelt another way (./k.cu, its absolute path)
    links = [name for name in spelled if Path(os.path.normpath(Path(name).absolute())) != resolved]
    if not links:
        return f"{target} is named {times} ({', '.join(spelled)})"
    if len(links) < len(spelled):  # the file itself was named too
        return f"{', '.join(links)} {'leads' if len(links) == 1 else 'lead'} to {target}, named too"
    return f"{', '.join(links)} all lead to {target}" if len(links) > 2 else f"{' and '.join(links)} both lead to {target}"


def holding_folder(sources: tuple[Path, ...] | list[Path]) -> Path:
    """The folder that holds every file given, as named (`../dual/kernels/a.cu ../gemv/kernels/b.cu`: the folder
    above both): the run log's target for several kernels, never one nothing was built from."""
    return Path(os.path.commonpath([os.path.abspath(source) for source in sources]))


def logged_target(target: BuildTarget, built: Sequence[Path]) -> tuple[Path, str] | None:
    """The run log's target of `target`'s build and why, `built` being the files it builds (a bare build's are
    known once its plan is made; before, ()): the one file built, a bare build's one kernel with the kernels/
    folder it lies in as its reason ("in kernels/ (beside task.yml)"), which the folder's reason is about; for
    several, the kernels/ folder a bare build builds, else the folder holding every file given (holding_folder),
    never one nothing was built from. None where there is nothing to name."""
    files = list(dict.fromkeys(built))
    if len(files) == 1:
        bare = target.kernels is not None and target.logged_source
        return files[0], f"in {target.shown} ({target.logged_source})" if bare else target.logged_source
    if target.kernels is not None:
        return target.kernels, target.logged_source
    return (holding_folder(files), target.logged_source) if files else None


def note_logged_target(target: BuildTarget, built: Sequence[Path]) -> None:
    """The run log's target (logged_target), noted so that an interrupted build logs it too."""
    if (logged := logged_target(target, built)) is not None:
        note_target(logged[0].absolute(), logged[1])


def _noted(target: BuildTarget) -> BuildTarget:
    """The target for the run log, so an interrupted build logs it too (logged_target: a bare build's kernels/
    folder until its plan names the kernels); only where every file is there: a name the build refuses (none
    such, too long for the file system) is that refusal's line alone."""
    try:
        there = all(path.exists() for path in (target.sources or (target.kernels,)) if path is not None)
    except OSError:
        there = False
    if there:
        note_logged_target(target, target.sources)
    return target


def _submission_target(path: Path, task_flag: Path | None) -> BuildTarget:
    from nvfp4ctl.runner.targets import task_for_submission
    from nvfp4ctl.task import load_task

    from nvfp4ctl.workspace import FROM_GIVEN_TARGET

    task = task_for_submission(load_task(task_flag), path, named=str(path), given_as=FROM_GIVEN_TARGET)
    return _judged_by(task, path, str(path), GIVEN)


def _found_target(task_flag: Path | None) -> BuildTarget:
    """No SOURCE: the user's kernels/ folder, else the submission check would run (its folder rules)."""
    from nvfp4ctl.build.sources import default_kernels
    from nvfp4ctl.runner.targets import find_user_submission, task_for_its_problem
    from nvfp4ctl.task import load_task

    task = load_task(task_flag)
    kernels = users_kernels_dir()
    found = None
    if kernels is not None and not default_kernels(kernels):
        found = find_user_submission(task)  # a kernels/ with nothing in sm90/ or sm100/: the submission, as documented
    if kernels is not None and found is None:
        if kernels != user_folder() / "kernels":
            where = "nvfp4ctl's own: inside its checkout"
        else:
            where = f"beside {_task_shown(task)}" if task.is_users else "current folder"
        return BuildTarget((), f"{short_path(kernels)}/", where, task, kernels=kernels)
    note = _kernels_passed_over(kernels) if found is not None else ""
    found = found or find_user_submission(task)
    if found is None:
        return BuildTarget((), "", "", task)  # _plan says there is nothing to build, and where it looked
    target = _judged_by(task_for_its_problem(task, found.path), found.path, found.shown, found.source)
    return replace(target, note=note)


def _kernels_passed_over(kernels: Path | None) -> str:
    """The line saying a bare build took the submission over `kernels`, which holds no kernel in sm90/ or sm100/,
    naming the way to build the kernels that lie in kernels/ itself."""
    from nvfp4ctl.build.sources import loose_kernels

    if kernels is None:
        return ""
    shown = short_path(kernels) or "."
    loose = loose_kernels(kernels)
    named = (f"; {plural(len(loose), 'kernel')} in {shown}/ itself ({', '.join(path.name for path in loose)}):"
             f" `nvfp4ctl build {shown}/{loose[0].name if len(loose) == 1 else '*.cu'}` builds"
             f" {'it' if len(loose) == 1 else 'them'}") if loose else ""
    return f"{shown}/ holds no kernel in sm90/ or sm100/, which a bare build builds: building the submission{named}"


def _judged_by(task: Any, submission: Path, shown: str, why: str) -> BuildTarget:
    """A submission's target, judged by the task check runs it on (task_for_submission or
    task_for_its_problem): its problem, and why where nvfp4ctl's shipped task was picked for it; a file that
    names another problem itself (an export header, one problem's C ABI in its code, its file name) is judged
    by that one, as lint judges it: a GEMM export linked into a GEMV folder builds the nvfp4_gemm extension."""
    from nvfp4ctl.runner.targets import STAND_IN

    own = _own_problem(submission)
    if own is not None and own[0] != task.problem:
        return BuildTarget((submission,), shown, why, task, own[0], own_reason=own[1])
    return BuildTarget((submission,), shown, why, task, task.problem, stand_in=task.shipped_because == STAND_IN)


def _own_problem(submission: Path) -> tuple[str, str] | None:
    """(problem, why) where the file names its problem itself, as lint reads it (lint.submission); None where
    it names none or cannot be read (the build says what is wrong with it)."""
    from nvfp4ctl.build.read_once import source_bytes
    from nvfp4ctl.lint.submission import names_its_problem

    # __file__ as Python gives it, for a load() source made from it: a link's own path, not its target's;
    # read as the build reads it (source_bytes), so the problem judged by is that of the bytes built
    as_run = Path(os.path.abspath(submission))
    try:
        if not as_run.is_file():  # a FIFO would block the read: the build refuses it in its own words
            return None
        text = io.TextIOWrapper(io.BytesIO(source_bytes(as_run)), encoding="utf-8", errors="replace").read()
    except (OSError, ValueError):
        return None
    return names_its_problem(text, as_run)


def _task_shown(task: Any) -> str:
    """The task file as a reason names it: by its name, its path where --task moved the target away."""
    if task.path is None:
        return "task.yml"
    return f"{short_path(task.path)} (--task)" if task.source == FROM_FLAG else task.path.name


def headers(target: BuildTarget, kernel_problems: dict[Path, Any | None]) -> list[str]:
    """check's config line, for a build: the problem, the target and why, the task in use; for kernel
    sources, a line each, the problem its API header gives and that header (several given kernels may each
    be another problem's). `kernel_problems`: each kernel's (build.sources.kernel_problem), by its resolved
    path; one left out could not be read, and its build says why."""
    from nvfp4ctl.runner.targets import task_label_and_reason

    if target.kernel_sources:
        return [f"build{_kernels_problem(source, kernel_problems)} · target {source} ({target.why})"
                for source in target.kernel_sources]
    problem = f" · {target.problem}" if target.problem else ""
    task = f" · task {task_label_and_reason(target.task)}" if target.task is not None else ""
    return [f"build{problem} · target {target.shown} ({target.why}){task}"]


def _kernels_problem(source: Path, kernel_problems: dict[Path, Any | None]) -> str:
    """" · nvfp4_gemv (it includes nvfp4_gemv_api.h)": the problem a kernel is judged by and why, as check's task
    says it; "" where its text cannot be read (the build says why in its own line)."""
    from nvfp4ctl.runner.targets import kernel_because, kernel_problem_name

    resolved = source.resolve()
    if resolved not in kernel_problems:
        return ""
    own = kernel_problems[resolved]
    return f" · {kernel_problem_name(own)} ({kernel_because(own)})"


def say_its_own_problem(target: BuildTarget) -> None:
    """A submission judged by the problem it names itself, not the task's, said as lint says it (a warning
    for an export header or another problem's C ABI: it fails every test on the task's leaderboard)."""
    if not target.own_reason or target.problem is None or target.task is None:
        return
    from nvfp4ctl.lint.judged_as import say_judged_as

    say_judged_as(short_path(target.sources[0]), target.problem, target.own_reason, target.task.problem,
                  target.task.is_users)


def warn_of_the_submission_here(target: BuildTarget) -> None:
    """A submission.py in the current folder that this build leaves out (--task moved the target to its
    own folder, or a task.yml above names another file): one line on how to build it instead."""
    here = Path.cwd() / SUBMISSION_FILE
    if target.why in (GIVEN, "") or not here.is_file():
        return
    if here.resolve() in [path.resolve() for path in target.sources]:
        return
    get_console().warn(f"{SUBMISSION_FILE} here is not built (the target is {target.shown}, {target.why});"
                       f" `nvfp4ctl build {SUBMISSION_FILE}` builds it")
