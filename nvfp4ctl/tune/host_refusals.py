"""Which shapes a kernel refuses, asked of its own host-side `<name>_unsupported` without a GPU: the kernel is
compiled with a small host program that calls that function per shape and prints its answer. Its device code
is never run, so it is kept as PTX (no ptxas, the slow part of a kernel's compile). A compile-only tune names
the shapes so found, as a timed tune marks them unsupported."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.build import flags, toolchain
from nvfp4ctl.build.compile import run_compiler
from nvfp4ctl.build.sources import abi_functions, build_inputs, kernel_api
from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.results import shape_key

Shape = tuple[int, int, int, int]  # m, n, k, l (tune.table.Shape)
COMPILE_TIMEOUT_S = 900.0
RUN_TIMEOUT_S = 60.0
# the problems whose `_unsupported` takes (m, n, k, l): the GEMV's takes (m, k, l), the grouped GEMM's its groups
MNKL_FUNCTIONS = ("nvfp4_gemm", "nvfp4_dual_gemm")

_PROGRAM = """#include <cstdio>
#include <cstdlib>
#include "{header}"

// per shape on the command line (m n k l ...): one line, empty where the kernel takes the shape
int main(int argc, char** argv) {{
  for (int i = 1; i + 3 < argc; i += 4) {{
    const char* why = {function}(atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3]));
    printf("%s\\n", why ? why : "");
  }}
  return 0;
}}
"""


@dataclass(frozen=True)
class HostRefusals:
    """The shapes the kernel refuses, with its one-line reason; or why that could not be told (`unknown`)."""

    refused: dict[Shape, str]
    unknown: str | None = None


def host_refusals(kernel: Path, arch: str, shapes: list[Shape]) -> HostRefusals:
    """Ask the kernel's `<name>_unsupported` about each of `shapes`, on the host."""
    api = kernel_api(kernel)
    function = getattr(api, "function", "nvfp4_gemm")
    if function not in MNKL_FUNCTIONS:
        return HostRefusals({}, f"{function}_unsupported takes no (m, n, k, l)")
    inputs = build_inputs(kernel)
    header = getattr(api, "header", "nvfp4_gemm_api.h")
    with tempfile.TemporaryDirectory(prefix="nvfp4ctl-refusals-") as folder:
        program, binary = Path(folder) / "refusals.cu", Path(folder) / "refusals"
        program.write_text(_PROGRAM.format(header=header, function=f"{function}_unsupported"))
        compute = arch.replace("sm_", "compute_")
        command = [str(toolchain.nvcc_path()), f"-gencode=arch={compute},code={compute}",
                   *flags.BASE_CUDA_FLAGS, *(f"-I{path}" for path in flags.include_dirs(inputs)),
                   f"-I{kernel.parent}", str(kernel), str(program), "-o", str(binary)]
        try:
            status, output = run_compiler(command, None, dict(os.environ), COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return HostRefusals({}, f"its host check did not compile within {COMPILE_TIMEOUT_S:.0f} s")
        except OSError as error:
            return HostRefusals({}, f"nvcc could not run: {error}")
        if status != 0:
            return HostRefusals({}, "its host check did not compile (the build of the candidates says why)")
        args = [str(value) for shape in shapes for value in shape]
        try:
            done = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as error:
            return HostRefusals({}, f"its host check could not run ({error})")
    answers = done.stdout.splitlines()
    if done.returncode != 0 or len(answers) != len(shapes):
        return HostRefusals({}, f"its host check failed (exit {done.returncode})")
    return HostRefusals({shape: why for shape, why in zip(shapes, answers) if why})


def refusal_notes(found: HostRefusals, function: str) -> list[str]:
    """The lines a compile-only tune says of what host_refusals found."""
    if found.unknown is not None:
        return [f"compile-only cannot tell which shapes the kernel refuses ({found.unknown}): a timed tune does"]
    return [f"the kernel does not take {shape_key(shape)} ({why}, as its {function} says): a timed tune"
            " leaves it out; its candidates were built all the same" for shape, why in found.refused.items()]


def unsupported_function(kernel: Path) -> str:
    try:
        return abi_functions(kernel)[0]
    except (UsageError, OSError):
        return "nvfp4_gemm_unsupported"
