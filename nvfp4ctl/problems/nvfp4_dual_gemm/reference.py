"""The dual GEMM's reference on any arch: both products exact, rounded to fp32, then silu and product.

GPU MODE's reference computes r1 = _scaled_mm(A, B1, out_dtype=float32) and r2 likewise, then
`(silu(r1) * r2).to(float16)`. We compute each product's exact value (float64, see
nvfp4ctl/problems/common/exact.py) and round it once to fp32: the correctly rounded r1 and r2. Then
silu and the product run in fp32 with torch's own silu on the data's device, and one rounding to
fp16, as GPU MODE does.

Where this may differ from the leaderboard by an fp32 ulp: cuBLAS's block-scaled kernel accumulates
in fp32 (tensor-core partial sums in its own order), so once a partial sum needs more than 24 bits
(e.g. generator scales in [0, 1) over K = 7168: values are multiples of 2**-20 reaching 2**10 and
beyond) its r1 and r2 can differ from the correctly rounded ones by a few fp32 ulps. silu's exp is
not correctly rounded either, and CPU and CUDA builds of torch differ there by an ulp at most. Each
of these is a relative change near 1e-7, which moves c by at most one fp16 ulp where it sits next to
a rounding boundary: far inside the task's rtol = atol = 1e-3.
"""

from __future__ import annotations

import torch

from nvfp4ctl.problems.common.exact import exact_products


def products(data: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """(A·B1ᵀ, A·B2ᵀ) as float32 (m, n, l), batch outermost: exact sums rounded once to fp32."""
    a, b1, b2, sfa, sfb1, sfb2 = data[:6]
    first = exact_products(a, b1, sfa, sfb1).to(torch.float32)
    second = exact_products(a, b2, sfa, sfb2).to(torch.float32)
    return first.permute(1, 2, 0), second.permute(1, 2, 0)


def reference(data: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """silu(A·B1ᵀ) ⊙ (A·B2ᵀ) as a new fp16 tensor (m, n, l) with c's strides; data is untouched."""
    first, second = products(data)
    m, n, l = first.shape
    # c's own layout, batch outermost (an elementwise result would pick other strides when l = 1)
    out = torch.empty((l, m, n), dtype=torch.float16, device=first.device).permute(1, 2, 0)
    return out.copy_((torch.nn.functional.silu(first) * second).to(torch.float16))
