"""What every problem shares, and the small records a problem fills in (torch-free).

A problem class sets class attributes (its case fields, tuple layout, timing loop, detection
signals, speed-of-light table) and names its `inputs` / `reference` modules; the tensor functions
import those lazily, so the parent process (task parsing, lint, tables) never imports torch.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from nvfp4ctl.errors import UsageError

if TYPE_CHECKING:
    from nvfp4ctl.task import Case

PROBLEMS_DIR = Path(__file__).resolve().parent


class FieldError(Exception):
    """A bad task.yml field: the reader prefixes the file name ("task.yml: tests[2].k: ...")."""

    def __init__(self, field_path: str, problem: str) -> None:
        super().__init__(f"{field_path}: {problem}")
        self.field_path = field_path
        self.problem = problem


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

    def call_text(self, module: str = "_kernel_module") -> str:
        """The Python call an exported submission makes: `_kernel_module.nvfp4_gemm(data[0], ...)`."""
        operands = self.operands or ", ".join(f"data[{i}]" for i in self.arguments)
        return f"{module}.{self.function}({operands})"

    def describe(self) -> str:
        if self.summary:
            return self.summary
        *used, output = self.arguments
        return f"tuple indices {', '.join(str(i) for i in used)} -> c (index {output})"


def read_int(entry: Mapping[str, Any], name: str, at: str, minimum: int = 1) -> int:
    if name not in entry:
        raise FieldError(f"{at}.{name}", "missing")
    value = entry[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a non-negative integer" if minimum == 0 else "a positive integer"
        raise FieldError(f"{at}.{name}", f"expected {kind}, got {describe_value(value)}")
    return value


def read_int_list(entry: Mapping[str, Any], name: str, at: str, length: int) -> tuple[int, ...]:
    if name not in entry:
        raise FieldError(f"{at}.{name}", "missing")
    value = entry[name]
    if not isinstance(value, (list, tuple)) or len(value) != length:
        raise FieldError(f"{at}.{name}", f"expected a list of {length} positive integers (one per group), got {describe_value(value)}")
    for position, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int) or item < 1:
            raise FieldError(f"{at}.{name}[{position}]", f"expected a positive integer, got {describe_value(item)}")
    return tuple(value)


def describe_value(value: Any) -> str:
    return "nothing" if value is None else repr(value)


def check_keys(entry: Mapping[str, Any], at: str, allowed: tuple[str, ...]) -> None:
    unknown = sorted(str(key) for key in entry if key not in (*allowed, "seed", "sol_us"))
    if unknown:
        raise FieldError(f"{at}.{unknown[0]}", f"unknown field (expected {', '.join(allowed)}, seed, sol_us)")


def shape_numbers(text: str, syntax: str, example: str, counts: tuple[int, ...]) -> list[int]:
    """"128,256,512" (also x or spaces) -> positive ints, their count one of `counts`."""
    parts = [p for p in text.replace("x", ",").replace(" ", ",").split(",") if p]
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) not in counts or any(n <= 0 for n in numbers):
        raise UsageError(f"--shape {text}: expected {syntax} as positive integers, e.g. --shape {example}")
    return numbers


class ProblemBase:
    """Defaults shared by the four problems; subclasses set the class attributes below."""

    name: str = ""
    title: str = ""  # one line: what is computed
    case_fields: tuple[str, ...] = ()
    case_example: str = ""  # one task.yml entry, for messages
    shape_syntax: str = ""
    shape_example: str = ""
    k_multiple: int = 16
    k_reason: str = "one scale per 16 elements"
    layout: TupleLayout
    timing: TimingLoop
    detection: Detection
    kernel_api: KernelApi | None = None
    sol_table: Mapping[tuple, float] = {}  # case fields -> µs on B200 @1.5 GHz (task description)
    default_kernels: Mapping[int, str] = {}  # GPU major -> kernels/<path>
    fallback_submission: str = ""  # kernels/<path>: the exact plain-torch target
    output_label: str = "c"
    inputs_module: str = ""
    reference_module: str = ""

    # --- task.yml and --shape ------------------------------------------------------------------
    def parse_case(self, entry: Mapping[str, Any], at: str) -> Case:  # pragma: no cover - abstract
        raise NotImplementedError

    def parse_shape(self, text: str, seed: int) -> Case:  # pragma: no cover - abstract
        raise NotImplementedError

    def check_k(self, k: int, at: str) -> None:
        if k % self.k_multiple:
            raise FieldError(at, f"expected a multiple of {self.k_multiple} ({self.k_reason}), got {k}")

    def shape_error(self, text: str, error: FieldError) -> UsageError:
        return UsageError(f"--shape {text}: {error.problem}")

    # --- names of a case ---------------------------------------------------------------------------
    def key(self, case: Case) -> str:
        """Short name in tables and the run log: "128x7168x16384"."""
        return "x".join(str(getattr(case, f)) for f in self.case_fields if f != "l") + (f"x{case.l}" if case.l != 1 else "")

    def shape_text(self, case: Case) -> str:
        """"m=128 n=256 k=256" (l when not 1) for check's table."""
        words = [f"{f}={getattr(case, f)}" for f in self.case_fields if f != "l"]
        return " ".join(words) + (f" l={case.l}" if case.l != 1 else "")

    # --- numbers -----------------------------------------------------------------------------------
    def flops(self, case: Case) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def bytes_moved(self, case: Case) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def sol_us(self, case: Case) -> float | None:
        """Speed of light from the task description's table (B200 @1.5 GHz); task.yml's sol_us wins."""
        if case.sol_us is not None:
            return case.sol_us
        return self.sol_table.get(self.sol_key(case))

    def sol_key(self, case: Case) -> tuple:
        return tuple(getattr(case, f) for f in self.case_fields)

    def bench_mode(self, mode: str) -> Any:
        """The leaderboard's settings for `mode` ("benchmark" / "leaderboard") under this problem's loop."""
        from nvfp4ctl.bench.modes import BENCHMARK, Mode

        t = self.timing
        if mode == BENCHMARK:
            return Mode(BENCHMARK, max_repeats=t.benchmark_repeats, budget_s=10.0, recheck=False,
                        warm_first_only=True, warm_max_repeats=t.benchmark_warm_repeats, warm_budget_s=0.1)
        return Mode(mode, max_repeats=t.leaderboard_repeats, budget_s=30.0, recheck=True,
                    warm_first_only=not t.leaderboard_warms_every_shape,
                    warm_max_repeats=t.leaderboard_warm_repeats, warm_budget_s=0.5)

    # --- files -------------------------------------------------------------------------------------
    @property
    def folder(self) -> Path:
        return PROBLEMS_DIR / self.name

    @property
    def task_file(self) -> Path:
        return self.folder / "task.yml"

    @property
    def harness_dir(self) -> Path:
        return self.folder / "harness"

    # --- tensors (child side; imports torch through the problem's modules) --------------------------
    def _inputs(self) -> ModuleType:
        return importlib.import_module(self.inputs_module)

    def _reference(self) -> ModuleType:
        return importlib.import_module(self.reference_module)

    def generate_input(self, case: Case, device: str = "cuda", scales: str = "generator") -> Any:
        return self._inputs().generate_input(case, case.seed, device=device, scales=scales)

    def refill_input(self, data: Any, seed: int, scales: str = "generator") -> None:
        self._inputs().refill_input(data, seed, scales=scales)

    def reference(self, data: Any) -> Any:
        return self._reference().reference(data)

    def output_of(self, data: Any) -> Any:
        return self._inputs().output_of(data)

    def describe(self, data: Any) -> list[str]:
        return list(self._inputs().describe(data))

    def scale_tensors(self, data: Any) -> list[tuple[str, Any, Any]]:
        """(operand label, reference scales, permuted scales) for every scale tensor: "A", "B1", ..."""
        layout = self.layout
        return [(layout.names[r].removesuffix("_ref").removeprefix("sf").upper(), data[r], data[p])
                for r, p in zip(layout.reference_scales, layout.permuted_scales)]

    def output_names(self, data: Any) -> list[str]:
        """One name per output tensor, in the order `reference` returns them."""
        return [self.output_label]

    def explain(self, data: Any, got: Any, want: Any, wrong: Any) -> list[str]:
        """Extra lines for a mismatch report in the problem's own terms (dual: which product)."""
        return []

    def kernel_call(self, module: Any, data: Any) -> Any:
        """Call a built `--kernel` extension on the tuple through the problem's C ABI."""
        if self.kernel_api is None:
            raise UsageError(f"{self.name}: no kernel C ABI yet; use --submission")
        api = self.kernel_api
        return getattr(module, api.function)(*(data[i] for i in api.arguments))


def make_case(**values: Any) -> Case:
    from nvfp4ctl.task import Case

    return Case(**values)


class DenseProblem(ProblemBase):
    """Problems whose case is plain integers (`case_fields` among m, n, k, l): GEMM, dual GEMM, GEMV."""

    def parse_case(self, entry: Mapping[str, Any], at: str) -> Case:
        check_keys(entry, at, self.case_fields)
        values = {name: read_int(entry, name, at) for name in self.case_fields}
        self.check_k(values["k"], f"{at}.k")
        seed = read_int(entry, "seed", at, minimum=0)
        return make_case(m=values["m"], n=values.get("n"), k=values["k"], l=values["l"], seed=seed)

    def parse_shape(self, text: str, seed: int) -> Case:
        """M,N,K[,L] (GEMV: M,K[,L]): the case fields in order, L defaulting to 1."""
        count = len(self.case_fields)
        numbers = shape_numbers(text, self.shape_syntax, self.shape_example, (count - 1, count))
        values = dict(zip(self.case_fields, numbers))
        values.setdefault("l", 1)
        try:
            self.check_k(values["k"], "K")
        except FieldError as error:
            raise UsageError(f"--shape {text}: K: {error.problem}") from None
        return make_case(m=values["m"], n=values.get("n"), k=values["k"], l=values["l"], seed=seed)
