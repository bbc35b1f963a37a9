// The one host entry every nvfp4ctl GEMM kernel implements (sm90, sm100, ...).
// Kept free of torch so a kernel file compiles on its own with nvcc (resource report, SASS check);
// torch_binding.cpp adapts torch tensors to it.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

// Operands exactly as GPU MODE's generate_input lays them out (all K-major, batch outermost):
//   a   : fp4 e2m1, two per byte, [l][m][k/2]   (the (m, k/2, l) tensor's storage)
//   b   : fp4 e2m1, two per byte, [l][n][k/2]
//   sfa : e4m3 scales in the permuted (32, 4, rest_m, 4, rest_k, l) layout; per batch one
//         contiguous block of rest_m * rest_k * 512 bytes, byte of (row r, k-block j) at
//         ((r / 128) * rest_k + j / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + j % 4
//   sfb : the same for b's n rows
//   c   : fp16 [l][m][n]
// Every pointer 16-byte aligned (TMA and bulk copies read the operands, C may be stored 16 bytes at a
// time); torch allocations are.
struct Nvfp4GemmArgs {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* sfa;
  const uint8_t* sfb;
  void* c;
  int m;
  int n;
  int k;
  int l;
};

// nullptr when this kernel supports the shape, else one line naming the violated constraint.
const char* nvfp4_gemm_unsupported(int m, int n, int k, int l);

// Launches on the default launch queue (no explicit queue argument: the competition forbids the
// word that names it). Returns the launch error, if any; never synchronizes.
cudaError_t nvfp4_gemm_launch(const Nvfp4GemmArgs& args);
