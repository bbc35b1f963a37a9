"""A build without a tensor-core op fails for a problem whose kernels need one (the GEMMs), and is a note for
the GEMV, which is bound by memory (FFMA and DRAM), not by math: the task's problem decides, as it does for
check. The compiler and the SASS are stand-ins here."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build.report import BuildReport, TensorOpCheck
from nvfp4ctl.cli import app
from nvfp4ctl.project import kernels_dir

from plain_gemv import SUB_CUDA, build_in_task


def test_a_gemv_without_a_tensor_op_is_a_note(tmp_path: Path, compiles: list[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    code, said = build_in_task(tmp_path / "gemv", "nvfp4_gemv", SUB_CUDA, monkeypatch)
    assert code == 0, said
    assert ("note: gemv.cu: no UTCOMMA.4X in the sm_100a SASS (found: no tensor-core op): none needed for nvfp4_gemv,"
            " which is bound by memory (FFMA and DRAM), not by tensor cores") in said
    assert "none (not needed)" in said and "error:" not in said


@pytest.mark.parametrize("problem", ["nvfp4_gemm", "nvfp4_dual_gemm"])
def test_a_gemm_without_a_tensor_op_still_fails(tmp_path: Path, compiles: list[str],
                                                monkeypatch: pytest.MonkeyPatch, problem: str) -> None:
    code, said = build_in_task(tmp_path / problem, problem, SUB_CUDA, monkeypatch)
    assert code == 1, said
    assert "error: gemv: no UTCOMMA.4X in the sm_100a SASS (found: no tensor-core op at all" in said
    assert "note:" not in said


NO_OP = TensorOpCheck(expected="UTCOMMA.4X", found=(), match=None, checked=True)


@pytest.mark.parametrize("kernel, exit_code", [("nvfp4_gemv_naive.cu", 0), ("nvfp4_dual_gemm_naive.cu", 1)])
def test_a_kernel_is_judged_by_the_problem_whose_api_it_includes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel: str, exit_code: int) -> None:
    """A naive kernel without its `no-tensor-op` mark: the GEMV's builds with a note, the dual GEMM's fails."""
    source = tmp_path / "sm100" / kernel
    source.parent.mkdir()
    source.write_text((kernels_dir() / "naive" / kernel).read_text().replace("// nvfp4ctl: no-tensor-op\n", ""))
    for header in ("naive_decode.cuh",):
        (source.parent / header).write_text((kernels_dir() / "naive" / header).read_text())

    def build_kernel(source: Path, arch: str, verbose: bool = False) -> BuildReport:
        return BuildReport(source=source, arch=arch, key="k", entry=tmp_path, module_name=None, functions=(),
                           tensor_op=NO_OP, compile_s=0.0)

    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", build_kernel)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["build", "--arch", "sm_100a", str(source)])
    said = " ".join(result.output.split())
    assert result.exit_code == exit_code, said
    note = f"note: {kernel}: no UTCOMMA.4X in the sm_100a SASS (found: no tensor-core op): none needed for nvfp4_gemv"
    assert (note in said) == (exit_code == 0)
