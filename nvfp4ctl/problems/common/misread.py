"""Scales read in the wrong layout: a kernel that takes a permuted scale tensor's bytes as if they were in
the reference (rows, k/16) layout. Its output is recomputed that way, for each set of permuted tensors
that could be so read, on a sample of the wrong rows and columns, and compared with the kernel's.

Every problem of the family reads its scales so, and it is the GEMM's most common bug, so the guess is
written once: a problem says which operands feed which products and how the products make its output.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from nvfp4ctl.problems.common.likeness import matches, permuted_read_as_reference, rows_of, sample_lines
from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC
from nvfp4ctl.problems.nvfp4_gemm.reference import dequantize
from nvfp4ctl.words import and_listed


@dataclass(frozen=True)
class ScaledOperand:
    """Tuple indices of an fp4 operand (rows, k/2, l) and of its scales, in both layouts."""

    values: int
    reference: int
    permuted: int


# A product: its A side (rows of the output) and its B side (columns of the output).
Product = tuple[ScaledOperand, ScaledOperand]
# The output from the exact float64 products, each (rows, cols, l), rounded as the problem's reference does.
Combine = Callable[[list[torch.Tensor]], torch.Tensor]


def misread_scales(data: Any, got: torch.Tensor, wrong: torch.Tensor, *, products: Sequence[Product],
                   combine: Combine, sets: Sequence[tuple[int, ...]], names: Mapping[int, str],
                   rtol: float, atol: float) -> str | None:
    """The names of the first of `sets` (tuple indices of permuted scales, fewest first) whose bytes, read
    in the reference layout, give the kernel's output on a sample of its wrong rows and columns
    ("sfa_permuted"; "sfa_permuted and sfb_permuted"), or None."""
    if not bool(wrong.any()):
        return None
    rows, cols = sample_lines(wrong)
    block_wrong = wrong[rows][:, cols].to(got.device)
    observed = got[rows.to(got.device)][:, cols.to(got.device)].float()[block_wrong]
    # each side's dequantized sample (l, lines, k), by operand and whether its scales are misread: shared
    # by the guesses that use it
    sides: dict[tuple[int, bool], torch.Tensor] = {}

    def side(operand: ScaledOperand, misread: bool, lines: torch.Tensor) -> torch.Tensor:
        key = (operand.values, misread)
        if key not in sides:
            values = data[operand.values]
            sf_k = values.shape[1] * 2 // SF_VEC
            scales = (permuted_read_as_reference(data[operand.permuted], values.shape[0], sf_k) if misread
                      else data[operand.reference])
            picked, factors = rows_of(values, lines), rows_of(scales, lines).to(values.device)
            sides[key] = torch.stack([dequantize(picked[:, :, batch], factors[:, :, batch])
                                      for batch in range(picked.shape[2])])
        return sides[key]

    def product(pair: Product, misread: set[int]) -> torch.Tensor:
        a, b = pair
        exact = side(a, a.permuted in misread, rows) @ side(b, b.permuted in misread, cols).transpose(1, 2)
        return exact.permute(1, 2, 0).to(got.device)

    for misread in map(set, sets):
        want = combine([product(pair, misread) for pair in products])
        if matches(observed, want[block_wrong], rtol, atol):
            return and_listed([names[index] for index in sorted(misread)])
    return None


def misread_line(who: str, output: str, misread: str) -> str:
    """The report's line for scales found read in the reference layout; `who` starts it ("GEMM")."""
    return (f"{who}: the wrong elements equal {output} with the bytes of {misread} read as if in the reference"
            " (rows, k/16) layout: a permuted scale tensor holds to_blocked's 128x4 atoms"
            " (`nvfp4ctl dump --layout` shows where each scale lives)")
