"""Inputs of nvfp4_dual_gemm: GPU MODE's 10-tuple, bit-identical to the leaderboard's on CUDA.

GPU MODE's generate_input (problems/nvidia/nvfp4_dual_gemm/reference.py) draws, after
manual_seed(seed), on the device: a, b1, b2 as randint(255) uint8 bytes masked with 0b1011_1011,
c = randn fp16, then for A, B1, B2 in turn the reference scales as torch.rand float32 (l, mn, sf_k)
cast to e4m3 (values in [0, 1): mostly subnormal codes). We make the same draws in the same order.

The permuted scale tensors are the one thing we cannot reproduce: GPU MODE starts each from an
uninitialised int8 `torch.empty` (converted by value to e4m3) and overwrites every entry that
`to_blocked` maps, so its padding holds whatever that memory held. We write 0 there. Padding only
exists when m or n is not a multiple of 128 or k not a multiple of 64; none of GPU MODE's tests or
benchmarks has any, and for other shapes comparisons must look at mapped entries only
(nvfp4_gemm.layout.scale_offsets; nvfp4ctl.problems.common.digest masks them).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import torch

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems.common.tensors import (
    check_k,
    check_scales,
    codes_to_scales,
    copy_nested,
    cpu_round_trip,
    describe_flat,
    masked_fp4,
    padded_permuted,
    random_c,
    sf_k_of,
)
from nvfp4ctl.problems.nvfp4_dual_gemm.scales import draw_dual_full_scales

TUPLE_NAMES = (
    "a",
    "b1",
    "b2",
    "sfa_ref",
    "sfb1_ref",
    "sfb2_ref",
    "sfa_permuted",
    "sfb1_permuted",
    "sfb2_permuted",
    "c",
)
OUTPUT_INDEX = 9


def check_dims(dims: Any, scales: str = "generator") -> None:
    """UsageError (one line) for sizes the tuple cannot have or an unknown scale mode."""
    m, n, k, l = dims.m, dims.n, dims.k, dims.l
    where = f"shape m={m} n={n} k={k} l={l}"
    if not all(isinstance(size, int) for size in (m, n, k, l)) or min(m, n, k, l) < 1:
        raise UsageError(f"{where}: expected positive integer sizes")
    check_k(k, where)
    check_scales(scales)


def _random_scales(mn: int, sf_k: int, l: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """One scale operand in GPU MODE's order: rand (l, mn, sf_k) -> e4m3; permuted with zero padding."""
    ref = torch.rand((l, mn, sf_k), dtype=torch.float32, device=device).to(torch.float8_e4m3fn).permute(1, 2, 0)
    return cpu_round_trip(ref, device), padded_permuted(ref, None)


def generate_input(dims: Any, seed: int, device: str = "cuda", scales: str = "generator") -> tuple[torch.Tensor, ...]:
    """(a, b1, b2, sfa_ref, sfb1_ref, sfb2_ref, sfa_permuted, sfb1_permuted, sfb2_permuted, c).

    dims: anything with int attributes m, n, k, l (an nvfp4ctl.task.Case). scales="full" keeps a,
    b1, b2 and c (the same draws) and replaces the three scale pairs (see scales.py); the permuted
    tensors then equal `to_blocked` of the reference per batch, padding 0.
    """
    check_dims(dims, scales)
    m, n, k, l = dims.m, dims.n, dims.k, dims.l
    torch.manual_seed(seed)
    a = masked_fp4(l, m, k, device)
    b1 = masked_fp4(l, n, k, device)
    b2 = masked_fp4(l, n, k, device)
    c = random_c(l, m, n, device)
    sf_k = sf_k_of(k)
    pairs = [_random_scales(rows, sf_k, l, device) for rows in (m, n, n)]
    if scales == "full":
        pairs = []
        for codes in draw_dual_full_scales(m, n, k, l, seed):
            ref = codes_to_scales(codes, device)
            pairs.append((ref, padded_permuted(ref, None)))
    (sfa, sfa_p), (sfb1, sfb1_p), (sfb2, sfb2_p) = pairs
    return (a, b1, b2, sfa, sfb1, sfb2, sfa_p, sfb1_p, sfb2_p, c)


def dims_of(data: tuple[torch.Tensor, ...]) -> SimpleNamespace:
    """m, n, k, l of a 10-tuple (g None: not grouped)."""
    m, half_k, l = data[0].shape
    return SimpleNamespace(m=m, n=data[1].shape[0], k=2 * half_k, l=l, g=None)


def refill_input(data: tuple[torch.Tensor, ...], seed: int, scales: str = "generator") -> None:
    """Write generate_input(dims, seed, scales)'s values into the tensors of `data`, same addresses."""
    fresh = generate_input(dims_of(data), seed, device=str(data[0].device), scales=scales)
    copy_nested(data, fresh)


def output_of(data: tuple[torch.Tensor, ...]) -> torch.Tensor:
    return data[OUTPUT_INDEX]


def describe(data: tuple[torch.Tensor, ...]) -> list[str]:
    return describe_flat(TUPLE_NAMES, data)
