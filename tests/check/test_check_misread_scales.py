"""check's reading of scales read in the wrong layout for the GEMM, the GEMV and each group of the grouped
GEMM, on CPU: named where a kernel read a permuted scale tensor as if in the reference (rows, k/16) layout,
never said of an ordinary numeric mistake."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem
from nvfp4ctl.project import kernels_dir

HINT = "read as if in the reference (rows, k/16) layout"
# the permuted scales' bytes, batch by batch in memory order, read as rows of k/16 scales
MISREAD = '''

def _misread(permuted, rows, sf_k, dtype):
    batches = permuted.shape[5]
    per_batch = permuted.view(torch.uint8).permute(5, 2, 4, 0, 1, 3).reshape(batches, -1)
    return per_batch[:, : rows * sf_k].reshape(batches, rows, sf_k).view(torch.float8_e4m3fn).to(dtype)


def _misread_dequantize(packed, permuted_scales, dtype):
    values = decode_fp4(packed, dtype)
    batches, rows, k = values.shape
    scales = _misread(permuted_scales, rows, k // SF_VEC, dtype)
    return (values.view(batches, rows, k // SF_VEC, SF_VEC) * scales.unsqueeze(-1)).view(batches, rows, k)
'''
EVERY_SCALE = MISREAD + '''

def gather_scales(permuted, rows, sf_k, dtype):
    return _misread(permuted, rows, sf_k, dtype)
'''
GEMM_ONE_SIDE = MISREAD + '''

def custom_kernel(data):
    a, b, _sfa_ref, _sfb_ref, sfa_permuted, sfb_permuted, c = data
    a_values = (_misread_dequantize if {a_misread} else dequantize)(a, sfa_permuted, torch.float32)
    b_values = (_misread_dequantize if {b_misread} else dequantize)(b, sfb_permuted, torch.float32)
    c.copy_(torch.matmul(a_values, b_values.transpose(1, 2)).permute(1, 2, 0))
    return c
'''
# ordinary numeric mistakes on top of the right result: they must not be read as a layout mistake
SCALED_BY_1_01 = '''

_right = custom_kernel


def custom_kernel(data):
    out = _right(data)
    out.mul_(1.01)
    return out
'''
ONE_TILE_ZEROED = '''

_right = custom_kernel


def custom_kernel(data):
    out = _right(data)
    out[128:256, :128].zero_()
    return out
'''
GROUP_SCALED_BY_1_01 = '''

_right = custom_kernel


def custom_kernel(data):
    out = _right(data)
    out[1].mul_(1.01)
    return out
'''
GROUPS = "128,128,256;128,256,512"


@pytest.fixture
def on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)


def check(problem: str, tmp_path: Path, tail: str, shape: str) -> tuple[int, str]:
    """check of the problem's exact plain-torch submission with `tail` appended (it redefines what it spoils):
    the exit code and the output on one line."""
    path = tmp_path / f"{problem}_wrong.py"
    path.write_text((kernels_dir() / get_problem(problem).fallback_submission).read_text() + tail)
    result = CliRunner().invoke(app, ["check", "--task", str(get_problem(problem).task_file), "--submission",
                                      str(path), "--shape", shape, "--no-probe"])
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize(("a_misread", "b_misread", "names"), [
    (True, False, "sfa_permuted"),
    (False, True, "sfb_permuted"),
], ids=["sfa", "sfb"])
def test_gemm_one_scale_read_in_the_reference_layout_is_named(on_cpu, tmp_path: Path, a_misread: bool,
                                                              b_misread: bool, names: str) -> None:
    """A failing GEMM printed only its tile map: which permuted scales were read in the wrong layout is named."""
    tail = GEMM_ONE_SIDE.format(a_misread=a_misread, b_misread=b_misread)
    code, output = check("nvfp4_gemm", tmp_path, tail, "256,256,512,2")
    assert code == 1, output
    assert (f"GEMM: the wrong elements equal C with the bytes of {names} {HINT}: a permuted scale tensor holds"
            " to_blocked's 128x4 atoms (`nvfp4ctl dump --layout` shows where each scale lives)") in output


def test_gemm_every_scale_read_in_the_reference_layout_is_named(on_cpu, tmp_path: Path) -> None:
    code, output = check("nvfp4_gemm", tmp_path, EVERY_SCALE, "256,384,768")
    assert code == 1, output
    assert f"GEMM: the wrong elements equal C with the bytes of sfa_permuted and sfb_permuted {HINT}" in output


def test_gemv_scales_read_in_the_reference_layout_are_named(on_cpu, tmp_path: Path) -> None:
    # b is padded to 128 rows: its row 0 read in the wrong layout takes rows 32, 64, 96's scales past k-block 3
    code, output = check("nvfp4_gemv", tmp_path, EVERY_SCALE, "256,512,2")
    assert code == 1, output
    assert f"GEMV: the wrong elements equal c with the bytes of sfa_permuted and sfb_permuted {HINT}" in output


def test_group_scales_read_in_the_reference_layout_are_named_per_group(on_cpu, tmp_path: Path) -> None:
    code, output = check("nvfp4_group_gemm", tmp_path, EVERY_SCALE, GROUPS)
    assert code == 1, output
    for group in (1, 2):
        assert f"group {group}: the wrong elements equal c with the bytes of sfa_permuted and sfb_permuted {HINT}" \
            in output


@pytest.mark.parametrize(("problem", "tail", "shape"), [
    ("nvfp4_gemm", SCALED_BY_1_01, "256,256,512,2"),
    ("nvfp4_gemm", ONE_TILE_ZEROED, "256,256,512,2"),
    ("nvfp4_gemv", SCALED_BY_1_01, "256,512,2"),
    ("nvfp4_gemv", ONE_TILE_ZEROED, "256,512,2"),
    ("nvfp4_group_gemm", GROUP_SCALED_BY_1_01, GROUPS),
], ids=["gemm-c-1.01", "gemm-tile-zeroed", "gemv-c-1.01", "gemv-tile-zeroed", "group-c-1.01"])
def test_an_ordinary_numeric_mistake_gets_no_layout_reading(on_cpu, tmp_path: Path, problem: str, tail: str,
                                                            shape: str) -> None:
    code, output = check(problem, tmp_path, tail, shape)
    assert code == 1, output
    assert HINT not in output
