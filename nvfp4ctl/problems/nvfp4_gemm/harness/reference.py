"""nvfp4ctl's stand-in for GPU MODE's nvfp4_gemm reference.py: same names and call signatures,
our implementations (the exact reference runs on any arch, not only where fp4 `_scaled_mm` does).
"""

from typing import Any

import torch

from nvfp4ctl.problems.common.harness import default_device
from nvfp4ctl.problems.common.harness_utils import ceil_div
from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC
from nvfp4ctl.problems.nvfp4_gemm.harness.utils import make_match_reference
from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input as _generate_input
from nvfp4ctl.problems.nvfp4_gemm.layout import to_blocked
from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

__all__ = ["ceil_div", "check_implementation", "generate_input", "ref_kernel", "sf_vec_size", "to_blocked"]

sf_vec_size = SF_VEC


def ref_kernel(data: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Writes A·Bᵀ (fp16) into data's c and returns c, as GPU MODE's ref_kernel does."""
    a, b, sfa, sfb, _, _, c = data
    c.copy_(reference_gemm(a, b, sfa, sfb))
    return c


def generate_input(m: int, n: int, k: int, l: int, seed: int) -> tuple[torch.Tensor, ...]:
    return _generate_input(m, n, k, l, seed, device=default_device())


check_implementation: Any = make_match_reference(ref_kernel, rtol=1e-03, atol=1e-03)
