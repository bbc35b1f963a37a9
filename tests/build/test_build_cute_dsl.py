"""CuTe DSL submissions: compiled for sm_100a by nvidia-cutlass-dsl without a GPU, reported from the
cubin; without the DSL, one clear line and exit 2."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build.cute_dsl import has_dsl, parse_res_usage
from nvfp4ctl.cli import app

SUBMISSION = Path(__file__).parent / "submissions" / "cute_dsl_submission.py"
# an interpreter with nvidia-cutlass-dsl and torch (e.g. a venv made with --system-site-packages)
DSL_PYTHON = os.environ.get("NVFP4CTL_TEST_DSL_PYTHON", sys.executable)


def test_res_usage_lines_are_parsed() -> None:
    text = "Resource usage:\n Function kernel_x: REG:12 STACK:8 SHARED:1024 LOCAL:0 CONSTANT[0]:912 TEXTURE:0\n"
    (usage,) = parse_res_usage(text)
    assert (usage.name, usage.registers, usage.stack_bytes, usage.shared_bytes) == ("kernel_x", 12, 8, 1024)


def test_without_the_dsl_one_line_and_exit_2(tmp_path: Path) -> None:
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\nexit 1\n")
    fake_python.chmod(0o755)
    result = CliRunner().invoke(app, ["build", str(SUBMISSION), "--python", str(fake_python)])
    assert result.exit_code == 2, result.output
    assert "has no nvidia-cutlass-dsl (pip install nvidia-cutlass-dsl" in result.output


@pytest.mark.skipif(not has_dsl(DSL_PYTHON), reason="needs nvidia-cutlass-dsl (set NVFP4CTL_TEST_DSL_PYTHON)")
def test_dsl_submission_compiles_for_sm100a_without_a_gpu() -> None:
    result = CliRunner().invoke(app, ["build", str(SUBMISSION), "--python", DSL_PYTHON], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "CUTE_DSL_ARCH=sm_100a" in result.output
    assert "tile_mma" in result.output
    assert "UTCOMMA.4X (fp4 block16: mxf4nvf4)" in result.output
