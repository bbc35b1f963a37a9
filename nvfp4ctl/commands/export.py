"""`nvfp4ctl export`: write a single-file GPU MODE submission.py from a kernel."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from nvfp4ctl.console import get_console
from nvfp4ctl.errors import UsageError
from nvfp4ctl.kernel_cells import byte_size
from nvfp4ctl.options import Choice, choice, file_to_write, path
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.problems import DEFAULT_PROBLEM
from nvfp4ctl.project import shipped
from nvfp4ctl.runner.targets import DEFAULT_BY_NAME, SUBMISSION_FILE
from nvfp4ctl.usage_hints import shell_path
from nvfp4ctl.workspace import note_target, short_path, task_folder, users_kernels_dir
from nvfp4ctl.words import plural

LEADERBOARD_ARCH = "sm_100a"  # the B200 leaderboard


class ArchChoice(Choice):
    sm_90a = "sm_90a"
    sm_100a = "sm_100a"


B200_MAJOR = 10
H100_MAJOR, H100_ARCH = 9, "sm_90a"
TAKEN_BY_DEFAULT = f"--kernel {DEFAULT_BY_NAME}"  # why the run log's target is the kernel it names


def default_kernel(kernel: Path | None, problem: str = DEFAULT_PROBLEM, arch: str | None = None) -> Path:
    """--kernel PATH; `--kernel default`: ours for the task's problem; none: the problem's B200
    kernel in the user's kernels/ folder (ours inside the nvfp4ctl project). `arch` sm_90a (--arch) takes
    the problem's H100 kernel instead, as check does on an H100: the B200's traps on every call there."""
    if kernel is not None and str(kernel) != DEFAULT_BY_NAME:
        return kernel
    kernels = shipped("kernels") if kernel is not None else users_kernels_dir()
    if kernels is None:
        ours = (" or --kernel default for nvfp4ctl's own B200 kernel" if _default_name(problem)
                else _naive_hint(problem) + _plain_torch_hint(problem))
        raise UsageError(f"no kernel to export here (no kernels/ folder): pass --kernel PATH{ours}")
    name = _default_name(problem)
    if name is None:
        raise UsageError(_no_default_for(problem, None if kernel is not None else kernels))
    h100 = _default_name(problem, H100_MAJOR) if arch == H100_ARCH else None
    return kernels / (h100 or name)


def ours_for_arch(problem: str, arch: str) -> str:
    """The export of nvfp4ctl's own `problem` kernel written for `arch`, in words with its command, as a
    refusal's advice for a kernel written for the other arch; "" where nvfp4ctl ships none for it."""
    gpu, major = ("H100", H100_MAJOR) if arch == H100_ARCH else ("B200", B200_MAJOR)
    if _default_name(problem, major) is None:
        return ""
    return f" (nvfp4ctl's {gpu} one: `nvfp4ctl export --kernel {DEFAULT_BY_NAME} --arch {arch}`)"


def refuse_other_arch(source: Path, arch: str | None) -> str | None:
    """A UsageError where --arch names another arch than the one the kernel is written for (its folder or
    `arch=` line) and its code holds that arch's own instructions (wgmma for sm_90a, tcgen05 for sm_100a, as
    build finds them: tensor_code_use), as its build for --arch fails or keeps only a side path: an sm_100a
    tcgen05 kernel exported for sm_90a traps on every call on an H100. Code without them (mma.sync, plain CUDA)
    compiles and runs on either: the warning to say that its mark names another arch, else None."""
    from nvfp4ctl.build.arch_names import TENSOR_INSTRUCTIONS
    from nvfp4ctl.build.sources import NO_TENSOR_OP, marks_in, written_for
    from nvfp4ctl.build.tensor_code_use import kernel_other_arch_code

    own = written_for(source)
    if arch is None or own is None or own[0] == arch:
        return None
    code = source.read_text(errors="replace")  # one read for the mark and the code's instructions
    if marks_in(code, NO_TENSOR_OP):
        return None
    holds = kernel_other_arch_code(source, arch, code)
    if holds is not None:
        raise UsageError(f"{source.name} is an {own[0]} kernel ({own[1]}), not one for --arch {arch}: its {holds[1]}"
                         f" would not run there; pass --arch {holds[0]} or a kernel written for {arch}; nothing was written")
    what = next(what for target, what, _ in TENSOR_INSTRUCTIONS if target == own[0])
    return (f"{source.name} is marked as an {own[0]} kernel ({own[1]}) but holds no {what}: exported for --arch"
            f" {arch} as it is (`nvfp4ctl build --arch {arch} {short_path(source)}` checks that it compiles there)")


def _no_default_for(problem: str, users_kernels: Path | None) -> str:
    """Why there is no kernel to take for a problem nvfp4ctl ships no B200 kernel for: the default is
    a file name per problem (ours), so a kernels/ folder of the user's is not searched by content; its
    kernels for the problem are named as the --kernel to pass, and so is nvfp4ctl's plain-CUDA one."""
    defaults = _b200_defaults()
    if users_kernels is None:  # `--kernel default`
        return (f"--kernel default: nvfp4ctl ships no B200 kernel for {problem} (export's default is {defaults});"
                f" pass --kernel PATH{_naive_hint(problem)}")
    found = [short_path(path) for path in _kernels_for(problem, users_kernels)]
    hint = f" ({problem} kernels there: {', '.join(found[:3])}{', ...' if len(found) > 3 else ''})" if found else ""
    return (f"no default kernel for {problem}: export's default is {defaults}, taken from"
            f" {short_path(users_kernels)}/ (yours) or nvfp4ctl's own kernels; pass --kernel PATH{hint}{_naive_hint(problem)}"
            f"{_plain_torch_hint(problem)}")


def _plain_torch_hint(problem: str) -> str:
    """`--kernel default` where it exports nvfp4ctl's plain-torch submission; "" where there is none."""
    return ", or --kernel default for nvfp4ctl's exact plain-torch submission" if _plain_torch(problem) else ""


def _b200_defaults() -> str:
    """Export's default kernel per problem, in words: `kernels/sm100/x.cu for nvfp4_gemm, none for the others`."""
    from nvfp4ctl.problems import all_problems

    problems = all_problems()
    named = [f"kernels/{each.default_kernels[B200_MAJOR]} for {each.name}" for each in problems
             if B200_MAJOR in each.default_kernels]
    if not named:
        return "none, for any problem"
    return ", ".join(named) + (", none for the others" if len(named) < len(problems) else "")


def _naive_hint(problem: str) -> str:
    """The plain-CUDA kernel nvfp4ctl ships for `problem` (kernels/naive/), as the --kernel to pass: its
    `arch=` line says sm_90a, so --arch sm_100a goes with it for the B200; "" where there is none."""
    found = _kernels_for(problem, shipped("kernels") / "naive")
    if not found:
        return ""
    return f", or nvfp4ctl's plain-CUDA kernel: --kernel {short_path(found[0])} --arch {LEADERBOARD_ARCH}"


def _kernels_for(problem: str, folder: Path) -> list[Path]:
    """The .cu files under `folder` that include `problem`'s API header (its C ABI), sorted."""
    from nvfp4ctl.build.sources import kernel_problem

    found = []
    for path in sorted(folder.rglob("*.cu")):
        try:
            own = kernel_problem(path)
        except (OSError, UsageError):  # an unreadable file is no candidate to name
            continue
        if own is not None and own.name == problem:
            found.append(path)
    return found


def _default_name(problem: str, major: int = B200_MAJOR) -> str | None:
    """The file name of nvfp4ctl's own kernel for `problem` on the GPU of compute capability `major`."""
    from nvfp4ctl.problems import get_problem

    return get_problem(problem).default_kernels.get(major)


def _plain_torch(problem: str) -> Path | None:
    """nvfp4ctl's exact plain-torch submission for `problem`: what `check --kernel default` runs where
    nvfp4ctl ships no kernel for it (runner.targets: the problem's fallback_submission)."""
    from nvfp4ctl.problems import get_problem

    name = get_problem(problem).fallback_submission
    found = shipped("kernels") / name if name else None
    return found if found is not None and found.is_file() else None


def _export_plain_torch(source: Path, output: Path, problem: str, force: bool, task: Path | None,
                        arch: ArchChoice | None, whose: str | None) -> str:
    """`--kernel default` where nvfp4ctl ships no B200 kernel: the exact plain-torch submission that
    `check --kernel default` runs, written as it is (no CUDA in it to compile, for any arch). Its run-log result."""
    from nvfp4ctl.export import export_plain_torch

    console = get_console()
    text = export_plain_torch(source, output, problem, force=force, protected=_files_in_use(task))
    if arch is not None:
        console.warn(f"--arch {arch.value} is not used: the plain-torch submission holds no CUDA to compile")
    console.ok(f"wrote {_shown(output)} ({byte_size(len(text.encode()))}): {source.name}, nvfp4ctl's exact plain-torch"
               f" submission for {problem} (nvfp4ctl ships no B200 kernel for it)")
    _say_whose(output, whose)
    console.info(_next_line(output))
    return f"wrote {output.name} from {source.name} (plain torch)"


def _task_submission(task: Any | None) -> tuple[Path, str] | None:
    """Where export writes without -o, and why: the submission check and bench run (runner.targets'
    find_user_submission), task.yml's `submission:`, else submission.py beside task.yml, so an export from a
    subfolder (`cd kernels`) is the file they run, a --kernel's own folder's task (task_for_kernel) as check's;
    None where no task.yml of the user's is in use: ./submission.py."""
    if task is None or not task.is_users or task.path is None:
        return None
    if task.submission is not None:
        return task.submission, f"{_shown(task.path.absolute())}'s `submission:`"
    return task_folder(task.path) / SUBMISSION_FILE, f"beside {_shown(task.path.absolute())}"


def _shown(output: Path) -> str:
    """The file written as the user would type it from here: `../submission.py` for the task's, from a subfolder."""
    if not output.is_absolute():
        return str(output)
    try:
        relative = os.path.relpath(output)
    except ValueError:  # another drive
        return str(output)
    return relative if len(relative) < len(str(output)) else str(output)


def _say_whose(output: Path, whose: str | None) -> None:
    """Where the default output is no ./submission.py, that it is the task's: the file check and bench run.
    `whose`: why it is the task's (its `submission:`, beside it: _task_submission); None for an -o."""
    if whose is not None and output.resolve() != (Path.cwd() / output.name).resolve():
        get_console().info(f"{_shown(output)} is the task's submission ({whose}), the file check and bench run;"
                           " -o PATH writes another")


def _next_line(output: Path) -> str:
    """What to run on the file written, as it can be pasted into a shell (a name with a space is one word)."""
    written = shell_path(Path(_shown(output)))
    return f"next: nvfp4ctl lint {written} && nvfp4ctl check --submission {written}"


def _is_stdout(output: Path) -> bool:
    """Whether `output` is the file under this process's stdout (/dev/stdout, /proc/self/fd/1, or a name for
    the same file or pipe): what export prints besides the submission would then be written into it."""
    import sys

    try:
        return os.path.samestat(os.stat(output), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # no such file yet, or no descriptor under stdout (a test's capture)
        return False


def _task_in_use(flag: Path | None, kernel_named: bool) -> Any | None:
    """The task this export is for: --task, else the one in use. One found that cannot be read is
    refused where its problem picks the kernel (no --kernel, or `--kernel default`): the GEMM's would
    be exported into another problem's folder. With --kernel PATH it is None, with a warning: the
    kernel is exported as it is, its problem unchecked (the task file is check's business)."""
    from nvfp4ctl.task import load_task

    try:
        return load_task(flag)
    except UsageError as error:
        if flag is not None:
            raise  # named on purpose: say what is wrong with it
        if not kernel_named:
            raise UsageError(f"{error}; export picks its kernel by the task's problem: fix the task file, or pass"
                             " --task PATH or --kernel PATH") from None
        get_console().warn(f"{error}; the kernel's problem is not checked against the task")
        return None


def _files_in_use(flag: Path | None, in_use: Any | None = None) -> dict[Path, str]:
    """The task file and the run log this command uses: a submission written over either breaks every
    later command (the run log would then be appended to Python code). `in_use`: the task the export is for,
    where a kernel's own folder's task.yml took the place of the one found from here."""
    from nvfp4ctl.workspace import locate_task, memory_path

    task = locate_task(flag)  # first: the run log's folder follows the task file
    files = {task.path: "the task file in use", memory_path(): "the run log"}
    if in_use is not None and in_use.is_users and in_use.path is not None:
        files.setdefault(in_use.path, "the task file in use")
    return files


def _not_for_the_leaderboard(source: Path, arch: str) -> str:
    """The warning for an export the B200 leaderboard cannot run, with the way to one it can: a kernel
    without tensor-core code (its `no-tensor-op` mark) compiles for any arch as it is; another one
    (wgmma, setmaxnreg) may not, and `build --arch` tells."""
    from nvfp4ctl.build.sources import NO_TENSOR_OP, declared_arch, source_marks

    own = declared_arch(source)  # the kernel's own arch, which --arch may have overridden
    said = (f"{source.name} is an {arch} kernel" if own == arch else f"{source.name} is exported for {arch}") + \
        f": the B200 leaderboard needs {LEADERBOARD_ARCH}"
    if source_marks(source, NO_TENSOR_OP):
        return f"{said}; --arch {LEADERBOARD_ARCH} exports it for a B200 (it has no tensor-core code: its no-tensor-op mark)"
    if own == arch:  # --arch sm_100a refuses it: its folder or arch= line says what it is written for
        return f"{said}; for the leaderboard, export a kernel written for {LEADERBOARD_ARCH}"
    return (f"{said}; --arch {LEADERBOARD_ARCH} exports it for a B200 where it has no {arch}-only code (wgmma):"
            f" `nvfp4ctl build --arch {LEADERBOARD_ARCH} {short_path(source)}` tells")


def _never_built(source: Path, arch: str) -> bool:
    """A kernel of the user's with no build in the cache as it is now: the only look at whether it
    compiles that costs no compile (files and `nvcc --version`). nvfp4ctl's own kernels are built by
    its tests for their own arch (another one, an --arch of the user's, is asked like a user's kernel);
    where nvcc is missing nothing can be told."""
    from nvfp4ctl.build.builder import has_build
    from nvfp4ctl.build.sources import declared_arch

    if source.resolve().is_relative_to(shipped("kernels").resolve()) and declared_arch(source) == arch:
        return False
    return has_build(source, arch) is False


def _note_source(source: Path, why: str) -> None:
    """The kernel as the run log's target from the moment it is known: an export refused (another arch, another
    problem, an output it may not replace) or stopped is then listed by `log --target KERNEL`, as a written one
    is (_written_from). A name that is no file is the refusal's line alone."""
    try:
        there = source.is_file()
    except OSError:  # a name too long for the file system: its refusal says so
        there = False
    if there:
        note_target(source.absolute(), why)


def _written_from(source: Path, why: str, output: Path, result: str) -> Outcome:
    """A written export's outcome: the kernel is its target, as for a refused one, so that `log --target KERNEL`
    lists every export of it; the file written, with its hash, goes in the reason beside how the kernel was taken
    (`[--kernel; wrote ./submission.py@…]`), its path as the run log names its targets."""
    from nvfp4ctl.runlog import describe_target, log_folder_of
    from nvfp4ctl.workspace import memory_path

    written = describe_target(output.absolute(), Path.cwd(), log_folder=log_folder_of(memory_path()))
    return Outcome(result=result, target=source.absolute(), target_source=f"{why}; wrote {written}")


def command(
    kernel: Annotated[
        Path | None, typer.Option("--kernel", metavar="PATH", parser=path(), help="Kernel .cu to embed ('default': nvfp4ctl's own B200 kernel for nvfp4_gemm,"
                                  " the hand-written tcgen05 one, or with --arch sm_90a the H100 one, the CUTLASS one being"
                                  f" {shipped('kernels/sm100/nvfp4_gemm_sm100.cu')}; for the other problems nvfp4ctl's exact"
                                  " plain-torch submission, written as it is, which check runs for it)."
                                  " Default: the task problem's B200 kernel in your kernels/ folder, by our file name:"
                                  " for nvfp4_gemm alone; the other problems' plain-CUDA kernels are in"
                                  f" {shipped('kernels/naive')}.", show_default=False)
    ] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", metavar="PATH", parser=file_to_write(), help="Where to write the submission (default: the task's,"
                                                " which check and bench run: task.yml's `submission:`, else submission.py"
                                                " beside task.yml, or a --kernel's own folder's task.yml's where none of"
                                                " yours is in use; else ./submission.py).",
                                                show_default=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace the output file even if an earlier export did not write"
                                        " it (your own submission.py, say).")] = False,
    task: Annotated[Path | None, typer.Option("--task", metavar="PATH", parser=path(), help="task.yml whose problem the export is"
                                              " for (default: the one in use).")] = None,
    arch: Annotated[
        ArchChoice | None, typer.Option("--arch", metavar="<sm_90a|sm_100a>", parser=choice(ArchChoice),
                                        help="Compile the kernel for sm_90a or sm_100a (default: its own arch, from its"
                                        " sm90/ or sm100/ folder or a `// nvfp4ctl: arch=` line; a kernel written for"
                                        " the other is refused where its code holds that arch's own wgmma or tcgen05).", show_default=False)
    ] = None,
) -> Outcome:
    """Write a submission.py that compiles the kernel with load_inline and calls it from custom_kernel."""
    from nvfp4ctl.build.sources import checked_source  # here, not at the top: keeps `--help` fast
    from nvfp4ctl.export import export_submission, missing_abi

    from nvfp4ctl.runner.targets import refuse_other_problem, task_for_kernel

    console = get_console()
    named = kernel is not None and str(kernel) != DEFAULT_BY_NAME  # the user's own --kernel PATH
    in_use = _task_in_use(task, named)
    if named and in_use is not None:
        # check's task for it (its own folder's task.yml where none of the user's is in use): the one it is
        # exported for, whose submission check and bench run, and its run logged beside
        in_use = task_for_kernel(in_use, kernel)
    problem = DEFAULT_PROBLEM if named or in_use is None else in_use.problem
    because = None if output is not None else _task_submission(in_use)
    if output is None:  # the task's submission, else ./submission.py
        output = because[0] if because is not None else Path(SUBMISSION_FILE)
    if _is_stdout(output):
        console.give_stdout_to_output()
    if kernel is not None and not named and _default_name(problem) is None and (torch_target := _plain_torch(problem)):
        _note_source(torch_target, TAKEN_BY_DEFAULT)
        result = _export_plain_torch(torch_target, output, problem, force, task, arch, because and because[1])
        return _written_from(torch_target, TAKEN_BY_DEFAULT, output, result)
    source = default_kernel(kernel, problem, None if arch is None else arch.value)
    taken = "--kernel" if named else TAKEN_BY_DEFAULT if kernel is not None else f"export's default for {problem}"
    _note_source(source, taken)
    if named:  # say what is wrong with the path they gave, not to pass one
        if not source.exists():
            raise UsageError(f"no such file: {source}")
        checked_source(source)
    elif not source.is_file():
        raise UsageError(f"no {'H100' if source.parent.name == 'sm90' else 'B200'} kernel at {source}; pass --kernel PATH")
    other_mark = refuse_other_arch(source, None if arch is None else arch.value)
    if in_use is not None and (in_use.is_users or task is not None):
        # custom_kernel indexes the kernel's problem's tuple: on the leaderboard of the task's problem it
        # fails every test, as check of the same mix would (nvfp4ctl's own task is no one's choice)
        refuse_other_problem(source, source.resolve(), in_use.problem, in_use,
                             default_for=None if kernel is not None else taken)
    submission = export_submission(source, output, arch=None if arch is None else arch.value, force=force,
                                   protected=_files_in_use(task, in_use))
    if other_mark is not None:  # after the writing's own refusals: a refused export warns of nothing
        console.warn(other_mark)
    if submission.arch != LEADERBOARD_ARCH:
        console.warn(_not_for_the_leaderboard(source, submission.arch))
    if missing := missing_abi(submission):
        console.warn(f"no definition of {' or '.join(f'{name}()' for name in missing)} found in {source.name} or its"
                     f" headers: the exported file would fail at import (`nvfp4ctl build {source}` checks the compiled object)")
    if submission.never_run:
        console.warn(f"{source.name} has never run on {submission.arch} (its `nvfp4ctl: never-run-on` mark): "
                     "run `nvfp4ctl check` on that GPU before submitting")
    size = byte_size(len(submission.written.encode()))  # the file as written: any `#!` line kept above it too
    console.ok(f"wrote {_shown(output)} ({size}): {source.name} for {submission.arch}, {plural(len(submission.embedded), 'file')} embedded")
    _say_whose(output, because and because[1])
    if _never_built(source, submission.arch):
        console.info(f"hint: {short_path(source)} as it is now has no build for {submission.arch} in nvfp4ctl's cache"
                     f" (never built here, or its build failed): export does not compile it; `nvfp4ctl build"
                     f" --arch {submission.arch} {short_path(source)}` does and names the first compiler error")
    if not _is_stdout(output):  # a stream has no path to lint or check
        console.info(_next_line(output))
    return _written_from(source, taken, output, f"wrote {output.name} from {source.name} ({submission.arch})")
