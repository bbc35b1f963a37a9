"""Inputs of nvfp4_group_gemm: GPU MODE's 4-tuple of lists, bit-identical to the leaderboard's on CUDA.

GPU MODE's generate_input(m, n, k, g, seed) (problems/nvidia/nvfp4_group_gemm/reference.py) seeds
once, then per group i (l = 1): a_i, b_i as randint(255) uint8 bytes masked with 0b1011_1011 on the
device, c_i = randn fp16 on the device, then the reference scales sfa_i, sfb_i as randint(1, 3)
int8 -> e4m3 (1 or 2) drawn by the CPU generator (no device argument; they stay on the CPU in the
tuple), then each permuted tensor from a randint(1, 3) int8 padding draw on the device. CPU and CUDA
draws come from separate generators that manual_seed seeds together, so on CUDA each generator sees
its own draws in the same order as GPU MODE's. With device="cpu" every draw uses the CPU generator, in
program order (our CI's picture of the same code).

Tuple: (abc_tensors: [(a, b, c)], sfasfb_tensors: [(sfa, sfb)], sfasfb_reordered_tensors:
[(sfa_permuted, sfb_permuted)], problem_sizes: [(m, n, k, 1)]).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import torch

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems.common.tensors import (
    check_k,
    check_scales,
    codes_to_scales,
    copy_nested,
    draw_padding,
    masked_fp4,
    padded_permuted,
    random_c,
    sf_k_of,
    tensor_line,
)
from nvfp4ctl.problems.nvfp4_gemm.scales import cap_splits, codes_below, product_exponent_budget

TUPLE_NAMES = ("abc_tensors", "sfasfb_tensors", "sfasfb_reordered_tensors", "problem_sizes")
GROUP_NAMES = (("a", "b", "c"), ("sfa", "sfb"), ("sfa_permuted", "sfb_permuted"))
L = 1  # GPU MODE's grouped GEMM always has one batch per group


def _sizes(dims: Any) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    sizes = []
    for name in ("m", "n", "k"):
        value = getattr(dims, name)
        if isinstance(value, int) or not isinstance(value, Sequence):
            raise UsageError(f"group shape: {name} must be a list of sizes, one per group, got {value!r}")
        sizes.append(tuple(value))
    return sizes[0], sizes[1], sizes[2]


def check_dims(dims: Any, scales: str = "generator") -> None:
    """UsageError (one line) for lists the tuple cannot have, g != their length, l != 1, bad scales."""
    ms, ns, ks = _sizes(dims)
    g = getattr(dims, "g", None)
    g = len(ms) if g is None else g
    if not (len(ms) == len(ns) == len(ks) == g) or g < 1:
        raise UsageError(f"group shape: g={g} but m, n, k have {len(ms)}, {len(ns)}, {len(ks)} entries")
    l = getattr(dims, "l", None)
    if l not in (None, L):
        raise UsageError(f"group shape: l must be 1 (GPU MODE's grouped GEMM has one batch per group), got {l}")
    for group, (m, n, k) in enumerate(zip(ms, ns, ks), start=1):  # from 1, as check, dump and --shape number them
        where = f"group {group}: m={m} n={n} k={k}"
        if not all(isinstance(size, int) for size in (m, n, k)) or min(m, n, k) < 1:
            raise UsageError(f"{where}: expected positive integer sizes")
        check_k(k, where)
    check_scales(scales)


def _full_scales(
    ms: Sequence[int], ns: Sequence[int], ks: Sequence[int], seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The GEMM's full-range scale codes per group, all from one CPU generator seeded with `seed`."""
    generator = torch.Generator().manual_seed(seed)
    pairs = []
    for m, n, k in zip(ms, ns, ks):
        caps_a = cap_splits(k, L, generator)
        caps_b = product_exponent_budget(k) - caps_a
        pairs.append((codes_below(caps_a, m, generator), codes_below(caps_b, n, generator)))
    return pairs


def generate_input(dims: Any, seed: int, device: str = "cuda", scales: str = "generator") -> tuple[list[Any], ...]:
    """(abc_tensors, sfasfb_tensors, sfasfb_reordered_tensors, problem_sizes) as GPU MODE builds them.

    dims: anything with attributes m, n, k (sequences of g ints) and g (an nvfp4ctl.task.Case).
    Reference scales are CPU tensors whatever `device` is, as in GPU MODE's tuple. scales="full" keeps every
    a, b, c (the same draws) and replaces each group's scales with the GEMM's full-range scheme
    (nvfp4_gemm/scales.py); permuted padding is then 0.
    """
    check_dims(dims, scales)
    ms, ns, ks = _sizes(dims)
    torch.manual_seed(seed)
    abc, refs, permuted, problem_sizes = [], [], [], []
    for m, n, k in zip(ms, ns, ks):
        a = masked_fp4(L, m, k, device)
        b = masked_fp4(L, n, k, device)
        c = random_c(L, m, n, device)
        sf_k = sf_k_of(k)
        sfa = torch.randint(1, 3, (L, m, sf_k), dtype=torch.int8).to(torch.float8_e4m3fn).permute(1, 2, 0)
        sfb = torch.randint(1, 3, (L, n, sf_k), dtype=torch.int8).to(torch.float8_e4m3fn).permute(1, 2, 0)
        sfa_p = padded_permuted(sfa.to(device), draw_padding(1, 3, m, sf_k, L, device))
        sfb_p = padded_permuted(sfb.to(device), draw_padding(1, 3, n, sf_k, L, device))
        abc.append((a, b, c))
        refs.append((sfa, sfb))
        permuted.append((sfa_p, sfb_p))
        problem_sizes.append((m, n, k, L))
    if scales == "full":
        refs, permuted = [], []
        for codes_a, codes_b in _full_scales(ms, ns, ks, seed):
            sfa, sfb = codes_to_scales(codes_a, "cpu"), codes_to_scales(codes_b, "cpu")
            refs.append((sfa, sfb))
            permuted.append((padded_permuted(sfa.to(device), None), padded_permuted(sfb.to(device), None)))
    return (abc, refs, permuted, problem_sizes)


def dims_of(data: tuple[list[Any], ...]) -> SimpleNamespace:
    """m, n, k (tuples), g and l of a grouped tuple, read from its tensors."""
    abc = data[0]
    ms = tuple(a.shape[0] for a, _, _ in abc)
    ns = tuple(b.shape[0] for _, b, _ in abc)
    ks = tuple(2 * a.shape[1] for a, _, _ in abc)
    return SimpleNamespace(m=ms, n=ns, k=ks, l=L, g=len(abc))


def refill_input(data: tuple[list[Any], ...], seed: int, scales: str = "generator") -> None:
    """Write generate_input(dims, seed, scales)'s values into the tensors of `data`, same addresses."""
    fresh = generate_input(dims_of(data), seed, device=str(data[0][0][0].device), scales=scales)
    copy_nested(data, fresh)


def output_of(data: tuple[list[Any], ...]) -> list[torch.Tensor]:
    """The g output tensors c_i (m_i, n_i, 1)."""
    return [c for _, _, c in data[0]]


def describe(data: tuple[list[Any], ...]) -> list[str]:
    """One line per tensor, "[list][group][slot] name ...", then the problem sizes."""
    width = max(len(name) for names in GROUP_NAMES for name in names)
    lines = []
    for list_index, (list_name, names) in enumerate(zip(TUPLE_NAMES, GROUP_NAMES)):
        for group, entry in enumerate(data[list_index]):
            for slot, (name, tensor) in enumerate(zip(names, entry, strict=True)):
                lines.append(tensor_line(f"[{list_index}][{group}][{slot}]", f"{name}{group}", tensor, width + 2))
    sizes = ", ".join(str(size) for size in data[3])
    lines.append(f"[3] {TUPLE_NAMES[3]}  {sizes}")
    return lines
