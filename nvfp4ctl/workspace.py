"""Where the user works: the task.yml in use, the user's folder, and where the run log goes.

A command resolves its task file once (`locate_task`), before anything that can fail for other
reasons, and every later choice hangs off that: the target (`runner/targets.py`), lint's default
files (`lint/targets.py`) and the run log (`memory_path`). nvfp4ctl's own files (the shipped
task.yml, the package's kernels) are used only where the user asked for them or works inside the
nvfp4ctl project itself, so a verdict is never about a file the user did not write.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.env import Env, env_str
from nvfp4ctl.project import REPO_DIR, cache_root, shipped_task_path

TASK_FILE = "task.yml"
MEMORY_FILE = "MEMORY.md"

# Where a choice came from, as the config line and the run log print it.
FROM_FLAG = "--task"
FROM_ENV = f"${Env.TASK}"
FROM_SEARCH = "found from the current folder"
SHIPPED = "shipped with nvfp4ctl"
FROM_TARGET = "beside the --submission"
FROM_GIVEN_TARGET = "beside the submission given"  # build's argument: build has no --submission to name
FROM_KERNEL = "beside the kernel"  # a kernel's own folder's task.yml (check, bench, tune --kernel)


@dataclass(frozen=True)
class TaskFile:
    path: Path
    source: str  # FROM_FLAG | FROM_ENV | FROM_SEARCH | SHIPPED

    @property
    def is_users(self) -> bool:
        return self.source != SHIPPED

    @property
    def folder(self) -> Path | None:
        """The user's folder this task file stands for; None for nvfp4ctl's own task.yml."""
        if not self.is_users:
            return None
        return task_folder(self.path)


def task_folder(path: Path) -> Path:
    """The folder a task file of the user's stands for: its own, through links; the working directory for one that
    lies in no folder, a pipe (`--task <(cat task.yml)` is /dev/fd/63, a link to /proc/PID/fd/pipe:[N], which no
    folder holds) or a device, as a task piped in is about the files where the command runs."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a link that loops (RuntimeError before Python 3.13): where it was named
        return Path(os.path.abspath(path)).parent
    return Path.cwd().resolve() if _in_no_folder(path, resolved) else resolved.parent


def lies_in_no_folder(path: Path) -> bool:
    """Whether task_folder takes the working directory for `path` because no folder holds it (a pipe, a
    device): what it stands for is then the current folder, not one it lies in."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a link that loops: named in a folder, as task_folder takes it
        return False
    return _in_no_folder(path, resolved)


def _in_no_folder(path: Path, resolved: Path) -> bool:
    """A file that is no regular file and whose name leads nowhere in a folder (an anonymous pipe's
    pipe:[N]) or into /dev or /proc, which hold no one's project; a named FIFO in a folder is that folder's."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # no such file yet: its read says so
        return False
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return False
    return not os.path.lexists(resolved) or resolved.parts[1:2] in (("dev",), ("proc",))


class _Resolved:
    """What this process resolved so far (one command per process): the run log follows it."""

    task: TaskFile | None = None
    folder: Path | None = None
    target: tuple[Path, str] | None = None  # what the command runs and why, once known
    target_digest: str | None = None  # the target's content hash as the command read it, once it has
    problem: str | None = None  # the problem check and bench run, once known (their run-log lines name it)


_FORGETTERS: list[Callable[[], None]] = []  # what other modules keep of a command's files (lint's parsed task.ymls)


def forget_on_reset(forget: Callable[[], None]) -> None:
    """Have reset() call `forget`: a module that keeps what it read of the user's files for the rest of a command
    (an lru_cache's cache_clear) lets go of it with the rest, so the next command reads them as they are then."""
    _FORGETTERS.append(forget)


def reset() -> None:
    """Forget what an earlier command resolved (tests run many commands in one process)."""
    _Resolved.task = None
    _Resolved.folder = None
    _Resolved.target = None
    _Resolved.target_digest = None
    _Resolved.problem = None
    for forget in _FORGETTERS:
        forget()


def short_path(path: Path) -> str:
    """The path relative to the working directory where it lies below it (as the user would type it)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def task_file_name(path: Path | None) -> str:
    """The task file in use as messages name it: its short path (other.yml, ../task.yml), "task.yml" where
    there is no file (a task built in memory)."""
    return short_path(path) if path is not None else TASK_FILE


def note_target(path: Path, source: str) -> None:
    """The command's target, so that a run that stops with an error or Ctrl-C logs it too."""
    _Resolved.target = (path, source)
    _Resolved.target_digest = None  # another target's hash is not this one's


def noted_target() -> tuple[Path, str] | None:
    return _Resolved.target


def note_target_digest(digest: str) -> None:
    """The noted target's content hash as the command read it (content_digest), so that a run stopped while it
    works on those bytes (Ctrl-C during a compile) logs them, not the file as it is when the line is written."""
    _Resolved.target_digest = digest


def noted_target_digest() -> str | None:
    return _Resolved.target_digest


def note_problem(problem: str) -> None:
    """The problem check or bench runs, so that a run that stops with an error, a timeout or Ctrl-C
    logs it too."""
    _Resolved.problem = problem


def noted_problem() -> str | None:
    return _Resolved.problem


def find_task_upwards(start: Path | None = None, *, links_kept: bool = False) -> Path | None:
    """The nearest task.yml from `start` (default: the working directory) upwards. `links_kept`: through the
    folders as named, not where a linked folder leads (gemm/shared -> ../ext is gemm's)."""
    here = Path(os.path.abspath(start or Path.cwd())) if links_kept else (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / TASK_FILE
        if _is_the_task_file(candidate):
            return candidate
    return None


def _is_the_task_file(candidate: Path) -> bool:
    """Whether the search stops at `candidate`: anything there but a folder, a socket or a FIFO too, which the task
    reader then refuses in its own words. Passed over, the folder's task.yml gave way to one further up or the
    shipped task, the run going on under a task the user never meant."""
    return candidate.exists() and not candidate.is_dir()


def locate_task(flag: Path | None = None) -> TaskFile:
    """--task > $NVFP4CTL_TASK > the nearest task.yml upwards > the one shipped with nvfp4ctl."""
    if flag is not None:
        choice = TaskFile(Path(flag), FROM_FLAG)
    elif (from_env := env_str(Env.TASK)) is not None:
        choice = TaskFile(Path(from_env), FROM_ENV)
    elif (found := find_task_upwards()) is not None:
        choice = TaskFile(found, FROM_SEARCH)
    else:
        choice = TaskFile(shipped_task_path(), SHIPPED)
    _Resolved.task = choice
    if choice.folder is not None:
        _Resolved.folder = choice.folder
    return choice


def claim_folder(folder: Path) -> None:
    """The command works on the user's files in `folder` (a submission found there): log there."""
    if _Resolved.folder is None:
        _Resolved.folder = folder.resolve()


def log_beside(task_file: Path) -> None:
    """The run is logged beside `task_file`, the task.yml of the user's that the command decided for the files it
    was given by path (runner.targets.kernels_task_file), from whatever folder it runs: `build dual/kernels/k.cu`
    from the folder above logs to dual/MEMORY.md, as `build dual/submission.py` does."""
    _Resolved.folder = TaskFile(task_file, FROM_SEARCH).folder


def user_folder(task: TaskFile | None = None) -> Path:
    """The user's folder: the task file's, else the working directory."""
    task = task or _Resolved.task
    folder = task.folder if task is not None else None
    return folder or Path.cwd().resolve()


def in_nvfp4ctl_project(folder: Path) -> bool:
    """True inside the nvfp4ctl checkout itself, where our own kernels are the user's files."""
    if not (REPO_DIR / "nvfp4ctl").is_dir() or not (REPO_DIR / "kernels").is_dir():
        return False  # an installed wheel: no project around the package
    try:
        folder.resolve().relative_to(REPO_DIR.resolve())
    except ValueError:
        return False
    return True


def users_kernels_dir() -> Path | None:
    """kernels/ in the user's folder; nvfp4ctl's own inside the nvfp4ctl project; else None."""
    folder = user_folder()
    if (folder / "kernels").is_dir():
        return folder / "kernels"
    return REPO_DIR / "kernels" if in_nvfp4ctl_project(folder) else None


def memory_path() -> Path:
    """$NVFP4CTL_MEMORY, else MEMORY.md in the user's folder this command resolved, else in the
    folder of the nearest task.yml or an existing ./MEMORY.md, else nvfp4ctl's cache folder: a
    command that failed before it found the user's folder never leaves a MEMORY.md in a random one."""
    override = env_str(Env.MEMORY)
    if override:
        return Path(override)
    if _Resolved.folder is not None:
        return _Resolved.folder / MEMORY_FILE
    found = find_task_upwards()
    if found is not None:
        return found.parent / MEMORY_FILE
    here = Path.cwd() / MEMORY_FILE
    if here.is_file():
        return here
    return cache_root() / MEMORY_FILE
