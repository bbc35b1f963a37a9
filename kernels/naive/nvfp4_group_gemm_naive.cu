// nvfp4ctl: arch=sm_90a
// nvfp4ctl: no-tensor-op
// A plain CUDA grouped GEMM through nvfp4_group_gemm_api.h: one launch per group, one thread per
// output element, fp32 accumulation of decoded fp4 values times e4m3 scales (permuted layout), one
// rounding to fp16. A correctness baseline and an example of the C ABI, not a fast kernel.
// No architecture-specific code, so --arch sm_100a builds it for a B200 too.
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "nvfp4_group_gemm_api.h"

#include "naive_decode.cuh"

namespace {

using nvfp4_naive::e2m1_value;
using nvfp4_naive::e4m3_value;
using nvfp4_naive::scale_offset;

constexpr int kThreads = 256;
constexpr int kSfVec = 16;

__global__ void group_kernel(Nvfp4GroupProblem problem) {
  const int64_t index = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= int64_t(problem.m) * problem.n) return;
  const int row = int(index / problem.n);
  const int col = int(index % problem.n);
  const int half_k = problem.k / 2;
  const int sf_k = problem.k / kSfVec;
  const int rest_k = (sf_k + 3) / 4;
  const uint8_t* a = problem.a + int64_t(row) * half_k;
  const uint8_t* b = problem.b + int64_t(col) * half_k;
  float sum = 0.f;
  for (int k_block = 0; k_block < sf_k; ++k_block) {
    const float scale = e4m3_value(problem.sfa[scale_offset(row, k_block, rest_k)]) *
                        e4m3_value(problem.sfb[scale_offset(col, k_block, rest_k)]);
    float block = 0.f;
    for (int byte = k_block * kSfVec / 2; byte < (k_block + 1) * kSfVec / 2; ++byte) {
      block += e2m1_value(a[byte]) * e2m1_value(b[byte]) + e2m1_value(a[byte] >> 4) * e2m1_value(b[byte] >> 4);
    }
    sum += block * scale;
  }
  static_cast<__half*>(problem.c)[index] = __float2half_rn(sum);
}

}  // namespace

const char* nvfp4_group_gemm_unsupported(const Nvfp4GroupProblem* problems, int groups) {
  for (int g = 0; g < groups; ++g) {
    if (problems[g].m < 1 || problems[g].n < 1) return "every group needs m, n >= 1";
    if (problems[g].k < 16 || problems[g].k % 16) return "every group's k must be a positive multiple of 16";
  }
  return nullptr;
}

cudaError_t nvfp4_group_gemm_launch(const Nvfp4GroupGemmArgs& args) {
  for (int g = 0; g < args.groups; ++g) {
    const Nvfp4GroupProblem& problem = args.problems[g];
    const int64_t outputs = int64_t(problem.m) * problem.n;
    group_kernel<<<unsigned((outputs + kThreads - 1) / kThreads), kThreads>>>(problem);
  }
  return cudaGetLastError();
}
