"""Exact block-scaled products in float64, before any rounding (the GEMM rounds them to fp16 itself).

Same argument as nvfp4_gemm/reference.py: every dequantized product is a multiple of 2**-20 with at
most 12 significant bits, so while |partial sums| < 2**32 each float64 partial sum is exact in any
summation order; the caller rounds once, to whatever the leaderboard's reference rounds to.
"""

from __future__ import annotations

import torch

from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC
from nvfp4ctl.problems.nvfp4_gemm.reference import K_CHUNK_ELEMENTS, dequantize


def _k_chunk(m: int, n: int, k: int) -> int:
    chunk = (K_CHUNK_ELEMENTS // (m + n)) // SF_VEC * SF_VEC
    return min(k, max(SF_VEC, chunk))


def exact_products(
    a: torch.Tensor, b: torch.Tensor, sfa: torch.Tensor, sfb: torch.Tensor, k_chunk: int | None = None
) -> torch.Tensor:
    """(A_i * sfa_i) @ (B_i * sfb_i).T for every batch i, exact: float64 (l, m, n) on a's device.

    a (m, k/2, l), b (n, k/2, l) packed fp4; sfa (m, k/16, l), sfb (n, k/16, l) e4m3 (moved to a's
    device if they live elsewhere, as the grouped GEMM's reference scales do).
    """
    m, half_k, l = a.shape
    n = b.shape[0]
    k = 2 * half_k
    sfa, sfb = sfa.to(a.device), sfb.to(a.device)
    chunk = k_chunk if k_chunk is not None else _k_chunk(m, n, k)
    if chunk % SF_VEC:
        raise ValueError(f"k_chunk must be a multiple of {SF_VEC}, got {chunk}")
    out = torch.zeros((l, m, n), dtype=torch.float64, device=a.device)
    for batch in range(l):
        for k0 in range(0, k, chunk):
            k1 = min(k, k0 + chunk)
            a_values = dequantize(a[:, k0 // 2 : k1 // 2, batch], sfa[:, k0 // SF_VEC : k1 // SF_VEC, batch])
            b_values = dequantize(b[:, k0 // 2 : k1 // 2, batch], sfb[:, k0 // SF_VEC : k1 // SF_VEC, batch])
            out[batch] += a_values @ b_values.T
    return out
