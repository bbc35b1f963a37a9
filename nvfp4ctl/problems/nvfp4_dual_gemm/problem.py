"""nvfp4_dual_gemm as a `Problem`: C = silu(A·B1ᵀ) ⊙ (A·B2ᵀ), fp16, one A shared by two fp4 B operands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nvfp4ctl.problems.base import DenseProblem
from nvfp4ctl.problems.records import Detection, KernelApi, TimingLoop, TupleLayout

if TYPE_CHECKING:
    from nvfp4ctl.task import Case


class Nvfp4DualGemm(DenseProblem):
    name = "nvfp4_dual_gemm"
    title = "C = silu(A·B1ᵀ) ⊙ (A·B2ᵀ) (fp4 A, B1, B2 with e4m3 block-16 scales), fp16, per batch l"
    case_fields = ("m", "n", "k", "l")
    padding_uninitialised = True
    case_example = "{m: 256, n: 512, k: 256, l: 1, seed: 1111}"
    shape_syntax = "M,N,K or M,N,K,L"
    shape_example = "256,4096,7168"
    layout = TupleLayout(
        names=("a", "b1", "b2", "sfa_ref", "sfb1_ref", "sfb2_ref",
               "sfa_permuted", "sfb1_permuted", "sfb2_permuted", "c"),
        reference_scales=(3, 4, 5), permuted_scales=(6, 7, 8), b_operands=(1, 2), output=9,
        described=("a", "b1", "b2", "sfa", "sfb1", "sfb2", "c"),  # its task.yml's description
    )
    timing = TimingLoop(source="problems/nvidia/eval_better_bench.py")
    detection = Detection(
        name_comments=("nvfp4-dual-gemm",),
        description_phrase="dual matrix-matrix multiplication",
        reference_markers=("silu",),
    )
    kernel_api = KernelApi(header="nvfp4_dual_gemm_api.h", function="nvfp4_dual_gemm",
                           arguments=(0, 1, 2, 6, 7, 8, 9))
    sol_table = {(256, 4096, 7168, 1): 4.708, (512, 4096, 7168, 1): 8.714,
                 (256, 3072, 4096, 1): 2.125, (512, 3072, 7168, 1): 6.535}
    fallback_submission = "torch_dequant/nvfp4_dual_gemm_submission.py"
    trace_case = {"m": 256, "n": 512, "k": 256, "l": 1, "seed": 1111}  # the task's smallest test
    inputs_module = "nvfp4ctl.problems.nvfp4_dual_gemm.inputs"
    reference_module = "nvfp4ctl.problems.nvfp4_dual_gemm.reference"

    def flops(self, case: Case) -> float:
        return 2.0 * 2.0 * case.m * case.n * case.k * case.l  # two GEMMs; silu and ⊙ are O(mn)

    def bytes_moved(self, case: Case) -> float:
        """fp4 A, B1, B2 (2 per byte), one e4m3 scale per 16 of each, fp16 C written."""
        m, n, k = case.m, case.n, case.k
        return float(case.l * ((m + 2 * n) * k // 2 + (m + 2 * n) * k // 16 + 2 * m * n))

    def explain(self, data: Any, got: Any, want: Any, wrong: Any, *, rtol: float, atol: float) -> list[str]:
        from nvfp4ctl.problems.nvfp4_dual_gemm.diagnose import implicated_product

        return implicated_product(data, got, wrong, rtol=rtol, atol=atol)
