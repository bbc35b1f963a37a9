# Test fixture (written for nvfp4ctl): the structure of public GPU MODE nvfp4_gemm submissions that
# drive tcgen05 with hand-written PTX inside a load_inline string -- module-level source strings
# joined with +, an f-string for the tile constants, -gencode for sm_100a in extra_cuda_cflags.
# One 128xBLOCK_N tile per CTA, no TMA (threads copy the K-major operands into shared memory in the
# non-swizzled core-matrix layout), scales copied to TMEM by tcgen05.cp; compiles, not tuned.
import torch
from torch.utils.cpp_extension import load_inline

BLOCK_M = 128
BLOCK_N = 128
BLOCK_K = 256

HEADER = r"""
#include <cstdint>
#include <cstdio>
#include <cuda_fp16.h>
#include <torch/extension.h>

#ifndef NVFP4CTL_UMMA_DUMP
#define NVFP4CTL_UMMA_DUMP 0
#endif
#if NVFP4CTL_UMMA_DUMP
#define NVFP4CTL_UMMA_PRINT(k, idesc, da, db, td, tsa, tsb, acc)                                              \
  printf("nvfp4ctl:umma k=%d idesc=0x%08x desc_a=0x%016llx desc_b=0x%016llx tmem_d=0x%08x tmem_sfa=0x%08x " \
         "tmem_sfb=0x%08x acc=%d\n", (int)(k), (unsigned)(idesc), (unsigned long long)(da),                   \
         (unsigned long long)(db), (unsigned)(td), (unsigned)(tsa), (unsigned)(tsb), (int)(acc))
#else
#define NVFP4CTL_UMMA_PRINT(...)
#endif
"""

CONSTANTS = f"""
constexpr int BLOCK_M = {BLOCK_M};
constexpr int BLOCK_N = {BLOCK_N};
constexpr int BLOCK_K = {BLOCK_K};
"""

KERNEL = r"""
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// K-major, no swizzle: core matrices of 8 rows x 16 bytes; LBO = K-adjacent, SBO = M/N-adjacent.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t((addr & 0x3FFFF) >> 4)) | (uint64_t(lbo >> 4) << 16) | (uint64_t(sbo >> 4) << 32) | (1ull << 46);
}

__device__ __forceinline__ uint32_t idesc_mxf4nvf4(int m, int n) {
  return (1u << 7) | (1u << 10) | (uint32_t(n >> 3) << 17) | (uint32_t(m >> 4) << 24);
}

__global__ void __launch_bounds__(128) nvfp4_tile_kernel(const uint8_t* a, const uint8_t* b, const uint8_t* sfa,
                                                         const uint8_t* sfb, half* c, int m, int n, int k) {
  __shared__ alignas(1024) uint8_t sa[BLOCK_M * BLOCK_K / 2];
  __shared__ alignas(1024) uint8_t sb[BLOCK_N * BLOCK_K / 2];
  __shared__ alignas(128) uint8_t ssfa[512 * 4];
  __shared__ alignas(128) uint8_t ssfb[512 * 4];
  __shared__ alignas(8) uint64_t done_bar;
  __shared__ uint32_t tmem_base;
  const int warp = threadIdx.x / 32;
  const int m0 = blockIdx.y * BLOCK_M, n0 = blockIdx.x * BLOCK_N;
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" :: "r"(smem_u32(&tmem_base)), "r"(256));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
  }
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&done_bar)));
  asm volatile("tcgen05.fence::before_thread_sync;");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;");
  const uint32_t tmem_d = tmem_base, tmem_sfa = tmem_base + BLOCK_N, tmem_sfb = tmem_sfa + 16;
  const uint32_t idesc = idesc_mxf4nvf4(BLOCK_M, BLOCK_N);
  int phase = 0;
  for (int k0 = 0; k0 < k; k0 += BLOCK_K) {
    // core matrix (row group g, 16-byte K chunk j) at (j * rows / 8 + g) * 128
    for (int i = threadIdx.x; i < BLOCK_M * BLOCK_K / 32; i += blockDim.x) {
      const int row = i % BLOCK_M, chunk = i / BLOCK_M;
      *reinterpret_cast<uint4*>(&sa[(chunk * BLOCK_M / 8 + row / 8) * 128 + (row % 8) * 16]) =
          *reinterpret_cast<const uint4*>(&a[size_t(m0 + row) * (k / 2) + k0 / 2 + chunk * 16]);
    }
    for (int i = threadIdx.x; i < BLOCK_N * BLOCK_K / 32; i += blockDim.x) {
      const int row = i % BLOCK_N, chunk = i / BLOCK_N;
      *reinterpret_cast<uint4*>(&sb[(chunk * BLOCK_N / 8 + row / 8) * 128 + (row % 8) * 16]) =
          *reinterpret_cast<const uint4*>(&b[size_t(n0 + row) * (k / 2) + k0 / 2 + chunk * 16]);
    }
    for (int i = threadIdx.x; i < 512; i += blockDim.x) {  // four 512-byte atoms: one per K step
      const int atom_k = k0 / 64;
      reinterpret_cast<uint32_t*>(ssfa)[i] = reinterpret_cast<const uint32_t*>(sfa + (size_t(m0 / 128) * (k / 64) + atom_k) * 512)[i];
      reinterpret_cast<uint32_t*>(ssfb)[i] = reinterpret_cast<const uint32_t*>(sfb + (size_t(n0 / 128) * (k / 64) + atom_k) * 512)[i];
    }
    asm volatile("fence.proxy.async.shared::cta;");
    __syncthreads();
    if (threadIdx.x == 0) {
      asm volatile("tcgen05.fence::after_thread_sync;");
      for (int step = 0; step < BLOCK_K / 64; ++step) {
        const uint64_t sf_desc_a = smem_desc(smem_u32(ssfa + step * 512), 16, 128);
        const uint64_t sf_desc_b = smem_desc(smem_u32(ssfb + step * 512), 16, 128);
        asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" :: "r"(tmem_sfa + 4 * step), "l"(sf_desc_a));
        asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" :: "r"(tmem_sfb + 4 * step), "l"(sf_desc_b));
        const uint64_t da = smem_desc(smem_u32(sa) + step * 2 * BLOCK_M * 16, BLOCK_M * 16, 128);
        const uint64_t db = smem_desc(smem_u32(sb) + step * 2 * BLOCK_N * 16, BLOCK_N * 16, 128);
        const int acc = (k0 > 0 || step > 0);
        if (blockIdx.x == 0 && blockIdx.y == 0 && k0 == 0) {
          NVFP4CTL_UMMA_PRINT(step, idesc, da, db, tmem_d, tmem_sfa + 4 * step, tmem_sfb + 4 * step, acc);
        }
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                     "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%0], %1, %2, %3, [%5], [%6], p;\n}\n"
                     :: "r"(tmem_d), "l"(da), "l"(db), "r"(idesc), "r"(acc), "r"(tmem_sfa + 4 * step), "r"(tmem_sfb + 4 * step));
      }
      asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(smem_u32(&done_bar)));
    }
    asm volatile("{\n.reg .pred done;\nwait_%=:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait_%=;\n}\n" :: "r"(smem_u32(&done_bar)), "r"(phase));
    phase ^= 1;
    asm volatile("tcgen05.fence::after_thread_sync;");
  }
  // D: lane = row (warp w reads lanes 32w..32w+31), 8 fp32 columns per load
  for (int col = 0; col < BLOCK_N; col += 8) {
    uint32_t v[8];
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8];"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7])
                 : "r"(tmem_d + ((warp * 32) << 16) + col));
    asm volatile("tcgen05.wait::ld.sync.aligned;");
    const int row = m0 + warp * 32 + threadIdx.x % 32;
    for (int j = 0; j < 8; ++j) c[size_t(row) * n + n0 + col + j] = __float2half(__uint_as_float(v[j]));
  }
  __syncthreads();
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" :: "r"(tmem_base), "r"(256));
}

torch::Tensor nvfp4_gemm(torch::Tensor a, torch::Tensor b, torch::Tensor sfa, torch::Tensor sfb, torch::Tensor c) {
  const int m = c.size(0), n = c.size(1), k = a.size(1) * 2;
  nvfp4_tile_kernel<<<dim3(n / BLOCK_N, m / BLOCK_M), 128>>>(
      reinterpret_cast<const uint8_t*>(a.data_ptr()), reinterpret_cast<const uint8_t*>(b.data_ptr()),
      reinterpret_cast<const uint8_t*>(sfa.data_ptr()), reinterpret_cast<const uint8_t*>(sfb.data_ptr()),
      reinterpret_cast<half*>(c.data_ptr()), m, n, k);
  return c;
}
"""

CUDA_SRC = HEADER + CONSTANTS + KERNEL
CPP_SRC = "torch::Tensor nvfp4_gemm(torch::Tensor a, torch::Tensor b, torch::Tensor sfa, torch::Tensor sfb, torch::Tensor c);"

_module = None


def _load():
    global _module
    if _module is None:
        _module = load_inline(
            name="nvfp4_ptx_tcgen05",
            cpp_sources=[CPP_SRC],
            cuda_sources=[CUDA_SRC],
            functions=["nvfp4_gemm"],
            extra_cuda_cflags=["-O3", "-gencode=arch=compute_100a,code=sm_100a", "--use_fast_math"],
        )
    return _module


def custom_kernel(data):
    a, b, _sfa_ref, _sfb_ref, sfa_permuted, sfb_permuted, c = data
    return _load().nvfp4_gemm(a[:, :, 0], b[:, :, 0], sfa_permuted, sfb_permuted, c[:, :, 0])
