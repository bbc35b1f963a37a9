"""`nvfp4ctl check` for the dual GEMM, the grouped GEMM and the GEMV on CPU: the exact plain-torch
submissions pass, and a wrong 128x128 tile (or a wrong group) is pinpointed in the problem's terms."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem
from nvfp4ctl.project import kernels_dir


@pytest.fixture
def on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)


def check(problem: str, *args: str):
    task = str(get_problem(problem).task_file)
    return CliRunner().invoke(app, ["check", "--task", task, *args])


def starter(problem: str) -> Path:
    return kernels_dir() / get_problem(problem).fallback_submission


def spoiled(tmp_path: Path, problem: str, body: str) -> str:
    """The problem's correct plain-torch submission, its result then spoiled by `body` (on `out`)."""
    path = tmp_path / f"{problem}_spoiled.py"
    path.write_text(starter(problem).read_text() + "\n\n_right = custom_kernel\n\n\ndef custom_kernel(data):\n"
                    "    out = _right(data)\n" + "".join(f"    {line}\n" for line in body.splitlines()) + "    return out\n")
    return str(path)


@pytest.mark.parametrize("problem, shape", [
    ("nvfp4_dual_gemm", "128,256,256"), ("nvfp4_gemv", "256,512,2"), ("nvfp4_group_gemm", "128,256,256;64,128,512"),
])
def test_plain_torch_starter_passes_with_full_scales(on_cpu, problem: str, shape: str) -> None:
    result = check(problem, "--submission", str(starter(problem)), "--shape", shape, "--scales", "full")
    assert result.exit_code == 0, result.output
    assert f"check · {problem} ·" in result.output and "1/1 pass" in result.output


def test_default_target_is_the_exact_torch_fallback_named_as_such(on_cpu) -> None:
    result = check("nvfp4_gemv", "--shape", "128,256", "--no-probe")
    assert result.exit_code == 0, result.output
    assert "nvfp4_gemv_submission.py (exact torch fallback" in result.output


def test_dual_wrong_tile_is_pinpointed(on_cpu, tmp_path: Path) -> None:
    wrong = spoiled(tmp_path, "nvfp4_dual_gemm", "out[128:256, 0:128] += 1")
    result = check("nvfp4_dual_gemm", "--submission", wrong, "--shape", "256,256,256", "--no-probe")
    assert result.exit_code == 1, result.output
    assert "wrong 128x128 tiles (2 m-tiles x 2 n-tiles; X all wrong, x some, . ok)\n    ..\n    X.\n" in result.output


def test_dual_names_the_product_when_one_alone_explains_it(on_cpu, tmp_path: Path) -> None:
    # b2 used for both products: C = silu(A·B2ᵀ) ⊙ (A·B2ᵀ)
    body = ("a, b1, b2, s0, s1, s2, pa, p1, p2, c = data\n"
            "out = _right((a, b2, b2, s0, s2, s2, pa, p2, p2, c))")
    result = check("nvfp4_dual_gemm", "--submission", spoiled(tmp_path, "nvfp4_dual_gemm", body),
                   "--shape", "128,128,256", "--no-probe")
    assert result.exit_code == 1, result.output
    assert "b2 was used for both products, so silu(A·B1ᵀ) is the wrong one" in result.output


def test_group_wrong_group_is_pinpointed(on_cpu, tmp_path: Path) -> None:
    wrong = spoiled(tmp_path, "nvfp4_group_gemm", "out[1][0:128, 0:128] += 1")
    result = check("nvfp4_group_gemm", "--submission", wrong, "--shape", "128,128,256;256,256,256;128,128,256",
                   "--no-probe")
    assert result.exit_code == 1, result.output
    assert "wrong outputs: 1 of 3: group 2 (16384 of 65536 wrong)" in result.output
    assert "wrong 128x128 tiles of group 2 c (2 m-tiles x 2 n-tiles" in result.output
    # the rows, columns and first mismatches are the wrong group's too, and say so
    assert "wrong rows (m) of group 2 c: 128 of 256: 0, 1, 2" in result.output
    assert "wrong columns (n) of group 2 c: 128 of 256: 0, 1, 2" in result.output
    assert "first mismatches of group 2 c (m, n, l): got vs want\n    (0, 0, 0) " in result.output


def test_group_reused_result_is_counted_over_every_group(on_cpu, tmp_path: Path) -> None:
    """The anti-cache probe's count covers all groups, not the first wrong group's alone."""
    body = "global _kept\ntry:\n    out = _kept\nexcept NameError:\n    _kept = [o.clone() for o in out]"
    result = check("nvfp4_group_gemm", "--submission", spoiled(tmp_path, "nvfp4_group_gemm", body),
                   "--shape", "128,128,256;128,256,256;64,128,256")
    assert result.exit_code == 1, result.output
    found = re.search(r"and (\d+) of 57344 outputs \(3 of 3 groups\) did not follow the new data", result.output)
    assert found and int(found[1]) > 32768, result.output  # more than the first group's 16384 and the second's


def test_group_returning_one_tensor_is_explained(on_cpu, tmp_path: Path) -> None:
    wrong = spoiled(tmp_path, "nvfp4_group_gemm", "out = out[0]")
    result = check("nvfp4_group_gemm", "--submission", wrong, "--only", "1", "--no-probe")
    assert result.exit_code == 1, result.output
    assert "expected a list of 2 tensors (the c of every group)" in result.output


def test_gemv_wrong_tile_is_pinpointed(on_cpu, tmp_path: Path) -> None:
    wrong = spoiled(tmp_path, "nvfp4_gemv", "out[128:256] += 1")
    result = check("nvfp4_gemv", "--submission", wrong, "--shape", "384,256", "--no-probe")
    assert result.exit_code == 1, result.output
    # c is (m, 1, l): blocks of rows, not 128x128 tiles of an n it does not have; the middle index is always 0
    assert "wrong blocks of 128 rows (m) (3 blocks from m = 0; X all wrong, x some, . ok)\n    m   0: .X.\n" in result.output
    assert "first mismatches (m, 0, l): got vs want\n    (128, 0, 0) " in result.output
    assert "128x128" not in result.output and "(m, n, l)" not in result.output and "columns (n)" not in result.output
    every = check("nvfp4_gemv", "--submission", spoiled(tmp_path, "nvfp4_gemv", "out += 1"), "--shape", "384,256",
                  "--no-probe")
    assert "every block of 128 rows (m) is wrong (3 blocks)" in every.output, every.output


@pytest.mark.parametrize("body, hint", [
    ("out = out[:, 0, :]", "the middle dimension (1) is missing; return c itself"),
    ("out = out.permute(2, 0, 1)", "l is first; c is (m, 1, l), a permuted view of an (l, m, 1) buffer"),
], ids=["squeezed", "l-first"])
def test_gemv_wrong_output_shape_is_named_in_its_own_dimensions(on_cpu, tmp_path: Path, body: str, hint: str) -> None:
    """The GEMV's c is (m, 1, l): it has no n, and c[:, 0, :] drops its 1, not l."""
    wrong = spoiled(tmp_path, "nvfp4_gemv", body)
    result = check("nvfp4_gemv", "--submission", wrong, "--shape", "128,256,2", "--no-probe")
    assert result.exit_code == 1, result.output
    assert "expected (128, 1, 2) (m, 1, l): " + hint in result.output


def test_gemv_shape_in_its_own_syntax(on_cpu) -> None:
    result = check("nvfp4_gemv", "--shape", "128,256,512,1")  # M,N,K,L is not a GEMV shape
    assert result.exit_code == 2, result.output
    assert "error: --shape 128,256,512,1: expected M,K or M,K,L as positive integers" in result.output
    result = check("nvfp4_gemv", "--shape", "128,96")
    assert result.exit_code == 2, result.output
    assert "error: --shape 128,96: K: expected a multiple of 64" in result.output


# --- on a CUDA GPU (run by the lead on an H100) ---------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("problem, kernel", [
    ("nvfp4_dual_gemm", "nvfp4_dual_gemm_naive.cu"), ("nvfp4_gemv", "nvfp4_gemv_naive.cu"),
    ("nvfp4_group_gemm", "nvfp4_group_gemm_naive.cu"),
])
def test_naive_kernels_through_the_problem_c_abi_pass_every_test(problem: str, kernel: str) -> None:
    """--kernel with a problem's API header: built with its binding, called with its tuple elements."""
    import subprocess
    import sys

    source = kernels_dir() / "naive" / kernel
    done = subprocess.run([sys.executable, "-m", "nvfp4ctl", "check", "--task", str(get_problem(problem).task_file),
                           "--kernel", str(source), "--scales", "full"], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "10/10 pass" in done.stdout


def test_submission_importing_the_harness_modules_loads(on_cpu, tmp_path: Path) -> None:
    """Real submissions import GPU MODE's task.py / utils.py / reference.py: our stand-ins load them."""
    path = tmp_path / "submission.py"
    path.write_text("from task import input_t, output_t\nfrom reference import to_blocked\n"
                    "from utils import make_match_reference\n\n" + starter("nvfp4_dual_gemm").read_text())
    result = check("nvfp4_dual_gemm", "--submission", str(path), "--shape", "128,128,256", "--no-probe")
    assert result.exit_code == 0, result.output


@pytest.mark.gpu
@pytest.mark.parametrize("problem, body, shape, expected", [
    ("nvfp4_dual_gemm", "out[128:256, 0:128] += 1", "256,256,256",
     "wrong 128x128 tiles (2 m-tiles x 2 n-tiles; X all wrong, x some, . ok)\n    ..\n    X.\n"),
    ("nvfp4_group_gemm", "out[1][0:128, 0:128] += 1", "128,128,256;256,256,256;128,128,256",
     "wrong outputs: 1 of 3: group 2 (16384 of 65536 wrong)"),
    ("nvfp4_gemv", "out[128:256] += 1", "384,256",
     "wrong blocks of 128 rows (m) (3 blocks from m = 0; X all wrong, x some, . ok)\n    m   0: .X.\n"),
])
def test_wrong_tile_or_group_is_pinpointed_on_the_gpu(tmp_path: Path, problem: str, body: str, shape: str,
                                                      expected: str) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "nvfp4ctl", "check", "--task", str(get_problem(problem).task_file),
                           "--submission", spoiled(tmp_path, problem, body), "--shape", shape, "--no-probe"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert expected in done.stdout


@pytest.mark.parametrize("problem", ["nvfp4_dual_gemm", "nvfp4_gemv", "nvfp4_group_gemm"])
def test_dump_outside_the_gemm_is_refused_before_the_run(problem: str) -> None:
    """--dump replays a GEMM tile; under the GEMV it ended, after the whole run, with
    "error: --shape 128,None,256: expected M,N,K ..." (a --shape the user never gave)."""
    result = check(problem, "--dump")  # no NVFP4CTL_DEVICE=cpu: the refusal comes before "no CUDA GPU found"
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()) == (
        f"error: --dump decodes and simulates an nvfp4_gemm kernel's MMAs (C = A·Bᵀ on its inputs); this task is {problem}")


@pytest.mark.parametrize("command", ["check", "bench"])
def test_a_run_stopped_before_it_starts_logs_its_problem(monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    """Every check and bench line of the run log names the problem, also one that stopped with an error
    (here: no GPU), as a timed-out bench does."""
    from nvfp4ctl import runlog
    from nvfp4ctl.commands import check as check_command
    from nvfp4ctl.runner import gpu
    from nvfp4ctl.workspace import memory_path

    monkeypatch.delenv("NVFP4CTL_DEVICE", raising=False)
    monkeypatch.setattr(check_command, "gpu_present", lambda: False)
    monkeypatch.setattr(gpu, "gpu_present", lambda: False)  # bench imports it at call time
    result = CliRunner().invoke(app, [command, "--task", str(get_problem("nvfp4_gemv").task_file), "--kernel", "default"])
    assert result.exit_code == 2 and "no CUDA GPU found" in result.output, result.output
    assert runlog.read(memory_path())[-1].problem == "nvfp4_gemv"


def test_a_reused_dual_result_is_not_read_as_one_wrong_product(on_cpu, tmp_path: Path) -> None:
    """A result cached by data_ptr() fails the probe as reused; the old answer compared with new data says
    nothing about silu(A·B1ᵀ) or A·B2ᵀ, so no product is named."""
    path = tmp_path / "cached.py"
    path.write_text(starter("nvfp4_dual_gemm").read_text() + "\n\n_right = custom_kernel\n_cache = {}\n\n\n"
                    "def custom_kernel(data):\n    key = data[0].data_ptr()\n    if key not in _cache:\n"
                    "        _cache[key] = _right(data).clone()\n    return _cache[key]\n")
    result = check("nvfp4_dual_gemm", "--submission", str(path), "--shape", "128,128,256")
    assert result.exit_code == 1, result.output
    assert "result reused across calls" in result.output
    assert "implicated" not in result.output and "dual GEMM:" not in result.output
