"""Which of the dual GEMM's two products a wrong C points at: silu(A·B1ᵀ) or A·B2ᵀ.

C = s ⊙ p with s = silu(A·B1ᵀ) and p = A·B2ᵀ. Only evidence that holds exactly is reported, on the
wrong elements:
1. Named mistakes: the kernel's C equals (to the task's tolerance, on 99 % of them) what a common
   slip gives: silu left out, silu on the wrong product, one B used for both products, only one
   product written.
2. Scales read in the wrong layout: C recomputed (on a sample of the wrong rows and columns) with a
   permuted scale tensor's bytes read as if in the reference (rows, k/16) layout, for each set of the
   three that could be so read, equals the kernel's.
3. Exclusions: "only s is wrong" needs C/p >= silu's minimum (−0.2785), so C/p below it implicates
   p; "only p is wrong" needs C = 0 wherever s = 0, so C ≠ 0 there implicates s. Both implicated
   point first at what feeds both: A and its scales.
A wrong magnitude in one product alone leaves no trace that tells the two apart, so then nothing is
said rather than a guess.
"""

from __future__ import annotations

from typing import Any

import torch

from nvfp4ctl.problems.common.likeness import MATCH_SHARE
from nvfp4ctl.problems.common.misread import ScaledOperand, misread_line, misread_scales
from nvfp4ctl.words import plural

SILU_MIN = -0.2784645427610738  # silu's minimum, at x = −1.2785
FIRST = "silu(A·B1ᵀ)"
SECOND = "A·B2ᵀ"


def implicated_product(data: Any, got: torch.Tensor, wrong: torch.Tensor, *, rtol: float,
                       atol: float) -> list[str]:
    from nvfp4ctl.problems.nvfp4_dual_gemm.reference import products

    if not bool(wrong.any()):
        return []
    first, second = products(data)
    first, second = first.to(got.device), second.to(got.device)
    mask = wrong.to(got.device)
    g = got.float()[mask]
    x1, p = first[mask], second[mask]
    s = torch.nn.functional.silu(x1)
    named = _named_mistake(g, x1, s, p, rtol, atol)
    if named:
        return [f"dual GEMM: the wrong elements equal {named}"]
    misread = _misread_scales(data, got, mask, rtol, atol)
    if misread:
        return [misread_line("dual GEMM", "C", misread)]
    return _exclusions(g, s, p, atol)


def _named_mistake(g: torch.Tensor, x1: torch.Tensor, s: torch.Tensor, p: torch.Tensor,
                   rtol: float, atol: float) -> str | None:
    silu = torch.nn.functional.silu
    candidates = {
        "(A·B1ᵀ) ⊙ (A·B2ᵀ): silu is missing": x1 * p,
        "silu(A·B2ᵀ) ⊙ (A·B1ᵀ): silu went to the wrong product (b1 and b2 swapped)": silu(p) * x1,
        f"silu(A·B1ᵀ) ⊙ (A·B1ᵀ): b1 was used for both products, so {SECOND} is the wrong one": s * x1,
        f"silu(A·B2ᵀ) ⊙ (A·B2ᵀ): b2 was used for both products, so {FIRST} is the wrong one": silu(p) * p,
        f"{FIRST} alone: the product with {SECOND} was never applied": s,
        f"{SECOND} alone: {FIRST} was never applied": p,
    }
    for words, value in candidates.items():
        want = value.to(torch.float16).float()
        close = (g - want).abs() <= atol + rtol * want.abs()
        if close.float().mean() >= MATCH_SHARE:
            return words
    return None


_A = ScaledOperand(values=0, reference=3, permuted=6)
_PRODUCTS = ((_A, ScaledOperand(values=1, reference=4, permuted=7)),
             (_A, ScaledOperand(values=2, reference=5, permuted=8)))
_PERMUTED_NAMES = {6: "sfa_permuted", 7: "sfb1_permuted", 8: "sfb2_permuted"}
# the sets of permuted tensors a kernel may read in the wrong layout, fewest first: the first that
# reproduces C is named
_MISREAD_SETS = ((6,), (7,), (8,), (7, 8), (6, 7), (6, 8), (6, 7, 8))


def _dual_output(products: list[torch.Tensor]) -> torch.Tensor:
    first, second = (p.to(torch.float32) for p in products)  # rounded once to fp32, as the reference
    return (torch.nn.functional.silu(first) * second).to(torch.float16)


def _misread_scales(data: Any, got: torch.Tensor, wrong: torch.Tensor, rtol: float, atol: float) -> str | None:
    return misread_scales(data, got, wrong, products=_PRODUCTS, combine=_dual_output, sets=_MISREAD_SETS,
                          names=_PERMUTED_NAMES, rtol=rtol, atol=atol)


def _exclusions(g: torch.Tensor, s: torch.Tensor, p: torch.Tensor, atol: float) -> list[str]:
    finite = torch.isfinite(g)
    ratio = g / p.where(p != 0, torch.ones_like(p))
    below = int(((ratio < SILU_MIN - 0.01) & finite & (p.abs() > 1e-2)).sum())
    # where silu(A·B1ᵀ) is 0 an error in A·B2ᵀ alone leaves C at 0, which check's rule calls wrong past atol
    unexplained = int(((s == 0) & (g.abs() > atol) & finite).sum())
    lines = []
    if below and not unexplained:
        lines.append(f"dual GEMM: {SECOND} is implicated: at {plural(below, 'wrong element')} C/({SECOND}) is below silu's "
                     f"minimum {SILU_MIN:.4f}, which no error in {FIRST} alone can give")
    elif unexplained and not below:
        lines.append(f"dual GEMM: {FIRST} is implicated: at {plural(unexplained, 'wrong element')} {FIRST} is 0 but C is not,"
                     f" which no error in {SECOND} alone can give")
    elif below and unexplained:
        lines.append(f"dual GEMM: both products are implicated ({plural(below, 'element')} rule out {FIRST} alone,"
                     f" {unexplained} rule out {SECOND} alone): A feeds both, so the likely cause is A or its"
                     " scales (sfa)")
    return lines
