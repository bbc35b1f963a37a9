"""The bounded mbarrier wait every wait of the tcgen05 kernel uses, on a real GPU (an H100 runs its
plain PTX too): tests/sm100/bounded_wait_gpu/bounded_wait_check.cu scales the limit down to 200 ms;
a wait that lasts 150 ms finishes, a phase that never completes traps after the limit (the launch
fails with cudaErrorLaunchFailure) instead of hanging the GPU.

    PYTHONPATH=$PWD python3 -m pytest tests/sm100/test_bounded_wait_gpu.py -q -p no:cacheprovider
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.sm100.gpu_program import ROOT, build_for_this_gpu

PROGRAM = ROOT / "tests" / "sm100" / "bounded_wait_gpu" / "bounded_wait_check.cu"


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["legal", "missed"])
def test_a_wait_finishes_or_traps_after_its_limit(tmp_path: Path, case: str) -> None:
    binary = build_for_this_gpu(PROGRAM, tmp_path / "bounded_wait_check", timeout_s=300)
    done = subprocess.run([str(binary), case], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
