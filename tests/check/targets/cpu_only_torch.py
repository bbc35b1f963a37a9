"""A --kernel target as a CPU-only torch sees it: the build yields device code only (no importable
module), so the real loader refuses it at import with its UsageError."""

from pathlib import Path
from types import SimpleNamespace

from nvfp4ctl.build import loader

KERNEL = Path(__file__).resolve().parents[3] / "kernels" / "naive" / "nvfp4_gemv_naive.cu"

loader.build_kernel = lambda source, arch, defines=(): SimpleNamespace(module_path=None)  # skip nvcc
loader.load_kernel_module(KERNEL, "sm_90a")


def custom_kernel(data):
    return data[2]
