// The host entry an nvfp4ctl dual-GEMM kernel implements: C = silu(A·B1ᵀ) ⊙ (A·B2ᵀ).
// Torch-free so the kernel compiles on its own with nvcc; nvfp4_dual_gemm_binding.cpp adapts torch
// tensors to it. A kernel that includes this header is built with that binding (nvfp4ctl build,
// check --kernel, bench --kernel, export).
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

// Operands exactly as GPU MODE's nvfp4_dual_gemm generate_input lays them out (K-major, batch
// outermost), the permuted scales at tuple indices 6, 7, 8:
//   a        : fp4 e2m1, two per byte, [l][m][k/2]
//   b1, b2   : fp4 e2m1, two per byte, [l][n][k/2]
//   sfa      : e4m3 scales in the permuted (32, 4, rest_m, 4, rest_k, l) layout, per batch one block
//              of rest_m * rest_k * 512 bytes; byte of (row r, k-block j) at
//              ((r / 128) * rest_k + j / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + j % 4
//   sfb1/sfb2: the same for the n rows of b1 / b2
//   c        : fp16 [l][m][n]
// Both products are meant to be accumulated in fp32; silu and the product in fp32; one rounding to fp16.
struct Nvfp4DualGemmArgs {
  const uint8_t* a;
  const uint8_t* b1;
  const uint8_t* b2;
  const uint8_t* sfa;
  const uint8_t* sfb1;
  const uint8_t* sfb2;
  void* c;
  int m;
  int n;
  int k;
  int l;
};

// nullptr when this kernel supports the shape, else one line naming the violated constraint.
const char* nvfp4_dual_gemm_unsupported(int m, int n, int k, int l);

// Launches on the default launch queue; returns the launch error, if any; never synchronizes.
cudaError_t nvfp4_dual_gemm_launch(const Nvfp4DualGemmArgs& args);
