"""A bare `nvfp4ctl build` builds kernels/sm90/ and kernels/sm100/: a .cu in kernels/ itself is named in a
note with how to build it, where it was passed over without a word (lint checks it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app

runner = CliRunner()
NAIVE = Path(__file__).resolve().parents[2] / "kernels" / "naive"


def _project_with_one_sm90_kernel(folder: Path) -> Path:
    """folder/kernels with nvfp4ctl's common/ and one kernel in sm90/ (the naive GEMV, which builds quickly)."""
    kernels = folder / "kernels"
    shutil.copytree(NAIVE.parent / "common", kernels / "common")
    (kernels / "sm90").mkdir()
    for name in ("nvfp4_gemv_naive.cu", "naive_decode.cuh"):
        shutil.copy(NAIVE / name, kernels / "sm90" / name)
    return kernels


def test_a_bare_build_names_the_kernels_it_leaves_in_kernels_itself(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    kernels = _project_with_one_sm90_kernel(tmp_path)
    (kernels / "b_loose.cu").write_text("__global__ void b() {}\n")
    (kernels / "a_loose.cu").write_text("__global__ void a() {}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "250")
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 0, result.output
    assert ("note: not built: kernels/a_loose.cu, kernels/b_loose.cu (2 kernels in kernels/ itself, outside sm90/ and"
            " sm100/); build one with `nvfp4ctl build kernels/a_loose.cu`") in result.output
    assert "compiling a_loose.cu" not in result.output and "│ a_loose.cu" not in result.output  # still not built
    named = runner.invoke(app, ["build", "kernels/sm90/nvfp4_gemv_naive.cu"])
    assert named.exit_code == 0 and "not built:" not in named.output


def test_a_bare_build_with_nothing_in_kernels_itself_says_nothing_of_it(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    kernels = _project_with_one_sm90_kernel(tmp_path)
    (kernels / "helper.cuh").write_text("#pragma once\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 0, result.output
    assert "not built:" not in result.output
