"""The tcgen05 kernel's launch plan and split-K exchange (flags, workspace, deterministic reduction
order) on a real GPU without tcgen05: tests/sm100/split_gpu/split_check.cu includes the kernel source
and drives its plan and exchange with CUDA-core accumulators on every task shape, twice per shape
(bit-identical results, equal to the host's exact sums). Runs on an H100 (sm_90a) or a B200 (sm_100a).

    PYTHONPATH=$PWD python3 -m pytest tests/sm100/test_tc_split_gpu.py -q -p no:cacheprovider
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.sm100.gpu_program import ROOT, build_for_this_gpu

PROGRAM = ROOT / "tests" / "sm100" / "split_gpu" / "split_check.cu"


@pytest.mark.gpu
def test_split_k_plan_and_exchange_on_the_gpu(tmp_path: Path) -> None:
    binary = build_for_this_gpu(PROGRAM, tmp_path / "split_check", "--expt-relaxed-constexpr")
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
