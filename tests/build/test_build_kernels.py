"""The project's real kernels compile for their arch, hold their tensor-core op and spill nothing.

The CUTLASS sm_100a kernel takes about 2 CPU-minutes on CI's 2 cores, and tests/sm100 already builds
it through the same build_kernel call (checking more SASS ops), so it is not compiled twice here.
Set NVFP4CTL_TEST_CACHE to a folder CI keeps and unchanged kernels cost nothing (tests/session_cache.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import build_kernel, toolchain
from nvfp4ctl.project import kernels_dir

KERNELS = {"sm_90a": "sm90/nvfp4_gemm_sm90.cu", "sm_100a": "sm100/nvfp4_gemm_sm100.cu"}
SM100_SUITE = Path(__file__).parents[1] / "sm100" / "test_kernel_build.py"


@pytest.mark.parametrize("arch", sorted(KERNELS))
def test_kernel_has_its_tensor_core_op_and_no_spills(arch: str) -> None:
    source = kernels_dir() / KERNELS[arch]
    if not source.is_file():
        pytest.skip(f"{source} is not written yet")
    if arch == "sm_100a" and SM100_SUITE.is_file():
        pytest.skip(f"built and checked by {SM100_SUITE.relative_to(SM100_SUITE.parents[2])}")
    if toolchain.sass_tools() is None:
        pytest.skip("cuobjdump/nvdisasm missing: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")
    report = build_kernel(source, arch)
    assert report.tensor_op.present, f"{source.name}: {report.tensor_op}"
    assert report.spill_bytes == 0, report.problems()
    assert report.problems() == []
