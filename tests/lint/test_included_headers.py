"""NV101 follows a linted kernel's local includes: a header outside the linted folder that export inlines
into the submission is reported at its own line, naming the kernel, once per run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app

runner = CliRunner()
TASK_YML = "problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n"
KERNEL = ('// nvfp4ctl: arch=sm_100a\n#include "nvfp4_gemm_api.h"\n#include "../../../common/nv_util.cuh"\n'
          "__global__ void k() {}\n")
HEADER = "#pragma once\n// shared helpers\n// keep the default Stream: no other\n__device__ float twice(float x) { return 2.0f * x; }\n"


@pytest.fixture
def monorepo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """repo/common/nv_util.cuh, included by a kernel in repo/gemm/kernels/sm100/ and one in repo/dual/kernels/."""
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "nv_util.cuh").write_text(HEADER)
    for folder in ("gemm/kernels/sm100", "dual/kernels/sm100"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "k.cu").write_text(KERNEL)
    (tmp_path / "gemm" / "task.yml").write_text(TASK_YML)
    monkeypatch.chdir(tmp_path / "gemm")
    return tmp_path


def test_a_header_outside_the_folder_holding_the_word_fails_the_kernel_that_includes_it(monorepo: Path) -> None:
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 1, result.output
    header = monorepo / "common" / "nv_util.cuh"
    assert f"{header.resolve()}:3:21: NV101" in result.output
    assert "kernels/sm100/k.cu includes this header" in result.output
    assert "| // keep the default Stream: no other" in result.output


def test_each_header_is_reported_once_naming_the_first_kernel(monorepo: Path) -> None:
    result = runner.invoke(app, ["lint", "--format", "json", "kernels", "../dual/kernels"])
    document = json.loads(result.stdout)
    found = [d for d in document["diagnostics"] if d["code"] == "NV101"]
    assert len(found) == 1, found
    assert found[0]["line"] == 3
    assert "kernels/sm100/k.cu includes this header" in found[0]["message"]
    assert result.exit_code == 1


def test_a_header_that_is_linted_itself_is_reported_once(monorepo: Path) -> None:
    result = runner.invoke(app, ["lint", "--format", "json", "kernels", "../common"])
    found = [d for d in json.loads(result.stdout)["diagnostics"] if d["code"] == "NV101"]
    assert len(found) == 1 and "includes this header" not in found[0]["message"], found


def test_a_header_without_the_word_passes(monorepo: Path) -> None:
    (monorepo / "common" / "nv_util.cuh").write_text(HEADER.replace("Stream", "queue"))
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 0, result.output
