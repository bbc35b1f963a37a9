"""Inputs of nvfp4_gemv: GPU MODE's 7-tuple, bit-identical to the leaderboard's on CUDA.

GPU MODE's generate_input (problems/nvidia/nvfp4_gemv/reference.py) calls `_scaled_mm`, which needs
128 rows on each side, so b and its scales are padded to 128 rows and only row 0 is the vector.
After manual_seed(seed) it draws on the device: a = randint(0, 4) uint8 (l, m, k/2) (bytes 0..3:
the low element is 0, 0.5, 1 or 1.5, the high one 0), b likewise (l, 128, k/2), c = randn fp16
(l, m, 1); then for A and for the 128 rows of B: reference scales randint(0, 3) int8 -> e4m3
(0, 1 or 2) and the permuted tensor's randint(0, 3) int8 padding draw, whose values stay where no
reference scale lands. Reference scales come back through a CPU round trip.
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
    draw_padding,
    padded_permuted,
    random_c,
    sf_k_of,
)
from nvfp4ctl.problems.nvfp4_gemm.scales import draw_full_scales
from nvfp4ctl.problems.nvfp4_gemv.problem import B_SCALE_ROWS

TUPLE_NAMES = ("a", "b", "sfa_ref", "sfb_ref", "sfa_permuted", "sfb_permuted", "c")
B_ROWS = B_SCALE_ROWS  # b and sfb are padded to 128 rows; row 0 is the vector
OUTPUT_INDEX = 6


def check_dims(dims: Any, scales: str = "generator") -> None:
    """UsageError (one line) for sizes the tuple cannot have or an unknown scale mode."""
    m, k, l = dims.m, dims.k, dims.l
    where = f"shape m={m} k={k} l={l}"
    if not all(isinstance(size, int) for size in (m, k, l)) or min(m, k, l) < 1:
        raise UsageError(f"{where}: expected positive integer sizes")
    check_k(k, where)
    check_scales(scales)


def _small_fp4(l: int, rows: int, k: int, device: str) -> torch.Tensor:
    return torch.randint(0, 4, (l, rows, k // 2), dtype=torch.uint8, device=device).permute(1, 2, 0).view(
        torch.float4_e2m1fn_x2
    )


def _generator_scales(mn: int, sf_k: int, l: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    ref = torch.randint(0, 3, (l, mn, sf_k), dtype=torch.int8, device=device).to(torch.float8_e4m3fn).permute(1, 2, 0)
    permuted = padded_permuted(ref, draw_padding(0, 3, mn, sf_k, l, device))
    return cpu_round_trip(ref, device), permuted


def generate_input(dims: Any, seed: int, device: str = "cuda", scales: str = "generator") -> tuple[torch.Tensor, ...]:
    """(a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c) with GPU MODE's shapes, dtypes, strides.

    dims: anything with int attributes m, k, l (an nvfp4ctl.task.Case; n is ignored). a (m, k/2, l),
    b (128, k/2, l), sfa_ref (m, k/16, l), sfb_ref (128, k/16, l), c (m, 1, l). scales="full" keeps
    a, b, c and replaces both scale pairs with the GEMM's full-range scheme (nvfp4_gemm/scales.py,
    B's 128 rows drawn like any GEMM operand's); permuted padding is then 0.
    """
    check_dims(dims, scales)
    m, k, l = dims.m, dims.k, dims.l
    torch.manual_seed(seed)
    a = _small_fp4(l, m, k, device)
    b = _small_fp4(l, B_ROWS, k, device)
    c = random_c(l, m, 1, device)
    sf_k = sf_k_of(k)
    sfa, sfa_p = _generator_scales(m, sf_k, l, device)
    sfb, sfb_p = _generator_scales(B_ROWS, sf_k, l, device)
    if scales == "full":
        codes_a, codes_b = draw_full_scales(m, B_ROWS, k, l, seed)
        sfa, sfb = codes_to_scales(codes_a, device), codes_to_scales(codes_b, device)
        sfa_p, sfb_p = padded_permuted(sfa, None), padded_permuted(sfb, None)
    return (a, b, sfa, sfb, sfa_p, sfb_p, c)


def dims_of(data: tuple[torch.Tensor, ...]) -> SimpleNamespace:
    """m, k, l of a 7-tuple (n None: GEMV; g None: not grouped)."""
    m, half_k, l = data[0].shape
    return SimpleNamespace(m=m, n=None, k=2 * half_k, l=l, g=None)


def refill_input(data: tuple[torch.Tensor, ...], seed: int, scales: str = "generator") -> None:
    """Write generate_input(dims, seed, scales)'s values into the tensors of `data`, same addresses."""
    fresh = generate_input(dims_of(data), seed, device=str(data[0].device), scales=scales)
    copy_nested(data, fresh)


def output_of(data: tuple[torch.Tensor, ...]) -> torch.Tensor:
    return data[OUTPUT_INDEX]


def describe(data: tuple[torch.Tensor, ...]) -> list[str]:
    return describe_flat(TUPLE_NAMES, data)
