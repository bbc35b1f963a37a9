"""nvfp4ctl's stand-in for GPU MODE's nvfp4_group_gemm reference.py: same names and call
signatures, our implementations (the exact reference runs on any arch).
"""

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import torch

from nvfp4ctl.problems.common.harness import default_device
from nvfp4ctl.problems.common.harness_utils import ceil_div
from nvfp4ctl.problems.common.tensors import draw_padding, padded_permuted
from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC
from nvfp4ctl.problems.nvfp4_gemm.layout import to_blocked
from nvfp4ctl.problems.nvfp4_group_gemm.harness.utils import make_match_reference
from nvfp4ctl.problems.nvfp4_group_gemm.inputs import generate_input as _generate_input
from nvfp4ctl.problems.nvfp4_group_gemm.reference import reference

__all__ = [
    "ceil_div",
    "check_implementation",
    "create_reordered_scale_factor_tensor",
    "generate_input",
    "ref_kernel",
    "sf_vec_size",
    "to_blocked",
]

sf_vec_size = SF_VEC


def ref_kernel(data: tuple[list[Any], ...]) -> list[torch.Tensor]:
    """Writes every group's A·Bᵀ (fp16) into its c and returns the list of c, as GPU MODE's does."""
    outputs = []
    for (_, _, c), result in zip(data[0], reference(data), strict=True):
        c.copy_(result)
        outputs.append(c)
    return outputs


def create_reordered_scale_factor_tensor(l: int, mn: int, k: int, ref_f8_tensor: torch.Tensor) -> torch.Tensor:
    """Reference scales (mn, k/16, l) -> the permuted view, padding from a randint(1, 3) draw."""
    device = default_device()
    padding = draw_padding(1, 3, mn, ceil_div(k, SF_VEC), l, device)
    return padded_permuted(ref_f8_tensor.to(device), padding)


def generate_input(m: Sequence[int], n: Sequence[int], k: Sequence[int], g: int, seed: int) -> tuple[list[Any], ...]:
    return _generate_input(SimpleNamespace(m=m, n=n, k=k, g=g, l=1), seed, device=default_device())


check_implementation: Any = make_match_reference(ref_kernel, rtol=1e-03, atol=1e-03)
