"""What a wrong output resembles: shares of elements within tolerance, and the small samples that keep
such comparisons cheap. check runs these only on a failure, on CPU as on a GPU, so a guess about a
mistake is recomputed on a few rows and columns of the output, never on all of it.
"""

from __future__ import annotations

import torch

MATCH_SHARE = 0.99  # of the compared elements a named mistake must reproduce
SAMPLE_LINES = 32  # rows (and columns) of the output a recomputed guess covers


def close_share(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> float:
    """Share of elements with |got − want| <= atol + rtol·|want|, an Inf against the same Inf or a NaN
    against a NaN counting as close (check's own rule)."""
    if got.numel() == 0:
        return 0.0
    g, w = got.float(), want.float()
    finite = torch.isfinite(g) & torch.isfinite(w)  # an Inf want would make any got close through rtol
    close = (finite & ((g - w).abs() <= atol + rtol * w.abs())) | (g == w) | (torch.isnan(g) & torch.isnan(w))
    return float(close.float().mean())


def matches(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> bool:
    return close_share(got, want, rtol, atol) >= MATCH_SHARE


def sample_lines(wrong: torch.Tensor, limit: int = SAMPLE_LINES) -> tuple[torch.Tensor, torch.Tensor]:
    """Up to `limit` rows and `limit` columns of an (m, n, ...) mask that hold wrong elements, spread
    evenly over them (a wrong first tile alone would say little about the rest)."""
    plane = wrong.reshape(wrong.shape[0], wrong.shape[1], -1).any(dim=2)
    return _spread(torch.nonzero(plane.any(dim=1)).flatten(), limit), _spread(torch.nonzero(plane.any(dim=0)).flatten(), limit)


def _spread(indices: torch.Tensor, limit: int) -> torch.Tensor:
    if indices.numel() <= limit:
        return indices
    picks = torch.linspace(0, indices.numel() - 1, limit, device=indices.device).round().long()
    return indices[picks]


def rows_of(tensor: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """tensor[rows] for any dtype: fp4 and e4m3 tensors are indexed as their bytes (the exact reference
    decodes bytes), since index kernels do not cover every narrow float type on every device."""
    if tensor.element_size() == 1:
        return tensor.view(torch.uint8)[rows.to(tensor.device)]
    return tensor[rows.to(tensor.device)]


def permuted_read_as_reference(permuted: torch.Tensor, rows: int, sf_k: int) -> torch.Tensor:
    """The scales a kernel gets when it reads a permuted scale tensor's bytes as if they were in the
    reference (rows, k/16) layout: each batch's first rows·sf_k bytes in memory order, as (rows, sf_k, l)."""
    batches = permuted.shape[5]
    # undo the view's permutation: each batch's bytes in memory order (the to_blocked order)
    per_batch = permuted.view(torch.uint8).permute(5, 2, 4, 0, 1, 3).reshape(batches, -1)
    return per_batch[:, : rows * sf_k].reshape(batches, rows, sf_k).permute(1, 2, 0)
