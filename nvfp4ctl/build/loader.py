"""load_kernel_module: the runner's way to a kernel (build if needed, then import the extension)."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

from nvfp4ctl.build.builder import build_kernel
from nvfp4ctl.build.sources import declared_arch, checked_source
from nvfp4ctl.build import toolchain
from nvfp4ctl.errors import UsageError

GPU_ARCH = {9: "sm_90a", 10: "sm_100a"}  # compute capability major -> the arch-specific target
NO_CUDA_TORCH = "this torch has no CUDA: kernel modules load only with a CUDA build of torch"

_loaded: dict[Path, types.ModuleType] = {}


def gpu_arch() -> str | None:
    """The target for this process's current GPU, None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    if major not in GPU_ARCH:
        raise UsageError(f"no NVFP4 kernel target for this GPU (sm_{major}{minor}); supported: sm_90, sm_100")
    return GPU_ARCH[major]


def arch_for(source: Path) -> str:
    """The file's own arch (folder or declaration) when it has one, else the GPU's; a kernel for
    another GPU is refused here rather than failing later with 'no kernel image'."""
    own, gpu = declared_arch(source), gpu_arch()
    if own is None and gpu is None:
        raise UsageError(f"cannot tell which arch to build {source} for: no GPU here and none declared")
    if own is not None and gpu is not None and own != gpu:
        raise UsageError(f"{source} is an {own} kernel but this GPU needs {gpu}")
    return own or gpu  # type: ignore[return-value]


def require_cuda_torch() -> None:
    """Refuse up front (parent side): with a CPU-only torch a kernel still compiles, minutes of
    nvcc, and only then fails to import."""
    build = toolchain.torch_build()
    if not build.has_cuda:
        raise UsageError(f"{NO_CUDA_TORCH} (this one is {build.version})")


def load_kernel_module(source: Path, arch: str | None = None, defines: tuple[str, ...] = ()) -> types.ModuleType:
    """Build `source` (with extra `defines`) if needed (content-keyed cache) and import it; the
    module exposes nvfp4_gemm(a, b, sfa_permuted, sfb_permuted, c) -> c."""
    source = checked_source(source)
    report = build_kernel(source, arch or arch_for(source), defines=tuple(defines))
    path = report.module_path
    if path is None:
        raise UsageError(NO_CUDA_TORCH)
    if path not in _loaded:
        import torch  # noqa: F401  (the extension links against torch's libraries, loaded by this import)

        spec = importlib.util.spec_from_file_location(report.module_name, path)
        if spec is None or spec.loader is None:
            raise UsageError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[path] = module
    return _loaded[path]
