"""The hand-written tcgen05 kernel compiles for sm_100a in seconds, its SASS holds the block-scaled
UMMA (UTCOMMA.4X), the scale copies to TMEM (UTCCP), the TMA tile loads (UTMALDG), the scale bulk
copies (UBLKCP) and the TMEM loads (LDTM), nothing spills, no CUTLASS header is included, and no
file of it says the forbidden word. (It is never executed here.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvfp4ctl.build.sources import local_headers

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "sm100" / "nvfp4_gemm_sm100_tc.cu"
REQUIRED_SASS = ("UTCOMMA.4X", "UTCCP", "UTMALDG", "UBLKCP", "LDTM")
COMPILE_BUDGET_S = 60.0  # device code alone; the whole exported submission is timed in docs/sm100_kernel.md


@pytest.fixture(scope="module")
def tc_build():
    from nvfp4ctl.build import build_kernel, toolchain
    from nvfp4ctl.errors import UsageError

    try:
        toolchain.nvcc_path()
    except UsageError as error:
        pytest.skip(f"needs nvcc: {error}")

    return build_kernel(KERNEL, "sm_100a")


def test_no_forbidden_word_in_kernel_or_headers() -> None:
    for path in (KERNEL, *local_headers(KERNEL)):
        assert "str" + "eam" not in path.read_text().lower(), path


def test_no_cutlass_in_the_device_path() -> None:
    for path in (KERNEL, *local_headers(KERNEL)):
        assert not re.search(r"#\s*include\s*[<\"](cute|cutlass)/", path.read_text()), path


def test_kernel_compiles_with_the_block_scaled_umma(tc_build) -> None:
    report = tc_build
    configs = len(re.findall(r"^using \w+ = TileConfig<", KERNEL.read_text(), re.MULTILINE))
    assert len(report.kernels) == configs, f"one kernel per compile-time config ({configs}), ptxas reported {len(report.kernels)}"
    assert report.spill_bytes == 0, f"spills: {report.functions}"
    if not report.cache_hit:
        assert report.compile_s < COMPILE_BUDGET_S, f"device compile took {report.compile_s} s"
    if not report.tensor_op.checked:
        pytest.skip("cuobjdump/nvdisasm missing (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
    sass = (report.entry / "kernel.sass").read_text()
    missing = [op for op in REQUIRED_SASS if op not in sass]
    assert not missing, f"SASS lacks {missing}"
    assert report.tensor_op.present, f"expected {report.tensor_op.expected}, found {report.tensor_op.found}"
