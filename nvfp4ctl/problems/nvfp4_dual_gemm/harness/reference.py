"""nvfp4ctl's stand-in for GPU MODE's nvfp4_dual_gemm reference.py: same names and call
signatures, our implementations (the reference emulates `_scaled_mm` exactly on any arch).
"""

from types import SimpleNamespace
from typing import Any

import torch

from nvfp4ctl.problems.common.harness import default_device
from nvfp4ctl.problems.common.harness_utils import ceil_div
from nvfp4ctl.problems.nvfp4_dual_gemm.harness.utils import make_match_reference
from nvfp4ctl.problems.nvfp4_dual_gemm.inputs import generate_input as _generate_input
from nvfp4ctl.problems.nvfp4_dual_gemm.reference import reference
from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC
from nvfp4ctl.problems.nvfp4_gemm.layout import to_blocked

__all__ = ["ceil_div", "check_implementation", "generate_input", "ref_kernel", "sf_vec_size", "to_blocked"]

sf_vec_size = SF_VEC


def ref_kernel(data: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """silu(A·B1ᵀ) ⊙ (A·B2ᵀ) as a new fp16 tensor (m, n, l); data's c is left alone, as in GPU MODE's."""
    return reference(data)


def generate_input(m: int, n: int, k: int, l: int, seed: int) -> tuple[torch.Tensor, ...]:
    return _generate_input(SimpleNamespace(m=m, n=n, k=k, l=l), seed, device=default_device())


check_implementation: Any = make_match_reference(ref_kernel, rtol=1e-03, atol=1e-03)
