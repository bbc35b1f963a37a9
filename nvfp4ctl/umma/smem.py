"""Shared memory as the block-scaled UMMA sees it: a byte image, the swizzle, TMA box placement, and
the address of every operand byte one MMA reads, derived from its 64-bit smem descriptor alone.

Sources. Descriptor fields and layout codes: PTX ISA 9.7.16.4.1 "Shared memory descriptor" and
CUTLASS cute/arch/mma_sm100_desc.hpp (`SmemDescriptor`, `LayoutType`); see descriptors.py. The
K-major canonical layouts (8-row core matrices; swizzle atoms of 8 rows x 32/64/128 bytes whose
16-byte chunks are XORed with the row within the atom) follow the PTX ISA's "Shared memory
matrix layout" for tcgen05 and CuTe's `Swizzle<B,4,3>` atoms (cute/atom/mma_traits_sm100.hpp:
Layout_K_SW32/64/128_Atom). The swizzle uses absolute shared-address bits, as TMA does, so a
tile that starts on a 1024-byte boundary has pattern phase 0 (CUTLASS aligns stages that way).
tests/umma/test_smem_cute.py checks operand_addresses against CuTe's own layouts.
"""

from __future__ import annotations

import torch

from nvfp4ctl.umma import descriptors as d

SWIZZLE_NONE, SWIZZLE_128B_BASE32B, SWIZZLE_128B, SWIZZLE_64B, SWIZZLE_32B = 0, 1, 2, 4, 6
SWIZZLE_SPAN = {SWIZZLE_NONE: 16, SWIZZLE_32B: 32, SWIZZLE_64B: 64, SWIZZLE_128B: 128}  # bytes per atom row
SWIZZLE_BITS = {SWIZZLE_NONE: 0, SWIZZLE_32B: 1, SWIZZLE_64B: 2, SWIZZLE_128B: 3}  # B of Swizzle<B,4,3>
TMA_SWIZZLE = {"none": SWIZZLE_NONE, "32B": SWIZZLE_32B, "64B": SWIZZLE_64B, "128B": SWIZZLE_128B}
SWIZZLE_NAMES = {code: name for name, code in TMA_SWIZZLE.items()}
SMEM_BYTES = 232448  # sm_100 shared memory per CTA (227 KiB): the largest image a kernel can address
MMA_K_BYTES = 32  # every dense block-scaled MMA reads 32 bytes of K per row (64 fp4 or 32 fp8)
CORE_ROWS = 8


class ModelError(ValueError):
    """A descriptor the model will not run; `field` names the descriptor field at fault."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def reads_lbo(layout: int) -> bool:
    """Whether the MMA reads a K-major operand descriptor's LBO: only without a swizzle, where it is the
    K stride between 16-byte core matrices. The PTX ISA's swizzled K-major layouts have no LBO term,
    since one MMA's MMA_K_BYTES of a row lie inside one swizzle atom (CUTLASS writes 1 there)."""
    return layout == SWIZZLE_NONE


def new_image(size_bytes: int = SMEM_BYTES) -> torch.Tensor:
    return torch.zeros(size_bytes, dtype=torch.uint8)


def swizzle_address(addr: torch.Tensor | int, layout: int) -> torch.Tensor | int:
    """Swizzle<B,4,3> on absolute shared addresses: bits [4, 4+B) ^= bits [7, 7+B)."""
    if layout not in SWIZZLE_BITS:
        raise ModelError(f"swizzle layout code {layout} is not modelled ({d.LAYOUTS.get(layout, 'invalid')})", "layout")
    bits = SWIZZLE_BITS[layout]
    if bits == 0:
        return addr
    mask = ((1 << bits) - 1) << 7
    return addr ^ ((addr & mask) >> 3)


def tma_store_box(image: torch.Tensor, dst_addr: int, box: torch.Tensor, layout: int, base: int = 0) -> None:
    """Write a TMA box as cp.async.bulk.tensor does: box (rows, inner_bytes) or (outer, rows, inner_bytes)
    uint8, dense from dst_addr (row pitch = inner bytes), each byte at its swizzled address."""
    data = box.reshape(-1, box.shape[-1]).to(torch.uint8)
    rows, inner = data.shape
    span = SWIZZLE_SPAN.get(layout)
    if span is None:
        raise ModelError(f"TMA swizzle code {layout} is not one of {sorted(SWIZZLE_SPAN)}", "layout")
    if layout != SWIZZLE_NONE and inner > span:
        raise ValueError(f"a TMA box row of {inner} bytes exceeds the {span}-byte swizzle span")
    if dst_addr % 128:
        raise ValueError(f"TMA destination 0x{dst_addr:x} is not 128-byte aligned")
    linear = dst_addr + torch.arange(rows * inner, dtype=torch.int64)
    where = swizzle_address(linear, layout) - base
    if int(where.min()) < 0 or int(where.max()) >= image.numel():
        raise ValueError(f"TMA box at 0x{dst_addr:x} ({rows * inner} bytes) falls outside the image")
    image[where] = data.reshape(-1)


def operand_addresses(desc: int, rows: int, k_bytes: int = MMA_K_BYTES) -> torch.Tensor:
    """int64 (rows, k_bytes): the absolute shared address of each byte of a K-major operand that one
    MMA reads, row = M (A) or N (B) index, byte = K offset within the MMA's K extent."""
    fields = d.decode_smem(desc)
    layout = fields["layout"]
    if fields["version"] != d.SMEM_DESC_VERSION_SM100:
        raise ModelError(f"descriptor version {fields['version']} (bits 46-47) must be 1 on sm_100", "version")
    if fields["lbo_mode"]:
        raise ModelError("LBO mode 1 (absolute LBO, 48-byte K tiles) is not modelled", "lbo_mode")
    if fields["base_offset"]:
        raise ModelError(f"base offset {fields['base_offset']}: the model assumes pattern-aligned tiles (0)",
                         "base_offset")
    if layout not in SWIZZLE_SPAN:
        raise ModelError(f"swizzle code {layout} ({d.LAYOUTS.get(layout, 'invalid')}) is not modelled", "layout")
    start, lbo, sbo = fields["start"] << 4, fields["lbo"] << 4, fields["sbo"] << 4
    row = torch.arange(rows, dtype=torch.int64).unsqueeze(1)
    kb = torch.arange(k_bytes, dtype=torch.int64).unsqueeze(0)
    group, within = row // CORE_ROWS, row % CORE_ROWS
    if layout == SWIZZLE_NONE:  # core matrices of 8 rows x 16 bytes: LBO along K, SBO along M/N
        pre = start + group * sbo + within * 16 + (kb // 16) * lbo + kb % 16
        return pre
    span = SWIZZLE_SPAN[layout]
    if k_bytes > span:
        raise ModelError(f"one MMA reads {k_bytes} K bytes per row, more than the {span}-byte swizzle atom", "layout")
    pre = start + group * sbo + within * span + kb  # no LBO: reads_lbo
    return swizzle_address(pre, layout)  # type: ignore[return-value]


def gather(image: torch.Tensor, addresses: torch.Tensor, base: int = 0) -> torch.Tensor:
    """Bytes of the image at absolute shared addresses (a ModelError if any falls outside it)."""
    where = addresses - base
    if int(where.min()) < 0 or int(where.max()) >= image.numel():
        raise ModelError(f"the descriptor reads shared addresses 0x{int(addresses.min()):x}..0x{int(addresses.max()):x},"
                         f" outside the image (0x{base:x}..0x{base + image.numel():x})", "start")
    return image[where]
