"""The sm_100a kernel compiles with nvcc for sm_100a, its SASS holds the block-scaled UMMA and the
TMA/UTCCP ops, nothing spills, and the file never says the forbidden word. (It is never executed here.)"""

from __future__ import annotations

import re
from concurrent.futures import Future
from pathlib import Path

import pytest

from nvfp4ctl.build.resources import saved_sass

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "sm100" / "nvfp4_gemm_sm100.cu"

REQUIRED_SASS = ("UTCOMMA.4X", "UTCCP", "UTMALDG", "UTMASTG", "LDTM")
BUILD_TIMEOUT_S = 1200


def test_no_forbidden_word_in_kernel() -> None:
    text = KERNEL.read_text().lower()
    assert "str" + "eam" not in text


def test_debug_dump_is_compiled_out_by_default() -> None:
    text = KERNEL.read_text()
    for hook in ("debug_dump<Config>(args", "printf("):
        for match in re.finditer(re.escape(hook), text):
            guarded = text.rfind("#if NVFP4CTL_DEBUG_DUMP", 0, match.start()) > text.rfind("#endif", 0, match.start())
            assert guarded, f"{hook!r} at offset {match.start()} is outside #if NVFP4CTL_DEBUG_DUMP"


def test_kernel_compiles_with_the_block_scaled_umma(kernel_build: Future) -> None:
    report = kernel_build.result(timeout=BUILD_TIMEOUT_S)
    kernels = [function for function in report.functions if function.entry]
    assert len(kernels) == 2, f"expected one GEMM kernel per dispatch config, ptxas reported {len(kernels)}"
    for function in report.functions:
        assert function.spill_stores == 0 and function.spill_loads == 0, f"{function}: spills"
    if not report.tensor_op.checked:
        pytest.skip("cuobjdump/nvdisasm missing (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
    sass = saved_sass(report.entry) or ""
    missing = [op for op in REQUIRED_SASS if op not in sass]
    assert not missing, f"SASS lacks {missing}"
    assert report.tensor_op.present, f"expected {report.tensor_op.expected}, found {report.tensor_op.found}"
