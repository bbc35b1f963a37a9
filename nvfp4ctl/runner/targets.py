"""Which `custom_kernel(data) -> c` to run: a GPU MODE submission, a kernel source, or the default.

`resolve_target` runs in the parent and only looks at files and nvidia-smi; `load_target` runs in the
child (it imports torch, builds kernels and may initialise CUDA).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from nvfp4ctl.errors import UsageError
from nvfp4ctl.project import kernels_dir
from nvfp4ctl.runner.gpu import first_gpu, run_device

SUBMISSION, KERNEL, TORCH = "submission", "kernel", "torch"

# Each problem names its compiled default per GPU major version (used only when the file exists) and
# its exact plain-torch fallback (problems/<name>/problem.py: default_kernels, fallback_submission).
DEFAULT_PROBLEM = "nvfp4_gemm"


@dataclass(frozen=True)
class TargetSpec:
    kind: str  # "submission" | "kernel" | "torch"
    path: Path
    label: str  # what the user sees: the path as given, or "kernels/sm90/... (default for sm_90)"
    problem: str = DEFAULT_PROBLEM  # whose C ABI a kernel implements and whose harness modules load


def _existing_file(path: Path, flag: str) -> Path:
    if not path.exists():
        raise UsageError(f"{flag} {path}: no such file")
    if not path.is_file():
        raise UsageError(f"{flag} {path}: not a file")
    return path.resolve()


def resolve_target(submission: Path | None, kernel: Path | None, task_submission: Path | None = None,
                   problem: str = DEFAULT_PROBLEM) -> TargetSpec:
    """--submission / --kernel, else task.yml's `submission:`, else the default for this machine's GPU."""
    if submission is not None and kernel is not None:
        raise UsageError("--submission and --kernel are exclusive: pass one of them")
    if submission is None and kernel is None:
        submission = task_submission
    if submission is not None:
        resolved = _existing_file(submission, "--submission")
        if resolved.suffix != ".py":
            raise UsageError(f"--submission {submission}: expected a Python file (submission.py)")
        return TargetSpec(SUBMISSION, resolved, str(submission), problem)
    if kernel is not None:
        resolved = _existing_file(kernel, "--kernel")
        if resolved.suffix != ".cu":
            raise UsageError(f"--kernel {kernel}: expected a CUDA source (.cu); use --submission for .py")
        return TargetSpec(KERNEL, resolved, str(kernel), problem)
    return default_target(problem)


def _defaults(problem: str) -> tuple[dict[int, str], str]:
    """The problem's kernels per GPU major and its exact plain-torch fallback (paths under kernels/)."""
    from nvfp4ctl.problems import get_problem, resolve_problem

    spec, gemm = resolve_problem(problem), get_problem(DEFAULT_PROBLEM)  # test-only problems: the GEMM's
    return (dict(getattr(spec, "default_kernels", gemm.default_kernels)),
            getattr(spec, "fallback_submission", gemm.fallback_submission))


def default_target(problem: str = DEFAULT_PROBLEM) -> TargetSpec:
    kernels = kernels_dir()
    default_kernels, fallback_name = _defaults(problem)
    gpu = first_gpu() if run_device() == "cuda" else None
    if gpu is not None and gpu.major in default_kernels:
        source = kernels / default_kernels[gpu.major]
        if source.is_file():
            return TargetSpec(KERNEL, source, f"{short_path(source)} (default for {gpu.arch})", problem)
    fallback = kernels / fallback_name
    if not fallback.is_file():
        raise UsageError(f"no default target: {fallback} is missing; pass --submission or --kernel")
    return TargetSpec(TORCH, fallback, f"{short_path(fallback)} (default: exact torch fallback, no {problem} kernel here)",
                      problem)


def short_path(path: Path) -> str:
    """The path relative to the working directory where it lies below it (as the user would type it)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# --- child side -----------------------------------------------------------------------------------

KernelFn = Callable[[tuple], Any]


def load_target(spec: TargetSpec) -> KernelFn:
    """The callable `custom_kernel(data) -> c` for a target (runs in the child)."""
    if spec.kind == KERNEL:
        return _load_kernel(spec.path, spec.problem)
    return import_submission(spec.path, spec.problem)


def _load_kernel(source: Path, problem: str = DEFAULT_PROBLEM) -> KernelFn:
    from nvfp4ctl.build import load_kernel_module  # builds (cached) and imports the extension

    from nvfp4ctl.problems import resolve_problem

    spec = resolve_problem(problem)
    if getattr(spec, "kernel_api", None) is None:
        raise UsageError(f"--kernel: {problem} has no kernel C ABI yet; use --submission")
    module = load_kernel_module(source)
    call = spec.kernel_call

    def custom_kernel(data: tuple) -> Any:
        return call(module, data)  # the problem's C ABI: its entry point on its tuple elements

    custom_kernel.__qualname__ = f"{source.name}:{spec.kernel_api.function}"
    return custom_kernel


# Modules of GPU MODE's harness folder that submissions sometimes import besides task.py.
HARNESS_MODULES = frozenset({"utils", "reference", "eval"})


def import_submission(path: Path, problem: str | None = None) -> KernelFn:
    """Import a GPU MODE submission.py by path and return its custom_kernel."""
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # submissions import their neighbours (task.py, helpers)
    harness = _harness_dir(problem)
    if harness is not None and str(harness) not in sys.path:
        # our stand-ins for GPU MODE's task.py / utils.py / reference.py, behind the user's own copies
        sys.path.insert(sys.path.index(folder) + 1, str(harness))
    if harness is None and not (path.parent / "task.py").is_file() and "task" not in sys.modules:
        sys.modules["task"] = _task_shim()
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    name = f"nvfp4ctl_target_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as missing:
        if missing.name in HARNESS_MODULES and not (path.parent / f"{missing.name}.py").is_file():
            # reworded in place, so the traceback still ends at the submission's import line
            missing.msg = (f"No module named '{missing.name}': {path.name} imports GPU MODE's harness module "
                           f"{missing.name}.py, which nvfp4ctl does not provide; put the harness's copy next to "
                           f"{path.name} (its folder is on the import path) or drop the import")
            missing.args = (missing.msg,)
        raise
    kernel = getattr(module, "custom_kernel", None)
    if not callable(kernel):
        raise ImportError(f"{path} defines no custom_kernel(data) function")
    return kernel


def _harness_dir(problem: str | None) -> Path | None:
    if problem is None:
        return None
    from nvfp4ctl.problems import resolve_problem

    folder = getattr(resolve_problem(problem), "harness_dir", None)  # problems defined in tests have none
    return folder if folder is not None and (folder / "task.py").is_file() else None


def _task_shim() -> types.ModuleType:
    """Stand-in for GPU MODE's task.py, which submissions import for their type hints."""
    shim = types.ModuleType("task")
    shim.__doc__ = "nvfp4ctl's stand-in for GPU MODE's task.py (type hints only)."
    shim.input_t = TypeVar("input_t", bound=tuple)  # type: ignore[attr-defined]
    shim.output_t = TypeVar("output_t")  # type: ignore[attr-defined]
    shim.TestSpec = dict  # type: ignore[attr-defined]
    return shim
