"""A tiny CPU stand-in for a problem: integer-valued fp32 A (m,k,l), B (n,k,l), fp16 C (m,n,l).

Products of small integers are exact in fp16, so a correct target matches bit for bit. The check
job imports it in the child as "fake_problem:PROBLEM". It is a real `DenseProblem`, so production
code talks to it through the same interface as to the registered problems.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from nvfp4ctl.problems.base import DenseProblem
from nvfp4ctl.problems.records import Detection, TimingLoop, TupleLayout


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


class FakeProblem(DenseProblem):
    name = "fake_matmul"
    title = "C = A·Bᵀ per batch l, small integers in fp32, fp16 C (CPU tests)"
    case_fields = ("m", "n", "k", "l")
    case_example = "{m: 128, n: 256, k: 32, l: 1, seed: 1111}"
    shape_syntax = "M,N,K or M,N,K,L"
    shape_example = "128,7168,16384"
    k_multiple = 1  # no block scales
    k_reason = "any K"
    layout = TupleLayout(names=("a", "b", "c"), b_operands=(1,), output=2)
    timing = TimingLoop(source="tests/check/fake_problem.py")
    # the default target check resolves before its usage errors when no --submission is given (the
    # GEMM's, as before the fake was a ProblemBase); tests that run a target name one of targets/
    fallback_submission = "torch_dequant/submission.py"
    detection = Detection(name_comments=("fake-matmul",), description_phrase="fake matmul for cpu tests",
                          reference_markers=("fake_problem",))

    def parse_shape(self, text: str, seed: int) -> FakeCase:
        case = super().parse_shape(text, seed)
        return FakeCase(case.m, case.n, case.k, case.l, seed)

    def flops(self, case: FakeCase) -> float:
        return 2.0 * case.m * case.n * case.k * case.l

    def bytes_moved(self, case: FakeCase) -> float:
        """fp32 A and B read, fp16 C written."""
        return float(case.l * (4 * (case.m + case.n) * case.k + 2 * case.m * case.n))

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


class SlowInputsProblem(FakeProblem):
    """FakeProblem whose inputs of the seeds in `slow_seeds` take far past any test's --timeout to make (every
    seed where None), those of the others `quick_s`: a kill while they are made comes before the kernel's call."""

    def __init__(self, slow_seeds: tuple[int, ...] | None, quick_s: float = 0.0) -> None:
        self.slow_seeds = slow_seeds
        self.quick_s = quick_s

    def generate_input(self, case: FakeCase, device: str = "cpu", scales: str = "generator") -> tuple:
        import time

        slow = self.slow_seeds is None or case.seed in self.slow_seeds
        time.sleep(60.0 if slow else self.quick_s)
        return super().generate_input(case, device, scales)


SLOW_INPUTS = SlowInputsProblem(None)
# the anti-cache probe's fresh tuple (seed 1111 + 2 * 42) is the slow one; the first call's takes 0.2 s
SLOW_PROBE_INPUTS = SlowInputsProblem((1111 + 2 * 42,), quick_s=0.2)


class SlowReferenceProblem(FakeProblem):
    """FakeProblem whose reference takes far past any test's --timeout from its `slow_from`th computation on in
    this process (1: the first call's, 2: the anti-cache probe's refill), the earlier ones `quick_s`: a kill then
    comes while nvfp4ctl computes, not in the kernel."""

    def __init__(self, slow_from: int, quick_s: float = 0.0) -> None:
        self.slow_from = slow_from
        self.quick_s = quick_s
        self.computed = 0

    def reference(self, data: tuple):
        import time

        self.computed += 1
        time.sleep(60.0 if self.computed >= self.slow_from else self.quick_s)
        return super().reference(data)


SLOW_REFERENCE = SlowReferenceProblem(1)
SLOW_PROBE_REFERENCE = SlowReferenceProblem(2, quick_s=0.2)
