// nvfp4ctl: arch=sm_90a
// nvfp4ctl: no-tensor-op
// A plain CUDA GEMV through nvfp4_gemv_api.h: one thread per output row, fp32 accumulation of
// decoded fp4 values times e4m3 scales (permuted layout), one rounding to fp16. A correctness
// baseline and an example of the C ABI (`nvfp4ctl check --kernel kernels/naive/nvfp4_gemv_naive.cu`).
// No architecture-specific code, so --arch sm_100a builds it for a B200 too.
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "nvfp4_gemv_api.h"

#include "naive_decode.cuh"

namespace {

using nvfp4_naive::e2m1_value;
using nvfp4_naive::e4m3_value;
using nvfp4_naive::scale_offset;

constexpr int kThreads = 128;
constexpr int kSfVec = 16;
constexpr int kPaddedRows = 128;  // b and its scales are padded to 128 rows; row 0 is the vector

__global__ void gemv_kernel(Nvfp4GemvArgs args) {
  const int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= int64_t(args.m) * args.l) return;
  const int batch = int(index / args.m);
  const int row = int(index % args.m);
  const int half_k = args.k / 2;
  const int sf_k = args.k / kSfVec;
  const int rest_k = (sf_k + 3) / 4;
  const int64_t sfa_batch = int64_t((args.m + 127) / 128) * rest_k * 512;
  const int64_t sfb_batch = int64_t(rest_k) * 512;  // 128 padded rows: one row block
  const uint8_t* a = args.a + (int64_t(batch) * args.m + row) * half_k;
  const uint8_t* b = args.b + int64_t(batch) * kPaddedRows * half_k;  // row 0 of the batch
  float sum = 0.f;
  for (int k_block = 0; k_block < sf_k; ++k_block) {
    const float sa = e4m3_value(args.sfa[batch * sfa_batch + scale_offset(row, k_block, rest_k)]);
    const float sb = e4m3_value(args.sfb[batch * sfb_batch + scale_offset(0, k_block, rest_k)]);
    float block = 0.f;
    for (int byte = k_block * kSfVec / 2; byte < (k_block + 1) * kSfVec / 2; ++byte) {
      block += e2m1_value(a[byte]) * e2m1_value(b[byte]) + e2m1_value(a[byte] >> 4) * e2m1_value(b[byte] >> 4);
    }
    sum += block * sa * sb;
  }
  static_cast<__half*>(args.c)[index] = __float2half_rn(sum);  // c storage is [l][m]
}

}  // namespace

const char* nvfp4_gemv_unsupported(int m, int k, int l) {
  if (m < 1 || l < 1) return "m and l must be positive";
  if (k < 16 || k % 16) return "k must be a positive multiple of 16 (one scale per 16 elements)";
  return nullptr;
}

cudaError_t nvfp4_gemv_launch(const Nvfp4GemvArgs& args) {
  const int64_t outputs = int64_t(args.m) * args.l;
  gemv_kernel<<<unsigned((outputs + kThreads - 1) / kThreads), kThreads>>>(args);
  return cudaGetLastError();
}
