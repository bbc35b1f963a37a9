"""`nvfp4ctl check` with the real nvfp4_gemm problem: tiny shapes on CPU, the task.yml tests on a GPU."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from check_fakes import TARGETS
from nvfp4ctl.cli import app
from nvfp4ctl.project import kernels_dir

SWAPPED = str(TARGETS / "swapped_scale_rows.py")


def check(*args: str):
    return CliRunner().invoke(app, ["check", *args])


@pytest.fixture
def on_cpu(monkeypatch):
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)


def test_torch_fallback_passes_on_cpu_with_full_scales(on_cpu):
    result = check("--submission", str(kernels_dir() / "torch_dequant" / "submission.py"),
                   "--shape", "128,256,256", "--scales", "full")
    assert result.exit_code == 0, result.output
    assert "1/1 pass" in result.output


def test_swapped_scale_rows_are_diagnosed_on_cpu(on_cpu):
    result = check("--submission", SWAPPED, "--shape", "256,384,256", "--no-probe")
    assert result.exit_code == 1, result.output
    assert "wrong rows (m): 2 of 256: 0, 33" in result.output
    assert "wrong 128x128 tiles (2 m-tiles x 3 n-tiles; X all wrong, x some, . ok)\n    xxx\n    ...\n" in result.output


def test_a_shape_the_problem_refuses_is_a_usage_error(on_cpu):
    result = check("--shape", "128,256,100")
    assert result.exit_code == 2, result.output
    assert "error: --shape 128,256,100: K: expected a multiple of 16 (one scale per 16 elements), got 100" in result.output


def test_a_shape_too_large_for_memory_is_refused_before_its_inputs_are_made(on_cpu):
    """check --shape 99999999,99999999,256 spent its whole --timeout making inputs, then suggested a larger one
    (exit 3); its inputs and output alone need more than the machine's memory, so it is an input error."""
    result = check("--submission", str(kernels_dir() / "torch_dequant" / "submission.py"),
                   "--shape", "99999999,99999999,256", "--timeout", "30")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and lines[0].startswith(
        "error: m=99999999 n=99999999 k=256: too large: its inputs and output need at least 18626477.9 GiB, more"
        " than the "), result.output
    assert lines[0].endswith(" GiB of cpu memory"), result.output


def test_a_submission_importing_a_dsl_this_python_lacks_is_one_line_and_exit_2_in_check_and_bench(on_cpu, tmp_path):
    """check and bench said "cannot load ... ModuleNotFoundError: No module named 'cutlass'" with a traceback, exit 4
    (a crash), and bench --json's "error" held the traceback; build says the same lack as one line, exit 2."""
    import json
    import sys

    from cli_streams import separate_streams_runner

    submission = tmp_path / "submission.py"
    # None in sys.modules: `import cutlass` fails alike whether or not the DSL is installed here
    submission.write_text("import sys\nsys.modules['cutlass'] = None\nimport cutlass\n\n"
                          "def custom_kernel(data):\n    return data[-1]\n")
    line = (f"error: cannot load {submission} (--submission): it imports cutlass, and the Python running it"
            f" ({sys.executable}) has no nvidia-cutlass-dsl (pip install nvidia-cutlass-dsl)")
    result = separate_streams_runner().invoke(app, ["check", "--submission", str(submission), "--shape", "128,256,256"])
    assert result.exit_code == 2, result.output
    assert [said for said in result.stderr.splitlines() if said.startswith("error")] == [line], result.stderr
    assert "Traceback" not in result.output
    result = separate_streams_runner().invoke(app, ["bench", "--submission", str(submission), "--shape", "128,256,256",
                                                    "--json"])
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout) == {"version": 1, "error": line.removeprefix("error: "), "exit_code": 2}


# --- on a CUDA GPU (run by the lead on an H100) ---------------------------------------------------


@pytest.mark.gpu
def test_default_target_passes_every_task_test():
    result = check()
    assert result.exit_code == 0, result.output
    assert "10/10 pass" in result.output


@pytest.mark.gpu
def test_only_runs_one_test():
    result = check("--only", "3")
    assert result.exit_code == 0, result.output
    assert "(1 of 10 tests)" in result.output
    assert "m=128 n=3072 k=1536" in result.output and "1/1 pass" in result.output


@pytest.mark.gpu
def test_wrong_target_fails_with_diagnostics_on_gpu():
    result = check("--submission", SWAPPED, "--only", "1", "--only", "4")
    assert result.exit_code == 1, result.output
    assert "test 1 (m=128 n=256 k=256, seed 1111): FAIL" in result.output
    assert "wrong rows (m): 2 of 128: 0, 33" in result.output
    assert "wrong rows (m): 2 of 256: 0, 33" in result.output
    assert "0/2 pass, 2 fail (tests 1, 4; test 1: max abs err " in result.output


@pytest.mark.gpu
def test_hanging_target_is_killed_on_gpu():
    result = check("--submission", str(TARGETS / "sleeps_forever.py"), "--only", "2", "--timeout", "5")
    assert result.exit_code == 3, result.output
    assert "possible deadlock in test 2 (m=128 n=1536 k=7168): no result after 5 s; the child was killed" in result.output


@pytest.mark.gpu
def test_a_shape_the_shipped_sm90_kernel_refuses_is_unsupported_not_a_crash():
    """The binding's own refusal (k not a multiple of 256) reaches check as the verdict unsupported, exit 1."""
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs an sm_90 GPU")
    kernel = kernels_dir() / "sm90" / "nvfp4_gemm_sm90.cu"
    result = check("--kernel", str(kernel), "--shape", "128,256,384")
    assert result.exit_code == 1, result.output
    assert "unsupported" in result.output
    assert "the target does not take this shape: k must be a multiple of 256" in result.output
