"""Running the compiler: a kernel module through torch.utils.cpp_extension + ninja, or device code
alone through nvcc when torch has no CUDA.

Why two routes: a CPU-only torch cannot link a CUDA extension (its wheel lacks libc10_cuda and
libtorch_cuda, which cpp_extension always links, and its cpp_extension.CUDA_HOME stays None), and
such a module could not be loaded there anyway. So without CUDA torch the kernel file is compiled
alone with the very same nvcc flags (torch's COMMON_NVCC_FLAGS included) for the resource report
and the SASS check; the importable module is built where torch has CUDA (the GPU machine).

The cpp_extension build runs in a child Python process so that ninja's output (which carries the
`ptxas -v` lines) can be captured: cpp_extension prints it to file descriptor 1 or discards it.

Every compiler run, a kernel's, a submission's (submission_build), a CuTe DSL submission's (cute_dsl),
--submission-time's `python submission.py` (submission_time) and a host proof's (umma/host_proof), goes
through run_compiler.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.build import flags, toolchain, torch_nvcc
from nvfp4ctl.build.arch_names import gencode_flag
from nvfp4ctl.build.compiler_errors import first_error
from nvfp4ctl.build.full_disk import raise_if_out_of_space
from nvfp4ctl.build.sources import BuildInputs
from nvfp4ctl.build.temporary_folder import require_usable_tmpdir
from nvfp4ctl.errors import ExitCode, FailuresFound, ToolTimeout
from nvfp4ctl.project import REPO_DIR

BUILD_TIMEOUT_S = 1800.0
STOP_GRACE_S = 2.0  # between SIGTERM to a stopped compiler's group and SIGKILL to what is left of it


class CompileError(FailuresFound):
    """The compiler rejected the kernel: the message is the first real error, `log` everything."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


class CompileTimeout(CompileError, ToolTimeout):
    """The compiler ran past its limit and was stopped: a timeout (exit 3), not a rejected kernel. Still a
    CompileError, so that tune reads it as the candidate's failed compile, as any other."""

    exit_code = ExitCode.TIMEOUT


def timeout_message(compiler: str, limit_s: float) -> str:
    """One line for a compile stopped at its limit, a kernel's and a submission's alike."""
    return f"{compiler} ran past {limit_s:.0f} s and was stopped (the limit is fixed)"


@dataclass(frozen=True)
class Compiled:
    log: str
    kernel_object: Path  # the kernel's own object file: ptxas/SASS are read from it


def kernel_object(folder: Path, inputs: BuildInputs) -> Path:
    return folder / f"{inputs.kernel.stem}.cuda.o"  # cpp_extension's name for a .cu source's object


def _compiler_env() -> dict[str, str]:
    # The build child runs `-m nvfp4ctl.build.child` from the build folder: it must find this very
    # nvfp4ctl even when it is not installed (`python3 -m nvfp4ctl` from a checkout). Installed, the
    # package's parent is a site-packages the child has anyway: put on PYTHONPATH it would come
    # before the standard library, where a backport package could shadow a module of it.
    package_root = "" if str(REPO_DIR) in _site_folders() else str(REPO_DIR)
    path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "CUDA_HOME": str(toolchain.cuda_home()), "PYTHONPATH": path}


def _site_folders() -> set[str]:
    """This Python's site-packages folders (a venv's included), as resolved paths."""
    import site

    folders = [*site.getsitepackages(), site.getusersitepackages()]
    return {str(Path(folder).resolve()) for folder in folders}


def run_compiler(command: list[str], cwd: Path | None, env: dict[str, str],
                 timeout_s: float = BUILD_TIMEOUT_S) -> tuple[int, str]:
    """(exit status, stdout and stderr together) of a compiler command run in `cwd` (None: this process's
    own working folder, against which relative paths in the command are read), ended with everything it started
    when the run ends early: a timeout, Ctrl-C, `kill PID` (interrupts.py), any error. subprocess.run
    killed the compiler alone, and what it had started (nvcc's `sh -c cudafe++ ...`, cicc, ptxas; ninja's
    jobs) went on compiling into a staging folder already deleted. The compiler stays in nvfp4ctl's
    process group, so that a signal to the whole group (a CI job cancelled, `timeout -s KILL`, the
    terminal's Ctrl-C) reaches it too, even where nvfp4ctl itself is killed before it can act.
    subprocess.TimeoutExpired, with the output so far, past `timeout_s`; a UsageError before it starts where
    TMPDIR names no folder it could write its intermediate files in."""
    require_usable_tmpdir(cwd)
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as process:
        try:
            output, _ = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired as expired:
            _end_tree(process)
            expired.output = _output_left(process)
            raise
        except BaseException:
            _end_tree(process)
            raise
    return process.returncode, output.decode(errors="replace")


def _end_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the compiler and every process below it (ninja also passes it on to its jobs), then
    SIGKILL to those left after STOP_GRACE_S, with the tools started meanwhile below them. Each process is
    signalled through a pidfd opened when it was found, never by its number again: a tool that exits during
    the grace period frees its number for reuse by anyone. A tool whose parent died before it was found is
    adopted by init, where no walk from the compiler finds it."""
    held = _open_below([process.pid], {})
    process.send_signal(signal.SIGTERM)  # Popen's own handle: nothing once it has been waited for
    _signal_all(held, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_GRACE_S)
    _open_below([process.pid, *held], held)  # one read of /proc, from every process still held
    if process.poll() is None:
        process.kill()
    _signal_all(held, signal.SIGKILL)
    for handle in held.values():
        os.close(handle)
    process.wait()


def _open_below(roots: list[int], held: dict[int, int]) -> dict[int, int]:
    """`held` (pid -> pidfd) with a pidfd for every process below `roots` not held yet, read from /proc
    (Linux; elsewhere, or without pidfds, none: the compiler alone is ended)."""
    if not hasattr(os, "pidfd_open"):
        return held
    for pid in _descendants(roots):
        if pid not in held:
            with contextlib.suppress(OSError):  # gone since the listing
                held[pid] = os.pidfd_open(pid)
    return held


def _descendants(roots: list[int]) -> list[int]:
    """Every process below any of `roots`, from one read of /proc (Linux; elsewhere none)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()  # past the command's name, which may hold ")"
        except (OSError, IndexError):
            continue  # gone since the listing
        children.setdefault(int(fields[1]), []).append(int(entry.parent.name))
    found: list[int] = []
    seen, frontier = set(roots), list(roots)
    while frontier:
        below = [child for pid in frontier for child in children.get(pid, []) if child not in seen]
        seen.update(below)
        found += below
        frontier = below
    return found


def _signal_all(held: dict[int, int], signum: signal.Signals) -> None:
    for handle in held.values():
        with contextlib.suppress(OSError):  # exited (ESRCH) since it was opened
            signal.pidfd_send_signal(handle, signum)


def _output_left(process: subprocess.Popen[bytes]) -> bytes:
    """What the ended compiler wrote; b"" where a process outside its group still holds the pipe open."""
    try:
        output, _ = process.communicate(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        return b""
    return output or b""


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    try:
        return run_compiler(command, cwd, env, timeout_s=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired as error:
        output = error.output.decode(errors="replace") if error.output else ""
        raise CompileTimeout(timeout_message("the compiler", BUILD_TIMEOUT_S), output) from error


def _raise_for(returncode: int, log: str, inputs: BuildInputs, folder: Path) -> None:
    raise_if_out_of_space(returncode, log, folder)
    if returncode != 0:
        message = first_error(log, inputs.files) or (log.strip().splitlines() or ["compiler failed"])[-1]
        raise CompileError(message, log)


def build_module(folder: Path, inputs: BuildInputs, arch: str, module_name: str,
                 defines: tuple[str, ...] = ()) -> Compiled:
    """kernel.cu + torch_binding.cpp -> folder/<module_name>.so, via cpp_extension in a child."""
    spec = {
        "name": module_name,
        "sources": [str(inputs.kernel), str(inputs.binding)],
        "extra_cflags": list(flags.BINDING_CFLAGS),
        "extra_cuda_cflags": [*flags.cuda_flags(arch), *flags.REPORT_FLAGS, *flags.define_flags(defines)],
        "extra_include_paths": [str(path) for path in flags.include_dirs(inputs)],
        "build_directory": str(folder),
    }
    command = [sys.executable, "-m", "nvfp4ctl.build.child", json.dumps(spec)]
    returncode, log = _run(command, folder, _compiler_env())
    _raise_for(returncode, log, inputs, folder)
    return Compiled(log=log, kernel_object=kernel_object(folder, inputs))


def build_device_code(folder: Path, inputs: BuildInputs, arch: str, defines: tuple[str, ...] = ()) -> Compiled:
    """The kernel file alone -> an object with its device code, exactly as the module build would compile it."""
    from torch.utils import cpp_extension  # only here: importing torch costs seconds

    include = [f"-I{path}" for path in flags.include_dirs(inputs)]
    extension_flags = [*flags.cuda_flags(arch), *flags.REPORT_FLAGS, *flags.define_flags(defines)]
    command = [
        str(toolchain.nvcc_path()),
        *cpp_extension.COMMON_NVCC_FLAGS,
        "--compiler-options",
        "-fPIC",
        *extension_flags,
        *torch_nvcc.appended_standard(extension_flags, gencode_flag(arch)),  # after them, as build_module's
        *include,
        "-c",
        str(inputs.kernel),
        "-o",
        str(kernel_object(folder, inputs)),
    ]
    returncode, output_text = _run(command, folder, _compiler_env())
    log = shlex.join(command) + "\n" + output_text  # like ninja -v: the command, then its output
    _raise_for(returncode, log, inputs, folder)
    return Compiled(log=log, kernel_object=kernel_object(folder, inputs))
