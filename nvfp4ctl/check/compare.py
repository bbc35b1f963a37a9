"""Compare a kernel's output with the reference: verdict plus the numbers that explain a mismatch.

Runs in the child on the tensors' device; returns small picklable data, never tensors.
"""

from __future__ import annotations

import torch

from nvfp4ctl.check.result import FIRST_MISMATCHES, LISTED_LINES, TILE, Comparison, Mismatch

# The poison written into c before every call: a quiet fp16 NaN with a payload no arithmetic makes,
# so "still poison" means "never written", not "computed a NaN".
POISON_BITS = 0x7E5A


def poison(output: torch.Tensor) -> None:
    """Fill the output buffer with the poison NaN (works on the permuted, non-contiguous c)."""
    output.view(torch.int16).fill_(POISON_BITS)


def mismatch_mask(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    """|got - want| <= atol + rtol * |want|; NaN and +-Inf must match exactly (GPU MODE's rule).

    The difference is taken in the dtype torch promotes the two to, as GPU MODE's verbose_allclose takes
    it: an fp32 output is not rounded to the fp16 reference first, where rounding would hide an error of
    up to half an fp16 ulp, so a verdict at the tolerance's edge is the leaderboard's own. Both tensors
    must be on one device (check and bench refuse an output on another before comparing).
    """
    off = (got - want).abs() > atol + rtol * want.abs()  # False wherever a NaN is involved
    off |= torch.isnan(got) ^ torch.isnan(want)
    off |= torch.isposinf(got) ^ torch.isposinf(want)
    off |= torch.isneginf(got) ^ torch.isneginf(want)
    return off


def compare(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float, output_is_c: bool) -> Comparison:
    """Both tensors (m, n, l) on one device, `got` shaped like `want` and of a floating dtype (fp16 as the
    reference, or wider: compared in the wider, as the leaderboard does)."""
    wrong = mismatch_mask(got, want, rtol, atol)
    g, w = got.float(), want.float()
    finite = torch.isfinite(g) & torch.isfinite(w)
    abs_err = torch.where(finite, (g - w).abs(), torch.zeros_like(g))
    nonzero = finite & (w != 0)
    rel_err = torch.where(nonzero, abs_err / w.abs().clamp_min(torch.finfo(torch.float32).tiny), torch.zeros_like(g))
    unwritten = None
    if output_is_c:
        unwritten = int((got.view(torch.int16) == POISON_BITS).sum())
    mismatched = int(wrong.sum())
    first = _first_mismatches(wrong, got, want) if mismatched else ()
    tile_wrong, tile_size = _tile_counts(wrong)
    rows, cols = _wrong_lines(wrong)
    return Comparison(
        shape=tuple(got.shape),
        mismatched=mismatched,
        max_abs_err=float(abs_err.max()) if abs_err.numel() else 0.0,
        max_rel_err=float(rel_err.max()) if rel_err.numel() else 0.0,
        nan_got=int(torch.isnan(g).sum()),
        inf_got=int(torch.isinf(g).sum()),
        nan_want=int(torch.isnan(w).sum()),
        inf_want=int(torch.isinf(w).sum()),
        unwritten=unwritten,
        first=first,
        tile_wrong=tile_wrong,
        tile_size=tile_size,
        wrong_rows=len(rows),
        wrong_cols=len(cols),
        first_rows=tuple(rows[:LISTED_LINES]),
        first_cols=tuple(cols[:LISTED_LINES]),
        nonfinite_wrong=int((wrong & ~finite).sum()),
    )


def _wrong_lines(wrong: torch.Tensor) -> tuple[list[int], list[int]]:
    """Indices of the rows (m) and columns (n) holding a wrong element: row/column bugs stand out."""
    if wrong.dim() < 2 or wrong.numel() == 0:
        return [], []
    plane = wrong.reshape(wrong.shape[0], wrong.shape[1], -1).any(dim=2)
    rows = torch.nonzero(plane.any(dim=1)).flatten().tolist()
    cols = torch.nonzero(plane.any(dim=0)).flatten().tolist()
    return rows, cols


def _first_mismatches(wrong: torch.Tensor, got: torch.Tensor, want: torch.Tensor) -> tuple[Mismatch, ...]:
    # nonzero() lists indices in logical order (m, then n, then l): the rows a user looks at first
    indices = torch.nonzero(wrong)[:FIRST_MISMATCHES].tolist()
    return tuple(Mismatch(tuple(index), float(got[tuple(index)]), float(want[tuple(index)])) for index in indices)


def _tile_counts(wrong: torch.Tensor) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """Wrong elements (summed over l) and elements per 128x128 tile of the (m, n) plane."""
    if wrong.dim() < 2 or wrong.numel() == 0:
        return (), ()
    plane = wrong.reshape(wrong.shape[0], wrong.shape[1], -1).sum(dim=2)
    per_element = wrong.numel() // (wrong.shape[0] * wrong.shape[1])
    m, n = plane.shape
    tiles_m, tiles_n = -(-m // TILE), -(-n // TILE)
    padded = torch.zeros((tiles_m * TILE, tiles_n * TILE), dtype=torch.int64, device=plane.device)
    padded[:m, :n] = plane
    counts = padded.view(tiles_m, TILE, tiles_n, TILE).sum(dim=(1, 3)).cpu().tolist()
    sizes = [
        [min(TILE, m - i * TILE) * min(TILE, n - j * TILE) * per_element for j in range(tiles_n)]
        for i in range(tiles_m)
    ]
    return tuple(tuple(row) for row in counts), tuple(tuple(row) for row in sizes)
