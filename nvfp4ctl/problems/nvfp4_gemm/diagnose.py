"""What a wrong GEMM result looks like: scales read in the wrong layout.

Reading sfa_permuted or sfb_permuted as if it held the reference (rows, k/16) layout is the GEMM's most
common bug. C recomputed so (on a sample of the wrong rows and columns), for sfa, sfb and both, is
compared with the kernel's; it is named only where it holds to the task's tolerance. The GEMV and each
group of the grouped GEMM hold the same (a, b, sfa, sfb, sfa_permuted, sfb_permuted) operands, so they
share this reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from nvfp4ctl.problems.common.misread import ScaledOperand, misread_line, misread_scales
from nvfp4ctl.problems.nvfp4_gemm.reference import round_to_fp16

# indices in (a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, ...)
_PRODUCTS = ((ScaledOperand(values=0, reference=2, permuted=4), ScaledOperand(values=1, reference=3, permuted=5)),)
_PERMUTED_NAMES = {4: "sfa_permuted", 5: "sfb_permuted"}
_MISREAD_SETS = ((4,), (5,), (4, 5))  # fewest first: the first that reproduces C is named


def _gemm_output(products: list[torch.Tensor]) -> torch.Tensor:
    return round_to_fp16(products[0])  # the exact sum rounded once, as the reference


def misread_scale_lines(operands: Sequence[Any], got: torch.Tensor, wrong: torch.Tensor, *, who: str, output: str,
                        rtol: float, atol: float) -> list[str]:
    """The line naming the permuted scales read in the reference layout, or none. `operands` starts
    (a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted); `who` and `output` word the line ("GEMM", "C")."""
    misread = misread_scales(operands, got, wrong.to(got.device), products=_PRODUCTS, combine=_gemm_output,
                             sets=_MISREAD_SETS, names=_PERMUTED_NAMES, rtol=rtol, atol=atol)
    return [misread_line(who, output, misread)] if misread else []
