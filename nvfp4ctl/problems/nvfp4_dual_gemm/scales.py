"""`--scales full` for the dual GEMM: e4m3 scales across the encoding, fp16 output still finite.

GPU MODE's dual generator draws scales as torch.rand in [0, 1) cast to e4m3: mostly subnormal and
small codes, never above 1. Full-range scales reuse the GEMM's scheme (nvfp4_gemm/scales.py: per
(batch, k-block) a cap split swept across its feasible range, codes uniform over 3 binades below
each cap, 1 in 16 zero) with a bound fit for this output:

|c| = |silu(r1)| * |r2| <= |r1| * |r2| (|silu(x)| < |x| for every x != 0), and with the masked fp4
draws (|value| <= 1.5) |r| < K * 1.5 * 1.5 * 2**budget when every product of scales is < 2**budget.
Both products get the same budget, the largest with (K * 2.25 * 2**budget)**2 <= 65504 / 2; A's cap
and B1's (and B2's) caps add up to it, B1 and B2 drawn independently below the same cap. Because the
bound is squared, the caps reach 2**(budget + 8) at most (about 2 at K = 7168, 64 at K = 256) rather
than 448; subnormals, every mantissa and most exponents are still covered.
"""

from __future__ import annotations

import math

import torch

from nvfp4ctl.problems.common.tensors import SMALL_E2M1_MAX
from nvfp4ctl.problems.nvfp4_gemm.formats import FP16_MAX
from nvfp4ctl.problems.nvfp4_gemm.scales import cap_splits, codes_below


def dual_exponent_budget(k: int) -> int:
    """Largest integer B with (k * 1.5 * 1.5 * 2**B)**2 <= 65504 / 2."""
    return math.floor(math.log2(math.sqrt(FP16_MAX / 2) / (k * SMALL_E2M1_MAX * SMALL_E2M1_MAX)))


def draw_dual_full_scales(m: int, n: int, k: int, l: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """uint8 codes for A (l, m, sf_k), B1 and B2 (l, n, sf_k) on the CPU, the same on every device."""
    generator = torch.Generator().manual_seed(seed)
    budget = dual_exponent_budget(k)
    caps_a = cap_splits(k, l, generator, budget=budget)
    caps_b = budget - caps_a
    return codes_below(caps_a, m, generator), codes_below(caps_b, n, generator), codes_below(caps_b, n, generator)
