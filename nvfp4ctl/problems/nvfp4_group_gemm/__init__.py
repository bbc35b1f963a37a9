"""GPU MODE's nvfp4_group_gemm: g independent GEMMs C_i (m_i, n_i, 1) fp16 = A_i · B_iᵀ, NVFP4 operands."""
