"""nvfp4ctl's stand-in for GPU MODE's nvfp4_dual_gemm task.py: the type hints submissions import.

input_t is the 10-tuple (a, b1, b2, sfa_ref, sfb1_ref, sfb2_ref, sfa_permuted, sfb1_permuted,
sfb2_permuted, c); output_t is c (m, n, l) fp16.
"""

from typing import TypedDict, TypeVar

import torch

input_t = TypeVar("input_t", bound=tuple[(torch.Tensor,) * 10])  # type: ignore[misc]
output_t = TypeVar("output_t", bound=torch.Tensor)


class TestSpec(TypedDict):
    m: int
    n: int
    k: int
    l: int
    seed: int
