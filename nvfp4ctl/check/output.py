"""Plain-words checks of what custom_kernel returned, before any number is compared."""

from __future__ import annotations

from typing import Any

import torch


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def output_mistakes(out: Any, want: torch.Tensor, dims: tuple[str, ...] = ("m", "n", "l")) -> list[str]:
    """Why `out` cannot be compared with `want` (type, device, dtype, shape); empty when it can. `dims`
    names want's dimensions as the problem does (the GEMV's c is (m, 1, l))."""
    if not isinstance(out, torch.Tensor):
        return [f"custom_kernel returned {type(out).__name__}, expected a torch.Tensor (the c of the input tuple)"]
    mistakes = [m for m in (device_mistake(out, want), dtype_mistake(out, want)) if m]
    if tuple(out.shape) != tuple(want.shape):
        mistakes.append(
            f"custom_kernel returned shape {tuple(out.shape)}, expected {tuple(want.shape)} ({', '.join(dims)})"
            + _shape_hint(tuple(out.shape), tuple(want.shape), dims)
        )
    return mistakes


def device_mistake(out: torch.Tensor, want: torch.Tensor) -> str | None:
    """An output on another device than the reference's: a failure, never moved (the leaderboard's
    comparison would raise on it)."""
    if out.device.type == want.device.type:
        return None
    return f"custom_kernel returned a {out.device.type.upper()} tensor, expected one on {want.device}"


def dtype_mistake(out: torch.Tensor, want: torch.Tensor) -> str | None:
    """An output no floating-point comparison reads. A floating one of another width (an fp32 c) is
    compared as GPU MODE's verbose_allclose compares it, in the wider dtype, so it is no mistake here."""
    if out.dtype == want.dtype or (out.dtype.is_floating_point and not out.dtype.is_complex):
        return None
    return f"custom_kernel returned {dtype_name(out.dtype)}, expected {dtype_name(want.dtype)}"


def _shape_hint(got: tuple[int, ...], want: tuple[int, ...], dims: tuple[str, ...]) -> str:
    if len(want) != 3:
        return ""
    m, n, l = dims
    if n == "1" and got == (want[0], want[2]):  # the GEMV's c.squeeze(1) or c[:, 0]
        return ": the middle dimension (1) is missing; return c itself"
    if got == want[:2]:
        return f": the {l} dimension is missing; return c itself"
    if got == (want[1], want[0], want[2]):
        return f": {m} and {n} are swapped (transposed output?)"
    if got == (want[2], want[0], want[1]):
        return f": {l} is first; c is ({', '.join(dims)}), a permuted view of an ({l}, {m}, {n}) buffer"
    return ""


def is_output_buffer(out: torch.Tensor, c: torch.Tensor) -> bool:
    """True when the target returned c itself (same storage, dtype, shape and strides)."""
    return (out.data_ptr() == c.data_ptr() and out.dtype == c.dtype and out.shape == c.shape
            and out.stride() == c.stride())
