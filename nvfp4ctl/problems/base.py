"""What every problem shares (torch-free): `ProblemBase`, and `DenseProblem` for integer cases.

A problem class sets class attributes (its case fields, tuple layout, timing loop, detection
signals, speed-of-light table; records.py) and names its `inputs` / `reference` modules; the tensor
functions import those lazily, so the parent process (task parsing, lint, tables) never imports torch.
"""

from __future__ import annotations

import importlib
import operator
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems.fields import FieldError, check_keys, read_int, read_seed, shape_numbers
from nvfp4ctl.problems.records import Detection, KernelApi, TimingLoop, TupleLayout

if TYPE_CHECKING:
    from nvfp4ctl.task import Case

PROBLEMS_DIR = Path(__file__).resolve().parent


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
    # False: the problem is bound by memory, not by math, so a build without a tensor-core op is no failure
    needs_tensor_op = True
    padding_uninitialised = False  # GPU MODE leaves the permuted scales' padding as torch.empty found it
    fallback_submission: str = ""  # kernels/<path>: the exact plain-torch target
    # One small task.yml entry whose CPU tuple `build` hands a CuTe DSL submission so that its kernels reach
    # cute.compile without a GPU; empty: build says it cannot trace this problem's submissions.
    trace_case: Mapping[str, Any] = {}
    output_label: str = "c"
    output_dims: tuple[str, ...] = ("m", "n", "l")  # what c's dimensions are, for a wrong-shape message
    # The dimensions of a benchmark shape that lint's NV702 looks for in a branch, in this order: a GEMM's batch
    # l is 1 in every benchmark, so only m, n, k tell one benchmark from another (a grouped GEMM's per group).
    benchmark_dims: tuple[str, ...] = ("m", "n", "k")
    inputs_module: str = ""
    reference_module: str = ""

    # --- task.yml and --shape ------------------------------------------------------------------
    def parse_case(self, entry: Mapping[str, Any], at: str, *, task_rules: bool = True) -> Case:  # pragma: no cover
        """A task.yml entry as a Case. task_rules=False drops the task's own stricter K rule (the GEMV's
        multiple of 64) for callers that need only what GPU MODE's generate_input accepts (digests)."""
        raise NotImplementedError

    def parse_shape(self, text: str, seed: int) -> Case:  # pragma: no cover - abstract
        raise NotImplementedError

    def check_k(self, k: int, at: str, task_rules: bool = True) -> None:
        multiple, reason = (self.k_multiple, self.k_reason) if task_rules else (ProblemBase.k_multiple, ProblemBase.k_reason)
        if k % multiple:
            raise FieldError(at, f"expected a multiple of {multiple} ({reason}), got {k}")

    # --- names of a case ---------------------------------------------------------------------------
    def key(self, case: Case) -> str:
        """Short name in tables and the run log: "128x7168x16384"."""
        return "x".join(str(getattr(case, f)) for f in self.case_fields if f != "l") + (f"x{case.l}" if case.l != 1 else "")

    def key_dims(self, case: Case) -> tuple[str, ...]:
        """What each part of key(case) is, in order: ("m", "n", "k") for "128x7168x16384", the GEMV's ("m", "k", "l")
        for "4096x7168x8" (a script reads the key by them, not as a GEMM's M×N×K)."""
        return tuple(f for f in self.case_fields if f != "l") + (("l",) if case.l != 1 else ())

    def label_of_key(self, key: str) -> str:
        """How a person is shown a logged key: label() of the case it names ("4096x7168x8" -> "4096x7168 l=8");
        the key as it is where it names no case of this problem (another's, a grouped GEMM's, "geomean")."""
        try:
            return self.label(self.parse_shape(key.replace("x", ","), 0))
        except (UsageError, ValueError, TypeError):
            return key

    def label(self, case: Case) -> str:
        """How bench's tables, lines and run-log results name the case: its key, where the key reads unambiguously."""
        return self.key(case)

    def key_of_label(self, label: str) -> str:
        """The key a label names (label_of_key undone): a logged result names a shape by its label, a line written
        before that by its key, and every reader matches both as one shape. The text as it is where it is no label
        other than a key (a key, another problem's, "geomean")."""
        return label

    def shape_text(self, case: Case) -> str:
        """"m=128 n=256 k=256" (l when not 1) for check's table."""
        words = [f"{f}={getattr(case, f)}" for f in self.case_fields if f != "l"]
        return " ".join(words) + (f" l={case.l}" if case.l != 1 else "")

    def sizes(self, case: Case) -> dict[str, int | list[int]]:
        """The case's sizes by name, for JSON: {"m": 128, "n": 256, "k": 256, "l": 1}, the GEMV's without n, a
        grouped GEMM's per-group sizes as lists beside g. One type for every problem, as a script reads it."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in ((f, getattr(case, f)) for f in self.case_fields)}

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
        from dataclasses import replace

        from nvfp4ctl.bench.modes import BENCHMARK, MODE_SETTINGS

        t = self.timing  # the counts differ by problem; budgets and recheck are the modes' own
        if mode == BENCHMARK:
            return replace(MODE_SETTINGS[BENCHMARK], max_repeats=t.benchmark_repeats,
                           warm_max_repeats=t.benchmark_warm_repeats)
        return replace(MODE_SETTINGS[mode], max_repeats=t.leaderboard_repeats,
                       warm_first_only=not t.leaderboard_warms_every_shape, warm_max_repeats=t.leaderboard_warm_repeats)

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

    def make_input(self, case: Case, device: str = "cuda", scales: str = "generator") -> Any:
        """generate_input, where a case whose one input tensor is bigger than the device's whole memory
        is the user's input error (exit 2). Any other out-of-memory stays what it was: the kernel
        under test may be what holds the memory (a failure of the run, not of the shape). A case whose
        inputs and output alone (bytes_moved: fewer bytes than generate_input makes) exceed that memory
        is refused before any is made: generating the first operands of one ran the test's whole timeout."""
        import torch

        self.refuse_too_large(case, device)
        try:
            return self.generate_input(case, device=device, scales=scales)
        except (torch.OutOfMemoryError, RuntimeError) as error:
            asked = _asked_bytes(str(error))
            total = _device_bytes(device)
            if asked is None or total is None or asked <= total:
                raise
            raise UsageError(f"{self.shape_text(case)}: the inputs do not fit in {device} memory (one tensor needs"
                             f" {asked / 2**30:.1f} GiB of {total / 2**30:.1f})") from None

    def refuse_too_large(self, case: Case, device: str, total: float | None = None) -> None:
        """The UsageError of a case whose inputs and output alone exceed the device's whole memory; a parent
        that runs the case in a child (dump --runtime, tune) asks before its build takes minutes. `total`: that
        memory in bytes where the caller knows it (tune's parent asks nvidia-smi: it never initialises CUDA)."""
        needed = self.bytes_moved(case)
        total = _device_bytes(device) if total is None else total
        if total is not None and needed > total:
            raise UsageError(f"{self.shape_text(case)}: too large: its inputs and output need at least"
                             f" {needed / 2**30:.1f} GiB, more than the {total / 2**30:.1f} GiB of {device} memory")

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
        return [(label, data[r], data[p]) for label, r, p in zip(self._scale_labels(), layout.reference_scales,
                                                                 layout.permuted_scales)]

    def _scale_labels(self) -> list[str]:
        return [self.layout.names[r].removesuffix("_ref").removeprefix("sf").upper() for r in self.layout.reference_scales]

    def scale_extents(self, case: Case) -> list[tuple[str, int, int]]:
        """(operand label as scale_tensors names it, rows, k-blocks) of every scale tensor, from the case alone:
        dump --layout judges --row and --kblock before making inputs (torch's import and the generator: seconds)."""
        from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC

        k_blocks = -(-case.k // SF_VEC)
        return [(label, case.m if label == "A" else self.b_scale_rows(case), k_blocks) for label in self._scale_labels()]

    def b_scale_rows(self, case: Case) -> int:
        """Rows of a B operand's scales: N (the GEMV pads its vector to 128 rows)."""
        return case.n

    def output_names(self, data: Any) -> list[str]:
        """One name per output tensor, in the order `reference` returns them."""
        return [self.output_label]

    def explain(self, data: Any, got: Any, want: Any, wrong: Any, *, rtol: float, atol: float) -> list[str]:
        """Extra lines for a mismatch report in the problem's own terms (dual: which product). A likeness it
        names holds to the task's tolerance, `rtol` and `atol`, the one the verdict used."""
        return []

    def kernel_caller(self, module: Any) -> Callable[[Any], Any]:
        """`data -> output` for a built `--kernel` extension, through the problem's C ABI. The lookups
        are done here, once: the returned function runs on every timed call (a submission's own
        custom_kernel pays nothing like them)."""
        if self.kernel_api is None:
            raise UsageError(f"{self.name}: no kernel C ABI yet; use --submission")
        function = getattr(module, self.kernel_api.function)
        arguments = tuple(self.kernel_api.arguments)
        pick = operator.itemgetter(*arguments)
        if len(arguments) == 1:
            return lambda data: function(pick(data))
        return lambda data: function(*pick(data))

    def kernel_call(self, module: Any, data: Any) -> Any:
        """Call a built `--kernel` extension on the tuple once (see kernel_caller)."""
        return self.kernel_caller(module)(data)


_UNITS = {"bytes": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}


def _asked_bytes(message: str) -> float | None:
    """The size torch's allocators say they were asked for ("Tried to allocate 238.42 GiB", "you tried
    to allocate 12799999999872 bytes"), None in any other error."""
    asked = re.search(r"[Tt]ried to allocate (\d+(?:\.\d+)?) ?(bytes|B|KiB|MiB|GiB|TiB|PiB)\b", message)
    return float(asked.group(1)) * _UNITS[asked.group(2)] if asked else None


def _device_bytes(device: str) -> float | None:
    """The whole memory of the device the inputs go to (the GPU's, or the machine's for cpu)."""
    import os

    import torch

    try:
        if device.startswith("cuda"):
            return float(torch.cuda.get_device_properties(torch.device(device)).total_memory)
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (RuntimeError, ValueError, OSError, AssertionError):
        return None


def make_case(**values: Any) -> Case:
    from nvfp4ctl.task import Case

    return Case(**values)


class DenseProblem(ProblemBase):
    """Problems whose case is plain integers (`case_fields` among m, n, k, l): GEMM, dual GEMM, GEMV."""

    def parse_case(self, entry: Mapping[str, Any], at: str, *, task_rules: bool = True) -> Case:
        check_keys(entry, at, self.case_fields)
        values = {name: read_int(entry, name, at) for name in self.case_fields}
        self.check_k(values["k"], f"{at}.k", task_rules)
        seed = read_seed(entry, at)
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
            # K is not the third number of every problem's shape (the GEMV's is M,K,L): name the syntax
            raise UsageError(f"--shape {text}: K: {error.problem} (this problem's --shape is {self.shape_syntax})") from None
        return make_case(m=values["m"], n=values.get("n"), k=values["k"], l=values["l"], seed=seed)
