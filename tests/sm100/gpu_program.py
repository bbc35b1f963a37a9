"""Build one of tests/sm100's CUDA programs for the GPU of this machine (sm_90a on an H100, sm_100a on a
B200), skipping without one that runs sm_90 code."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def build_for_this_gpu(program: Path, out: Path, *flags: str, timeout_s: int = 600) -> Path:
    """nvcc `program` (kernels/common on the include path) into `out` for this GPU's arch."""
    import torch

    from nvfp4ctl.build import toolchain

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    major, minor = torch.cuda.get_device_capability()
    if major < 9:
        pytest.skip(f"needs sm_90 or newer, this GPU is sm_{major}{minor}")
    arch = "90a" if major == 9 else "100a" if major == 10 else f"{major}{minor}"
    build = subprocess.run(
        [str(toolchain.nvcc_path()), f"-gencode=arch=compute_{arch},code=sm_{arch}", "-O3", "-std=c++17", *flags,
         f"-I{ROOT / 'kernels' / 'common'}", str(program), "-o", str(out)],
        capture_output=True, text=True, timeout=timeout_s)
    assert build.returncode == 0, build.stdout + build.stderr
    return out
