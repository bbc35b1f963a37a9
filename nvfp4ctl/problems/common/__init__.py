"""Helpers shared by the NVFP4 family (dual GEMM, grouped GEMM, GEMV); the GEMM's own formats,
layout and scales modules stay in nvfp4_gemm and are imported from there."""
