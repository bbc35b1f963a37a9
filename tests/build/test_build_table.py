"""The cells of build's tables, from reports made here (no compiler): byte counts carry their unit in
every column, and two instantiations of one kernel template get rows that tell them apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck
from nvfp4ctl.build.resources import parse_ptxas
from nvfp4ctl.commands import build as build_command
from nvfp4ctl.commands import build_submission

# `ptxas -v` of an export of kernels/sm100/nvfp4_gemm_sm100_tc.cu (nvcc 13.0, sm_100a): its kernel
# template instantiated for both tile configs (its helper functions' lines left out)
TC_PTXAS = """\
ptxas info    : 10486428 bytes gmem
ptxas info    : Compiling entry function '_ZN14nvfp4_sm100_tc26nvfp4_gemm_sm100_tc_kernelINS_10TileConfigILi128ELi6EEEEEv14CUtensorMap_stS3_PKhS5_P6__halfNS_7ProblemEN11sm100_split8SpanPlanEj' for 'sm_100a'
ptxas info    : Function properties for _ZN14nvfp4_sm100_tc26nvfp4_gemm_sm100_tc_kernelINS_10TileConfigILi128ELi6EEEEEv14CUtensorMap_stS3_PKhS5_P6__halfNS_7ProblemEN11sm100_split8SpanPlanEj
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 254 registers, used 2 barriers
ptxas info    : Compiling entry function '_ZN14nvfp4_sm100_tc26nvfp4_gemm_sm100_tc_kernelINS_10TileConfigILi64ELi8EEEEEv14CUtensorMap_stS3_PKhS5_P6__halfNS_7ProblemEN11sm100_split8SpanPlanEj' for 'sm_100a'
ptxas info    : Function properties for _ZN14nvfp4_sm100_tc26nvfp4_gemm_sm100_tc_kernelINS_10TileConfigILi64ELi8EEEEEv14CUtensorMap_stS3_PKhS5_P6__halfNS_7ProblemEN11sm100_split8SpanPlanEj
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 2 barriers
"""
UTCOMMA = TensorOpCheck(expected="UTCOMMA.4X", found=("UTCOMMA.4X",), match="UTCOMMA.4X", checked=True)


def _report(functions: tuple[FunctionUsage, ...]) -> BuildReport:
    return BuildReport(source=Path("k.cu"), arch="sm_100a", key="k", entry=Path("."), module_name=None,
                       functions=functions, tensor_op=UTCOMMA, compile_s=1.0)


def _cells(row: list[object]) -> list[str]:
    return [str(cell) for cell in row]


def test_no_spills_read_0_b_beside_the_stack_column() -> None:
    clean = _report((FunctionUsage("_Z1kv", True, 40, 2048, 0, 0, 0),))
    kernel_row = _cells(build_command._row(clean, 1.0))
    assert kernel_row[3:6] == ["2.0 KiB", "0 B", "0 B"]
    submission_row = _cells(build_submission._kernel_rows("k.cu", clean.functions, UTCOMMA, "1.0 s", "built")[0])
    assert submission_row[2:5] == ["2.0 KiB", "0 B", "0 B"]
    assert _cells(build_command._detail_rows(clean)[0])[3:] == ["2.0 KiB", "0 B", "0 B", "0 B"]


def test_spills_are_bytes_with_their_unit_in_red() -> None:
    spilled = _report((FunctionUsage("_Z1kv", True, 255, 0, 2048, 1536, 24),))
    cell = build_command._row(spilled, 1.0)[5]
    assert str(cell) == "1.5 KiB" and "red" in str(cell.style)
    assert _cells(build_command._detail_rows(spilled)[0])[4:] == ["2.0 KiB", "1.5 KiB", "24 B"]
    assert str(build_submission._kernel_rows("k.cu", spilled.functions, UTCOMMA, "1.0 s", "built")[0][4]) == "1.5 KiB"


def test_two_instantiations_of_one_template_get_rows_that_differ() -> None:
    functions = parse_ptxas(TC_PTXAS)
    rows = build_submission._kernel_rows("ext.cu", functions, UTCOMMA, "1.0 s", "built")
    assert [(row[0], row[1]) for row in rows] == [
        ("ext.cu: nvfp4_sm100_tc::nvfp4_gemm_sm100_tc_kernel<TileConfig<128, 6>>", 254),
        ("ext.cu: nvfp4_sm100_tc::nvfp4_gemm_sm100_tc_kernel<TileConfig<64, 8>>", 168),
    ]
    # the same names as build -v of the .cu gives its functions
    details = build_command._detail_rows(_report(functions))
    assert [row[0] for row in details] == [row[0].removeprefix("ext.cu: ") for row in rows]


PLAIN_SUBMISSION = '''from torch.utils.cpp_extension import load_inline
CUDA = r"""__global__ void k(float* p) { p[0] = 1.0f; }"""
m = load_inline(name="plain", cpp_sources="", cuda_sources=CUDA,
                extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])
'''


def test_a_piped_build_keeps_each_kernel_name_on_one_line(tmp_path: Path, compiles: list[str], monkeypatch) -> None:
    """`build sub.py | cat` cut `TileConfig<128, 6>>` after its 1: the table, wider than a pipe's 160
    columns, narrowed its widest column, the kernel names, below their longest word."""
    from typer.testing import CliRunner

    from nvfp4ctl.build import submission_build
    from nvfp4ctl.cli import app

    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe: no terminal, no width set
    monkeypatch.setattr(submission_build.resources, "parse_ptxas", lambda log: parse_ptxas(TC_PTXAS))
    monkeypatch.setattr(submission_build.resources, "check_tensor_op", lambda arch, sass: UTCOMMA)
    submission = tmp_path / "submission.py"
    submission.write_text(PLAIN_SUBMISSION)
    result = CliRunner().invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    names = [line for line in result.output.splitlines() if "nvfp4_gemm_sm100_tc_kernel" in line]
    assert len(names) == 2, result.output
    assert "<TileConfig<128, 6>>" in names[0] and "<TileConfig<64, 8>>" in names[1]


# `ptxas -v` of kernels/sm90/nvfp4_gemm_sm90.cu (nvcc 13.0, sm_90a), three of its 21 kernels: a wgmma
# instantiation (the HGMMA's) and two of the direct mma.sync kernel, whose <4, 1> has the most registers
SM90_PTXAS = """\
ptxas info    : Compiling entry function '_ZN10nvfp4_sm9022nvfp4_gemm_sm90_kernelILi1ELb1ELb0ELb0ELb1ELi128EEEv14CUtensorMap_stS1_S1_PKhS3_S3_P6__halfiiiijNS_9SpanSplitENS_15PersistentSplitE' for 'sm_90a'
ptxas info    : Function properties for _ZN10nvfp4_sm9022nvfp4_gemm_sm90_kernelILi1ELb1ELb0ELb0ELb1ELi128EEEv14CUtensorMap_stS1_S1_PKhS3_S3_P6__halfiiiijNS_9SpanSplitENS_15PersistentSplitE
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 5 barriers
ptxas info    : Compiling entry function '_ZN10nvfp4_sm9029nvfp4_gemm_sm90_direct_kernelILi2ELi2EEEvPKhS2_S2_S2_P6__halfiii' for 'sm_90a'
ptxas info    : Function properties for _ZN10nvfp4_sm9029nvfp4_gemm_sm90_direct_kernelILi2ELi2EEEvPKhS2_S2_S2_P6__halfiii
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 8192 bytes smem
ptxas info    : Compiling entry function '_ZN10nvfp4_sm9029nvfp4_gemm_sm90_direct_kernelILi4ELi1EEEvPKhS2_S2_S2_P6__halfiii' for 'sm_90a'
ptxas info    : Function properties for _ZN10nvfp4_sm9029nvfp4_gemm_sm90_direct_kernelILi4ELi1EEEvPKhS2_S2_S2_P6__halfiii
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 208 registers, used 1 barriers, 32768 bytes smem
"""
HGMMA = TensorOpCheck(expected="HGMMA", found=("HGMMA.64x128x16.F32", "HMMA.16816.F32"), match="HGMMA.64x128x16.F32",
                      checked=True)


def test_a_file_of_several_kernels_names_the_one_its_regs_and_smem_are(monkeypatch) -> None:
    """The sm_90a file's row read 208 regs and 32.0 KiB beside HGMMA.64x128x16.F32, with nothing saying they
    were its direct mma.sync kernel's and the HGMMA its wgmma kernels': a note under the table names it."""
    from typer.testing import CliRunner

    from nvfp4ctl.build import builder
    from nvfp4ctl.cli import app

    report = BuildReport(source=Path("nvfp4_gemm_sm90.cu"), arch="sm_90a", key="k", entry=Path("."), module_name=None,
                         functions=parse_ptxas(SM90_PTXAS), tensor_op=HGMMA, compile_s=1.0)
    assert _cells(build_command._row(report, 1.0))[2:4] == ["208", "32.0 KiB"]
    whose = build_command._whose_figures(report)
    assert whose == ("regs and static smem are those of nvfp4_sm90::nvfp4_gemm_sm90_direct_kernel<4, 1>, the most registers"
                     " of its 3 kernels; the tensor op is the file's whole SASS (-v: each kernel's)")
    assert build_command._whose_figures(_report((FunctionUsage("_Z1kv", True, 40),))) is None  # its row says it all

    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setattr(builder, "build_kernel", lambda source, arch, verbose=False: report)
    result = CliRunner().invoke(app, ["build", str(Path(__file__).parent / "fixtures" / "hgmma_probe.cu")])
    assert result.exit_code == 0, result.output
    assert "note: nvfp4_gemm_sm90.cu (sm_90a): regs and static smem are those of nvfp4_sm90::nvfp4_gemm_sm90_direct_kernel<4, 1>," in \
        result.output.replace("\n", " ")
    assert max(len(line) for line in result.output.splitlines() if "│" in line) <= 160


@pytest.mark.parametrize("columns", [40, 10])
def test_a_narrow_terminal_gets_the_detail_tables_kernel_names_whole(columns: int, monkeypatch, capsys) -> None:
    """build -v's table of a file's functions folded a kernel's name, or every value, into a narrow
    terminal; now it is one record per function, every name and figure whole."""
    from table_words import has_a_table, missing_words, printed_at

    report = _report(parse_ptxas(TC_PTXAS))
    wide, narrow = (printed_at(width, lambda: build_command._show_details(report), monkeypatch, capsys)
                    for width in (400, columns))
    assert has_a_table(wide) and not has_a_table(narrow)
    assert missing_words(narrow, wide) == []
