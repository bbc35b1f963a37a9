// The host entry an nvfp4ctl GEMV kernel implements: c[:, 0, l] = A_l · b_l.
// Torch-free so the kernel compiles on its own with nvcc; nvfp4_gemv_binding.cpp adapts torch
// tensors to it. A kernel that includes this header is built with that binding.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

// Operands exactly as GPU MODE's nvfp4_gemv generate_input lays them out (K-major, batch outermost):
//   a   : fp4 e2m1, two per byte, [l][m][k/2]
//   b   : fp4 e2m1, two per byte, [l][128][k/2]: padded to 128 rows; only row 0 is the vector
//   sfa : e4m3 scales in the permuted (32, 4, rest_m, 4, rest_k, l) layout (tuple index 4), byte of
//         (row r, k-block j) at ((r / 128) * rest_k + j / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + j % 4
//   sfb : the same for b's 128 padded rows (tuple index 5); row 0's scales are the vector's
//   c   : fp16 [l][m] (the (m, 1, l) tensor's storage)
struct Nvfp4GemvArgs {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* sfa;
  const uint8_t* sfb;
  void* c;
  int m;
  int k;
  int l;
};

// nullptr when this kernel supports the shape, else one line naming the violated constraint.
const char* nvfp4_gemv_unsupported(int m, int k, int l);

// Launches on the default launch queue; returns the launch error, if any; never synchronizes.
cudaError_t nvfp4_gemv_launch(const Nvfp4GemvArgs& args);
