"""to_blocked, to_permuted and scale_offset, each proven against the others and GPU MODE's math."""

from __future__ import annotations

import pytest
import torch

from nvfp4ctl.problems.nvfp4_gemm.layout import (
    ceil_div,
    permuted_storage_shape,
    scale_offset,
    scale_offsets,
    to_blocked,
    to_permuted,
)

# (mn, sf_k, l): multiples of the 128 x 4 atom, and shapes that need padding rows or k-blocks
SHAPES = [(128, 4, 1), (256, 16, 2), (384, 448, 1), (96, 6, 2), (200, 17, 1), (1, 1, 3)]


def gpu_mode_to_blocked(input_matrix: torch.Tensor) -> torch.Tensor:
    """GPU MODE's to_blocked (problems/nvidia/nvfp4_gemm/reference.py), transcribed for comparison.

    It only works for rows % 128 == 0 and cols % 4 == 0 (its `.view` fails otherwise).
    """
    rows, cols = input_matrix.shape
    n_row_blocks = ceil_div(rows, 128)
    n_col_blocks = ceil_div(cols, 4)
    padded = input_matrix
    blocks = padded.view(n_row_blocks, 128, n_col_blocks, 4).permute(0, 2, 1, 3)
    rearranged = blocks.reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1, 32, 16)
    return rearranged.flatten()


def random_ref(mn: int, sf_k: int, l: int, seed: int = 0) -> torch.Tensor:
    """Distinct-ish byte scales (mn, sf_k, l) laid out like GPU MODE's (batch outermost)."""
    generator = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, 256, (l, mn, sf_k), generator=generator, dtype=torch.int32).to(torch.uint8)
    return codes.view(torch.float8_e4m3fn).permute(1, 2, 0)


def as_bytes(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.contiguous().view(torch.uint8)


@pytest.mark.parametrize("mn, sf_k, l", [s for s in SHAPES if s[0] % 128 == 0 and s[1] % 4 == 0])
def test_to_blocked_matches_gpu_mode(mn: int, sf_k: int, l: int) -> None:
    ref = random_ref(mn, sf_k, l)
    for batch in range(l):
        assert torch.equal(as_bytes(to_blocked(ref[:, :, batch])), as_bytes(gpu_mode_to_blocked(ref[:, :, batch])))


@pytest.mark.parametrize("mn, sf_k, l", SHAPES)
def test_to_blocked_puts_every_scale_at_scale_offset(mn: int, sf_k: int, l: int) -> None:
    ref = random_ref(mn, sf_k, l)
    blocked = as_bytes(to_blocked(ref[:, :, 0]))
    assert blocked.numel() == ceil_div(mn, 128) * ceil_div(sf_k, 4) * 512
    offsets = scale_offsets(mn, sf_k)
    assert torch.equal(blocked[offsets], as_bytes(ref[:, :, 0]))
    # the padding of to_blocked is zero
    padding = torch.ones(blocked.numel(), dtype=torch.bool)
    padding[offsets.flatten()] = False
    assert int(blocked[padding].count_nonzero()) == 0


@pytest.mark.parametrize("mn, sf_k", [(s[0], s[1]) for s in SHAPES if s[0] * s[1] < 10_000])
def test_scale_offsets_agree_with_scalar_formula_and_are_a_bijection(mn: int, sf_k: int) -> None:
    offsets = scale_offsets(mn, sf_k)
    expected = [[scale_offset(row, k_block, sf_k) for k_block in range(sf_k)] for row in range(mn)]
    assert offsets.tolist() == expected
    assert offsets.flatten().unique().numel() == mn * sf_k


def test_scale_offset_known_positions() -> None:
    # rows 0, 32, 64, 96 are neighbours; k-blocks 0..3 of a row are consecutive; next atom at 512
    assert [scale_offset(row, 0, 8) for row in (0, 32, 64, 96, 1)] == [0, 4, 8, 12, 16]
    assert [scale_offset(5, k_block, 8) for k_block in range(5)] == [80, 81, 82, 83, 592]
    assert scale_offset(128, 0, 8) == 2 * 512  # rows 128.. start after both k-atoms of rows 0..127
    assert scale_offset(128, 0, 6) == 2 * 512  # sf_k = 6 still occupies two k-atoms


@pytest.mark.parametrize("mn, sf_k, l", SHAPES)
def test_to_permuted_has_gpu_mode_shape_strides_and_to_blocked_bytes(mn: int, sf_k: int, l: int) -> None:
    ref = random_ref(mn, sf_k, l)
    permuted = to_permuted(ref)
    rest_mn, rest_k = ceil_div(mn, 128), ceil_div(sf_k, 4)
    assert tuple(permuted.shape) == (32, 4, rest_mn, 4, rest_k, l)
    assert permuted.stride() == (16, 4, rest_k * 512, 1, 512, rest_mn * rest_k * 512)
    assert permuted.dtype == torch.float8_e4m3fn
    storage = permuted.permute(5, 2, 4, 0, 1, 3)
    assert storage.is_contiguous()
    for batch in range(l):
        assert torch.equal(as_bytes(storage[batch]).flatten(), as_bytes(to_blocked(ref[:, :, batch])))


def test_to_permuted_indexing_matches_gpu_mode_scatter() -> None:
    """permuted[i % 32, (i % 128) // 32, i // 128, j % 4, j // 4, b] == ref[i, j, b] (GPU MODE's rule)."""
    mn, sf_k, l = 200, 6, 2
    ref = random_ref(mn, sf_k, l)
    permuted = to_permuted(ref).view(torch.uint8)
    i, j, b = torch.meshgrid(torch.arange(mn), torch.arange(sf_k), torch.arange(l), indexing="ij")
    gathered = permuted[i % 32, (i % 128) // 32, i // 128, j % 4, j // 4, b]
    assert torch.equal(gathered, ref.view(torch.uint8))


def test_to_permuted_keeps_base_padding() -> None:
    mn, sf_k, l = 96, 6, 1
    ref = random_ref(mn, sf_k, l)
    base = torch.full(permuted_storage_shape(mn, sf_k, l), 0x55, dtype=torch.uint8).view(torch.float8_e4m3fn)
    permuted = to_permuted(ref, base=base)
    assert permuted.data_ptr() == base.data_ptr()
    flat = as_bytes(permuted.permute(5, 2, 4, 0, 1, 3)).flatten()
    offsets = scale_offsets(mn, sf_k).flatten()
    assert torch.equal(flat[offsets], as_bytes(ref[:, :, 0]).flatten())
    padding = torch.ones(flat.numel(), dtype=torch.bool)
    padding[offsets] = False
    assert bool((flat[padding] == 0x55).all())


def test_to_permuted_rejects_a_base_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError, match="expected"):
        to_permuted(random_ref(128, 4, 1), base=torch.zeros((1, 1, 2, 32, 4, 4), dtype=torch.float8_e4m3fn))
