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

# The compiled default per GPU major version; used only when the file exists.
# sm_100: the hand-written tcgen05 kernel (compiles in seconds); the CUTLASS one,
# sm100/nvfp4_gemm_sm100.cu, stays as the fallback behind --kernel.
DEFAULT_KERNELS = {9: "sm90/nvfp4_gemm_sm90.cu", 10: "sm100/nvfp4_gemm_sm100_tc.cu"}
FALLBACK_SUBMISSION = "torch_dequant/submission.py"


@dataclass(frozen=True)
class TargetSpec:
    kind: str  # "submission" | "kernel" | "torch"
    path: Path
    label: str  # what the user sees: the path as given, or "kernels/sm90/... (default for sm_90)"


def _existing_file(path: Path, flag: str) -> Path:
    if not path.exists():
        raise UsageError(f"{flag} {path}: no such file")
    if not path.is_file():
        raise UsageError(f"{flag} {path}: not a file")
    return path.resolve()


def resolve_target(submission: Path | None, kernel: Path | None, task_submission: Path | None = None) -> TargetSpec:
    """--submission / --kernel, else task.yml's `submission:`, else the default for this machine's GPU."""
    if submission is not None and kernel is not None:
        raise UsageError("--submission and --kernel are exclusive: pass one of them")
    if submission is None and kernel is None:
        submission = task_submission
    if submission is not None:
        resolved = _existing_file(submission, "--submission")
        if resolved.suffix != ".py":
            raise UsageError(f"--submission {submission}: expected a Python file (submission.py)")
        return TargetSpec(SUBMISSION, resolved, str(submission))
    if kernel is not None:
        resolved = _existing_file(kernel, "--kernel")
        if resolved.suffix != ".cu":
            raise UsageError(f"--kernel {kernel}: expected a CUDA source (.cu); use --submission for .py")
        return TargetSpec(KERNEL, resolved, str(kernel))
    return default_target()


def default_target() -> TargetSpec:
    kernels = kernels_dir()
    gpu = first_gpu() if run_device() == "cuda" else None
    if gpu is not None and gpu.major in DEFAULT_KERNELS:
        source = kernels / DEFAULT_KERNELS[gpu.major]
        if source.is_file():
            return TargetSpec(KERNEL, source, f"{short_path(source)} (default for {gpu.arch})")
    fallback = kernels / FALLBACK_SUBMISSION
    if not fallback.is_file():
        raise UsageError(f"no default target: {fallback} is missing; pass --submission or --kernel")
    return TargetSpec(TORCH, fallback, f"{short_path(fallback)} (default)")


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
        return _load_kernel(spec.path)
    return import_submission(spec.path)


def _load_kernel(source: Path) -> KernelFn:
    from nvfp4ctl.build import load_kernel_module  # builds (cached) and imports the extension

    module = load_kernel_module(source)

    def custom_kernel(data: tuple) -> Any:
        return module.nvfp4_gemm(data[0], data[1], data[4], data[5], data[6])

    custom_kernel.__qualname__ = f"{source.name}:nvfp4_gemm"
    return custom_kernel


# Modules of GPU MODE's harness folder that submissions sometimes import besides task.py.
HARNESS_MODULES = frozenset({"utils", "reference", "eval"})


def import_submission(path: Path) -> KernelFn:
    """Import a GPU MODE submission.py by path and return its custom_kernel."""
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # submissions import their neighbours (task.py, helpers)
    if not (path.parent / "task.py").is_file() and "task" not in sys.modules:
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


def _task_shim() -> types.ModuleType:
    """Stand-in for GPU MODE's task.py, which submissions import for their type hints."""
    shim = types.ModuleType("task")
    shim.__doc__ = "nvfp4ctl's stand-in for GPU MODE's task.py (type hints only)."
    shim.input_t = TypeVar("input_t", bound=tuple)  # type: ignore[attr-defined]
    shim.output_t = TypeVar("output_t")  # type: ignore[attr-defined]
    shim.TestSpec = dict  # type: ignore[attr-defined]
    return shim
