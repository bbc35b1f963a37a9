"""`nvfp4ctl init`: a new project folder for one problem (task.yml, starter submission.py, MEMORY.md).

The starter is the problem's exact plain-torch submission (kernels/torch_dequant/): correct on every
test, slow, and a readable template of the tuple. Nothing is overwritten: if any of the three files
exists the whole init stops before writing, and an init that fails or is interrupted part-way removes
what it wrote.
"""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvfp4ctl.errors import UsageError, os_reason
from nvfp4ctl.file_in_the_way import refuse_a_file_above
from nvfp4ctl.project import shipped
from nvfp4ctl.words import and_listed

FILES = ("task.yml", "submission.py", "MEMORY.md")


@dataclass(frozen=True)
class Scaffold:
    folder: Path
    written: tuple[Path, ...]


def memory_skeleton(problem: Any) -> str:
    layout = problem.layout
    scale_rule = ""
    if layout.reference_scales:
        pairs = ", ".join(f"{layout.name(p)} (index {p})" for p in layout.permuted_scales)
        refs = ", ".join(str(r) for r in layout.reference_scales)
        # the grouped GEMM keeps all its reference scales in one element (index 1)
        refs = f"indices {refs} are" if len(layout.reference_scales) > 1 else f"index {refs} holds"
        scale_rule = (f"- Scales: use the permuted ones, {pairs}; {refs} the reference scales"
                      " (`to_blocked` in the timed path is slow and a rule violation).\n")
    return (
        f"# MEMORY: {problem.name} notes\n\n"
        f"{problem.title}.\n\n"
        "Your notes go above the run log. nvfp4ctl never rewrites this part; it only appends lines to the\n"
        '"Run log" section at the end (one per command: time, command, target@hash, commit, GPU, exit, result).\n'
        "Write each experiment as: change · config · numbers (µs, TFLOP/s, max diff) · verdict · run-log time.\n\n"
        "## Footguns\n"
        '- The word "stream" anywhere in the file rejects the submission (`<iostream>` included);'
        " `nvfp4ctl lint` finds it.\n"
        f"{scale_rule}"
        f"- The input tuple: {', '.join(layout.names)}.\n"
        "- Hung kernel = possible deadlock: `check` and `bench` kill the child after the timeout (exit 3).\n"
        "- No CUDA graphs, no result caches across calls (`nvfp4ctl check` probes it), no reference fallback.\n\n"
        "## Notes\n\n"
    )


def init_project(problem: Any, folder: Path) -> Scaffold:
    """Write task.yml, submission.py and MEMORY.md for `problem` into `folder` (created if needed)."""
    targets = [folder / name for name in FILES]
    existing = [path.name for path in targets if path.exists()]
    if existing:
        raise UsageError(_refusal(folder, existing, problem.name))
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder}: not a folder")
    refuse_a_file_above(folder, str(folder))  # mkdir's own reason was "Not a directory", naming no file
    _refuse_broken_link(folder)
    starter = shipped("kernels") / problem.fallback_submission  # the wheel's copy, else the checkout's
    try:
        contents = (problem.task_file.read_text(encoding="utf-8"), starter.read_text(encoding="utf-8"),
                    memory_skeleton(problem))
    except OSError as error:
        raise UsageError(f"cannot read the shipped files for {problem.name}: {error}") from None
    contents = (_with_submission(contents[0]), *contents[1:])
    made: list[Path] = []  # the folders, then the files, this run made: taken back on any failure
    try:
        made.extend(_missing_folders(folder))
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in zip(targets, contents):
            _write_new(path, text, made)
    except BaseException as error:
        # all three or none: a task.yml and an empty submission.py left by a full disk or a Ctrl-C made
        # the next init refuse ("already there")
        _take_back(made)
        if isinstance(error, OSError):  # a parent that is a file, a read-only place, a full disk
            raise UsageError(f"cannot write into {folder}: {os_reason(error, folder)}") from None
        raise
    return Scaffold(folder, tuple(targets))


def _refuse_broken_link(folder: Path) -> None:
    """UsageError naming a symlink on the way to `folder` that leads nowhere (a dangling one, or a loop), where
    mkdir's own "File exists" left the user to guess which part of the path was in the way."""
    for part in (*reversed(folder.parents), folder):
        if part.is_symlink() and not part.exists():
            try:
                target = f" to {os.readlink(part)}"
            except OSError:
                target = ""
            raise UsageError(f"cannot write into {folder}: {part} is a symlink{target} that leads to no folder"
                             " (a missing target or a loop): make its target, or name another folder")


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet, from the top: what mkdir(parents=True) makes.
    A symlink is there, whatever it points to: a dangling one or a loop is the user's, which mkdir does not
    replace and the clean-up after its failure must not remove."""
    missing = [path for path in (folder, *folder.parents) if not os.path.lexists(path)]
    return missing[::-1]


def _write_new(path: Path, text: str, made: list[Path]) -> None:
    """`text` into a new file `path` (UTF-8), added to `made` as soon as it exists."""
    with path.open("x", encoding="utf-8") as handle:  # "x": never clobber a file made meanwhile
        made.append(path)
        handle.write(text)


def _take_back(made: list[Path]) -> None:
    """Remove what this init made, files first, then its folders (those left empty), deepest first."""
    for path in reversed(made):
        with suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()  # only an empty one: a file someone put there meanwhile stays
            else:
                path.unlink()


def _refusal(folder: Path, existing: list[str], asked: str) -> str:
    """What is there, what init therefore did not write, and the two ways on: the three files go together,
    so a user's own submission.py alone stops the task.yml and MEMORY.md too. A task.yml there names the
    folder's problem, which may not be the one asked for."""
    missing = [name for name in FILES if name not in existing]
    verb = "is" if len(existing) == 1 else "are"
    if not missing:  # all three: nothing else went unwritten because of them
        unwritten = ""
    elif len(missing) == 1:
        unwritten = f" (not {missing[0]} either: it writes all three or none)"
    else:
        unwritten = f" (neither {' nor '.join(missing)}: it writes all three or none)"
    return (f"{folder}: {and_listed(existing)} {verb} already there{_folders_problem(folder, existing, asked)}, so init"
            f" wrote nothing{unwritten}; init another folder, or rename or remove {and_listed(existing)}")


def _folders_problem(folder: Path, existing: list[str], asked: str) -> str:
    """" (its task.yml is for nvfp4_gemv, not nvfp4_gemm)", as check would read the task.yml there; "" where
    there is none, or it cannot be read."""
    if "task.yml" not in existing:
        return ""
    from nvfp4ctl.task import problem_of  # the task parser: only a refusal beside a task.yml needs it

    found = problem_of(folder / "task.yml")
    if found is None:
        return ""
    return f" (its task.yml is for {found}{'' if found == asked else f', not {asked}'})"


def _with_submission(task_text: str) -> str:
    """The shipped task.yml with its `submission:` line switched on, so check and bench run ./submission.py."""
    lines = task_text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith("# submission: "):
            lines[index] = line.removeprefix("# ")
            return "".join(lines)
    return task_text + "submission: submission.py\n"
