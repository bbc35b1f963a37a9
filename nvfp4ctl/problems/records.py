"""The small records a problem fills in: tuple layout, timing loop, detection signals, kernel C ABI."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TupleLayout:
    """Where things sit in the input tuple, for lint messages and the kernel call.

    Indices are top-level tuple positions. `reference_scales[i]` pairs with `permuted_scales[i]`.
    """

    names: tuple[str, ...]
    reference_scales: tuple[int, ...] = ()
    permuted_scales: tuple[int, ...] = ()
    b_operands: tuple[int, ...] = ()  # fp4 N x K operands a kernel must not copy-transpose
    output: int | None = None  # index of c; None when the output lives inside a list (group)
    nested: bool = False  # elements are lists of per-group tuples (the grouped GEMM)
    # (list index, position in each group's tuple) of c when the outputs live inside a list
    group_output: tuple[int, int] | None = None
    # the tuple as GPU MODE's task text describes it, where generate_input returns more (its permuted scales):
    # a submission written from that text unpacks this many names
    described: tuple[str, ...] = ()

    def name(self, index: int) -> str:
        return self.names[index] if 0 <= index < len(self.names) else f"element {index}"

    def permuted_for(self, index: int) -> int | None:
        if index in self.reference_scales:
            return self.permuted_scales[self.reference_scales.index(index)]
        return None


@dataclass(frozen=True)
class TimingLoop:
    """The leaderboard's loop for one problem (GPU MODE's eval file and its constants).

    `input_sets` inputs are made per benchmark and each sample is one event pair around one call on
    each of them, divided by `input_sets`. `seed_step` is added before each set is generated
    (0 with a single set: eval.py uses the task's seed as is).
    """

    source: str  # the GPU MODE file this mirrors
    input_sets: int = 50
    seed_step: int = 42
    benchmark_repeats: int = 200
    benchmark_warm_repeats: int = 200
    leaderboard_repeats: int = 1000
    leaderboard_warm_repeats: int = 1000
    leaderboard_warms_every_shape: bool = True
    # eval.py's leaderboard mode: before each timed repeat a new input set (the seed += this, from the task's
    # seed), whose output that repeat checks; 0: the repeats reuse the input sets and recheck their outputs
    leaderboard_fresh_seed_step: int = 0

    def seeds(self, task_seed: int, count: int | None = None) -> list[int]:
        sets = self.input_sets if count is None else count
        return [task_seed + self.seed_step * (i + 1) for i in range(sets)]


@dataclass(frozen=True)
class Detection:
    """How GPU MODE's own task.yml (and the reference.py beside it) says which problem it is."""

    name_comments: tuple[str, ...]  # values of a first-line `# name: ...` comment that fit
    description_phrase: str  # lower-case phrase the task description contains
    reference_markers: tuple[str, ...]  # all present in the reference.py beside the task file
    reference_absent: tuple[str, ...] = ()  # none present


@dataclass(frozen=True)
class KernelApi:
    """The torch-free C ABI a `--kernel` source implements for this problem, and its binding."""

    header: str  # under kernels/common/; a kernel including it is built with `binding`
    function: str  # the extension's entry point, e.g. "nvfp4_dual_gemm"
    arguments: tuple[int, ...]  # tuple indices passed, in order
    binding: str = ""  # under kernels/common/: the torch adapter (default "<function>_binding.cpp")
    operands: str = ""  # Python argument text when not plain tuple indices (the grouped GEMM's lists)
    summary: str = ""  # what the call passes, in words, for the exported file's docstring

    @property
    def binding_name(self) -> str:
        return self.binding or f"{self.function}_binding.cpp"

    @property
    def launch_function(self) -> str:
        """The C ABI function a kernel defines and the binding calls: `nvfp4_gemv_launch`."""
        return f"{self.function}_launch"

    @property
    def args_struct(self) -> str:
        """The struct the header declares for the launch's arguments: `Nvfp4GemvArgs` for nvfp4_gemv."""
        return "".join(part.capitalize() for part in self.function.split("_")) + "Args"

    def call_text(self, module: str = "_kernel_module") -> str:
        """The Python call an exported submission makes: `_kernel_module.nvfp4_gemm(data[0], ...)`."""
        operands = self.operands or ", ".join(f"data[{i}]" for i in self.arguments)
        return f"{module}.{self.function}({operands})"

    def describe(self) -> str:
        if self.summary:
            return self.summary
        *used, output = self.arguments
        return f"tuple indices {', '.join(str(i) for i in used)} -> c (index {output})"
