"""Problems: one folder per GPU MODE NVFP4 problem, holding everything that differs between them.

A problem is a `ProblemBase` subclass (problems/<name>/problem.py): its case fields and task.yml
entries, `--shape` syntax, FLOP and byte counts, speed-of-light table, tuple layout (for lint and the
kernel call), timing loop, detection signals, default targets, and the tensor functions (inputs,
exact reference, output, description). Commands ask the problem; they never branch on its name.
Implementations are imported on first use and import torch lazily, so this stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from nvfp4ctl.errors import UsageError

if TYPE_CHECKING:
    from nvfp4ctl.task import Case

# name -> "module:class" of its implementation
_REGISTRY: dict[str, str] = {
    "nvfp4_gemm": "nvfp4ctl.problems.nvfp4_gemm.problem:Nvfp4Gemm",
    "nvfp4_dual_gemm": "nvfp4ctl.problems.nvfp4_dual_gemm.problem:Nvfp4DualGemm",
    "nvfp4_group_gemm": "nvfp4ctl.problems.nvfp4_group_gemm.problem:Nvfp4GroupGemm",
    "nvfp4_gemv": "nvfp4ctl.problems.nvfp4_gemv.problem:Nvfp4Gemv",
}

DEFAULT_PROBLEM = "nvfp4_gemm"  # a task file that names none, and the GEMM-only tools
SCALE_MODES = ("generator", "full")  # "full": e4m3 scales across the encoding, fp16 output still finite


@runtime_checkable
class Problem(Protocol):
    """The tensor side every problem provides (the rest is data on ProblemBase)."""

    name: str

    def generate_input(self, case: Case, device: str = "cuda", scales: str = "generator") -> Any:
        """The leaderboard's input tuple for `case` (bit-identical on CUDA with scales="generator")."""
        ...

    def refill_input(self, data: Any, seed: int, scales: str = "generator") -> None:
        """New values for `seed` written into the same tensors (same Python objects and addresses)."""
        ...

    def reference(self, data: Any) -> Any:
        """Exact expected output(s) on any arch: new tensor(s) shaped like the output; data is untouched."""
        ...

    def output_of(self, data: Any) -> Any:
        """The tensor (group: list of tensors) the target must fill and return."""
        ...

    def describe(self, data: Any) -> list[str]:
        """One line per tuple element: index, name, dtype, shape, strides."""
        ...


def problem_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


_LOADED: dict[str, Any] = {}


def registered_name(name: str) -> str | None:
    """The registered name `name` spells: itself, or GPU MODE's own spelling of it, hyphenated as in its
    task files' `# name: nvfp4-gemv` (the values problems/detect.py reads there, each problem's own name
    among them); None for any other word."""
    if name in _REGISTRY:
        return name
    underscored = name.strip().lower().replace("-", "_")
    return underscored if underscored in _REGISTRY else None


def get_problem(name: str) -> Any:
    """The problem called `name` (a ProblemBase; GPU MODE's hyphenated spelling too, registered_name);
    UsageError naming the known ones otherwise."""
    if (registered := registered_name(name)) is None:
        from nvfp4ctl.problems.spelling import did_you_mean

        raise UsageError(f"unknown problem {name!r} (known: {', '.join(problem_names())}){did_you_mean(name, problem_names())}")
    name = registered
    if name not in _LOADED:
        module_name, class_name = _REGISTRY[name].split(":")
        _LOADED[name] = getattr(importlib.import_module(module_name), class_name)()
    return _LOADED[name]


def refuse_gemm_only(does: str, problem: str) -> None:
    """The GEMM's tools (check --dump, dump --runtime) run an nvfp4_gemm kernel on the GEMM's inputs, whatever
    kernel is named: under another problem's task it would be judged by inputs and a C ABI not its own, so
    that is one line, said alike by each. `does`: what the tool does, the line's start."""
    if problem != DEFAULT_PROBLEM:
        raise UsageError(f"{does} (C = A·Bᵀ on its inputs); this task is {problem}")


def all_problems() -> list[Any]:
    return [get_problem(name) for name in problem_names()]


def resolve_problem(name: str) -> Any:
    """A registered problem ("nvfp4_gemm"), or "package.module:attribute" for one defined elsewhere."""
    if ":" in name:
        module, _, attribute = name.partition(":")
        return getattr(importlib.import_module(module), attribute)
    return get_problem(name)
