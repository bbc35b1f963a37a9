"""docs/own_code.md's example, run exactly as the doc writes it (a GPU test on an sm_90 GPU) and checked
against the exact reference, so the doc cannot drift from the code; on the CPU, that the block is
there, is Python, and names what the kernel and its binding require."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from nvfp4ctl.build import flags
from tests.kernels.test_sm90_sharing_build import SHARING_DEFINES

DOC = Path(__file__).resolve().parents[2] / "docs" / "own_code.md"
EXAMPLE_HEADING = "## A complete example"


def fenced_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def example_block() -> str:
    """The first ```python block under the example's heading."""
    text = DOC.read_text(encoding="utf-8")
    assert EXAMPLE_HEADING in text, f"{DOC.name} has no '{EXAMPLE_HEADING}' section"
    blocks = fenced_blocks(text.split(EXAMPLE_HEADING, 1)[1], "python")
    assert blocks, f"{DOC.name}: no python block under '{EXAMPLE_HEADING}'"
    return blocks[0]


def test_the_example_is_python() -> None:
    compile(example_block(), str(DOC), "exec")


def test_the_plain_cpp_extension_build_passes_what_nvfp4ctl_build_passes() -> None:
    """The doc's torch.utils.cpp_extension.load call: the sources, include folder and flags of
    nvfp4ctl/build/compile.py build_module (less the ptxas report), so a module built that way is the same code."""
    load_call = next(block for block in fenced_blocks(DOC.read_text(encoding="utf-8"), "python") if "load(" in block
                     and "cpp_extension" in block)
    for flag in (*flags.cuda_flags("sm_90a"), *flags.BINDING_CFLAGS):
        assert f'"{flag}"' in load_call, flag
    for path in ("kernels/sm90/nvfp4_gemm_sm90.cu", "kernels/common/torch_binding.cpp", '"kernels/common"'):
        assert path in load_call, path


def test_the_doc_names_the_sharing_build_defines() -> None:
    text = DOC.read_text(encoding="utf-8")
    for define in SHARING_DEFINES:
        assert define in text, define


@pytest.mark.gpu
def test_the_example_runs_as_written_and_matches_the_reference() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the example builds the sm_90a kernel: needs an sm_90 GPU (H100/H200)")
    from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

    namespace: dict[str, Any] = {"__name__": "own_code_example"}
    exec(compile(example_block(), str(DOC), "exec"), namespace)
    a_scales, rows = namespace["a_scales"], namespace["rows"]
    b, b_scales = namespace["b"], namespace["b_scales"]
    want = reference_gemm(namespace["a"], b, a_scales.unsqueeze(-1), b_scales.unsqueeze(-1))
    for label, got, expected in (("c", namespace["c"], want), ("step", namespace["step"], want[:rows, :, 0])):
        bad = ~torch.isclose(got.float(), expected.float(), rtol=1e-3, atol=1e-3)
        assert not bad.any(), f"{label}: {int(bad.sum())} of {bad.numel()} differ from the reference"
    assert namespace["step"].shape == (rows, b.shape[0])
