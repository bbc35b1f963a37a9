"""GPU MODE's nvfp4_gemm: C (m, n, l) fp16 = A (m, k, l) fp4 x B (n, k, l) fp4, e4m3 scales per 16 k."""
