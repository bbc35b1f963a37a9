"""GPU MODE's nvfp4_gemv: c (m, 1, l) fp16 = A (m, k, l) fp4 · b (k, l) fp4, e4m3 scales per 16 k."""
