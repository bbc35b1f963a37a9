// Decoding the naive kernels share: an e2m1 code's value, an e4m3 byte's value, and where the scale of
// (row, 16-element k block) lives in GPU MODE's permuted scale layout (to_blocked's storage).
#pragma once

#include <cuda_fp8.h>

#include <cstdint>

namespace nvfp4_naive {

__device__ __forceinline__ float e2m1_value(uint32_t code) {
  constexpr float kMagnitudes[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  const float magnitude = kMagnitudes[code & 7u];
  return (code & 8u) ? -magnitude : magnitude;
}

__device__ __forceinline__ float e4m3_value(uint8_t code) {
  __nv_fp8_e4m3 value;
  value.__x = code;
  return static_cast<float>(value);
}

__device__ __forceinline__ int64_t scale_offset(int row, int k_block, int rest_k) {
  return (int64_t(row / 128) * rest_k + k_block / 4) * 512 + (row % 32) * 16 + ((row / 32) % 4) * 4 + k_block % 4;
}

}  // namespace nvfp4_naive
