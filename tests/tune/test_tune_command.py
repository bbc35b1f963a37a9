"""`nvfp4ctl tune` on CPU: compile-only on the tiny fixture (real nvcc, two knobs, one spilling
candidate rejected), resumable, and user mistakes as one line with exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.cli import app
from nvfp4ctl.runner.gpu import gpu_present

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _tune(*args: str):
    return runner.invoke(app, ["tune", *args], env={"COLUMNS": "160"})


def test_compile_only_reports_resources_and_rejects_spills(tiny_copy: Path) -> None:
    table_before = tiny_copy.with_name("tiny_dispatch.cuh").read_text()
    result = _tune("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    row = next(line for line in lines if "LIVE=256" in line and "rejected: spills" in line)
    assert "64" in row and "3952 B" in row
    assert any("current table" in line and " ok" in line for line in lines)
    assert "LIVE=256: spills: tiny::chain spills 1976 B / 1976 B" in result.output
    assert "compile-only: 4 builds, 1 rejected" in result.output
    assert tiny_copy.with_name("tiny_dispatch.cuh").read_text() == table_before  # compile-only writes nothing
    entry = runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1]
    assert entry.result == "compile-only: 4 builds, 1 rejected"
    again = _tune("--kernel", str(tiny_copy), "--compile-only", "--shapes", "benchmarks")
    assert again.exit_code == 0 and again.output.count("cached") == 4  # same defines: cache hits


@pytest.mark.parametrize("args, message", [
    (["--kernel", "missing.cu"], "--kernel missing.cu: no such file"),
    (["--kernel", str(REPO / "tests/build/fixtures/hgmma_probe.cu"), "--compile-only"], "declares no knobs"),
    (["--kernel", str(REPO / "kernels/torch_dequant/submission.py")], "expected a CUDA source (.cu)"),
    (["--budget", "0"], "--budget 0: expected seconds > 0"),
    (["--gpus", "0"], "--gpus 0: expected at least 1"),
])
def test_usage_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = _tune(*args)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    assert "Traceback" not in result.output


def test_a_bad_shape_set_is_exit_2() -> None:
    assert _tune("--shapes", "some").exit_code == 2


@pytest.mark.skipif(gpu_present(), reason="a GPU machine has a default kernel")
def test_without_a_gpu_the_kernel_must_be_named() -> None:
    result = _tune()
    assert result.exit_code == 2 and "no CUDA GPU here: pass --kernel PATH" in result.output
