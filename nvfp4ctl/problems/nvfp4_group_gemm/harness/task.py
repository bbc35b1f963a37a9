"""nvfp4ctl's stand-in for GPU MODE's nvfp4_group_gemm task.py: the type hints submissions import.

input_t is (abc_tensors, sfasfb_tensors, sfasfb_reordered_tensors, problem_sizes); output_t the
list of every group's c.
"""

from typing import TypedDict, TypeVar

import torch

input_t = TypeVar(
    "input_t",
    bound=tuple[
        list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
        list[tuple[torch.Tensor, torch.Tensor]],
        list[tuple[torch.Tensor, torch.Tensor]],
        list[tuple[int, int, int, int]],
    ],
)
output_t = TypeVar("output_t", bound=list[torch.Tensor])


class TestSpec(TypedDict):
    problem_sizes: list[tuple[int, int, int, int]]
    seed: int
