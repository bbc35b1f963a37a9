// The host entry an nvfp4ctl grouped-GEMM kernel implements: C_g = A_g·B_gᵀ for every group g.
// Torch-free so the kernel compiles on its own with nvcc; nvfp4_group_gemm_binding.cpp adapts GPU
// MODE's lists of tensors to it. A kernel that includes this header is built with that binding.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

// One group, exactly as GPU MODE's nvfp4_group_gemm generate_input lays it out (l = 1, K-major):
//   a   : fp4 e2m1, two per byte, [m][k/2]          (abc_tensors[g][0])
//   b   : fp4 e2m1, two per byte, [n][k/2]          (abc_tensors[g][1])
//   sfa : e4m3 scales, permuted (32, 4, rest_m, 4, rest_k, 1) layout (sfasfb_reordered_tensors[g][0]);
//         byte of (row r, k-block j) at ((r / 128) * rest_k + j / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + j % 4
//   sfb : the same for b's n rows                   (sfasfb_reordered_tensors[g][1])
//   c   : fp16 [m][n]                               (abc_tensors[g][2])
struct Nvfp4GroupProblem {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* sfa;
  const uint8_t* sfb;
  void* c;
  int m;
  int n;
  int k;
};

// `problems` is a HOST array of `groups` entries (device pointers inside); a kernel that wants them
// on the device copies them itself.
struct Nvfp4GroupGemmArgs {
  const Nvfp4GroupProblem* problems;
  int groups;
};

// nullptr when this kernel supports every group's shape, else one line naming the violated constraint.
const char* nvfp4_group_gemm_unsupported(const Nvfp4GroupProblem* problems, int groups);

// Launches on the default launch queue; returns the launch error, if any; never synchronizes.
cudaError_t nvfp4_group_gemm_launch(const Nvfp4GroupGemmArgs& args);
