"""A model's own kernels/common/ folder with a header of its own and no binding, so nvfp4ctl's kernels/common/
stays the one built with: for the tests that a kernel including such a header builds and exports with it."""

from __future__ import annotations

from pathlib import Path


def kernel_beside_a_models_common(root: Path, api_header: str, common_header: str) -> tuple[Path, Path]:
    """root/kernels/common/rope.cuh holding `common_header`, and root/kernels/mine/k.cu including
    `api_header` then rope.cuh; returns the kernel and the common folder."""
    common = root / "kernels" / "common"
    common.mkdir(parents=True)
    (common / "rope.cuh").write_text(common_header)
    kernel = root / "kernels" / "mine" / "k.cu"
    kernel.parent.mkdir()
    kernel.write_text(f'#include "{api_header}"\n#include "rope.cuh"\n')
    return kernel, common
