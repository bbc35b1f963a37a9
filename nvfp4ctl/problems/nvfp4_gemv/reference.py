"""The GEMV's exact reference: row 0 of b is the vector; decode, sum in float64, round once to fp16.

GPU MODE's reference runs `_scaled_mm(a, b.T, out_dtype=float16)` on b padded to 128 rows and keeps
column 0; the GEMM's exact reference on b's first row gives that column (nvfp4_gemm/reference.py
says why float64 is exact and how the one rounding to fp16 is done).
"""

from __future__ import annotations

import torch

from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm


def reference(data: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """A·b per batch as a new fp16 tensor (m, 1, l) with c's strides; data is untouched."""
    a, b, sfa, sfb = data[:4]
    return reference_gemm(a, b[:1], sfa, sfb[:1])
