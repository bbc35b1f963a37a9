// nvfp4ctl: arch=sm_90a
// nvfp4ctl: no-tensor-op
// A plain CUDA dual GEMM through nvfp4_dual_gemm_api.h: one thread per output element, both
// products accumulated in fp32 from decoded fp4 values and e4m3 scales read in the permuted layout,
// then silu(first) * second rounded once to fp16. A correctness baseline and an example of the C
// ABI (`nvfp4ctl check --kernel kernels/naive/nvfp4_dual_gemm_naive.cu`), not a fast kernel.
// No tensor cores and no architecture-specific code, so --arch sm_100a builds it for a B200 too.
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "nvfp4_dual_gemm_api.h"

#include "naive_decode.cuh"

namespace {

using nvfp4_naive::e2m1_value;
using nvfp4_naive::e4m3_value;
using nvfp4_naive::scale_offset;

constexpr int kThreads = 256;
constexpr int kSfVec = 16;  // fp4 elements per scale

// Byte of (row, k-block) inside one batch of the permuted scale layout.
__global__ void dual_gemm_kernel(Nvfp4DualGemmArgs args) {
  const int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t per_batch = int64_t(args.m) * args.n;
  if (index >= per_batch * args.l) return;
  const int batch = int(index / per_batch);
  const int row = int((index % per_batch) / args.n);
  const int col = int(index % args.n);
  const int half_k = args.k / 2;
  const int sf_k = args.k / kSfVec;
  const int rest_k = (sf_k + 3) / 4;
  const int64_t sfa_batch = int64_t((args.m + 127) / 128) * rest_k * 512;
  const int64_t sfb_batch = int64_t((args.n + 127) / 128) * rest_k * 512;
  const uint8_t* a = args.a + (int64_t(batch) * args.m + row) * half_k;
  const uint8_t* b1 = args.b1 + (int64_t(batch) * args.n + col) * half_k;
  const uint8_t* b2 = args.b2 + (int64_t(batch) * args.n + col) * half_k;
  float first = 0.f, second = 0.f;
  for (int k_block = 0; k_block < sf_k; ++k_block) {
    const float sa = e4m3_value(args.sfa[batch * sfa_batch + scale_offset(row, k_block, rest_k)]);
    const float s1 = e4m3_value(args.sfb1[batch * sfb_batch + scale_offset(col, k_block, rest_k)]);
    const float s2 = e4m3_value(args.sfb2[batch * sfb_batch + scale_offset(col, k_block, rest_k)]);
    float block1 = 0.f, block2 = 0.f;
    for (int byte = k_block * kSfVec / 2; byte < (k_block + 1) * kSfVec / 2; ++byte) {
      const uint8_t pa = a[byte], p1 = b1[byte], p2 = b2[byte];
      const float a_lo = e2m1_value(pa), a_hi = e2m1_value(pa >> 4);
      block1 += a_lo * e2m1_value(p1) + a_hi * e2m1_value(p1 >> 4);
      block2 += a_lo * e2m1_value(p2) + a_hi * e2m1_value(p2 >> 4);
    }
    first += block1 * sa * s1;
    second += block2 * sa * s2;
  }
  const float silu = first / (1.f + __expf(-first));
  static_cast<__half*>(args.c)[index] = __float2half_rn(silu * second);
}

}  // namespace

const char* nvfp4_dual_gemm_unsupported(int m, int n, int k, int l) {
  if (m < 1 || n < 1 || l < 1) return "m, n and l must be positive";
  if (k < 16 || k % 16) return "k must be a positive multiple of 16 (one scale per 16 elements)";
  return nullptr;
}

cudaError_t nvfp4_dual_gemm_launch(const Nvfp4DualGemmArgs& args) {
  const int64_t outputs = int64_t(args.m) * args.n * args.l;
  const unsigned blocks = unsigned((outputs + kThreads - 1) / kThreads);
  dual_gemm_kernel<<<blocks, kThreads>>>(args);
  return cudaGetLastError();
}
