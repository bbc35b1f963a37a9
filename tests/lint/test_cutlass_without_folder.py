"""NV013: a load_inline/load call whose CUDA includes CUTLASS/CuTe headers and that names no include folder.
torch adds no CUTLASS include folder on the leaderboard: the headers are found there only where that
machine's nvcc finds them by itself, while `nvfp4ctl build` compiles them with this machine's."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.lint import lint_text
from nvfp4ctl.lint.rules import RULES

HEAD = "from torch.utils.cpp_extension import load_inline\n"
CUDA = 'CUDA = r"""\n#include "cutlass/cutlass.h"\n#include <cute/tensor.hpp>\n__global__ void k(float* x) { x[0] = 1.0f; }\n"""\n'
CALL = ('module = load_inline(name="grp", cpp_sources="", cuda_sources=CUDA{given},\n'
        '                     extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"{flags}])\n')
ENTRY = "\n\ndef custom_kernel(data):\n    return data[-1]\n"


def nv013(text: str) -> list[tuple[int, int, str]]:
    return [(d.line, d.col, d.message) for d in lint_text(text) if d.code == "NV013"]


def test_cutlass_headers_with_no_include_folder_are_a_warning_at_the_call() -> None:
    [(line, col, message)] = nv013(HEAD + CUDA + CALL.format(given="", flags="") + ENTRY)
    assert (line, col) == (7, 1)
    assert message == (
        "load_inline('grp') includes CUTLASS/CuTe headers and names no include folder (extra_include_paths, -I or"
        " -isystem): torch adds no CUTLASS on the leaderboard, so they compile there only where that machine's nvcc"
        " finds them by itself, which nothing here can tell (`nvfp4ctl build` compiles them with this machine's);"
        " name the folder in extra_include_paths (an nvfp4ctl export looks it up at import: $CUTLASS_PATH,"
        " $CUTLASS_HOME, /usr/local/cutlass, then the nvidia-cutlass wheel)")
    assert next(rule for rule in RULES if rule.code == "NV013").severity.value == "warning"


@pytest.mark.parametrize("given, flags", [
    (', extra_include_paths=["/opt/cutlass/include"]', ""),
    ("", ', "-I/opt/cutlass/include"'),
    ("", ', "-isystem", "/opt/cutlass/include"'),
    (", extra_include_paths=_inc()", ""),  # a lookup lint cannot run: a folder all the same
])
def test_a_call_naming_an_include_folder_is_not_judged(given: str, flags: str) -> None:
    helper = "def _inc():\n    return ['/opt/cutlass/include']\n\n\n"
    assert nv013(HEAD + helper + CUDA + CALL.format(given=given, flags=flags) + ENTRY) == []


def test_code_without_cutlass_is_not_judged() -> None:
    plain = 'CUDA = r"""\n#include <cuda_fp16.h>\n// #include "cutlass/cutlass.h"\n__global__ void k(float* x) { x[0] = 1.0f; }\n"""\n'
    assert nv013(HEAD + plain + CALL.format(given="", flags="") + ENTRY) == []


def test_an_export_of_nvfp4ctls_cutlass_kernel_names_its_lookup_and_is_not_judged(tmp_path: Path) -> None:
    from nvfp4ctl.export import export_submission
    from nvfp4ctl.project import kernels_dir

    output = tmp_path / "submission.py"
    export_submission(kernels_dir() / "sm100" / "nvfp4_gemm_sm100.cu", output)
    assert "cutlass/" in output.read_text() and nv013(output.read_text()) == []
