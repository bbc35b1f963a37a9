"""nvfp4_gemm as a `Problem`: GPU MODE's inputs, the exact reference, a readable tuple description."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from nvfp4ctl.problems.nvfp4_gemm.inputs import TUPLE_NAMES, generate_input, refill_input
from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

if TYPE_CHECKING:
    from nvfp4ctl.task import Case

class Nvfp4Gemm:
    name = "nvfp4_gemm"

    def generate_input(self, case: Case, device: str = "cuda", scales: str = "generator") -> tuple[torch.Tensor, ...]:
        return generate_input(case.m, case.n, case.k, case.l, case.seed, device=device, scales=scales)

    def refill_input(self, data: tuple[torch.Tensor, ...], seed: int, scales: str = "generator") -> None:
        refill_input(data, seed, scales=scales)

    def reference(self, data: tuple[torch.Tensor, ...]) -> torch.Tensor:
        a, b, sfa_ref, sfb_ref = data[:4]
        return reference_gemm(a, b, sfa_ref, sfb_ref)

    def output_of(self, data: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return data[6]

    def describe(self, data: tuple[torch.Tensor, ...]) -> list[str]:
        width = max(len(name) for name in TUPLE_NAMES)
        lines = []
        for index, (name, tensor) in enumerate(zip(TUPLE_NAMES, data, strict=True)):
            dtype = str(tensor.dtype).removeprefix("torch.")
            lines.append(
                f"[{index}] {name:<{width}}  {dtype:<16}  shape {tuple(tensor.shape)}  "
                f"strides {tensor.stride()}  {tensor.device}"
            )
        return lines
