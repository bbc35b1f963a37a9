"""The Problem seam: registry, protocol, and nvfp4_gemm's describe / output_of / reference / refill."""

from __future__ import annotations

import pytest
import torch

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems import Problem, get_problem, problem_names
from nvfp4ctl.task import Case

CASE = Case(m=128, n=256, k=256, l=1, seed=1111)


def test_registry_ships_the_four_nvfp4_problems() -> None:
    assert problem_names() == ("nvfp4_gemm", "nvfp4_dual_gemm", "nvfp4_group_gemm", "nvfp4_gemv")
    for name in problem_names():
        problem = get_problem(name)
        assert isinstance(problem, Problem)
        assert problem.name == name


def test_unknown_problem_names_the_known_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown problem 'gemv' \(known: nvfp4_gemm, nvfp4_dual_gemm, "):
        get_problem("gemv")


def test_describe_gives_one_line_per_tuple_element() -> None:
    problem = get_problem("nvfp4_gemm")
    lines = problem.describe(problem.generate_input(CASE, device="cpu"))
    assert lines == [
        "[0] a             float4_e2m1fn_x2  shape (128, 128, 1)  strides (128, 1, 16384)  cpu",
        "[1] b             float4_e2m1fn_x2  shape (256, 128, 1)  strides (128, 1, 32768)  cpu",
        "[2] sfa_ref       float8_e4m3fn     shape (128, 16, 1)  strides (16, 1, 2048)  cpu",
        "[3] sfb_ref       float8_e4m3fn     shape (256, 16, 1)  strides (16, 1, 4096)  cpu",
        "[4] sfa_permuted  float8_e4m3fn     shape (32, 4, 1, 4, 4, 1)  strides (16, 4, 2048, 1, 512, 2048)  cpu",
        "[5] sfb_permuted  float8_e4m3fn     shape (32, 4, 2, 4, 4, 1)  strides (16, 4, 2048, 1, 512, 4096)  cpu",
        "[6] c             float16           shape (128, 256, 1)  strides (256, 1, 32768)  cpu",
    ]


def test_output_of_is_c_and_reference_is_new() -> None:
    problem = get_problem("nvfp4_gemm")
    data = problem.generate_input(CASE, device="cpu", scales="full")
    assert problem.output_of(data) is data[6]
    want = problem.reference(data)
    assert want.data_ptr() != data[6].data_ptr() and want.shape == data[6].shape
    assert bool(want.isfinite().all())


def test_refill_keeps_objects_and_changes_the_answer() -> None:
    problem = get_problem("nvfp4_gemm")
    data = problem.generate_input(CASE, device="cpu")
    before = problem.reference(data)
    ids = [id(tensor) for tensor in data]
    problem.refill_input(data, seed=CASE.seed + 42)
    assert [id(tensor) for tensor in data] == ids
    after = problem.reference(data)
    assert not torch.equal(before, after)
    assert torch.equal(after, problem.reference(problem.generate_input(Case(128, 256, 256, 1, CASE.seed + 42), "cpu")))
