"""Every torch binding of kernels/common words a failed launch through launch_error.h, so a grid that
cannot be resident reads alike in each problem (and is not taken for a crash, tests/sm100/test_tc_residency.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

COMMON = Path(__file__).resolve().parents[2] / "kernels" / "common"
BINDINGS = sorted(COMMON.glob("*binding.cpp"))


def test_every_problem_has_its_binding() -> None:
    assert [path.name for path in BINDINGS] == ["nvfp4_dual_gemm_binding.cpp", "nvfp4_gemv_binding.cpp",
                                                "nvfp4_group_gemm_binding.cpp", "torch_binding.cpp"]


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda path: path.name)
def test_the_launch_failure_line_comes_from_launch_error_h(binding: Path) -> None:
    text = binding.read_text()
    function = re.search(r'm\.def\("(\w+)"', text)
    assert function is not None, "no PYBIND11 function"
    assert '#include "launch_error.h"' in text
    assert re.findall(r"throw std::runtime_error\(launch_failure\(\"(\w+)\", err\)\)", text) == [function.group(1)]
    assert "launch failed" not in text and "cudaGetErrorString" not in text, "a launch failure worded by hand"
