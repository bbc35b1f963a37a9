"""What `lint` checks and with which settings when the user names nothing: the user's own files.

With no paths: task.yml's `lint.paths` (each must exist), else the user's folder (the task.yml's,
else the current one): the submission `check` would run, every other submission*.py there, kernels/
and the C++/CUDA sources at its top level. Never files of the installed package, unless the user works inside the
nvfp4ctl project itself (its kernels/ are then the user's files), nor what nvcc -keep leaves there (x.cudafe1.cpp:
source.is_compiler_output), here or in kernels/.
"""

from __future__ import annotations

import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvfp4ctl.errors import UsageError
from nvfp4ctl.lint.benchmark_shapes import task_shapes
from nvfp4ctl.lint.source import CPP_SUFFIXES, entry_mode, is_compiler_output, link_target
from nvfp4ctl.lint.config import LintConfig, LintFlags, LintSection, parse_section
from nvfp4ctl.workspace import FROM_ENV, FROM_FLAG, claim_folder, task_folder, user_folder

SUBMISSION_GLOB = "submission*.py"


@dataclass(frozen=True)
class LintPlan:
    paths: tuple[Path, ...]
    config: LintConfig
    skipped: tuple[str, ...] = ()  # defaults that do not exist (shown as warnings)
    folder: Path | None = None  # the user's folder the defaults came from
    # A file under a task.yml other than this one is judged by that task's problem, unless the task
    # was chosen on purpose ($NVFP4CTL_TASK): own_tasks is False then.
    task_file: Path | None = None
    own_tasks: bool = False
    compiler_outputs: tuple[Path, ...] = ()  # nvcc -keep intermediates at the folder's top level: not checked
    # the paths were named (the command line, task.yml's lint.paths): each must hold something to lint, where
    # the defaults found in the user's folder (an empty kernels/ beside a submission) need not
    named: bool = False
    flags: LintFlags = LintFlags()  # the command line's, for a file judged by its own folder's task.yml


def _load_task(path: Path | None = None) -> Any:
    from nvfp4ctl.task import load_task

    return load_task(path)


def plan(
    paths: Sequence[Path] | None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    profile: str | None = None,
    task_path: Path | None = None,
) -> LintPlan:
    task = _load_task(task_path)
    folder = user_folder()
    section: LintSection = parse_section(task.lint if task.is_users else None, folder, task.lint_at)
    flags = LintFlags(tuple(select) if select else None, tuple(ignore) if ignore else None, profile)
    config = flags.over(section, task_shapes(task), getattr(task, "problem", None))
    own = {"task_file": task.path if task.is_users else None, "own_tasks": task.source not in (FROM_FLAG, FROM_ENV),
           "flags": flags}
    if paths:
        return LintPlan(tuple(paths), config, named=True, **own)
    if section.paths:
        # Paths the user wrote down are as explicit as paths on the command line: a typo must not
        # quietly shrink what is checked, nor read as "nothing to lint" when the folder has files.
        for path, where in zip(section.paths, section.paths_at):
            if entry_mode(path) is None:
                written = path.relative_to(folder) if path.is_relative_to(folder) else path  # as in task.yml
                raise UsageError(f"{where}: {written} does not exist")
        return LintPlan(section.paths, config, (), folder, named=True, **own)
    files, skipped = users_files(task, folder)
    compiler_outputs = tuple(sorted(p for p in folder.iterdir() if _top_level_source(p) and is_compiler_output(p)))
    return LintPlan(files, config, skipped, folder, **own, compiler_outputs=compiler_outputs)


def log_beside_their_task(lint_plan: LintPlan, own_tasks: tuple[Path | None, ...]) -> None:
    """With no task.yml of the user's in use, files that all lie under one task.yml of their own are judged by
    it (engine.lint_paths: `own_tasks`, each checked file's), so the run is logged beside it, as `build
    gemm/submission.py` logs to gemm/MEMORY.md; files under several (`lint gemm dual`, or `lint gemm` where
    gemm/v2 holds a task.yml too) or under none have no one folder, and the log stays where it was."""
    if lint_plan.task_file is not None or not lint_plan.own_tasks:
        return
    governing = set(own_tasks)
    if len(governing) == 1 and (task_file := governing.pop()) is not None:
        claim_folder(task_folder(task_file))


def users_files(task: Any, folder: Path) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    """The submission and kernel sources the user keeps in `folder`, in a stable order, and the
    named ones that are missing (a task.yml `submission:` that does not exist is a warning here)."""
    from nvfp4ctl.runner.targets import find_user_submission, short_path

    found: list[Path] = []
    skipped: tuple[str, ...] = ()
    try:
        submission = find_user_submission(task)
    except UsageError as missing:
        submission, skipped = None, (f"{missing}; not checked",)
    if submission is not None:
        found.append(submission.path)
    for path in sorted(folder.glob(SUBMISSION_GLOB)):
        if entry_mode(path) is not None:
            found.append(path)
        else:  # found, not named: a leftover link warns instead of stopping the run
            skipped += (f"{short_path(path)}: broken link (to {link_target(path)}); not checked",)
    kernels = folder / "kernels"
    if (mode := entry_mode(kernels)) is not None and stat.S_ISDIR(mode):
        found.append(kernels)
    found.extend(sorted(p for p in folder.iterdir() if _top_level_source(p) and not is_compiler_output(p)))
    # A file found twice is reported under the best of its names (lowest rank, first on a tie): any
    # name found in the folder over the submission's resolved path (a linked submission.py, not its
    # target), then a file's own name over a link's (submission.py, not a leftover submission_best.py).
    resolved_submission = submission.path if submission is not None else None
    unique: dict[Path, tuple[tuple[bool, bool], Path]] = {}
    for path in found:
        key, shown = path.resolve(), path.absolute()
        rank = (path is resolved_submission, shown.is_symlink())
        if key not in unique or rank < unique[key][0]:
            unique[key] = (rank, shown)
    return tuple(shown for _, shown in unique.values()), skipped


def _top_level_source(path: Path) -> bool:
    """A C++ source or header: by its name first, so an entry that cannot be looked at (a link into /proc/1/cwd)
    is passed over unless its name is a source's, where entry_mode says it in one line."""
    if path.suffix not in CPP_SUFFIXES or path.name.startswith("."):
        return False
    mode = entry_mode(path)
    return mode is not None and stat.S_ISREG(mode)
