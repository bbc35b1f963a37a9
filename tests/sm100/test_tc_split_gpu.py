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

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "sm100" / "split_gpu" / "split_check.cu"


@pytest.mark.gpu
def test_split_k_plan_and_exchange_on_the_gpu(tmp_path: Path) -> None:
    import torch

    from nvfp4ctl.build import toolchain

    major, minor = torch.cuda.get_device_capability()
    if major < 9:
        pytest.skip(f"needs sm_90 or newer, this GPU is sm_{major}{minor}")
    arch = "90a" if major == 9 else "100a" if major == 10 else f"{major}{minor}"
    binary = tmp_path / "split_check"
    build = subprocess.run(
        [str(toolchain.nvcc_path()), f"-gencode=arch=compute_{arch},code=sm_{arch}", "-O3", "-std=c++17",
         "--expt-relaxed-constexpr", f"-I{ROOT / 'kernels' / 'common'}", str(PROGRAM), "-o", str(binary)],
        capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
