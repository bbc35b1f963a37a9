"""The grouped GEMM's exact reference: one GEMM per group, each exactly as nvfp4_gemm's reference.

GPU MODE's ref_kernel writes each group's `_scaled_mm(out_dtype=float16)` into that group's c and
returns the list of c; ours returns new tensors shaped and strided like each c and leaves data alone.
The reference scales live on the CPU in the tuple; they are moved to the operands' device here.
"""

from __future__ import annotations

from typing import Any

import torch

from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm


def reference(data: tuple[list[Any], ...]) -> list[torch.Tensor]:
    """[C_i (m_i, n_i, 1) fp16 for every group i]."""
    abc, refs = data[0], data[1]
    return [
        reference_gemm(a, b, sfa.to(a.device), sfb.to(a.device))
        for (a, b, _), (sfa, sfb) in zip(abc, refs, strict=True)
    ]
