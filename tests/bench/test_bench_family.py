"""bench for the dual GEMM, grouped GEMM and GEMV on CPU: each problem's loop, counts and names."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nvfp4ctl.bench import jobs
from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem
from nvfp4ctl.project import kernels_dir

FEW = {"max_repeats": 3, "min_time_s": 0.0}


def _starter(problem: str) -> Any:
    from nvfp4ctl.runner.targets import import_submission

    return import_submission(kernels_dir() / get_problem(problem).fallback_submission)


@pytest.mark.parametrize("problem, shape", [
    ("nvfp4_dual_gemm", "128,128,256"), ("nvfp4_gemv", "128,256,2"), ("nvfp4_group_gemm", "128,128,256;64,128,256"),
])
def test_the_starter_passes_the_correctness_pass_and_is_timed(problem: str, shape: str) -> None:
    spec = get_problem(problem)
    calls: list[int] = []
    target = _starter(problem)

    def counted(data: Any) -> Any:
        calls.append(1)
        return target(data)

    reply = jobs.bench_case(counted, case=spec.parse_shape(shape, 1111), problem=problem, rtol=1e-3, atol=1e-3,
                            criterion=FEW, device="cpu")
    assert reply.get("failure") is None, reply
    sets = spec.timing.input_sets  # 50 per sample for the GEMMs, 15 grouped, 1 for the GEMV
    assert len(reply["samples_ns"]) == 3 and len(calls) == sets + 3 * sets


def test_a_wrong_group_fails_the_correctness_pass_by_name() -> None:
    spec = get_problem("nvfp4_group_gemm")
    target = _starter("nvfp4_group_gemm")

    def wrong(data: Any) -> Any:
        out = target(data)
        out[1][0, 0] += 1
        return out

    reply = jobs.bench_case(wrong, case=spec.parse_shape("128,128,256;64,128,256", 1111), problem="nvfp4_group_gemm",
                            rtol=1e-3, atol=1e-3, criterion=FEW, device="cpu", input_sets=2)
    assert reply["failure"].startswith("input set 1 of 2 (seed 1153): group 2: 1 of 8192 elements differ")


def test_whole_command_for_the_grouped_gemm_on_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = tmp_path / "task.yml"
    task.write_text(get_problem("nvfp4_group_gemm").task_file.read_text())
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    argv = ["bench", "--task", str(task), "--shape", "128,128,256;64,128,256", "--max-repeats", "3", "--json",
            "--submission", str(kernels_dir() / "torch_dequant" / "nvfp4_group_gemm_submission.py")]
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *argv])
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (shape,) = json.loads(result.stdout)["shapes"]
    assert shape["shape"] == "g2:m128+64:n128:k256" and shape["us"]["runs"] == 3
    assert shape["tflops"] is None  # a CPU time gives no rate figures
    spec = get_problem("nvfp4_group_gemm")
    assert spec.flops(spec.parse_shape("128,128,256;64,128,256", 1111)) == 2.0 * (128 + 64) * 128 * 256


def test_gemv_shapes_read_as_m_k_and_l_in_the_tables_and_the_run_log(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    task = tmp_path / "task.yml"
    task.write_text(get_problem("nvfp4_gemv").task_file.read_text())
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    argv = ["bench", "--task", str(task), "--shape", "128,256,2", "--max-repeats", "3",
            "--submission", str(kernels_dir() / "torch_dequant" / "nvfp4_gemv_submission.py")]
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *argv])
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # "128x256x2" would read as a GEMM's M×N×K: the GEMV's c has no n, and 2 is its L
    assert "128x256 l=2" in result.output and "128x256x2" not in result.output, result.output
    # the label in the run log too; the trend and the comparison with earlier benches read it back as the key
    assert "128x256 l=2 " in memory.read_text() and "128x256x2 " not in memory.read_text()
