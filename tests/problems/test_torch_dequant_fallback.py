"""kernels/torch_dequant/submission.py: a valid GPU MODE submission that matches the reference."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import torch

from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

SUBMISSION = Path(__file__).resolve().parents[2] / "kernels" / "torch_dequant" / "submission.py"


@pytest.fixture(scope="module")
def submission() -> ModuleType:
    spec = importlib.util.spec_from_file_location("torch_dequant_submission", SUBMISSION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def within_tolerance(got: torch.Tensor, want: torch.Tensor) -> bool:
    got64, want64 = got.double(), want.double()
    return bool(((got64 - want64).abs() <= 1e-3 + 1e-3 * want64.abs()).all())


@pytest.mark.parametrize("scales", ["generator", "full"])
@pytest.mark.parametrize("m, n, k, l", [(128, 256, 256, 1), (256, 384, 512, 2), (96, 200, 272, 2)])
def test_matches_the_reference_and_returns_c(submission: ModuleType, scales: str, m: int, n: int, k: int, l: int) -> None:
    data = generate_input(m, n, k, l, 1111, device="cpu", scales=scales)
    want = reference_gemm(*data[:4])
    got = submission.custom_kernel(data)
    assert got is data[6]
    assert within_tolerance(got, want)


def test_reads_only_the_permuted_scales(submission: ModuleType) -> None:
    data = list(generate_input(128, 128, 512, 1, 3, device="cpu"))
    want = reference_gemm(*data[:4])
    data[2] = torch.full_like(data[2], float("nan"))
    data[3] = torch.full_like(data[3], float("nan"))
    assert within_tolerance(submission.custom_kernel(tuple(data)), want)


def test_is_a_self_contained_leaderboard_file() -> None:
    text = SUBMISSION.read_text()
    assert "stream" not in text.lower()  # the server's own check
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    }
    assert imported == {"torch"}
    assert "to_blocked" not in text


@pytest.mark.gpu
def test_matches_the_reference_on_cuda(submission: ModuleType) -> None:
    for scales in ("generator", "full"):
        data = generate_input(256, 7168, 2048, 1, 1111, device="cuda", scales=scales)
        want = reference_gemm(*data[:4])
        assert within_tolerance(submission.custom_kernel(data), want)
