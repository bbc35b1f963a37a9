"""Small pieces every problem's generate_input and refill_input share.

GPU MODE's generators differ per problem in their draws, but they build tensors the same ways:
batch-outermost storage viewed as (rows, cols, l), scales returned through a CPU round trip, permuted
scales written into a separately drawn (or uninitialised) tensor. These helpers do those steps once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import torch

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems import SCALE_MODES
from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC
from nvfp4ctl.problems.nvfp4_gemm.layout import ceil_div, permuted_storage_shape, to_permuted

# The dual and grouped GEMMs keep each nibble's sign bit and its two low bits: 0, ±0.5, ±1, ±1.5.
SMALL_E2M1_MASK = 0b1011_1011
SMALL_E2M1_MAX = 1.5


def check_scales(scales: str) -> None:
    if scales not in SCALE_MODES:
        raise UsageError(f"scales: expected one of {', '.join(SCALE_MODES)}, got {scales!r}")


def check_k(k: int, where: str) -> None:
    """UsageError unless k holds whole e4m3 scale blocks (what the tuple needs, not the task's promise)."""
    if k % SF_VEC:
        raise UsageError(f"{where}: k must be a multiple of {SF_VEC}")


def masked_fp4(l: int, rows: int, k: int, device: str) -> torch.Tensor:
    """(rows, k/2, l) fp4 view of randint(255) bytes masked to small e2m1 codes: one draw (l, rows, k/2)."""
    packed = torch.randint(255, size=(l, rows, k // 2), dtype=torch.uint8, device=device)
    return (packed & SMALL_E2M1_MASK).permute(1, 2, 0).view(torch.float4_e2m1fn_x2)


def random_c(l: int, m: int, n: int, device: str) -> torch.Tensor:
    """The output tensor (m, n, l) fp16, batch outermost, filled by randn as GPU MODE does."""
    return torch.randn((l, m, n), dtype=torch.float16, device=device).permute(1, 2, 0)


def cpu_round_trip(tensor: torch.Tensor, device: str) -> torch.Tensor:
    """GPU MODE's `.cpu()` then `.to(device)`: same values and strides, fresh storage on CUDA."""
    return tensor.cpu().to(device)


def padded_permuted(ref: torch.Tensor, padding_codes: torch.Tensor | None) -> torch.Tensor:
    """The permuted view of `ref` (mn, sf_k, l); padding from int8 codes converted by value, else 0."""
    base = None if padding_codes is None else padding_codes.to(torch.float8_e4m3fn)
    return to_permuted(ref, base=base)


def draw_padding(low: int, high: int, mn: int, sf_k: int, l: int, device: str) -> torch.Tensor:
    """randint(low, high) int8 over the permuted storage shape: the draw GPU MODE makes for padding."""
    return torch.randint(low, high, permuted_storage_shape(mn, sf_k, l), dtype=torch.int8, device=device)


def codes_to_scales(codes: torch.Tensor, device: str | torch.device) -> torch.Tensor:
    """uint8 codes (l, mn, sf_k) -> e4m3 reference scales (mn, sf_k, l), batch outermost."""
    return codes.to(device).view(torch.float8_e4m3fn).permute(1, 2, 0)


def sf_k_of(k: int) -> int:
    return ceil_div(k, SF_VEC)


def copy_values(target: torch.Tensor, source: torch.Tensor) -> None:
    """Overwrite target's elements in place; 1-byte types go through a byte view (no fp4 copy kernel)."""
    if target.shape != source.shape or target.dtype != source.dtype or target.device != source.device:
        raise ValueError(
            f"refill: {tuple(target.shape)} {target.dtype} {target.device} vs "
            f"{tuple(source.shape)} {source.dtype} {source.device}"
        )
    if target.element_size() == 1:
        target.view(torch.uint8).copy_(source.view(torch.uint8))
    else:
        target.copy_(source)


def flat_tensors(data: Any, label: str = "") -> Iterator[tuple[str, torch.Tensor]]:
    """(label, tensor) for every tensor in nested tuples/lists: "[0]", "[0][1][2]", ...; ints skipped."""
    if isinstance(data, torch.Tensor):
        yield label, data
    elif isinstance(data, (tuple, list)):
        for index, item in enumerate(data):
            yield from flat_tensors(item, f"{label}[{index}]")


def copy_nested(targets: Any, sources: Any) -> None:
    """copy_values over matching nested tuples/lists of tensors (non-tensors must be equal)."""
    pairs: Iterable[tuple[Any, Any]] = zip(targets, sources, strict=True)
    for target, source in pairs:
        if isinstance(target, torch.Tensor):
            copy_values(target, source)
        elif isinstance(target, (tuple, list)):
            copy_nested(target, source)
        elif target != source:
            raise ValueError(f"refill: {target!r} vs {source!r}")


def tensor_line(label: str, name: str, tensor: torch.Tensor, width: int) -> str:
    dtype = str(tensor.dtype).removeprefix("torch.")
    return (
        f"{label} {name:<{width}}  {dtype:<16}  shape {tuple(tensor.shape)}  "
        f"strides {tensor.stride()}  {tensor.device}"
    )


def describe_flat(names: tuple[str, ...], data: tuple[torch.Tensor, ...]) -> list[str]:
    """One line per element of a flat tuple of tensors: index, name, dtype, shape, strides, device."""
    width = max(len(name) for name in names)
    pairs = enumerate(zip(names, data, strict=True))
    return [tensor_line(f"[{index}]", name, tensor, width) for index, (name, tensor) in pairs]
