"""nvfp4_gemv as a `Problem`: c[:, 0, l] = A·b per batch, fp16; b padded to 128 rows, row 0 counts."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

from nvfp4ctl.problems.base import DenseProblem
from nvfp4ctl.problems.records import Detection, KernelApi, TimingLoop, TupleLayout

if TYPE_CHECKING:
    from nvfp4ctl.task import Case

B_SCALE_ROWS = 128  # b and sfb are padded to 128 rows (inputs.B_ROWS); row 0 is the vector
_LABEL = re.compile(r"(?P<sizes>[1-9][0-9]*x[1-9][0-9]*) l=(?P<l>[1-9][0-9]*)")  # label(): M x K, then its L


class Nvfp4Gemv(DenseProblem):
    name = "nvfp4_gemv"
    title = "c = A·b (fp4 A, b with e4m3 block-16 scales), fp16 c of shape [m, 1, l]"
    case_fields = ("m", "k", "l")
    case_example = "{m: 128, k: 256, l: 1, seed: 1111}"
    shape_syntax = "M,K or M,K,L"
    shape_example = "7168,16384"
    k_multiple = 64
    k_reason = "the task's rule for the GEMV"
    output_dims = ("m", "1", "l")  # c is [m, 1, l]: no n
    benchmark_dims = ("m", "k", "l")  # no n; the batch l tells its benchmarks apart (1, 8, 4)
    layout = TupleLayout(
        names=("a", "b", "sfa_ref", "sfb_ref", "sfa_permuted", "sfb_permuted", "c"),
        reference_scales=(2, 3), permuted_scales=(4, 5), b_operands=(), output=6,
        described=("a", "b", "sfa", "sfb", "c"),  # its task.yml's description
    )
    # GEMV uses GPU MODE's plain eval.py: one input set, one call per event pair, the task's seed as is;
    # its leaderboard mode draws a new input (seed += 13) before each of its 200 repeats and checks that output.
    timing = TimingLoop(source="problems/nvidia/eval.py", input_sets=1, seed_step=0,
                        leaderboard_repeats=200, leaderboard_warm_repeats=200,
                        leaderboard_warms_every_shape=False, leaderboard_fresh_seed_step=13)
    detection = Detection(
        name_comments=("nvfp4-gemv",),
        description_phrase="matrix-vector multiplication",
        reference_markers=("n_padded_128",),
    )
    kernel_api = KernelApi(header="nvfp4_gemv_api.h", function="nvfp4_gemv", arguments=(0, 1, 4, 5, 6))
    sol_table = {(7168, 16384, 1): 8.622, (4096, 7168, 8): 17.275, (7168, 2048, 4): 4.317}
    fallback_submission = "torch_dequant/nvfp4_gemv_submission.py"
    # one vector against A: 2 flops per fp4 byte pair read, FFMA and DRAM bound; an MMA would idle 127 of 128 rows
    needs_tensor_op = False
    trace_case = {"m": 128, "k": 256, "l": 1, "seed": 1111}  # the task's first test
    inputs_module = "nvfp4ctl.problems.nvfp4_gemv.inputs"
    reference_module = "nvfp4ctl.problems.nvfp4_gemv.reference"

    def label(self, case: Case) -> str:
        """"4096x7168 l=8": the key's "4096x7168x8" would read as a GEMM's M×N×K (the run log's results name it so
        too; lines written before them hold the key, which key_of_label reads them as)."""
        return self.key(dataclasses.replace(case, l=1)) + (f" l={case.l}" if case.l != 1 else "")

    def key_of_label(self, label: str) -> str:
        """"4096x7168 l=8" -> "4096x7168x8" (an l of 1 is no part of a key); any other text as it is."""
        found = _LABEL.fullmatch(label)
        if found is None:
            return label
        return found["sizes"] + (f"x{found['l']}" if found["l"] != "1" else "")

    def b_scale_rows(self, case: Case) -> int:
        return B_SCALE_ROWS

    def flops(self, case: Case) -> float:
        return 2.0 * case.m * case.k * case.l

    def bytes_moved(self, case: Case) -> float:
        """fp4 A and one row of b (2 per byte), their e4m3 scales (1 per 16), fp16 c written."""
        m, k = case.m, case.k
        return float(case.l * ((m + 1) * k // 2 + (m + 1) * k // 16 + 2 * m))

    def explain(self, data: Any, got: Any, want: Any, wrong: Any, *, rtol: float, atol: float) -> list[str]:
        """b is padded to 128 rows, so its scales are read in either layout as a 128-row GEMM operand's."""
        from nvfp4ctl.problems.nvfp4_gemm.diagnose import misread_scale_lines

        return misread_scale_lines(data, got, wrong, who="GEMV", output="c", rtol=rtol, atol=atol)
