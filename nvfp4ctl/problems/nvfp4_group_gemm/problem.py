"""nvfp4_group_gemm as a `Problem`: G independent GEMMs C_g = A_g·B_gᵀ per call, one output per group.

The tuple is (abc_tensors, sfasfb_tensors, sfasfb_reordered_tensors, problem_sizes): lists of per-group
(a, b, c), reference (sfa, sfb), permuted (sfa, sfb) and (m, n, k, l). A case has g and per-group
tuples m, n, k (l = 1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems.base import ProblemBase, make_case
from nvfp4ctl.problems.fields import (FieldError, check_keys, check_sizes, describe_value, read_int, read_int_list,
                                      read_seed, shape_fields)
from nvfp4ctl.problems.records import Detection, KernelApi, TimingLoop, TupleLayout

if TYPE_CHECKING:
    from nvfp4ctl.task import Case

PER_GROUP = ("m", "n", "k")


class Nvfp4GroupGemm(ProblemBase):
    name = "nvfp4_group_gemm"
    title = "C_g = A_g·B_gᵀ for G groups of fp4 operands with e4m3 block-16 scales, fp16, one output per group"
    case_fields = ("g", "m", "n", "k")
    case_example = "{m: [96, 128], n: [128, 256], k: [256, 512], g: 2, seed: 1111}"
    shape_syntax = "M1,N1,K1;M2,N2,K2;..."
    shape_example = "'192,3072,4096;320,3072,4096'"
    layout = TupleLayout(
        names=("abc_tensors", "sfasfb_tensors", "sfasfb_reordered_tensors", "problem_sizes"),
        reference_scales=(1,), permuted_scales=(2,), b_operands=(), output=None, nested=True,
        group_output=(0, 2),  # c of each group's (a, b, c) in abc_tensors
        # its task.yml's description and template.py's custom_kernel, which unpacks these three
        described=("abc_tensors", "sfasfb_tensors", "problem_sizes"),
    )
    # eval_better_bench_grouped_gemm.py: 15 input sets per event pair, fewer repeats, its own warm-ups.
    timing = TimingLoop(source="problems/nvidia/eval_better_bench_grouped_gemm.py", input_sets=15,
                        benchmark_repeats=100, benchmark_warm_repeats=100,
                        leaderboard_repeats=100, leaderboard_warm_repeats=50)
    detection = Detection(
        name_comments=("nvfp4-block-scaled-gemm", "nvfp4-group-gemm"),  # GPU MODE's file says the former
        description_phrase="group matrix-matrix multiplication",
        reference_markers=("problem_sizes",),
    )
    # lists per operand: a, b from abc_tensors, the permuted scales from sfasfb_reordered_tensors, c
    kernel_api = KernelApi(
        header="nvfp4_group_gemm_api.h", function="nvfp4_group_gemm", arguments=(),
        operands="[g[0] for g in data[0]], [g[1] for g in data[0]], [s[0] for s in data[2]], "
                 "[s[1] for s in data[2]], [g[2] for g in data[0]]",
        summary="per group a, b (abc_tensors), sfa_permuted, sfb_permuted (index 2) -> the list of c",
    )
    sol_table = {
        ((80, 176, 128, 72, 64, 248, 96, 160), (4096,) * 8, (7168,) * 8): 18.833,
        ((40, 76, 168, 72, 164, 148, 196, 160), (7168,) * 8, (2048,) * 8): 10.667,
        ((192, 320), (3072, 3072), (4096, 4096)): 2.406,
        ((128, 384), (4096, 4096), (1536, 1536)): 1.525,
    }
    fallback_submission = "torch_dequant/nvfp4_group_gemm_submission.py"
    trace_case = {"m": [96, 128], "n": [128, 256], "k": [256, 512], "g": 2, "seed": 1111}  # the task's first test
    inputs_module = "nvfp4ctl.problems.nvfp4_group_gemm.inputs"
    reference_module = "nvfp4ctl.problems.nvfp4_group_gemm.reference"

    def parse_case(self, entry: Mapping[str, Any], at: str, *, task_rules: bool = True) -> Case:
        check_keys(entry, at, (*self.case_fields, "l"))
        _check_l(entry, at)
        g = read_int(entry, "g", at)
        lists = {name: read_int_list(entry, name, at, g) for name in PER_GROUP}
        for position, k in enumerate(lists["k"]):
            self.check_k(k, f"{at}.k[{position}]", task_rules)
        seed = read_seed(entry, at)
        return make_case(m=lists["m"], n=lists["n"], k=lists["k"], l=1, seed=seed, g=g)

    def parse_shape(self, text: str, seed: int) -> Case:
        # an empty group (";;", a ";" at either end) is refused as a malformed one, not dropped
        groups = text.replace(" ", "").split(";")
        triples = []
        for part in groups:
            numbers = shape_fields(part)
            try:
                values = [int(p) for p in numbers]
            except ValueError:
                values = []
            if len(values) != 3 or min(values) < 1:
                raise UsageError(f"--shape {text}: expected {self.shape_syntax} (M,N,K per group), "
                                 f"e.g. --shape {self.shape_example}")
            check_sizes(text, values)
            triples.append(values)
        m, n, k = (tuple(column) for column in zip(*triples))
        for position, value in enumerate(k):
            try:
                self.check_k(value, "K")
            except FieldError as error:
                raise UsageError(f"--shape {text}: group {position + 1}: K: {error.problem}") from None
        return make_case(m=m, n=n, k=k, l=1, seed=seed, g=len(triples))

    def key(self, case: Case) -> str:
        """"g8:m80+176+...:n4096:k7168" (a list of equal values is written once)."""
        return f"g{case.g}:" + ":".join(f"{name}{_compact(getattr(case, name))}" for name in PER_GROUP)

    def shape_text(self, case: Case) -> str:
        return f"g={case.g} " + " ".join(f"{name}={_compact(getattr(case, name), ',')}" for name in PER_GROUP)

    def sol_key(self, case: Case) -> tuple:
        return (tuple(case.m), tuple(case.n), tuple(case.k))

    def flops(self, case: Case) -> float:
        return sum(2.0 * m * n * k for m, n, k in zip(case.m, case.n, case.k))

    def bytes_moved(self, case: Case) -> float:
        return float(sum((m + n) * k // 2 + (m + n) * k // 16 + 2 * m * n for m, n, k in zip(case.m, case.n, case.k)))

    def scale_tensors(self, data: Any) -> list[tuple[str, Any, Any]]:
        """Per group g (1-based in labels): A[g] and B[g], reference from index 1, permuted from index 2."""
        pairs = []
        for group, ((sfa, sfb), (sfa_permuted, sfb_permuted)) in enumerate(zip(data[1], data[2]), start=1):
            pairs += [(f"A[{group}]", sfa, sfa_permuted), (f"B[{group}]", sfb, sfb_permuted)]
        return pairs

    def scale_extents(self, case: Case) -> list[tuple[str, int, int]]:
        """Per group g: A[g] (M_g rows) and B[g] (N_g rows), K_g / 16 k-blocks each, as scale_tensors labels them."""
        from nvfp4ctl.problems.nvfp4_gemm.formats import SF_VEC

        extents = []
        for group, (m, n, k) in enumerate(zip(case.m, case.n, case.k), start=1):
            extents += [(f"A[{group}]", m, -(-k // SF_VEC)), (f"B[{group}]", n, -(-k // SF_VEC))]
        return extents

    def output_names(self, data: Any) -> list[str]:
        return [f"group {index + 1} c" for index in range(len(data[0]))]

    def explain(self, data: Any, got: Any, want: Any, wrong: Any, *, rtol: float, atol: float) -> list[str]:
        from nvfp4ctl.problems.nvfp4_group_gemm.diagnose import explain_groups

        return explain_groups(data, got, want, wrong, rtol=rtol, atol=atol)

    def kernel_caller(self, module: Any) -> Callable[[Any], Any]:
        function = module.nvfp4_group_gemm

        def call(data: Any) -> Any:
            abc, _, reordered, _ = data
            return function([g[0] for g in abc], [g[1] for g in abc], [s[0] for s in reordered],
                            [s[1] for s in reordered], [g[2] for g in abc])

        return call


def _check_l(entry: Mapping[str, Any], at: str) -> None:
    """A test copied from the GEMM's carries `"l": 1`, which is what every group has: taken, changing nothing.
    Any other l is no case this problem has."""
    if "l" not in entry:
        return
    value = entry["l"]
    if isinstance(value, bool) or not isinstance(value, int) or value != 1:
        raise FieldError(f"{at}.l", "expected 1 (GPU MODE's grouped GEMM has one batch per group; l may be left out),"
                                    f" got {describe_value(value)}")


def _compact(values: tuple[int, ...], separator: str = "+") -> str:
    if len(set(values)) == 1:
        return str(values[0])
    return separator.join(str(v) for v in values)
