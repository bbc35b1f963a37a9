"""A kernel's problem C ABI follows from the API header it includes: its binding is built and
exported with it, and the exported custom_kernel passes that problem's tuple elements."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nvfp4ctl.build.sources import binding_path, build_inputs
from nvfp4ctl.export import export_submission
from nvfp4ctl.project import kernels_dir

NAIVE = kernels_dir() / "naive"


@pytest.mark.parametrize("kernel, binding, call", [
    ("nvfp4_dual_gemm_naive.cu", "nvfp4_dual_gemm_binding.cpp",
     "_kernel_module.nvfp4_dual_gemm(data[0], data[1], data[2], data[6], data[7], data[8], data[9])"),
    ("nvfp4_gemv_naive.cu", "nvfp4_gemv_binding.cpp",
     "_kernel_module.nvfp4_gemv(data[0], data[1], data[4], data[5], data[6])"),
    ("nvfp4_group_gemm_naive.cu", "nvfp4_group_gemm_binding.cpp",
     "_kernel_module.nvfp4_group_gemm([g[0] for g in data[0]], [g[1] for g in data[0]], [s[0] for s in data[2]], "
     "[s[1] for s in data[2]], [g[2] for g in data[0]])"),
])
def test_binding_and_export_follow_the_included_api(tmp_path: Path, kernel: str, binding: str, call: str) -> None:
    source = NAIVE / kernel
    assert binding_path(source).name == binding
    inputs = build_inputs(source)
    assert inputs.binding.name == binding and not inputs.needs_cutlass
    output = tmp_path / "submission.py"
    export_submission(source, output)
    text = output.read_text()
    ast.parse(text)
    assert f"    return {call}\n" in text
    assert "stream" not in text.lower()


def test_a_gemm_kernel_keeps_the_gemm_binding() -> None:
    assert binding_path(kernels_dir() / "sm90" / "nvfp4_gemm_sm90.cu").name == "torch_binding.cpp"
    assert binding_path().name == "torch_binding.cpp"
