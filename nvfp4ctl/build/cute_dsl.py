"""CuTe DSL submissions (nvidia-cutlass-dsl): compiled for sm_100a without a GPU, reported from the cubin.

Finding (nvidia-cutlass-dsl 4.8.1, 2026-11-26, this CPU-only machine): `cute.compile` needs no GPU
and no driver when CUTE_DSL_ARCH names the target (`CUTE_DSL_ARCH=sm_100a`); with
CUTE_DSL_KEEP=cubin and CUTE_DSL_DUMP_DIR it writes one <function>.sm_100a.cubin per compiled JIT
function. So the submission is run in a child Python that has the DSL: it is imported and its
`custom_kernel` is called once on the CPU tuple of the task's problem for that problem's small
`trace_case`; the first compile happens on that call (the launch then fails: there is no GPU, and that
is expected). Each cubin is read with cuobjdump (resources, SASS). A submission that never reaches
`cute.compile` on CPU tensors, or needs a GPU before it does, yields one line saying so (exit 2); one whose
cute.compile raises and writes no cubin is a failed compile, one line with the DSL's first words (exit 1).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvfp4ctl.build import machine, resources, toolchain
from nvfp4ctl.build.compile import run_compiler, timeout_message
from nvfp4ctl.build.report import FunctionUsage, TensorOpCheck
from nvfp4ctl.errors import FailuresFound, ToolTimeout, UsageError, os_reason
from nvfp4ctl.missing_package import not_installed
from nvfp4ctl.project import PACKAGE_DIR

CHILD_TIMEOUT_S = 600.0
# what torch or the DSL say when a CUDA device or driver is needed: the submission cannot be traced on CPU
# (DSLCudaRuntimeError before any cubin: a driver call such as cutlass.utils.HardwareInfo() ahead of cute.compile)
_NEEDS_GPU = re.compile(r"not compiled with CUDA|no CUDA GPUs|NVIDIA driver|CUDA driver|CUDA_ERROR_NO_DEVICE"
                        r"|cudaErrorNoDevice|DSLCudaRuntimeError", re.IGNORECASE)
_RES = re.compile(r"Function (\S+):\s*REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")

CHILD = r"""
import importlib.util, json, os, pathlib, re, sys, types
sys.path.insert(0, os.environ["NVFP4CTL_IMPORT_ROOT"])
spec = importlib.util.spec_from_file_location("submission", sys.argv[1])
module = importlib.util.module_from_spec(spec)
try:
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.problems.common.harness import put_on_import_path
    request = json.loads(sys.argv[2])
    problem = get_problem(request["problem"])
    # as check imports a submission: GPU MODE's task/utils/reference stand-ins behind the user's own copies
    put_on_import_path(pathlib.Path(os.path.abspath(sys.argv[1])).parent, problem.harness_dir)
    spec.loader.exec_module(module)
    if hasattr(module, "custom_kernel"):
        # a stand-in for task.Case: importing task.py would need pyyaml in the user's DSL interpreter
        case = types.SimpleNamespace(**{k: tuple(v) if isinstance(v, list) else v for k, v in request["case"].items()})
        module.custom_kernel(problem.generate_input(case, device="cpu"))
except BaseException as error:  # the launch has no GPU to run on: report, the cubins are already written
    # raised inside cute.compile (CompileCallable.__call__ -> _compile, a frame of the cutlass package whose
    # name says compile): its compile failed, where any other error stopped the run before or after it
    frames, tb = [], error.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    compiling = any((f.f_globals.get("__name__") or "").split(".")[0] == "cutlass" and "compile" in f.f_code.co_name
                    for f in frames)
    # the DSL's messages start with a newline and colour their words for a terminal: the first line with
    # words, its colour codes left out, says what failed
    said = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", str(error))
    first = next((line.strip() for line in said.splitlines() if line.strip()), "")
    print(("nvfp4ctl-dsl-child-compile: " if compiling else "nvfp4ctl-dsl-child: ")
          + (type(error).__name__ + ": " + first[:300] if first else type(error).__name__))
"""
CHILD_SAID = "nvfp4ctl-dsl-child: "
COMPILE_FAILED = "nvfp4ctl-dsl-child-compile: "  # what the child says where cute.compile raised


@dataclass(frozen=True)
class TraceInputs:
    """What the child builds custom_kernel's tuple from: the task's problem and one small case of it."""

    problem: str
    case: dict[str, Any]  # every task.Case field (lists for the groups), as JSON carries it
    label: str  # "nvfp4_gemm 128x128x256", for messages

    def argument(self) -> str:
        """The child's second argument."""
        return json.dumps({"problem": self.problem, "case": self.case}, sort_keys=True)


def trace_inputs(problem_name: str) -> TraceInputs:
    """The problem's `trace_case` as the child gets it; one line (exit 2) where the problem has none."""
    from nvfp4ctl.problems import get_problem

    problem = get_problem(problem_name)
    if not problem.trace_case:
        raise UsageError(f"CuTe DSL submission: build cannot trace {problem.name} submissions without a GPU"
                         " (the problem names no CPU input to call custom_kernel with)")
    case = problem.parse_case(problem.trace_case, f"{problem.name} trace_case")
    fields = {name: list(value) if isinstance(value, tuple) else value
              for name, value in dataclasses.asdict(case).items()}
    return TraceInputs(problem.name, fields, f"{problem.name} {problem.key(case)}")


@dataclass
class DslBuild:
    cubins: list[Path]
    functions: tuple[FunctionUsage, ...]
    tensor_op: TensorOpCheck
    seconds: float
    cpu_seconds: float  # the child's CPU time (its tools' included) in those seconds
    child_said: str

    @property
    def busy(self) -> bool:
        """Load on this machine inflated `seconds` (machine.busy_while): cpu_seconds is the fairer figure."""
        return machine.busy_while(self.seconds, self.cpu_seconds)


def has_dsl(python: str) -> bool:
    try:
        done = subprocess.run([python, "-c", "import cutlass.cute, cutlass.cute.runtime"], capture_output=True,
                              timeout=120)
    except OSError as error:  # a --python that does not exist or cannot run: the user's mistake
        raise UsageError(f"--python {python}: cannot run it ({os_reason(error, python)})") from None
    return done.returncode == 0


def parse_res_usage(text: str) -> tuple[FunctionUsage, ...]:
    return tuple(FunctionUsage(name=m.group(1), entry=True, registers=int(m.group(2)), stack_bytes=int(m.group(3)),
                               shared_bytes=int(m.group(4))) for m in _RES.finditer(text))


def _import_root(folder: Path) -> Path:
    """A folder holding only this nvfp4ctl (a link to the package), for the child's sys.path[0].

    The package's parent is site-packages in a wheel install (the checkout in an editable one): put
    first on the path of the user's DSL interpreter (--python, maybe another Python version), it would
    shadow that interpreter's own torch, numpy or cutlass with ours. Only nvfp4ctl itself must come
    from here: the child imports nvfp4ctl.problems to build the inputs."""
    try:
        (folder / PACKAGE_DIR.name).symlink_to(PACKAGE_DIR, target_is_directory=True)
    except OSError:  # no symlinks here: the package's own parent, as before
        return PACKAGE_DIR.parent
    return folder


def run_child(python: str, path: Path, arch: str, out: Path, inputs: TraceInputs) -> tuple[str, float, float]:
    """Run the submission's custom_kernel once on `inputs` in `python`, cubins dumped to `out`:
    (the child's own lines, seconds, CPU seconds). The DSL compiles in the child, so the child's CPU
    time is the compile's, whatever else the machine ran meanwhile."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="nvfp4ctl-dsl-") as folder:
        env = {**os.environ, "CUTE_DSL_ARCH": arch, "CUTE_DSL_KEEP": "cubin,ptx", "CUTE_DSL_DUMP_DIR": str(out),
               "NVFP4CTL_IMPORT_ROOT": str(_import_root(Path(folder))), "CUDA_VISIBLE_DEVICES": ""}
        started, cpu_before = time.perf_counter(), machine.children_cpu_seconds()
        try:  # run_compiler: a stop at the limit ends what the child started too (the DSL's tools)
            _, output = run_compiler([python, "-c", CHILD, str(path), inputs.argument()], out, env,
                                     timeout_s=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired as error:  # a timeout (exit 3), as a compiler's: not a mistake in the input
            ran = f"the run of {path.name} on CPU inputs of {inputs.label} (until cute.compile writes its cubins)"
            raise ToolTimeout(f"CuTe DSL submission: {timeout_message(ran, CHILD_TIMEOUT_S)}") from error
        seconds = round(time.perf_counter() - started, 2)
        cpu_seconds = round(machine.children_cpu_seconds() - cpu_before, 2)
    said = "\n".join(line for line in output.splitlines() if line.startswith("nvfp4ctl-dsl-child"))
    return said, seconds, cpu_seconds


def compile_failed_message(said: str, inputs: TraceInputs) -> str | None:
    """One line for a child whose cute.compile raised (what it said first), as a failed compile reads; None
    where none did."""
    line = next((line for line in said.splitlines() if line.startswith(COMPILE_FAILED)), None)
    if line is None:
        return None
    return f"CuTe DSL submission: cute.compile failed on CPU inputs of {inputs.label}: {line.removeprefix(COMPILE_FAILED)}"


def no_cubin_message(path: Path, said: str, inputs: TraceInputs) -> str:
    """One line for a child that wrote no cubin: it needed a GPU first, or it stopped before cute.compile."""
    why = said.removeprefix(CHILD_SAID).splitlines()[0] if said else "the child printed nothing"
    if _NEEDS_GPU.search(why):
        return (f"CuTe DSL submission: {path.name} needs a GPU before its first cute.compile ({why}); build calls"
                f" custom_kernel on CPU tensors ({inputs.label}) and compiles only what it reaches there")
    return f"CuTe DSL submission: no kernel reached cute.compile on CPU inputs of {inputs.label} ({why})"


def build_dsl(path: Path, arch: str, out: Path, inputs: TraceInputs, python: str | None = None) -> DslBuild:
    python = python or sys.executable
    if not has_dsl(python):
        raise UsageError("CuTe DSL submission: " + not_installed("cutlass", python,
                                                                "or pass --python with an interpreter that has it"))
    said, seconds, cpu_seconds = run_child(python, path, arch, out, inputs)
    cubins = sorted(out.glob(f"*.{arch}.cubin"))
    if not cubins:
        if (failed := compile_failed_message(said, inputs)) is not None:  # exit 1, as a .cu that does not compile
            raise FailuresFound(failed)
        raise UsageError(no_cubin_message(path, said, inputs))
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
    return DslBuild(cubins, tuple(functions), resources.check_tensor_op(arch, sass_text), seconds, cpu_seconds,
                    said)
