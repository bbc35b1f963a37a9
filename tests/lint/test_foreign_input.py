"""foreign_input: the other problem a submission's custom_kernel unpacks the input of on every call, as NV006
reads it, and None wherever that is not known for sure."""

from __future__ import annotations

import pytest

from nvfp4ctl.lint.foreign_input import ForeignInput, foreign_input
from nvfp4ctl.problems import get_problem
from nvfp4ctl.project import kernels_dir

GROUPED = "def custom_kernel(data):\n    abc, sfasfb, reordered, sizes = data\n    return run(abc, reordered)\n"


def _starter(problem: str) -> str:
    return (kernels_dir() / get_problem(problem).fallback_submission).read_text()


@pytest.mark.parametrize("problem, named", [("nvfp4_group_gemm", 4), ("nvfp4_dual_gemm", 10)])
def test_a_starter_of_a_problem_whose_count_is_its_own_is_that_problems_under_the_gemm(problem: str, named: int) -> None:
    found = foreign_input(_starter(problem), "nvfp4_gemm")
    assert found is not None and (found.problem, found.named) == (problem, named)
    assert _starter(problem).splitlines()[found.line - 1].strip().endswith("= data")
    assert foreign_input(_starter(problem), problem) is None  # under its own task: nothing to say


def test_the_line_is_the_unpackings() -> None:
    assert foreign_input(GROUPED, "nvfp4_gemv") == ForeignInput("nvfp4_group_gemm", 4, 2)


@pytest.mark.parametrize("text, task", [
    (_starter("nvfp4_gemv"), "nvfp4_gemm"),  # 7 names: the GEMM's too
    (_starter("nvfp4_gemm"), "nvfp4_group_gemm"),  # 7 names fit the GEMM and the GEMV
    ("def custom_kernel(data):\n    a, b1, b2, sfa, sfb1, sfb2, c = data\n    return run(a, c)\n", "nvfp4_dual_gemm"),
    ("def custom_kernel(data):\n    a, b, c = data\n    return run(a, b, c)\n", "nvfp4_gemm"),  # no problem's count
    ("def custom_kernel(data):\n    if len(data) == 4:\n        abc, s, r, z = data\n    return run(data)\n", "nvfp4_gemm"),
    ("def custom_kernel(data):\n    if data:\n        abc, s, r, z = data\n    return run(data)\n", "nvfp4_gemm"),
    ("def custom_kernel(data):\n    abc, s, *rest = data\n    return run(abc)\n", "nvfp4_gemm"),
    ("def custom_kernel(data):\n    abc, s, r, z = data  # nvfp4ctl: ignore[NV006]\n    return run(abc)\n", "nvfp4_gemm"),
    ("def custom_kernel(data):\n    abc, s, r, z = data\n    return run(abc\n", "nvfp4_gemm"),  # not Python
], ids=["gemv-under-gemm", "gemm-under-group", "dual-described-7", "no-problems-count", "length-tested",
        "in-a-branch", "starred", "waived", "syntax-error"])
def test_nothing_known_for_sure_is_none(text: str, task: str) -> None:
    assert foreign_input(text, task) is None
