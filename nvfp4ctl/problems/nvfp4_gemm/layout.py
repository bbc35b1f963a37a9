"""The block-scaling layout of the permuted scale tensors (cuBLAS / CUTLASS Sm1xxBlkScaledConfig).

Scales of one batch are cut into 512-byte atoms of 128 rows x 4 k-blocks. Atoms are stored row-block
major (all k-atoms of rows 0..127, then rows 128..255, ...). Inside an atom, row r sits at
(r % 32) * 16 + ((r // 32) % 4) * 4, and its 4 k-blocks are 4 consecutive bytes. GPU MODE hands this
out as a 6-d view (32, 4, rest_mn, 4, rest_k, l) whose every batch is one contiguous run of bytes.
Rows past mn and k-blocks past sf_k (when they are not multiples of 128 and 4) are padding.
"""

from __future__ import annotations

import torch

ATOM_ROWS = 128  # rows per atom, stored as 4 groups of 32
ATOM_K = 4  # k-blocks per atom
ATOM_BYTES = 512


def ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


def scale_offset(row: int, k_block: int, sf_k: int) -> int:
    """Byte offset of the scale of (row, k_block) inside one batch of the permuted layout."""
    atom = (row // ATOM_ROWS) * ceil_div(sf_k, ATOM_K) + k_block // ATOM_K
    return atom * ATOM_BYTES + (row % 32) * 16 + ((row // 32) % 4) * 4 + k_block % ATOM_K


def scale_offsets(mn: int, sf_k: int, device: str | torch.device = "cpu") -> torch.Tensor:
    """`scale_offset` for every (row, k_block) at once: an int64 tensor (mn, sf_k)."""
    row = torch.arange(mn, device=device).unsqueeze(1)
    k_block = torch.arange(sf_k, device=device).unsqueeze(0)
    atom = (row // ATOM_ROWS) * ceil_div(sf_k, ATOM_K) + k_block // ATOM_K
    return atom * ATOM_BYTES + (row % 32) * 16 + ((row // 32) % 4) * 4 + k_block % ATOM_K


def permuted_storage_shape(mn: int, sf_k: int, l: int) -> tuple[int, int, int, int, int, int]:
    """Shape of the contiguous tensor behind the permuted view: (l, rest_mn, rest_k, 32, 4, 4)."""
    return (l, ceil_div(mn, ATOM_ROWS), ceil_div(sf_k, ATOM_K), 32, 4, ATOM_K)


def to_blocked(ref_2d: torch.Tensor) -> torch.Tensor:
    """Scales (mn, sf_k) of one batch -> the 1-d block-scaled layout.

    Same arithmetic as GPU MODE's `to_blocked` (which only accepts mn % 128 == 0 and sf_k % 4 == 0);
    other shapes are padded with zero scales first, as torch's own `_scaled_mm` helpers do.
    """
    mn, sf_k = ref_2d.shape
    row_blocks, k_atoms = ceil_div(mn, ATOM_ROWS), ceil_div(sf_k, ATOM_K)
    padded = ref_2d
    if (row_blocks * ATOM_ROWS, k_atoms * ATOM_K) != (mn, sf_k):
        padded = torch.zeros((row_blocks * ATOM_ROWS, k_atoms * ATOM_K), dtype=torch.uint8, device=ref_2d.device)
        padded[:mn, :sf_k] = ref_2d.view(torch.uint8)
        padded = padded.view(ref_2d.dtype)
    blocks = padded.reshape(row_blocks, ATOM_ROWS, k_atoms, ATOM_K).permute(0, 2, 1, 3)
    return blocks.reshape(-1, 4, 32, ATOM_K).transpose(1, 2).reshape(-1)


def to_permuted(ref: torch.Tensor, base: torch.Tensor | None = None) -> torch.Tensor:
    """Reference scales (mn, sf_k, l) -> the permuted view (32, 4, rest_mn, 4, rest_k, l).

    `base` (shape `permuted_storage_shape`, same dtype) receives the scales in place and keeps its own
    values in the padding; without it the padding is zero and each batch's bytes equal `to_blocked`.
    """
    mn, sf_k, l = ref.shape
    shape = permuted_storage_shape(mn, sf_k, l)
    if base is None:
        base = torch.zeros(shape, dtype=ref.dtype, device=ref.device)
    if tuple(base.shape) != shape:
        raise ValueError(f"to_permuted: base has shape {tuple(base.shape)}, expected {shape}")
    _, row_blocks, k_atoms, _, _, _ = shape
    # Work on bytes: index and copy kernels do not cover every float8 dtype on every device.
    storage = base.view(torch.uint8)
    # (l, rows, k-blocks) picture of the atoms, padding included: row = rb*128 + g*32 + r32, col = ka*4 + c4
    rows_cols = storage.permute(0, 1, 4, 3, 2, 5).reshape(l, row_blocks * ATOM_ROWS, k_atoms * ATOM_K)
    rows_cols[:, :mn, :sf_k] = ref.view(torch.uint8).permute(2, 0, 1)
    atoms = rows_cols.view(l, row_blocks, 4, 32, k_atoms, ATOM_K).permute(0, 1, 4, 3, 2, 5)
    storage.copy_(atoms)
    return base.permute(3, 4, 1, 5, 2, 0)
