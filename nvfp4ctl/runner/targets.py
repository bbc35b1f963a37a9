"""Which `custom_kernel(data) -> c` to run: a GPU MODE submission, a kernel source, or the default.

`resolve_target` runs in the parent and only looks at files and nvidia-smi; `load_target` runs in the
child (it imports torch, builds kernels and may initialise CUDA).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import sys
import traceback
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from nvfp4ctl.errors import UsageError, os_reason
from nvfp4ctl.problems import DEFAULT_PROBLEM
from nvfp4ctl.project import kernels_dir, shipped
from nvfp4ctl.runner.gpu import first_gpu, run_device
from nvfp4ctl.workspace import (TASK_FILE, claim_folder, in_nvfp4ctl_project, lies_in_no_folder, note_target, short_path,
                                task_folder, user_folder)

SUBMISSION, KERNEL, TORCH = "submission", "kernel", "torch"

# Each problem names its compiled default per GPU major version (used only when the file exists) and
# its exact plain-torch fallback (problems/<name>/problem.py: default_kernels, fallback_submission).
SUBMISSION_FILE = "submission.py"
STAND_IN = "no task.yml here or above: nvfp4ctl's shipped task stands in; --task PATH names another problem's"
NO_API_HEADER = "it includes no problem's API header"
DEFAULT_BY_NAME = "default"  # `--kernel default`: nvfp4ctl's own kernel for this GPU, wherever you are


@dataclass(frozen=True)
class TargetSpec:
    kind: str  # "submission" | "kernel" | "torch"
    path: Path
    label: str  # what the user sees: the path and where the choice came from
    source: str = ""  # "--submission", "beside task.yml", "current folder", "default for sm_90", ...
    problem: str = DEFAULT_PROBLEM  # whose C ABI a kernel implements and whose harness modules load

    @property
    def shown(self) -> str:
        """The file as the label names it (as typed for --submission), without the reason."""
        return self.label.removesuffix(f" ({self.source})")


class TaskLike(Protocol):
    path: Path | None
    submission: Path | None

    @property
    def is_users(self) -> bool: ...


def _existing_file(path: Path, flag: str) -> Path:
    if not path.exists():
        raise UsageError(f"{flag} {path}: no such file")
    if not path.is_file():
        raise UsageError(f"{flag} {path}: not a file")
    return path.resolve()


def _spec(kind: str, path: Path, source: str, problem: str, shown: str | None = None) -> TargetSpec:
    return TargetSpec(kind, path, f"{shown or short_path(path)} ({source})", source, problem)


def resolve_target(submission: Path | None, kernel: Path | None, task: TaskLike | None = None, *,
                   read_source: bool = True) -> TargetSpec:
    """The target, noted for the run log. `read_source=False` leaves the submission's text unread, for a
    command that checks the rest of its options first and then calls refuse_broken_target itself."""
    from nvfp4ctl.build.read_once import reading_once

    with reading_once():  # a kernel and its headers are read once, for its problem, CUTLASS and the warnings
        spec = _resolve_target(submission, kernel, task)
        note_target(spec.path, spec.source)
        if read_source:
            refuse_broken_target(spec)
        say_cutlass_lookup(spec)
        say_not_text(spec)
    return spec


def say_cutlass_lookup(spec: TargetSpec) -> None:
    """A $CUTLASS_PATH or $CUTLASS_HOME naming no CUTLASS, which the build of a kernel including CUTLASS passes
    over: said here, in the parent, as the build runs in the child, whose output goes to its log."""
    if spec.kind != KERNEL:
        return
    from nvfp4ctl.build import toolchain
    from nvfp4ctl.build.sources import build_inputs

    passed_over = toolchain.look_up_cutlass()[1]
    if not passed_over:  # nothing to say: the kernel is not read again
        return
    try:
        needs_cutlass = build_inputs(spec.path).needs_cutlass
    except (UsageError, OSError):  # a kernel that cannot be read or has no binding: its build in the child says so
        return
    if needs_cutlass:
        toolchain.say_cutlass_lookup(passed_over)


def say_not_text(spec: TargetSpec) -> None:
    """A kernel, or a local header its build reads, that is not UTF-8 text: `nvfp4ctl build`'s warning, in its
    words (kernel_not_text_warnings), said here, in the parent, as the build runs in a child or a worker whose
    output is read only when it fails."""
    if spec.kind != KERNEL:
        return
    from nvfp4ctl.build.sources import kernel_not_text_warnings
    from nvfp4ctl.console import get_console

    for warning in kernel_not_text_warnings(spec.path):
        get_console().warn(warning)


def refuse_broken_target(spec: TargetSpec) -> None:
    """A submission that is not Python or has no custom_kernel: said now, before a child or a GPU."""
    if spec.kind == SUBMISSION:
        from nvfp4ctl.runner.entry_point import refuse_broken_submission

        refuse_broken_submission(spec.path, spec.shown)


def _resolve_target(submission: Path | None, kernel: Path | None, task: TaskLike | None = None) -> TargetSpec:
    """What to run, first match wins: --submission / --kernel > task.yml's `submission:` > the
    submission.py beside the task.yml in use (GPU MODE's layout) > ./submission.py > the default
    kernel for this GPU, which only the user's own kernels/ folder, the nvfp4ctl project itself or
    `--kernel default` provide. Anywhere else, finding nothing is an error, never a run of ours."""
    problem = getattr(task, "problem", None) or DEFAULT_PROBLEM
    if submission is not None and kernel is not None:
        raise UsageError("--submission and --kernel are exclusive: pass one of them")
    if submission is not None:
        spec = _submission(submission, "--submission", "--submission", problem)
        refuse_submission_of_other_problem(spec, Path(os.path.abspath(submission)), f"--submission {submission}", task)
        return spec
    if kernel is not None:
        if str(kernel) == DEFAULT_BY_NAME:
            return default_target(problem, shipped("kernels"))
        resolved = _existing_file(kernel, "--kernel")
        if resolved.suffix != ".cu":
            raise UsageError(f"--kernel {kernel}: expected a CUDA source (.cu); use --submission for .py")
        if task is None or task.is_users:  # nvfp4ctl's shipped task was chosen by the kernel (task_for_kernel)
            refuse_other_problem(kernel, resolved, problem, task)
        return TargetSpec(KERNEL, resolved, f"{kernel} (--kernel)", "--kernel", problem)
    found = find_user_submission(task)
    if found is not None:
        refuse_submission_of_other_problem(found, found.path, found.label, task)
        return found
    folder = user_folder()
    if in_nvfp4ctl_project(folder):
        return default_target(problem, kernels_dir())
    own = _default_in(problem, folder / "kernels")  # the user's own kernels/ in our layout
    if own is not None:
        claim_folder(folder)
        return own
    looked = ("no `submission:` in task.yml, no submission.py beside it or here" if task is not None and task.is_users
              else "no submission.py here and no task.yml in this folder or above")
    raise UsageError(f"no submission to run in {short_path(folder) or '.'}: {looked}; pass --submission PATH,"
                     f" or --kernel {DEFAULT_BY_NAME} for nvfp4ctl's own kernel")


def task_for_kernel(task: Any, kernel: Path | None) -> Any:
    """The task to run a `--kernel` on: as for a `--submission` (task_for_submission), the task.yml of the
    folder it lies in, upwards, where nvfp4ctl's shipped task would stand in (`tune --kernel dual/kernels/k.cu`
    from the folder above runs on dual/task.yml, as it does from dual/), said "beside the kernel"; a task.yml
    found from the current folder stays for the same problem (a warning) and is a usage error for another.
    With none of the user's, a kernel written for another problem than the shipped GEMM task's gets that
    problem's shipped task, so `check --kernel my_gemv.cu` runs the GEMV's tests; the kernel's problem is then
    read here alone, as resolve_target has nothing left to refuse, and why is kept for the header lines
    (shipped_because). A task of the user's is never replaced by a shipped one (refuse_other_problem says when
    it does not fit); `--kernel default` is the default kernel of the shipped task's problem, which stands in,
    said so (STAND_IN)."""
    from nvfp4ctl.task import load_shipped_task
    from nvfp4ctl.workspace import FROM_KERNEL

    if kernel is None:
        return task
    if str(kernel) == DEFAULT_BY_NAME:
        return task if task.is_users else replace(task, shipped_because=STAND_IN)
    if kernel.suffix != ".cu" or not kernel.is_file():
        return task  # resolve_target says what is wrong with the file
    # nvfp4ctl's own kernels lie under its shipped GEMM task.yml, which is no task of theirs (the GEMV's naive kernel)
    own_folders = _task_of_its_folder(task, kernel, f"--kernel {kernel}", FROM_KERNEL, "kernel", shipped_is_none=True)
    if own_folders is not None:
        return own_folders
    if task.is_users:
        return task
    own = _kernel_problem(kernel, kernel.resolve())
    if own is not None and own.name != task.problem:
        task = load_shipped_task(own.task_file)
    return replace(task, shipped_because=kernel_because(own))


def kernel_problem_name(own: Any | None) -> str:
    """The problem a kernel is judged by, `own` being its build.sources.kernel_problem: the GEMM's where it
    includes no problem's API header, as the binding built with it is then the GEMM's."""
    return own.name if own is not None else DEFAULT_PROBLEM


def kernel_because(own: Any | None) -> str:
    """Why a kernel is `own`'s (build.sources.kernel_problem), as the header lines say it: the API header it
    includes, where a submission's say the header, name or export line that picked its task."""
    if own is None:  # the binding built with it is then the GEMM's
        return f"{NO_API_HEADER}: the GEMM's C ABI calls it"
    return f"it includes {own.kernel_api.header}"


def task_for_submission(task: Any, submission: Path | None, named: str | None = None, given_as: str | None = None) -> Any:
    """The task to run a `--submission` on, where it lies under a task.yml of its own that is not the
    one in use (a GPU MODE folder next to the one the user works in): _task_of_its_folder. With no
    task.yml at all, the shipped task of the problem the file names itself (task_for_its_problem).
    `named`: the file as the command's lines name it (build's argument), default `--submission PATH`;
    `given_as`: why the task beside it is in use, as the header says it (default: beside the --submission)."""
    from nvfp4ctl.workspace import FROM_TARGET

    if submission is None or not submission.is_file():
        return task
    own = _task_of_its_folder(task, submission, named or f"--submission {submission}", given_as or FROM_TARGET,
                              "submission")
    return task_for_its_problem(task, submission) if own is None else own


# What a run of a file given by path does with the task.yml of its own folder (ItsFolder.verdict)
TAKES_ITS_OWN = "takes its own"  # no task.yml of the user's in use: the file's own stands in for nvfp4ctl's shipped one
ON_PURPOSE = "on purpose"  # --task, $NVFP4CTL_TASK: the task in use stays
SAME_PROBLEM = "same problem"  # found from the current folder, for the same problem: the task in use stays
OTHER_PROBLEM = "other problem"  # found from the current folder, for another problem: the file does not fit it
UNREAD = "unread"  # its own cannot be read or names no problem: the task in use stays


@dataclass(frozen=True)
class ItsFolder:
    """The task.yml above a file given by path that is not the one in use, its problem (None where it cannot be
    read) and what a run of the file does with it (TAKES_ITS_OWN, ...)."""
    task_file: Path
    problem: str | None
    verdict: str


def its_folders_task(task: Any, in_use_problem: str | None, file: Path, *,
                     shipped_is_none: bool = False) -> ItsFolder | None:
    """The one rule for a file given by path (a submission, a kernel) that lies under a task.yml of its own, not
    the one in use (`task`, whose problem is `in_use_problem`); None where there is none such (`shipped_is_none`:
    nor one but nvfp4ctl's shipped task.yml, which its own files lie under). nvfp4ctl's shipped task gives way to
    that task.yml, as a folder's own task.yml always does; a task chosen on purpose (--task, $NVFP4CTL_TASK)
    stays, and so does one found from the current folder for the same problem; for another problem the file
    does not fit the task in use. check, bench, tune and export act on it through _task_of_its_folder, and build
    logs a kernel's run beside the task it says (kernels_task_file)."""
    from nvfp4ctl.project import shipped_task_path
    from nvfp4ctl.task import problem_of
    from nvfp4ctl.workspace import FROM_ENV, FROM_FLAG, find_task_upwards

    # the task.yml above the file as named, as lint finds it: Python runs a link by its own path (__file__),
    # so gemm/submission.py -> ../dual/submission.py is gemm's
    own = find_task_upwards(file.absolute().parent, links_kept=True)
    if own is None or (shipped_is_none and own.resolve() == shipped_task_path().resolve()):
        return None
    if task.path is not None and own.resolve() == task.path.resolve():
        return None
    if not task.is_users:
        return ItsFolder(own, None, TAKES_ITS_OWN)
    problem = problem_of(own)
    if task.source in (FROM_FLAG, FROM_ENV):
        return ItsFolder(own, problem, ON_PURPOSE)
    if problem is None:
        return ItsFolder(own, problem, UNREAD)
    return ItsFolder(own, problem, SAME_PROBLEM if problem == in_use_problem else OTHER_PROBLEM)


def kernels_task_file(kernels: Sequence[Path], task_flag: Path | None) -> Path | None:
    """The task.yml a build of kernel sources given by path logs beside: for each kernel, the one check runs it on
    (its_folders_task), or, where check refuses it for the task found from the current folder being another
    problem's, its own folder's, as build judges each kernel by its API header. None where that is no task.yml of
    the user's, or not one task.yml for them all: the log stays where it was."""
    from nvfp4ctl.task import problem_of
    from nvfp4ctl.workspace import locate_task

    in_use = locate_task(task_flag)
    in_use_problem = problem_of(in_use.path) if in_use.is_users else None
    homes = set()
    for kernel in kernels:
        found = its_folders_task(in_use, in_use_problem, kernel, shipped_is_none=True)
        if found is not None and found.verdict in (TAKES_ITS_OWN, OTHER_PROBLEM):
            homes.add(found.task_file)
        else:
            homes.add(in_use.path if in_use.is_users else None)
    return homes.pop() if len(homes) == 1 else None


def _task_of_its_folder(task: Any, file: Path, named: str, given_as: str, noun: str, *,
                        shipped_is_none: bool = False) -> Any | None:
    """The task for a file given by path (a submission, a kernel: `noun`) that lies under a task.yml of its own,
    not the one in use, by its_folders_task's rule; None where there is none such, for the caller's own choice.
    A task chosen on purpose stays, with a warning where the file's own task.yml is another problem's (each test
    then fails to unpack inputs it was not written for). A task.yml found from the current folder stays if it is
    for the same problem (a warning names the other file); for another problem the run would fail every test on
    inputs the file does not unpack, so that is a usage error saying which task to pass. `named`: the file as the
    command's lines name it; `given_as`: why the task beside it is in use, as the header says it."""
    from nvfp4ctl.console import get_console
    from nvfp4ctl.task import load_task

    found = its_folders_task(task, task.problem, file, shipped_is_none=shipped_is_none)
    if found is None:
        return None
    own, problem = found.task_file, found.problem
    if found.verdict == TAKES_ITS_OWN:  # loading it makes its folder the user's: the run log goes beside it
        return replace(load_task(own), source=given_as)
    if found.verdict == ON_PURPOSE:  # it stays, but not in silence where it cannot fit
        if problem is not None and problem != task.problem:
            get_console().warn(f"{named}: the task.yml beside it ({short_path(own)}) is {problem},"
                               f" the task in use, {task_label(task)}, {task.problem}: each test hands it"
                               f" {task.problem}'s inputs")
        return task
    if found.verdict == UNREAD:
        return task
    in_use = task_label(task)
    if found.verdict == OTHER_PROBLEM:
        raise UsageError(f"{named}: the task in use, {in_use}, is {task.problem}, but the task.yml"
                         f" beside the {noun} ({short_path(own)}) is {problem}; pass --task {short_path(own)},"
                         f" or run from {short_path(own.parent) or '.'}")
    get_console().warn(f"{named}: runs on {in_use}, not on the task.yml beside it"
                       f" ({short_path(own)}); pass --task {short_path(own)} to use that one")
    return task


def task_for_target(task: Any, submission: Path | None, kernel: Path | None) -> Any:
    """check's and bench's task for their target: a --kernel's problem's (task_for_kernel), a --submission's
    (task_for_submission), and with neither, the submission.py found here judged by its own problem where
    only nvfp4ctl's shipped task stands in (task_for_its_problem); with no submission found, the default kernel
    is that task's problem's, said as a stand-in (STAND_IN)."""
    task = task_for_kernel(task, kernel)
    if submission is not None or kernel is not None:
        return task_for_submission(task, submission)
    if task.is_users:
        return task
    found = find_user_submission(task)
    return replace(task, shipped_because=STAND_IN) if found is None else task_for_its_problem(task, found.path)


def task_for_its_problem(task: Any, submission: Path) -> Any:
    """Where only nvfp4ctl's shipped task stands in (the user has no task.yml), the shipped task of the
    problem the submission names itself (_own_problem), so an exported dual GEMM is run on the dual
    GEMM's tests, not handed the GEMM's inputs; the reason is kept for the header lines (shipped_because).
    A task of the user's is returned as it is."""
    if task.is_users:
        return task
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.task import load_shipped_task

    problem, why = _own_problem(task, submission)
    if problem != task.problem:
        task = load_shipped_task(get_problem(problem).task_file)
    return replace(task, shipped_because=why)


def _own_problem(task: Any, submission: Path) -> tuple[str, str]:
    """(problem, why) for a submission the shipped `task` stands in for: the problem the file names itself,
    as lint reads it (an export header, one problem's C ABI in its code, a file name starting with a
    problem's name), else an init starter's first line, else the task's, said as a stand-in (STAND_IN)."""
    from nvfp4ctl.lint.submission import STARTER_REASON, names_its_problem, starter_problem

    try:
        text = submission.read_text(encoding="utf-8", errors="replace")
    except OSError:  # the command names what is wrong with the file
        return task.problem, STAND_IN
    # __file__ as Python gives it, for a load() source made from it: a link's own path, not its target's
    if (own := names_its_problem(text, Path(os.path.abspath(submission)))) is not None:
        return own
    if (started := starter_problem(text)) is not None:
        return started, STARTER_REASON
    return task.problem, STAND_IN


def refuse_other_problem(kernel: Path, resolved: Path, problem: str, task: TaskLike | None,
                         default_for: str | None = None) -> None:
    """A kernel implements the C ABI of the problem whose API header it includes (none: the GEMM's);
    run on another problem's inputs it would fail every test, or crash, only after its build, and
    exported for one it fails on that problem's leaderboard (check and export refuse it alike).
    `default_for`: the command took the kernel itself, no --kernel was typed ("export's default"), so
    the line names the file it found and says how to pass another."""
    from nvfp4ctl.problems import problem_names

    if problem not in problem_names():  # a problem defined elsewhere (module:attribute): its own business
        return
    own = _kernel_problem(kernel, resolved)
    own_name = kernel_problem_name(own)
    if own_name == problem:
        return
    why = kernel_because(own)
    where = short_path(task.path) if task is not None and task.path is not None else "the task"
    if default_for is not None:
        raise UsageError(f"{short_path(kernel)} ({default_for}, no --kernel given) is an {own_name} kernel ({why}),"
                         f" but {where} is for {problem}: pass --kernel PATH with an {problem} kernel, or --task with"
                         f" an {own_name} task.yml")
    raise UsageError(f"--kernel {kernel} is an {own_name} kernel ({why}), but {where} is for {problem}:"
                     f" pass --task with an {own_name} task.yml")


def refuse_submission_of_other_problem(spec: TargetSpec, as_run: Path, named: str, task: TaskLike | None) -> None:
    """A submission whose code names another problem than the task's (an export header, one problem's C ABI:
    a GEMM export linked into a GEMV folder) fails every test or crashes on the task's inputs, after its build:
    refused before any test runs, as a --kernel of another problem is (refuse_other_problem), naming the task.yml
    to pass where the file's own folder has one of its problem. A file named for another problem alone is run as
    the task's: its name is the user's choice, its code may be the task's. One that unpacks another problem's
    input on every call is refused too (_refuse_foreign_input). `as_run`: the file as Python runs it (a link's
    own path: load() sources lie beside it)."""
    from nvfp4ctl.lint.submission import PLAIN_REASONS, names_its_problem
    from nvfp4ctl.problems import problem_names

    if spec.problem not in problem_names():  # a problem defined elsewhere (module:attribute): its own business
        return
    try:
        text = as_run.read_text(encoding="utf-8", errors="replace")
    except OSError:  # refuse_broken_target says what is wrong with the file
        return
    own = names_its_problem(text, as_run)
    if own is not None and own[0] != spec.problem and own[1] not in PLAIN_REASONS:
        own_problem, why = own
        where = short_path(task.path) if task is not None and task.path is not None else "the task"
        raise UsageError(f"{named} is an {own_problem} submission ({why}), but {where} is for {spec.problem}:"
                         f" {_task_to_pass(spec.path, own_problem)}; nothing was run")
    _refuse_foreign_input(spec, text, named, task)


def _refuse_foreign_input(spec: TargetSpec, text: str, named: str, task: TaskLike | None) -> None:
    """A submission whose custom_kernel unpacks another problem's input on every call (lint's NV006: a grouped
    GEMM's 4 names, a dual GEMM's 10) fails on every test of the task's (ValueError at the unpacking, or an
    AssertionError of a length check before it), reported as a crash of each: refused before any test, naming
    the problem it looks like and the task to run it on, in words true whichever it raises. Where no task.yml
    of the user's names the problem (nvfp4ctl's shipped GEMM task stands in), init writes one. A count that fits
    several problems or none is left to the run."""
    from nvfp4ctl.lint.foreign_input import foreign_input
    from nvfp4ctl.problems import get_problem

    found = foreign_input(text, spec.problem)
    if found is None:
        return
    size = len(get_problem(spec.problem).layout.names)
    looks = (f"{named} looks like an {found.problem} submission (custom_kernel unpacks {found.named} names from the"
             f" input on every call, line {found.line}; {found.problem}'s input has {found.named}, {spec.problem}'s"
             f" {size}, so it cannot take {spec.problem}'s input)")
    if task is not None and task.is_users and task.path is not None:
        raise UsageError(f"{looks}, but {short_path(task.path)} is for {spec.problem}:"
                         f" {_task_to_pass(spec.path, found.problem)}; nothing was run")
    raise UsageError(f"{looks}, and no task.yml names its problem ({spec.problem}'s shipped task stands in): pass"
                     f" --task {short_path(get_problem(found.problem).task_file)} (nvfp4ctl's), or the one"
                     f" `nvfp4ctl init --problem {found.problem} DIR` writes; nothing was run")


def _task_to_pass(resolved: Path, problem: str) -> str:
    """`pass --task ../gemm/task.yml` where the folder of the file a link leads to has a task.yml of
    `problem`, else the words for any task.yml of it."""
    from nvfp4ctl.task import problem_of
    from nvfp4ctl.workspace import find_task_upwards

    beside = find_task_upwards(resolved.parent)
    if beside is not None and problem_of(beside) == problem:
        return f"pass --task {short_path(beside)}"
    return f"pass --task with an {problem} task.yml"


def _kernel_problem(kernel: Path, resolved: Path) -> Any | None:
    """build.sources.kernel_problem of a --kernel (`resolved`), an unreadable kernel or header as one line."""
    from nvfp4ctl.build.sources import kernel_problem

    try:
        return kernel_problem(resolved)
    except OSError as error:  # an unreadable kernel or header: one line, as the build would say
        raise UsageError(f"--kernel {kernel}: cannot read it ({os_reason(error, resolved)})") from None


def refuse_unloadable(target: TargetSpec) -> None:
    """A kernel target needs a CUDA build of torch on any device (its module links against torch's CUDA
    libraries; NVFP4CTL_DEVICE=cpu runs it too): say so now, not after its build (seconds, a cache entry).
    A target that compiles needs a TMPDIR nvcc can write in: said now too, not as the child's compile error."""
    if target.kind == KERNEL:
        from nvfp4ctl.build.loader import require_cuda_torch

        require_cuda_torch()
    if _compiles(target):
        from nvfp4ctl.build.temporary_folder import require_usable_tmpdir

        require_usable_tmpdir()


def _compiles(target: TargetSpec) -> bool:
    """Whether loading `target` may run nvcc: a kernel with no build of its declared arch in the cache (one
    with none declared builds for the GPU, which the child alone looks at), or a submission with load_inline/load
    calls (torch keeps their builds, and decides itself whether they compile again)."""
    if target.kind == KERNEL:
        from nvfp4ctl.build.builder import has_build
        from nvfp4ctl.build.sources import declared_arch

        try:
            own = declared_arch(target.path)
        except OSError:  # unreadable: its build says so, in its own words
            return True
        return own is None or has_build(target.path, own) is not True
    if target.kind != SUBMISSION:
        return False
    from nvfp4ctl.build.submission_sources import find_sources

    try:
        return bool(find_sources(target.path).extensions)
    except UsageError:  # read as check reads it, which says what is wrong with it
        return False


def find_user_submission(task: TaskLike | None) -> TargetSpec | None:
    """The user's submission by the folder rules (no flags): task.yml's `submission:`, the
    submission.py beside that task.yml, the submission.py in the current folder."""
    problem = getattr(task, "problem", None) or DEFAULT_PROBLEM
    users = task is not None and task.is_users
    # the reason names the task file by its name (other.yml): its path is on the same line, after "task"
    task_name = task.path.name if task is not None and task.path is not None else TASK_FILE
    if users and task.submission is not None:
        # the file it names is checked here, not when task.yml is read: the error points at its line
        written = f"{getattr(task, 'submission_at', task_name)}: submission:"
        return _submission(task.submission, written, f"{task_name} submission:", problem)
    candidates: list[tuple[Path, str]] = []
    # a piped task (`--task <(cat task.yml)`, /dev/fd/63) stands for the current folder: "beside 63" named a
    # file descriptor as if it were a folder's task.yml
    if users and task.path is not None and not lies_in_no_folder(task.path):
        candidates.append((task_folder(task.path) / SUBMISSION_FILE, f"beside {task_name}"))
    candidates.append((Path.cwd().resolve() / SUBMISSION_FILE, "current folder"))
    for path, source in candidates:
        if path.is_file():
            claim_folder(path.parent)
            return _spec(SUBMISSION, path.resolve(), source, problem)
    return None


def _submission(path: Path, flag: str, source: str, problem: str) -> TargetSpec:
    resolved = _existing_file(path, flag)
    if resolved.suffix != ".py":
        raise UsageError(f"{flag} {path}: expected a Python file (submission.py)")
    return _spec(SUBMISSION, resolved, source, problem, str(path) if flag == "--submission" else None)


def _defaults(problem: str) -> tuple[dict[int, str], str]:
    """The problem's kernels per GPU major and its exact plain-torch fallback (paths under kernels/)."""
    from nvfp4ctl.problems import resolve_problem

    spec = resolve_problem(problem)
    return dict(spec.default_kernels), spec.fallback_submission


def default_target(problem: str = DEFAULT_PROBLEM, kernels: Path | None = None) -> TargetSpec:
    """The problem's compiled kernel for this machine's GPU from `kernels` (ours unless the user
    keeps a kernels/ folder in our layout), else its exact torch fallback."""
    found = _default_in(problem, kernels or kernels_dir()) or _default_in(problem, shipped("kernels"))
    if found is None:
        raise UsageError(f"no default target for {problem}: its torch fallback is missing from"
                         f" {shipped('kernels')}; pass --submission or --kernel")
    return found


def _default_in(problem: str, kernels: Path) -> TargetSpec | None:
    default_kernels, fallback_name = _defaults(problem)
    gpu = first_gpu() if run_device() == "cuda" else None
    if gpu is not None and gpu.major in default_kernels:
        source = kernels / default_kernels[gpu.major]
        if source.is_file():
            return _spec(KERNEL, source, f"default for {gpu.arch}", problem)
    fallback = kernels / fallback_name
    if fallback.is_file():
        return _spec(TORCH, fallback, f"exact torch fallback: no {problem} kernel for this GPU", problem)
    return None


def task_label(task: TaskLike) -> str:
    """"task.yml (found from the current folder)": the file as the user would type it, and why."""
    shown = short_path(task.path) if task.path else "task.yml"
    source = getattr(task, "source", "")
    return f"{shown} ({source})" if source else shown


def task_label_and_reason(task: TaskLike) -> str:
    """task_label, and for a shipped task nvfp4ctl picked by the submission, why that one: the header
    lines' "task .../nvfp4_dual_gemm/task.yml (shipped with nvfp4ctl) (its nvfp4ctl export header)"."""
    reason = getattr(task, "shipped_because", "")
    return f"{task_label(task)} ({reason})" if reason else task_label(task)


# --- child side -----------------------------------------------------------------------------------

KernelFn = Callable[[tuple], Any]


def load_target(spec: TargetSpec) -> KernelFn:
    """The callable `custom_kernel(data) -> c` for a target (runs in the child)."""
    if spec.kind == KERNEL:
        return _load_kernel(spec.path, spec.problem)
    return import_submission(spec.path, spec.problem)


def _load_kernel(source: Path, problem: str = DEFAULT_PROBLEM) -> KernelFn:
    return load_kernel(source, problem)


def load_kernel(source: Path, problem: str = DEFAULT_PROBLEM, arch: str | None = None,
                defines: tuple[str, ...] = ()) -> KernelFn:
    """A kernel source built (cached) and called through its problem's C ABI: its entry point on
    the problem's tuple elements. `arch`/`defines` select one build (tune's candidates)."""
    from nvfp4ctl.build import load_kernel_module  # builds (cached) and imports the extension
    from nvfp4ctl.problems import resolve_problem

    spec = resolve_problem(problem)
    if spec.kernel_api is None:
        raise UsageError(f"--kernel: {problem} has no kernel C ABI yet; use --submission")
    custom_kernel = spec.kernel_caller(load_kernel_module(source, arch, defines))  # no wrapper: it runs every call
    custom_kernel.__qualname__ = f"{source.name}:{spec.kernel_api.function}"
    return custom_kernel


# Modules of GPU MODE's harness folder that submissions sometimes import besides task.py.
HARNESS_MODULES = frozenset({"utils", "reference", "eval"})


def import_submission(path: Path, problem: str | None = None) -> KernelFn:
    """Import a GPU MODE submission.py by path and return its custom_kernel."""
    from nvfp4ctl.problems.common.harness import put_on_import_path

    harness = _harness_dir(problem)
    put_on_import_path(path.parent, harness)
    if harness is None and not (path.parent / "task.py").is_file() and "task" not in sys.modules:
        sys.modules["task"] = _task_shim()
    digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:10]  # bytes: a name not UTF-8 has no UTF-8 text
    name = f"nvfp4ctl_target_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        _refuse_users_syntax_error(error, path.parent)
        raise
    except OSError as error:
        if (why := _no_cuda_build(error)) is not None:
            raise UsageError(why) from None
        raise
    except ModuleNotFoundError as missing:
        if missing.name in HARNESS_MODULES and not (path.parent / f"{missing.name}.py").is_file():
            # reworded in place, so the traceback still ends at the submission's import line
            missing.msg = (f"No module named '{missing.name}': {path.name} imports GPU MODE's harness module "
                           f"{missing.name}.py, which nvfp4ctl does not provide; put the harness's copy next to "
                           f"{path.name} (its folder is on the import path) or drop the import")
            missing.args = (missing.msg,)
            raise
        from nvfp4ctl.missing_package import is_absent, not_installed

        if missing.name and is_absent(missing.name):  # a package this Python lacks: its setup, not a crash
            raise UsageError(f"it imports {missing.name}, and {not_installed(missing.name, sys.executable)}") from missing
        raise
    return _entry_point(module, path)


def _no_cuda_build(error: OSError) -> str | None:
    """Why a load_inline/load of the submission's could not build CUDA on this machine, as `--kernel`'s
    refusal says it (one line, exit 2: this machine's setup, not the code), or None for another error.

    torch's cpp_extension raises "CUDA_HOME environment variable is not set" where it finds no toolkit,
    and always where torch itself has no CUDA (it never looks for one then)."""
    frames = traceback.extract_tb(error.__traceback__)
    if "CUDA_HOME" not in str(error) or not any(Path(f.filename).name == "cpp_extension.py" for f in frames):
        return None
    from nvfp4ctl.build.loader import NO_CUDA_TORCH
    from nvfp4ctl.build.toolchain import NVCC_MISSING

    torch = sys.modules.get("torch")
    return NO_CUDA_TORCH if torch is not None and torch.version.cuda is None else NVCC_MISSING


def _entry_point(module: types.ModuleType, path: Path) -> KernelFn:
    """The module's custom_kernel; none, or one that is no function, is the file's fault (exit 2),
    where the parent's reading of the text could not tell (a star import, a value bound at import)."""
    from nvfp4ctl.errors import UnloadableSubmission
    from nvfp4ctl.runner import entry_point

    kernel = getattr(module, entry_point.ENTRY_POINT, None)
    if callable(kernel):
        return kernel
    shown = short_path(path)
    if not hasattr(module, entry_point.ENTRY_POINT):
        try:
            tree = ast.parse(path.read_bytes(), str(path))
        except (OSError, SyntaxError, ValueError):
            tree = ast.Module(body=[], type_ignores=[])
        raise UnloadableSubmission(entry_point.missing_message(tree, shown))
    raise UnloadableSubmission(entry_point.not_callable_message(path, shown, kernel))


INSTALLED_PACKAGE_FOLDERS = frozenset({"site-packages", "dist-packages"})


def _refuse_users_syntax_error(error: SyntaxError, folder: Path) -> None:
    """A SyntaxError in a Python file of the user's (the submission, or a helper beside it that it
    imports) is their input, said as FILE:LINE; one elsewhere (an installed package, also one in a
    virtual environment inside the submission's folder) stays as it is."""
    from nvfp4ctl.errors import UnloadableSubmission

    if not error.filename:
        return
    file, folder = Path(error.filename).resolve(), folder.resolve()
    if not (file.is_file() and file.is_relative_to(folder)):
        return
    if not INSTALLED_PACKAGE_FOLDERS & set(file.relative_to(folder).parts):
        raise UnloadableSubmission(f"{short_path(file)}:{error.lineno or 1}: not valid Python ({error.msg})") from None


def _harness_dir(problem: str | None) -> Path | None:
    if problem is None:
        return None
    from nvfp4ctl.problems import resolve_problem

    folder = resolve_problem(problem).harness_dir
    return folder if (folder / "task.py").is_file() else None


def _task_shim() -> types.ModuleType:
    """Stand-in for GPU MODE's task.py, which submissions import for their type hints."""
    shim = types.ModuleType("task")
    shim.__doc__ = "nvfp4ctl's stand-in for GPU MODE's task.py (type hints only)."
    shim.input_t = TypeVar("input_t", bound=tuple)  # type: ignore[attr-defined]
    shim.output_t = TypeVar("output_t")  # type: ignore[attr-defined]
    shim.TestSpec = dict  # type: ignore[attr-defined]
    return shim
