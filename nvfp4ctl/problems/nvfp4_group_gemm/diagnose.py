"""Which other group a wrong group's c belongs to: the grouped GEMM's mix-ups between groups.

Three readings, each only where it holds to the task's tolerance (on 99 % of the elements compared):
1. A group's c equals another group's reference (same shape): the results were written to the wrong
   group, shifted by one ("group 2's c matches group 1's reference") or exchanged.
2. Otherwise, a group's c equals its own product computed with another group's inputs (its scales, sfa
   or sfb, or its A or B operand with that operand's scales), recomputed on a sample of the wrong rows
   and columns so that it stays cheap on CPU. Two groups that each took the other's are named as
   exchanged.
3. Otherwise, a group's c equals its product with its own permuted scales read as if in the reference
   layout (nvfp4_gemm/diagnose.py, the GEMM's reading).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from nvfp4ctl.problems.common.likeness import matches, rows_of, sample_lines
from nvfp4ctl.problems.nvfp4_gemm.diagnose import misread_scale_lines
from nvfp4ctl.problems.nvfp4_gemm.reference import dequantize, round_to_fp16

GROUP_SAMPLE_LINES = 16  # a guess is recomputed per other group and per input: fewer lines than one guess gets

# (words, what group j lends: a, b, sfa, sfb) fewest first; the first that reproduces c is named
_BORROWED: tuple[tuple[str, tuple[bool, bool, bool, bool]], ...] = (
    ("scales (sfa and sfb)", (False, False, True, True)),
    ("sfa", (False, False, True, False)),
    ("sfb", (False, False, False, True)),
    ("A (a and sfa)", (True, False, True, False)),
    ("B (b and sfb)", (False, True, False, True)),
)


def explain_groups(data: Any, outs: Sequence[torch.Tensor], wants: Sequence[torch.Tensor],
                   wrong: Sequence[torch.Tensor], *, rtol: float, atol: float) -> list[str]:
    wrong_groups = [index for index, mask in enumerate(wrong) if bool(mask.any())]
    results = {i: j for i in wrong_groups
               if (j := _other_reference(i, outs, wants, rtol, atol)) is not None}
    lines = _result_lines(results)
    borrowed = {}
    for i in wrong_groups:
        if i not in results and (found := _borrowed_inputs(i, data, outs[i], wrong[i], rtol, atol)) is not None:
            borrowed[i] = found
    misread = [line for i in wrong_groups if i not in results and i not in borrowed
               for line in _misread_lines(i, data, outs[i], wrong[i], rtol, atol)]
    return lines + _borrowed_lines(borrowed) + misread


def _misread_lines(i: int, data: Any, got: torch.Tensor, wrong: torch.Tensor, rtol: float,
                   atol: float) -> list[str]:
    """Group i's own scales read in the wrong layout: its operands laid out as the GEMM's tuple."""
    abc, scales, permuted = data[0], data[1], data[2]
    operands = (abc[i][0], abc[i][1], *scales[i], *permuted[i])
    return misread_scale_lines(operands, got, wrong, who=f"group {i + 1}", output="c", rtol=rtol, atol=atol)


def _other_reference(i: int, outs: Sequence[torch.Tensor], wants: Sequence[torch.Tensor], rtol: float,
                     atol: float) -> int | None:
    got = outs[i]
    for j, want in enumerate(wants):
        if j != i and want.shape == got.shape and matches(got.to(want.device), want, rtol, atol):
            return j
    return None


def _result_lines(results: dict[int, int]) -> list[str]:
    lines = []
    for i, j in results.items():
        if results.get(j) == i:
            if i < j:
                lines.append(f"group {i + 1}'s c matches group {j + 1}'s reference and group {j + 1}'s c group"
                             f" {i + 1}'s: the two results look exchanged")
        else:
            lines.append(f"group {i + 1}'s c matches group {j + 1}'s reference")
    if len(results) > 1 and all(j == i - 1 for i, j in results.items()):
        lines.append("each of those groups holds the result of the group before it: the results look shifted"
                     " by one group")
    return lines


def _borrowed_inputs(i: int, data: Any, got: torch.Tensor, wrong: torch.Tensor, rtol: float,
                     atol: float) -> tuple[int, str] | None:
    """(j, what) where group i's c equals its product with group j's `what` on a sample of its wrong rows
    and columns; None where no other group's inputs reproduce it."""
    abc, scales = data[0], data[1]
    rows, cols = sample_lines(wrong, GROUP_SAMPLE_LINES)
    device = abc[i][0].device
    block_wrong = wrong[rows][:, cols].to(got.device)
    observed = got[rows.to(got.device)][:, cols.to(got.device)][block_wrong]
    # each side's dequantized sample, by (operand's group, scales' group): shared by the guesses that use it
    sides: dict[tuple[int, int, int], torch.Tensor] = {}

    def side(which: int, operand: int, scale: int) -> torch.Tensor:
        if (which, operand, scale) not in sides:
            lines = rows if which == 0 else cols
            values, factors = rows_of(abc[operand][which], lines), rows_of(scales[scale][which], lines)
            sides[which, operand, scale] = dequantize(values[:, :, 0].to(device), factors[:, :, 0].to(device))
        return sides[which, operand, scale]

    for j in range(len(abc)):
        if j == i:
            continue
        fits = (abc[j][0].shape == abc[i][0].shape, abc[j][1].shape == abc[i][1].shape)
        for words, (lend_a, lend_b, lend_sfa, lend_sfb) in _BORROWED:
            if ((lend_a or lend_sfa) and not fits[0]) or ((lend_b or lend_sfb) and not fits[1]):
                continue
            a_side = side(0, j if lend_a else i, j if lend_sfa else i)
            b_side = side(1, j if lend_b else i, j if lend_sfb else i)
            want = round_to_fp16(a_side @ b_side.T).unsqueeze(-1).to(got.device)
            if matches(observed, want[block_wrong], rtol, atol):
                return j, words
    return None


def _borrowed_lines(borrowed: dict[int, tuple[int, str]]) -> list[str]:
    lines = []
    for i, (j, words) in borrowed.items():
        if borrowed.get(j) == (i, words):
            if i < j:
                lines.append(f"groups {i + 1} and {j + 1}: their {words} look exchanged (each group's c matches its"
                             " product with the other group's)")
        else:
            lines.append(f"group {i + 1}'s c matches its product with group {j + 1}'s {words}")
    return lines
