"""On a GPU: checking the exported submission is checking the kernel (same verdicts, same bits)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.build import load_kernel_module
from nvfp4ctl.cli import app
from nvfp4ctl.export import export_submission
from nvfp4ctl.project import kernels_dir
from nvfp4ctl.problems import get_problem

runner = CliRunner()
SHAPES = [(128, 256, 256), (256, 7168, 2048)]


def _gpu_kernel() -> Path:
    major = torch.cuda.get_device_capability()[0]
    source = kernels_dir() / get_problem("nvfp4_gemm").default_kernels.get(major, "none")
    if not source.is_file():
        pytest.skip(f"no kernel for this GPU at {source}")
    return source


@pytest.mark.gpu
def test_check_verdicts_match(tmp_path: Path) -> None:
    kernel = _gpu_kernel()
    submission = tmp_path / "submission.py"
    export_submission(kernel, submission)
    direct = runner.invoke(app, ["check", "--kernel", str(kernel)])
    direct_result = runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result  # e.g. "10/10 pass"
    exported = runner.invoke(app, ["check", "--submission", str(submission)])
    exported_result = runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result
    assert (exported.exit_code, exported_result) == (direct.exit_code, direct_result), exported.output


@pytest.mark.gpu
def test_outputs_are_bit_identical(tmp_path: Path) -> None:
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.task import Case

    kernel = _gpu_kernel()
    submission = tmp_path / "submission.py"
    export_submission(kernel, submission)
    spec = importlib.util.spec_from_file_location("exported_submission", submission)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    direct = load_kernel_module(kernel)
    problem = get_problem("nvfp4_gemm")
    for m, n, k in SHAPES:
        data = problem.generate_input(Case(m=m, n=n, k=k, l=1, seed=1111))
        want = direct.nvfp4_gemm(data[0], data[1], data[4], data[5], data[6]).clone()
        got = module.custom_kernel(data).clone()
        torch.cuda.synchronize()
        assert torch.equal(got.view(torch.int16), want.view(torch.int16)), f"{m=}, {n=}, {k=}: outputs differ"
