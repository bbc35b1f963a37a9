"""`--scales full`: e4m3 scales across the whole encoding that still keep every fp16 output finite.

GPU MODE's generator only draws scales in {0, 1, 2, 3}, so a kernel that mishandles exponents,
subnormals or mantissa bits passes the leaderboard and fails on real models. Here each scale is an
unsigned e4m3 code (0x00..0x7e: zero, subnormals, every mantissa, up to 448).

Finiteness: |c[i, j]| <= sum over k-blocks of 16 * 6 * 6 * sfa[i, kb] * sfb[j, kb]. For every
(batch, k-block) we pick a cap split `cap_a + cap_b = budget` with every A scale < 2**cap_a and every
B scale < 2**cap_b, so each product of scales is < 2**budget and |c| < K * 36 * 2**budget <= 65504 / 2
(half the fp16 range is headroom for a kernel's own rounding). The splits sweep from "A huge, B tiny"
to "A tiny, B huge", so at small K both operands see 448 and subnormals, and every k-block contributes
at a similar magnitude (a kernel that flushes subnormal scales is caught, not hidden by atol).
Within a block, codes are uniform over the 3 binades below the cap, and 1 in 16 is zero.
"""

from __future__ import annotations

import math

import torch

from nvfp4ctl.problems.nvfp4_gemm.formats import E2M1_MAX, E4M3_MAX_CODE, E4M3_VALUES, FP16_MAX, SF_VEC
from nvfp4ctl.problems.nvfp4_gemm.layout import ceil_div

MIN_CAP = -8  # scales < 2**-8: zero or the smallest subnormal 2**-9
MAX_CAP = 9  # scales < 2**9: everything up to 448
WINDOW_CODES = 24  # 3 binades of 8 mantissas below the cap
ZERO_ONE_IN = 16


def product_exponent_budget(k: int) -> int:
    """Largest integer B with k * 6 * 6 * 2**B <= 65504 / 2."""
    return math.floor(math.log2(FP16_MAX / 2 / (k * E2M1_MAX * E2M1_MAX)))


def top_code_below(cap: int) -> int:
    """Largest positive e4m3 code whose value is < 2**cap (codes are ordered like their values)."""
    limit = math.ldexp(1.0, cap)
    return max(code for code in range(E4M3_MAX_CODE + 1) if E4M3_VALUES[code] < limit)


_TOP_CODES = torch.tensor([top_code_below(cap) for cap in range(MIN_CAP, MAX_CAP + 1)], dtype=torch.int64)


def cap_splits(k: int, l: int, generator: torch.Generator, budget: int | None = None) -> torch.Tensor:
    """cap_a per (batch, k-block), shape (l, sf_k): an even sweep of every feasible split, shuffled.

    `budget` (default `product_exponent_budget(k)`) is cap_a + cap_b; other problems bound their
    output differently (the dual GEMM multiplies two products) and pass their own.
    """
    if budget is None:
        budget = product_exponent_budget(k)
    low, high = max(MIN_CAP, budget - MAX_CAP), min(MAX_CAP, budget - MIN_CAP)
    if low > high:
        raise ValueError(f"k={k} is too large for full-range scales with a finite fp16 output")
    blocks = l * ceil_div(k, SF_VEC)
    sweep = torch.linspace(low, high, blocks, dtype=torch.float64).round().to(torch.int64)
    return sweep[torch.randperm(blocks, generator=generator)].view(l, -1)


def codes_below(caps: torch.Tensor, rows: int, generator: torch.Generator) -> torch.Tensor:
    """uint8 codes (l, rows, sf_k): uniform over the window below each k-block's cap, some zeros."""
    l, sf_k = caps.shape
    top = _TOP_CODES[caps - MIN_CAP].unsqueeze(1)  # (l, 1, sf_k)
    low = (top - (WINDOW_CODES - 1)).clamp(min=0)
    uniform = torch.rand((l, rows, sf_k), generator=generator, dtype=torch.float64)
    codes = low + (uniform * (top - low + 1)).floor().to(torch.int64)
    zero = torch.randint(0, ZERO_ONE_IN, (l, rows, sf_k), generator=generator) == 0
    return codes.masked_fill(zero, 0).to(torch.uint8)


def draw_full_scales(m: int, n: int, k: int, l: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Scale codes for A (l, m, sf_k) and B (l, n, sf_k) as uint8 on the CPU, the same on every device."""
    generator = torch.Generator().manual_seed(seed)
    caps_a = cap_splits(k, l, generator)
    caps_b = product_exponent_budget(k) - caps_a
    return codes_below(caps_a, m, generator), codes_below(caps_b, n, generator)
