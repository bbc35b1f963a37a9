"""nvfp4_gemm as a `Problem`: C = A·Bᵀ per batch, fp16, from fp4 operands with e4m3 block-16 scales."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nvfp4ctl.problems.base import DenseProblem
from nvfp4ctl.problems.records import Detection, KernelApi, TimingLoop, TupleLayout

if TYPE_CHECKING:
    from nvfp4ctl.task import Case


class Nvfp4Gemm(DenseProblem):
    name = "nvfp4_gemm"
    title = "C = A·Bᵀ (fp4 A, B with e4m3 block-16 scales), fp16, per batch l"
    case_fields = ("m", "n", "k", "l")
    case_example = "{m: 128, n: 256, k: 256, l: 1, seed: 1111}"
    shape_syntax = "M,N,K or M,N,K,L"
    shape_example = "128,7168,16384"
    layout = TupleLayout(
        names=("a", "b", "sfa_ref", "sfb_ref", "sfa_permuted", "sfb_permuted", "c"),
        reference_scales=(2, 3), permuted_scales=(4, 5), b_operands=(1,), output=6,
        described=("a", "b", "sfa", "sfb", "c"),  # its task.yml's description
    )
    timing = TimingLoop(source="problems/nvidia/eval_better_bench.py")
    detection = Detection(
        name_comments=("nvfp4-gemm", "nvfp4-block-scaled-gemm"),
        description_phrase="block scaled matrix-matrix multiplication",
        reference_markers=("_scaled_mm",),
        reference_absent=("silu", "problem_sizes", "n_padded_128"),
    )
    kernel_api = KernelApi(header="nvfp4_gemm_api.h", function="nvfp4_gemm", arguments=(0, 1, 4, 5, 6),
                           binding="torch_binding.cpp")
    sol_table = {(128, 7168, 16384, 1): 8.994, (128, 4096, 7168, 1): 2.354, (128, 7168, 2048, 1): 1.333}
    # sm_100: the hand-written tcgen05 kernel (compiles in seconds); the CUTLASS one,
    # sm100/nvfp4_gemm_sm100.cu, stays as the fallback behind --kernel.
    default_kernels = {9: "sm90/nvfp4_gemm_sm90.cu", 10: "sm100/nvfp4_gemm_sm100_tc.cu"}
    fallback_submission = "torch_dequant/submission.py"
    trace_case = {"m": 128, "n": 128, "k": 256, "l": 1, "seed": 1111}  # one 128x128x256 tile

    def flops(self, case: Case) -> float:
        return 2.0 * case.m * case.n * case.k * case.l

    def bytes_moved(self, case: Case) -> float:
        """Minimum DRAM traffic: fp4 A and B (2 per byte), one e4m3 scale per 16 of each, fp16 C written."""
        m, n, k = case.m, case.n, case.k
        return float(case.l * ((m + n) * k // 2 + (m + n) * k // 16 + 2 * m * n))

    # The GEMM's modules predate the dims-based API: adapt here.
    def generate_input(self, case: Case, device: str = "cuda", scales: str = "generator") -> tuple[Any, ...]:
        from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input

        return generate_input(case.m, case.n, case.k, case.l, case.seed, device=device, scales=scales)

    def refill_input(self, data: tuple[Any, ...], seed: int, scales: str = "generator") -> None:
        from nvfp4ctl.problems.nvfp4_gemm.inputs import refill_input

        refill_input(data, seed, scales=scales)

    def reference(self, data: tuple[Any, ...]) -> Any:
        from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

        a, b, sfa_ref, sfb_ref = data[:4]
        return reference_gemm(a, b, sfa_ref, sfb_ref)

    def output_of(self, data: tuple[Any, ...]) -> Any:
        return data[6]

    def describe(self, data: tuple[Any, ...]) -> list[str]:
        from nvfp4ctl.problems.common.tensors import describe_flat  # torch: only when there is data

        return describe_flat(self.layout.names, data)

    def explain(self, data: tuple[Any, ...], got: Any, want: Any, wrong: Any, *, rtol: float,
                atol: float) -> list[str]:
        from nvfp4ctl.problems.nvfp4_gemm.diagnose import misread_scale_lines

        return misread_scale_lines(data, got, wrong, who="GEMM", output="C", rtol=rtol, atol=atol)
