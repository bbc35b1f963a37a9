"""GPU MODE's nvfp4_dual_gemm: C (m, n, l) fp16 = silu(A·B1ᵀ) ⊙ (A·B2ᵀ), fp4 operands, e4m3 scales per 16 k."""
