"""A tiny CPU stand-in for a problem: integer-valued fp32 A (m,k,l), B (n,k,l), fp16 C (m,n,l).

Products of small integers are exact in fp16, so a correct target matches bit for bit. The check
job imports it in the child as "fake_problem:PROBLEM".
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class FakeCase:
    m: int
    n: int
    k: int
    l: int = 1
    seed: int = 1111
    sol_us: float | None = None

    def label(self) -> str:
        return f"m={self.m} n={self.n} k={self.k} l={self.l} seed={self.seed}"


def _operands(case_shape: tuple[int, int, int, int], generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    m, n, k, l = case_shape
    a = torch.randint(-3, 4, (l, m, k), generator=generator).float()
    b = torch.randint(-3, 4, (l, n, k), generator=generator).float()
    return a, b


class FakeProblem:
    name = "fake_matmul"

    def generate_input(self, case: FakeCase, device: str = "cpu", scales: str = "generator") -> tuple:
        generator = torch.Generator().manual_seed(case.seed)
        a, b = _operands((case.m, case.n, case.k, case.l), generator)
        c = torch.randn((case.l, case.m, case.n), generator=generator).half()
        return (a.permute(1, 2, 0).to(device), b.permute(1, 2, 0).to(device), c.permute(1, 2, 0).to(device))

    def refill_input(self, data: tuple, seed: int, scales: str = "generator") -> None:
        a, b, _ = data
        m, k, l = a.shape
        fresh_a, fresh_b = _operands((m, b.shape[0], k, l), torch.Generator().manual_seed(seed))
        a.copy_(fresh_a.permute(1, 2, 0))
        b.copy_(fresh_b.permute(1, 2, 0))

    def reference(self, data: tuple) -> torch.Tensor:
        a, b, _ = data
        return torch.einsum("mkl,nkl->mnl", a, b).half().contiguous()

    def output_of(self, data: tuple) -> torch.Tensor:
        return data[2]

    def describe(self, data: tuple) -> list[str]:
        return [f"{name}: {t.dtype} {tuple(t.shape)} strides {t.stride()}" for name, t in zip("abc", data)]


PROBLEM = FakeProblem()
