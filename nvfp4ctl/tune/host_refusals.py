"""Which shapes a kernel refuses, asked of its own host-side `<name>_unsupported` without a GPU: the kernel is
compiled with a small host program that calls that function per shape and prints its answer. Its device code
is never run, so it is kept as PTX (no ptxas, the slow part of a kernel's compile). A compile-only tune names
the shapes so found, as a timed tune marks them unsupported."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvfp4ctl.build import flags, toolchain
from nvfp4ctl.build.compile import run_compiler
from nvfp4ctl.build.sources import abi_functions, build_inputs, kernel_api
from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.results import shape_key

Shape = tuple[Any, Any, Any, int]  # m, n, k, l as tune keys a task case (tune.setup.select_cases)
COMPILE_TIMEOUT_S = 900.0
RUN_TIMEOUT_S = 60.0

# The host program: its shapes come on the command line as whole numbers, each shape as its function's
# numbers (HostCall.numbers), and it prints one line per shape, empty where the kernel takes it.
_PROGRAM = """#include <cstdio>
#include <cstdlib>
#include <vector>
#include "{header}"

int main(int argc, char** argv) {{
  int i = 1;
  while (i < argc) {{
{read}
    printf("%s\\n", why ? why : "");
  }}
  return 0;
}}
"""

# (m, n, k, l): the GEMM's and the dual GEMM's
_MNKL = """    if (i + 3 >= argc) return 2;
    const char* why = {function}(atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3]));
    i += 4;"""
# (m, k, l): the GEMV's, which has no n
_MKL = """    if (i + 2 >= argc) return 2;
    const char* why = {function}(atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2]));
    i += 3;"""
# (problems, groups): the grouped GEMM's, each group's m, n, k after the count of groups. The vector zeroes the
# operands' device pointers: the host check asks about shapes, and there is no memory to point at
_GROUPS = """    const int groups = atoi(argv[i++]);
    if (groups < 0 || i + 3 * groups > argc) return 2;
    std::vector<Nvfp4GroupProblem> problems(groups);
    for (Nvfp4GroupProblem& problem : problems) {{
      problem.m = atoi(argv[i]);
      problem.n = atoi(argv[i + 1]);
      problem.k = atoi(argv[i + 2]);
      i += 3;
    }}
    const char* why = {function}(problems.data(), groups);"""


def _mnkl(shape: Shape) -> list[int]:
    return list(shape)


def _mkl(shape: Shape) -> list[int]:
    m, _, k, l = shape
    return [m, k, l]


def _groups(shape: Shape) -> list[int]:
    ms, ns, ks, _ = shape  # GPU MODE's grouped GEMM has l = 1 per group; its API takes none
    return [len(ms), *(value for group in zip(ms, ns, ks) for value in group)]


@dataclass(frozen=True)
class HostCall:
    """How the host program calls one problem's `<name>_unsupported` (its API header's signature)."""

    read: str  # the C++ that reads one shape from argv and calls the function
    numbers: Callable[[Shape], list[int]]  # a shape as the command line gives it


HOST_CALLS = {
    "nvfp4_gemm": HostCall(_MNKL, _mnkl),
    "nvfp4_dual_gemm": HostCall(_MNKL, _mnkl),
    "nvfp4_gemv": HostCall(_MKL, _mkl),
    "nvfp4_group_gemm": HostCall(_GROUPS, _groups),
}


@dataclass(frozen=True)
class HostRefusals:
    """The shapes the kernel refuses, with its one-line reason; or why that could not be told (`unknown`)."""

    refused: dict[Shape, str]
    unknown: str | None = None


def host_refusals(kernel: Path, arch: str, shapes: list[Shape]) -> HostRefusals:
    """Ask the kernel's `<name>_unsupported` about each of `shapes`, on the host."""
    api = kernel_api(kernel)
    function = getattr(api, "function", "nvfp4_gemm")
    call = HOST_CALLS.get(function)
    if call is None:
        return HostRefusals({}, f"its host check does not know the arguments of {function}_unsupported")
    inputs = build_inputs(kernel)
    header = getattr(api, "header", "nvfp4_gemm_api.h")
    with tempfile.TemporaryDirectory(prefix="nvfp4ctl-refusals-") as folder:
        program, binary = Path(folder) / "refusals.cu", Path(folder) / "refusals"
        read = call.read.format(function=f"{function}_unsupported")
        program.write_text(_PROGRAM.format(header=header, read=read))
        compute = arch.replace("sm_", "compute_")
        # the build's -I folders alone: the kernel's quoted includes are found beside it as in the build, and
        # an `#include <x.cuh>` beside it is found by neither (an -I of its folder found it here alone)
        command = [str(toolchain.nvcc_path()), f"-gencode=arch={compute},code={compute}",
                   *flags.BASE_CUDA_FLAGS, flags.OWN_STANDARD, *(f"-I{path}" for path in flags.include_dirs(inputs)),
                   str(kernel), str(program), "-o", str(binary)]
        try:
            status, output = run_compiler(command, None, dict(os.environ), COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return HostRefusals({}, f"its host check did not compile within {COMPILE_TIMEOUT_S:.0f} s")
        except OSError as error:
            return HostRefusals({}, f"nvcc could not run: {error}")
        if status != 0:
            return HostRefusals({}, "its host check did not compile (the build of the candidates says why)")
        args = [str(value) for shape in shapes for value in call.numbers(shape)]
        try:
            done = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as error:
            return HostRefusals({}, f"its host check could not run ({error})")
    answers = done.stdout.splitlines()
    if done.returncode != 0 or len(answers) != len(shapes):
        return HostRefusals({}, f"its host check failed (exit {done.returncode})")
    return HostRefusals({shape: why for shape, why in zip(shapes, answers) if why})


def refusal_notes(found: HostRefusals, function: str, shown: Callable[[Shape], str] = shape_key) -> list[str]:
    """The lines a compile-only tune says of what host_refusals found, each shape named by `shown` (the
    report's, TuneReport.shown)."""
    if found.unknown is not None:
        return [f"compile-only cannot tell which shapes the kernel refuses ({found.unknown}): a timed tune does"]
    return [f"the kernel does not take {shown(shape)} ({why}, as its {function} says): a timed tune"
            " leaves it out; its candidates were built all the same" for shape, why in found.refused.items()]


def unsupported_function(kernel: Path) -> str:
    try:
        return abi_functions(kernel)[0]
    except (UsageError, OSError):
        return "nvfp4_gemm_unsupported"
