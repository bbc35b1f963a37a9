"""`nvfp4ctl build submission.py` compiles the device code of public-style tcgen05 submissions without
a GPU (slow: torch's headers and CUTLASS are compiled, minutes on 2 cores; cached afterwards)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.umma.host_proof import toolchain_missing

SUBMISSIONS = Path(__file__).resolve().parents[1] / "build" / "submissions"


@pytest.fixture(autouse=True)
def _toolchain() -> None:
    if why := toolchain_missing():
        pytest.skip(f"needs nvcc and the nvidia-cutlass headers: {why}")


def build(path: Path):
    return CliRunner().invoke(app, ["build", str(path)], env={"COLUMNS": "160"})


def test_hand_written_ptx_submission_reports_the_block_scaled_op() -> None:
    result = build(SUBMISSIONS / "ptx_tcgen05_submission.py")
    assert result.exit_code == 0, result.output
    assert "arch sm_100a (nvfp4_ptx_tcgen05's flag -gencode=arch=compute_100a,code=sm_100a)" in result.output
    assert "UTCOMMA.4X (fp4 block16: mxf4nvf4)" in result.output
    assert "of the leaderboard's 120 s" in result.output


def test_cutlass_submission_builds_with_the_wheel_headers() -> None:
    result = build(SUBMISSIONS / "cutlass_submission.py")
    assert result.exit_code == 0, result.output
    assert "arch sm_100a (TORCH_CUDA_ARCH_LIST=10.0a)" in result.output
    assert "UTCOMMA.4X" in result.output


def test_compiler_errors_point_at_the_py_line(tmp_path: Path) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text('from torch.utils.cpp_extension import load_inline\n'
                          'SRC = r"""\n'
                          '__global__ void k(float* x) {\n'
                          '  x[0] = not_declared_anywhere;\n'
                          '}\n'
                          '"""\n'
                          'load_inline(name="broken", cpp_sources="", cuda_sources=SRC,\n'
                          '            extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])\n')
    result = build(submission)
    assert result.exit_code == 1, result.output
    assert "submission.py:4: identifier \"not_declared_anywhere\" is undefined" in result.output
