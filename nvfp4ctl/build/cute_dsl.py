"""CuTe DSL submissions (nvidia-cutlass-dsl): compiled for sm_100a without a GPU, reported from the cubin.

Finding (nvidia-cutlass-dsl 4.8.1, 2026-11-26, this CPU-only machine): `cute.compile` needs no GPU
and no driver when CUTE_DSL_ARCH names the target (`CUTE_DSL_ARCH=sm_100a`); with
CUTE_DSL_KEEP=cubin and CUTE_DSL_DUMP_DIR it writes one <function>.sm_100a.cubin per compiled JIT
function. So the submission is run in a child Python that has the DSL: it is imported and its
`custom_kernel` is called once on small CPU inputs; the first compile happens on that call (the
launch then fails: there is no GPU, and that is expected). Each cubin is read with cuobjdump
(resources, SASS). A submission that never reaches `cute.compile` on CPU tensors yields one line saying so.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.build import resources, toolchain
from nvfp4ctl.build.report import FunctionUsage, TensorOpCheck
from nvfp4ctl.errors import UsageError
from nvfp4ctl.project import REPO_DIR

CHILD_TIMEOUT_S = 600.0
DSL_MISSING = ("CuTe DSL submission: the Python running it ({python}) has no nvidia-cutlass-dsl"
               " (pip install nvidia-cutlass-dsl, or pass --python with an interpreter that has it)")
_RES = re.compile(r"Function (\S+):\s*REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")

CHILD = r"""
import os, sys, importlib.util, traceback
sys.path.insert(0, os.environ["NVFP4CTL_REPO"])
spec = importlib.util.spec_from_file_location("submission", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
try:
    spec.loader.exec_module(module)
    if hasattr(module, "custom_kernel"):
        from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
        m, n, k = (int(x) for x in sys.argv[2].split(","))
        module.custom_kernel(generate_input(m, n, k, 1, 1111, device="cpu"))
except BaseException as error:  # the launch has no GPU to run on: report, the cubins are already written
    print("nvfp4ctl-dsl-child: " + type(error).__name__ + ": " + str(error).splitlines()[0][:300] if str(error) else type(error).__name__)
"""


@dataclass
class DslBuild:
    cubins: list[Path]
    functions: tuple[FunctionUsage, ...]
    tensor_op: TensorOpCheck
    seconds: float
    child_said: str


def has_dsl(python: str) -> bool:
    try:
        done = subprocess.run([python, "-c", "import cutlass.cute, cutlass.cute.runtime"], capture_output=True,
                              timeout=120)
    except OSError as error:  # a --python that does not exist or cannot run: the user's mistake
        raise UsageError(f"--python {python}: cannot run it ({error.strerror or error})") from None
    return done.returncode == 0


def parse_res_usage(text: str) -> tuple[FunctionUsage, ...]:
    return tuple(FunctionUsage(name=m.group(1), entry=True, registers=int(m.group(2)), stack_bytes=int(m.group(3)),
                               shared_bytes=int(m.group(4))) for m in _RES.finditer(text))


def build_dsl(path: Path, arch: str, out: Path, python: str | None = None, shape: str = "128,128,256") -> DslBuild:
    python = python or sys.executable
    if not has_dsl(python):
        raise UsageError(DSL_MISSING.format(python=python))
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CUTE_DSL_ARCH": arch, "CUTE_DSL_KEEP": "cubin,ptx", "CUTE_DSL_DUMP_DIR": str(out),
           "NVFP4CTL_REPO": str(REPO_DIR), "CUDA_VISIBLE_DEVICES": ""}
    started = time.perf_counter()
    try:
        done = subprocess.run([python, "-c", CHILD, str(path), shape], capture_output=True, text=True, env=env,
                              timeout=CHILD_TIMEOUT_S, cwd=out)
    except subprocess.TimeoutExpired as error:
        raise UsageError(f"CuTe DSL submission: the child ran past {CHILD_TIMEOUT_S:.0f} s") from error
    seconds = round(time.perf_counter() - started, 2)
    said = "\n".join(line for line in (done.stdout + done.stderr).splitlines() if line.startswith("nvfp4ctl-dsl-child"))
    cubins = sorted(out.glob(f"*.{arch}.cubin"))
    if not cubins:
        raise UsageError(f"CuTe DSL submission: no kernel reached cute.compile on CPU inputs"
                         f" ({said.removeprefix('nvfp4ctl-dsl-child: ') or 'the child printed nothing'})")
    functions: list[FunctionUsage] = []
    sass_parts = []
    cuobjdump = toolchain.find_tool("cuobjdump")
    for cubin in cubins:
        if cuobjdump is not None:
            usage = subprocess.run([str(cuobjdump), "--dump-resource-usage", str(cubin)], capture_output=True, text=True,
                                   timeout=120)
            functions.extend(parse_res_usage(usage.stdout))
        sass = resources.dump_sass(cubin)
        if sass is not None:
            sass_parts.append(sass)
    sass_text = "\n".join(sass_parts) if sass_parts else None
    return DslBuild(cubins, tuple(functions), resources.check_tensor_op(arch, sass_text), seconds, said)
