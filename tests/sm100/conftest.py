"""Session builds for the sm_100a proofs, started together so CI's 2 cores compile both at once:
the kernel (device code, for SASS and ptxas) in a background thread, the CuTe host proof in front.
Both land in the nvfp4ctl cache (~/.cache/nvfp4ctl or $NVFP4CTL_CACHE), never in the repository."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "sm100" / "nvfp4_gemm_sm100.cu"


def _toolchain_or_skip() -> None:
    from nvfp4ctl.umma.host_proof import toolchain_missing

    if why := toolchain_missing():
        pytest.skip(f"needs nvcc and the nvidia-cutlass headers: {why}")


@pytest.fixture(scope="session")
def kernel_build() -> Future:
    """The kernel's BuildReport, compiling in the background from the first request on."""
    _toolchain_or_skip()
    from nvfp4ctl.build import build_kernel

    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(build_kernel, KERNEL, "sm_100a")
    pool.shutdown(wait=False)
    return future


@pytest.fixture(scope="session")
def proof_kernel(kernel_build: Future) -> Path:
    """The kernel path, once the CuTe host proof for it is built (the kernel build runs alongside)."""
    from nvfp4ctl.umma.host_proof import proof_binary

    proof_binary(KERNEL)
    return KERNEL


@pytest.fixture(scope="session")
def tc_printer() -> Path:
    """The tcgen05 kernel's plan printer (tests/sm100/host/sm100_tc_plan.cu), built once (seconds)."""
    from nvfp4ctl.build import toolchain
    from nvfp4ctl.errors import UsageError

    try:
        toolchain.nvcc_path()
    except UsageError as error:
        pytest.skip(f"needs nvcc: {error}")
    from tc_plan import printer_binary

    return printer_binary()
