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

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "sm100" / "bounded_wait_gpu" / "bounded_wait_check.cu"


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["legal", "missed"])
def test_a_wait_finishes_or_traps_after_its_limit(tmp_path: Path, case: str) -> None:
    import torch

    from nvfp4ctl.build import toolchain

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    major, minor = torch.cuda.get_device_capability()
    if major < 9:
        pytest.skip(f"needs sm_90 or newer, this GPU is sm_{major}{minor}")
    arch = "90a" if major == 9 else "100a" if major == 10 else f"{major}{minor}"
    binary = tmp_path / "bounded_wait_check"
    build = subprocess.run(
        [str(toolchain.nvcc_path()), f"-gencode=arch=compute_{arch},code=sm_{arch}", "-O3", "-std=c++17",
         f"-I{ROOT / 'kernels' / 'common'}", str(PROGRAM), "-o", str(binary)],
        capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    done = subprocess.run([str(binary), case], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
