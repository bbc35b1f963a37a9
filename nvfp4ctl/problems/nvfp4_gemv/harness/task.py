"""nvfp4ctl's stand-in for GPU MODE's nvfp4_gemv task.py: the type hints submissions import."""

from typing import TypedDict, TypeVar

import torch

input_t = TypeVar("input_t", bound=tuple[(torch.Tensor,) * 7])  # type: ignore[misc]
output_t = TypeVar("output_t", bound=torch.Tensor)


class TestSpec(TypedDict):
    m: int
    k: int
    l: int
    seed: int
