"""check's reading of a wrong result in the problem's terms, on CPU: the dual GEMM's scales read in the
wrong layout and what feeds both products, the grouped GEMM's results and inputs mixed up between groups."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem
from nvfp4ctl.problems.common.likeness import close_share
from nvfp4ctl.problems.nvfp4_dual_gemm.diagnose import _exclusions
from nvfp4ctl.project import kernels_dir

# the permuted scales' bytes, batch by batch in memory order, read as rows of k/16 scales
MISREAD = '''

def _misread(permuted, rows, sf_k, dtype):
    batches = permuted.shape[5]
    per_batch = permuted.view(torch.uint8).permute(5, 2, 4, 0, 1, 3).reshape(batches, -1)
    return per_batch[:, : rows * sf_k].reshape(batches, rows, sf_k).view(torch.float8_e4m3fn).to(dtype)
'''


@pytest.fixture
def on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)


def check(problem: str, submission: Path, shape: str, *args: str):
    task = str(get_problem(problem).task_file)
    return CliRunner().invoke(app, ["check", "--task", task, "--submission", str(submission), "--shape", shape,
                                    "--no-probe", *args])


def submission(tmp_path: Path, problem: str, tail: str) -> Path:
    """The problem's exact plain-torch submission with `tail` appended (it redefines what it spoils)."""
    path = tmp_path / f"{problem}_wrong.py"
    path.write_text((kernels_dir() / get_problem(problem).fallback_submission).read_text() + tail)
    return path


def one_line(output: str) -> str:
    return " ".join(output.split())


def test_dual_every_scale_read_in_the_reference_layout_is_named(on_cpu, tmp_path: Path) -> None:
    # gather_scales redefined for every operand: the review's submission, whose report said only
    # "both products are implicated"
    wrong = submission(tmp_path, "nvfp4_dual_gemm", MISREAD + '''

def gather_scales(permuted, rows, sf_k, dtype):
    return _misread(permuted, rows, sf_k, dtype)
''')
    result = check("nvfp4_dual_gemm", wrong, "256,256,320", "--scales", "full")  # full: some C overflow to Inf
    assert result.exit_code == 1, result.output
    assert ("dual GEMM: the wrong elements equal C with the bytes of sfa_permuted, sfb1_permuted and sfb2_permuted"
            " read as if in the reference (rows, k/16) layout: a permuted scale tensor holds to_blocked's 128x4"
            " atoms (`nvfp4ctl dump --layout` shows where each scale lives)") in one_line(result.output)
    assert "implicated" not in result.output


def test_dual_only_sfa_read_in_the_reference_layout_is_named(on_cpu, tmp_path: Path) -> None:
    wrong = submission(tmp_path, "nvfp4_dual_gemm", MISREAD + '''

def custom_kernel(data):
    a, b1, b2, _r1, _r2, _r3, sfa_permuted, sfb1_permuted, sfb2_permuted, c = data
    values = decode_fp4(a, torch.float32)
    l, m, k = values.shape
    scales = _misread(sfa_permuted, m, k // SF_VEC, torch.float32)
    a_values = (values.view(l, m, k // SF_VEC, SF_VEC) * scales.unsqueeze(-1)).view(l, m, k)
    first = product_fp32(a_values, dequantize(b1, sfb1_permuted, torch.float32))
    second = product_fp32(a_values, dequantize(b2, sfb2_permuted, torch.float32))
    c.copy_((torch.nn.functional.silu(first) * second).permute(1, 2, 0))
    return c
''')
    result = check("nvfp4_dual_gemm", wrong, "256,512,256,2")
    assert result.exit_code == 1, result.output
    assert "the wrong elements equal C with the bytes of sfa_permuted read as if in the reference" in one_line(result.output)


def test_dual_both_products_implicated_names_what_feeds_both() -> None:
    s = torch.tensor([0.0, 1.0])
    p = torch.tensor([1.0, 1.0])
    g = torch.tensor([5.0, -3.0])  # C ≠ 0 where s = 0, and C/p below silu's minimum
    assert _exclusions(g, s, p, 1e-3) == [
        "dual GEMM: both products are implicated (1 element rule out silu(A·B1ᵀ) alone, 1 rule out A·B2ᵀ alone):"
        " A feeds both, so the likely cause is A or its scales (sfa)"]


def test_dual_c_off_zero_where_silu_is_zero_counts_past_atol_as_check_does() -> None:
    """Where silu(A·B1ᵀ) is 0, C should be 0: check calls it wrong past atol, and the reading counted it only
    past atol + rtol·|C|, missing the elements in between."""
    line = _exclusions(torch.tensor([1.5e-3]), torch.tensor([0.0]), torch.tensor([0.5]), 1e-3)
    assert line and "silu(A·B1ᵀ) is implicated" in line[0]


GROUPS = "128,128,256;128,128,256;128,128,256;128,128,256"


SHIFTED_BY_ONE = """
    out = _right(data)
    results = [c.clone() for c in out]
    for group in range(1, len(out)):
        out[group].copy_(results[group - 1])
    return out
"""
RESULTS_EXCHANGED = """
    out = _right(data)
    first, third = out[0].clone(), out[2].clone()
    out[0].copy_(third)
    out[2].copy_(first)
    return out
"""
SCALES_EXCHANGED = """
    abc, scales, permuted, sizes = data
    permuted = list(permuted)
    permuted[0], permuted[2] = permuted[2], permuted[0]
    return _right((abc, scales, permuted, sizes))
"""
ANOTHER_GROUPS_B = """
    abc, scales, permuted, sizes = data
    out = _right(data)
    (a, _, c), (_, b, _) = abc[1], abc[3]
    gemm(a, b, permuted[1][0], permuted[3][1], c)
    return out
"""


@pytest.mark.parametrize(("body", "said", "unsaid"), [
    (SHIFTED_BY_ONE, ["wrong outputs: 3 of 4: group 2", "group 2's c matches group 1's reference group 3's c matches"
                      " group 2's reference group 4's c matches group 3's reference",
                      "each of those groups holds the result of the group before it: the results look shifted by"
                      " one group"], None),
    (RESULTS_EXCHANGED, ["group 1's c matches group 3's reference and group 3's c group 1's: the two results look"
                         " exchanged"], None),
    (SCALES_EXCHANGED, ["groups 1 and 3: their scales (sfa and sfb) look exchanged (each group's c matches its"
                        " product with the other group's)"], "matches group"),
    (ANOTHER_GROUPS_B, ["group 2's c matches its product with group 4's B (b and sfb)"], None),
], ids=["results-shifted-by-one", "results-exchanged", "scales-exchanged", "another-groups-b"])
def test_a_group_mix_up_is_named(on_cpu, tmp_path: Path, body: str, said: list[str], unsaid: str | None) -> None:
    """A wrong group was only "group 2 (16360 of 16384 wrong)": whose result or inputs it holds is named."""
    wrong = submission(tmp_path, "nvfp4_group_gemm", "\n_right = custom_kernel\n\n\ndef custom_kernel(data):" + body)
    result = check("nvfp4_group_gemm", wrong, GROUPS)
    assert result.exit_code == 1, result.output
    for line in said:
        assert line in one_line(result.output), line
    assert unsaid is None or unsaid not in result.output


def loose_task(tmp_path: Path, problem: str) -> Path:
    """The problem's shipped task.yml with a tolerance of 0.1: a result 5 % off is within it."""
    shipped = get_problem(problem).task_file.read_text()
    assert "tolerance: {rtol: 0.001, atol: 0.001}" in shipped
    path = tmp_path / "task.yml"
    path.write_text(shipped.replace("tolerance: {rtol: 0.001, atol: 0.001}", "tolerance: {rtol: 0.1, atol: 0.1}"))
    return path


def check_on(task: Path, submission: Path, shape: str):
    return CliRunner().invoke(app, ["check", "--task", str(task), "--submission", str(submission), "--shape", shape,
                                    "--no-probe"])


def test_group_mix_up_is_read_to_the_tasks_tolerance(on_cpu, tmp_path: Path) -> None:
    # results shifted by one group and 5 % off: within the task's 0.1 of the group before's reference,
    # where the reading used 1e-3 whatever the task said and named nothing
    wrong = submission(tmp_path, "nvfp4_group_gemm", '''

_right = custom_kernel


def custom_kernel(data):
    out = _right(data)
    results = [c.clone() for c in out]
    for group in range(1, len(out)):
        out[group].copy_(results[group - 1] * 1.05)
    return out
''')
    result = check_on(loose_task(tmp_path, "nvfp4_group_gemm"), wrong, GROUPS)
    assert result.exit_code == 1, result.output
    assert "group 2's c matches group 1's reference" in result.output
    assert "the results look shifted by one group" in one_line(result.output)


def test_dual_mistake_is_read_to_the_tasks_tolerance(on_cpu, tmp_path: Path) -> None:
    wrong = submission(tmp_path, "nvfp4_dual_gemm", '''

def custom_kernel(data):
    a, b1, b2, _r1, _r2, _r3, sfa_permuted, sfb1_permuted, sfb2_permuted, c = data
    a_values = dequantize(a, sfa_permuted, torch.float32)
    first = product_fp32(a_values, dequantize(b1, sfb1_permuted, torch.float32))
    second = product_fp32(a_values, dequantize(b2, sfb2_permuted, torch.float32))
    c.copy_((first * second * 1.05).permute(1, 2, 0))
    return c
''')
    result = check_on(loose_task(tmp_path, "nvfp4_dual_gemm"), wrong, "256,256,256")
    assert result.exit_code == 1, result.output
    assert "dual GEMM: the wrong elements equal (A·B1ᵀ) ⊙ (A·B2ᵀ): silu is missing" in one_line(result.output)


def test_close_share_counts_equal_infinities_and_nans_as_close() -> None:
    inf, nan = float("inf"), float("nan")
    assert close_share(torch.tensor([inf, -inf, nan, 1.0]), torch.tensor([inf, -inf, nan, 1.0005]), 1e-3, 1e-3) == 1.0
    assert close_share(torch.tensor([inf, 1.0]), torch.tensor([-inf, 2.0]), 1e-3, 1e-3) == 0.0
