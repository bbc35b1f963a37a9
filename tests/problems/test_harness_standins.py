"""Our stand-ins for GPU MODE's task.py, utils.py and reference.py: submissions that import them load and run.

Real submissions do `from reference import to_blocked`, `from reference import ref_kernel`,
`from utils import make_match_reference`, `from utils import ceil_div`, `from task import input_t,
output_t`. Each problem's harness folder must satisfy them, on the CPU too.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from nvfp4ctl.problems.common.harness import HARNESS_MODULES, harness_dir, preload_harness
from nvfp4ctl.problems.nvfp4_gemm import layout

PROBLEMS = ["nvfp4_gemm", "nvfp4_dual_gemm", "nvfp4_group_gemm", "nvfp4_gemv"]
ARGS: dict[str, dict[str, Any]] = {
    "nvfp4_gemm": {"m": 128, "n": 128, "k": 256, "l": 2, "seed": 1111},
    "nvfp4_dual_gemm": {"m": 128, "n": 256, "k": 256, "l": 1, "seed": 1111},
    "nvfp4_group_gemm": {"m": [64, 128], "n": [128, 256], "k": [256, 128], "g": 2, "seed": 1111},
    "nvfp4_gemv": {"m": 256, "k": 512, "l": 2, "seed": 1111},
}

SUBMISSION = '''\
import torch
from task import input_t, output_t
from reference import to_blocked, ref_kernel
from utils import make_match_reference, ceil_div


def custom_kernel(data: input_t) -> output_t:
    assert ceil_div(17, 16) == 2
    return ref_kernel(data)
'''


@pytest.fixture
def clean_harness_modules() -> Iterator[None]:
    """Each test imports the three names afresh and leaves sys.modules as it found them."""
    saved = {name: sys.modules.pop(name) for name in HARNESS_MODULES if name in sys.modules}
    yield
    for name in HARNESS_MODULES:
        sys.modules.pop(name, None)
    sys.modules.update(saved)


def load_submission(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"submission_{path.parent.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("problem", PROBLEMS)
def test_a_submission_importing_the_harness_loads_and_passes_its_check(
    problem: str, tmp_path: Path, clean_harness_modules: None
) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(SUBMISSION, encoding="utf-8")
    assert preload_harness(problem, beside=tmp_path) == list(HARNESS_MODULES)
    module = load_submission(submission)
    reference = sys.modules["reference"]
    data = reference.generate_input(**ARGS[problem])
    output = module.custom_kernel(data)
    assert reference.check_implementation(data, output) == (True, "")


@pytest.mark.parametrize("problem", PROBLEMS)
def test_the_harness_folder_works_on_the_import_path(
    problem: str, monkeypatch: pytest.MonkeyPatch, clean_harness_modules: None
) -> None:
    monkeypatch.syspath_prepend(str(harness_dir(problem)))
    task = importlib.import_module("task")
    utils = importlib.import_module("utils")
    reference = importlib.import_module("reference")
    assert {"input_t", "output_t", "TestSpec"} <= set(vars(task))
    assert utils.ceil_div(129, 128) == 2 and reference.ceil_div(4, 4) == 1 and reference.sf_vec_size == 16
    scales = torch.randint(0, 0x7F, (256, 8), dtype=torch.uint8).view(torch.float8_e4m3fn)
    assert torch.equal(reference.to_blocked(scales).view(torch.uint8), layout.to_blocked(scales).view(torch.uint8))


def test_a_copy_beside_the_submission_wins(tmp_path: Path, clean_harness_modules: None) -> None:
    (tmp_path / "task.py").write_text("input_t = output_t = object\n", encoding="utf-8")
    assert preload_harness("nvfp4_dual_gemm", beside=tmp_path) == ["utils", "reference"]


@pytest.mark.parametrize("problem", ["nvfp4_dual_gemm", "nvfp4_group_gemm"])
def test_check_implementation_reports_a_mismatch(problem: str, clean_harness_modules: None) -> None:
    preload_harness(problem)
    reference = sys.modules["reference"]
    data = reference.generate_input(**ARGS[problem])
    output = reference.ref_kernel(data)
    if isinstance(output, list):
        output = [tensor.clone() for tensor in output]
        output[1][3, 5, 0] += 1.0
        ok, message = reference.check_implementation(data, output)
        assert not ok and message.startswith("mismatch found! custom implementation doesn't match reference: 1 ")
    else:
        output = output.clone()
        output[3, 5, 0] += 1.0
        ok, message = reference.check_implementation(data, output)
        assert not ok and "Number of mismatched elements: 1" in message and "ERROR AT (3, 5, 0)" in message


def test_gemm_and_gemv_ref_kernels_write_into_c_as_gpu_modes_do(clean_harness_modules: None) -> None:
    for problem in ("nvfp4_gemm", "nvfp4_gemv"):
        for name in HARNESS_MODULES:
            sys.modules.pop(name, None)
        preload_harness(problem)
        data = sys.modules["reference"].generate_input(**ARGS[problem])
        assert sys.modules["reference"].ref_kernel(data) is data[-1]


def test_no_harness_file_says_the_forbidden_word() -> None:
    for problem in PROBLEMS:
        for path in harness_dir(problem).glob("*.py"):
            assert "stream" not in path.read_text(encoding="utf-8").lower(), path
