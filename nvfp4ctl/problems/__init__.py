"""Problems: a problem is its input generator, its exact reference and a description of its input tuple.

Only `nvfp4_gemm` ships; dual_gemm, gemv and group_gemm plug in here later with the same protocol.
Implementations are imported on first use so that `import nvfp4ctl.problems` stays light (no torch).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from nvfp4ctl.errors import UsageError

if TYPE_CHECKING:
    import torch

    from nvfp4ctl.task import Case

# name -> "module:class" of its implementation
_REGISTRY: dict[str, str] = {
    "nvfp4_gemm": "nvfp4ctl.problems.nvfp4_gemm.problem:Nvfp4Gemm",
}

SCALE_MODES = ("generator", "full")  # "full": e4m3 scales across the encoding, fp16 output still finite


@runtime_checkable
class Problem(Protocol):
    name: str

    def generate_input(self, case: Case, device: str = "cuda", scales: str = "generator") -> tuple[Any, ...]:
        """The leaderboard's input tuple for `case` (bit-identical on CUDA with scales="generator")."""
        ...

    def refill_input(self, data: tuple[Any, ...], seed: int, scales: str = "generator") -> None:
        """New values for `seed` written into the same tensors (same Python objects and addresses)."""
        ...

    def reference(self, data: tuple[Any, ...]) -> torch.Tensor:
        """Exact expected output on any arch: a new tensor shaped like the output; data is untouched."""
        ...

    def output_of(self, data: tuple[Any, ...]) -> torch.Tensor:
        """The tensor the target must fill and return."""
        ...

    def describe(self, data: tuple[Any, ...]) -> list[str]:
        """One line per tuple element: index, name, dtype, shape, strides."""
        ...


def problem_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def get_problem(name: str) -> Problem:
    """The problem called `name`; UsageError naming the known ones otherwise."""
    if name not in _REGISTRY:
        raise UsageError(f"unknown problem {name!r} (known: {', '.join(problem_names())})")
    module_name, class_name = _REGISTRY[name].split(":")
    problem_class = getattr(importlib.import_module(module_name), class_name)
    return problem_class()
