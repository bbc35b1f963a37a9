"""Inputs of nvfp4_gemm: the GPU MODE 7-tuple, bit-identical to the leaderboard's on CUDA.

GPU MODE's generate_input (problems/nvidia/nvfp4_gemm/reference.py) draws, after manual_seed(seed):
a, b, c, then for A and then B the reference scales and a second, throw-away tensor in the permuted
layout whose real entries are overwritten from the reference scales (padding keeps its random bytes).
We make the same draws, with the same shapes and dtypes on the same device and in the same order, so
the RNG hands out the same numbers; the permuted tensor is filled by our own layout code.
"""

from __future__ import annotations

import torch

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems import SCALE_MODES
from nvfp4ctl.problems.common.tensors import copy_values
from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC
from nvfp4ctl.problems.nvfp4_gemm.layout import ceil_div, permuted_storage_shape, to_permuted
from nvfp4ctl.problems.nvfp4_gemm.scales import draw_full_scales

TUPLE_NAMES = ("a", "b", "sfa_ref", "sfb_ref", "sfa_permuted", "sfb_permuted", "c")


def _random_fp4(l: int, rows: int, k: int, device: str) -> torch.Tensor:
    """(rows, k/2, l) view of (l, rows, k/2) random bytes: two e2m1 values per byte, batch outermost."""
    packed = torch.randint(-128, 128, (l, rows, k // 2), dtype=torch.int8, device=device)
    return packed.permute(1, 2, 0).view(torch.float4_e2m1fn_x2)


def _generator_scales(mn: int, sf_k: int, l: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """GPU MODE's scales in {0, 1, 2, 3}: reference (mn, sf_k, l) and permuted, in its RNG order."""
    ref = torch.randint(0, 4, (l, mn, sf_k), dtype=torch.int8, device=device).to(torch.float8_e4m3fn)
    ref = ref.permute(1, 2, 0)
    # The second draw must happen even though every real entry is overwritten: it advances the RNG
    # exactly as GPU MODE's does, and its values stay in the padding.
    padding = torch.randint(0, 4, permuted_storage_shape(mn, sf_k, l), dtype=torch.int8, device=device)
    permuted = to_permuted(ref, base=padding.to(torch.float8_e4m3fn))
    # GPU MODE returns the reference scales through a CPU round trip: same values and strides, new storage.
    return ref.cpu().to(device), permuted


def _full_scales(codes: torch.Tensor, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """uint8 codes (l, mn, sf_k) -> reference (mn, sf_k, l) and permuted scales with zero padding."""
    ref = codes.to(device).view(torch.float8_e4m3fn).permute(1, 2, 0)
    return ref, to_permuted(ref)


def check_request(m: int, n: int, k: int, l: int, scales: str) -> None:
    """UsageError for a shape the tuple cannot have or an unknown scale mode."""
    if min(m, n, k, l) < 1 or k % SF_VEC:
        raise UsageError(f"shape m={m} n={n} k={k} l={l}: expected positive sizes with k a multiple of {SF_VEC}")
    if scales not in SCALE_MODES:
        raise UsageError(f"scales: expected one of {', '.join(SCALE_MODES)}, got {scales!r}")


def generate_input(
    m: int, n: int, k: int, l: int, seed: int, device: str = "cuda", scales: str = "generator"
) -> tuple[torch.Tensor, ...]:
    """(a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c) with GPU MODE's shapes, dtypes, strides.

    scales="full" keeps a, b and c (the same draws) and replaces both scale pairs with full-range
    e4m3 scales (see scales.py); their permuted tensors equal `to_blocked` of the reference, padding 0.
    """
    check_request(m, n, k, l, scales)
    torch.manual_seed(seed)
    a = _random_fp4(l, m, k, device)
    b = _random_fp4(l, n, k, device)
    c = torch.randn((l, m, n), dtype=torch.float16, device=device).permute(1, 2, 0)
    sf_k = ceil_div(k, SF_VEC)
    sfa_ref, sfa_permuted = _generator_scales(m, sf_k, l, device)
    sfb_ref, sfb_permuted = _generator_scales(n, sf_k, l, device)
    if scales == "full":
        codes_a, codes_b = draw_full_scales(m, n, k, l, seed)
        sfa_ref, sfa_permuted = _full_scales(codes_a, device)
        sfb_ref, sfb_permuted = _full_scales(codes_b, device)
    return (a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c)


def problem_size(data: tuple[torch.Tensor, ...]) -> tuple[int, int, int, int]:
    """(m, n, k, l) of a 7-tuple."""
    a, b = data[0], data[1]
    m, half_k, l = a.shape
    return m, b.shape[0], 2 * half_k, l


def refill_input(data: tuple[torch.Tensor, ...], seed: int, scales: str = "generator") -> None:
    """Write generate_input(..., seed, scales)'s values into the tensors of `data`, same addresses."""
    m, n, k, l = problem_size(data)
    fresh = generate_input(m, n, k, l, seed, device=str(data[0].device), scales=scales)
    for target, source in zip(data, fresh, strict=True):
        copy_values(target, source)
