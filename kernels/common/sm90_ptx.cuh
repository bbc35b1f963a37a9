// Thin PTX wrappers for sm_90a kernels: mbarriers, TMA / bulk copies, wgmma, proxy fences,
// thread-block-cluster barriers and distributed shared memory. One helper per instruction so a
// kernel reads as a list of roles, not a wall of asm.
#pragma once

#include <cstdint>

#include "mbarrier_ptx.cuh"

namespace sm90 {

using ptx_common::smem_addr;
using ptx_common::mbar_init;
using ptx_common::fence_barrier_init;
using ptx_common::mbar_wait;
using ptx_common::global_timer_ns;
using ptx_common::mbar_arrive;
using ptx_common::prefetch_tensor_map;

__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// ---- TMA and bulk copies (completion counted in bytes on an mbarrier) ----
__device__ __forceinline__ void tma_load_2d(void* dst, const void* tensor_map, int x, int y,
                                            uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(x), "r"(y), "r"(smem_addr(bar))
      : "memory");
}

__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

// Generic-proxy shared-memory writes must be fenced before the async proxy (wgmma) reads them.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- shared-memory accesses by 32-bit address (LDS/STS, never generic LD/ST) ----
// volatile + "memory": they stay after the mbarrier wait that makes the data visible.
__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t ld_shared_u16(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u16 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

// ---- wgmma ----
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Pins `reg` at this point of the instruction order: values computed from it cannot be hoisted
// above an earlier wgmma wait (ptxas would then serialize every wgmma, warning C7513).
__device__ __forceinline__ void fence_operand(uint32_t& reg) { asm volatile("" : "+r"(reg)::"memory"); }
__device__ __forceinline__ void fence_operand(float& reg) { asm volatile("" : "+f"(reg)::"memory"); }
// After wgmma_wait: the wait names no registers, so without this the compiler may read accumulators
// (e.g. scale them for C) before it, while the last wgmmas still write them.
template <int kCount>
__device__ __forceinline__ void fence_accumulators(float (&acc)[kCount]) {
#pragma unroll
  for (int j = 0; j < kCount; ++j) fence_operand(acc[j]);
}

// Shared-memory matrix descriptor for a K-major fp16 operand in 128-byte-swizzled atoms
// (8 rows x 128 B, 1024-byte aligned): SBO = 1024 B between 8-row groups, LBO unused.
__device__ __forceinline__ uint64_t make_smem_desc_sw128(uint32_t smem_byte_addr) {
  constexpr uint64_t kStrideByteOffset = 1024;
  constexpr uint64_t kLayoutSwizzle128B = 1;
  return static_cast<uint64_t>((smem_byte_addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) |
         ((kStrideByteOffset >> 4) << 32) | (kLayoutSwizzle128B << 62);
}

// The accumulator operands of the two wgmma wrappers below: their names in the instruction (the
// first 64, then 64..95) and their "+f" bindings to d[], 16 at a time.
#define SM90_WGMMA_D_0_63 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define SM90_WGMMA_D_64_95 \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define SM90_WGMMA_ACC16(i) \
  "+f"(d[(i)]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), \
  "+f"(d[(i) + 4]), "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7]), \
  "+f"(d[(i) + 8]), "+f"(d[(i) + 9]), "+f"(d[(i) + 10]), "+f"(d[(i) + 11]), \
  "+f"(d[(i) + 12]), "+f"(d[(i) + 13]), "+f"(d[(i) + 14]), "+f"(d[(i) + 15])

// D[64 x 128] (+)= A[64 x 16] (registers, fp16) * B[16 x 128] (shared memory, K-major fp16).
__device__ __forceinline__ void wgmma_m64n128k16_rs(float (&d)[64], const uint32_t (&a)[4],
                                                   uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
      "{" SM90_WGMMA_D_0_63 "}, "
      "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}"
      : SM90_WGMMA_ACC16(0), SM90_WGMMA_ACC16(16), SM90_WGMMA_ACC16(32), SM90_WGMMA_ACC16(48)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

// D[64 x 192] (+)= A[64 x 16] (registers, fp16) * B[16 x 192] (shared memory, K-major fp16): the
// wide shared-A tile's wgmma (192 rows of A per CTA).
__device__ __forceinline__ void wgmma_m64n192k16_rs(float (&d)[96], const uint32_t (&a)[4],
                                                   uint64_t desc_b, uint32_t accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %101, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16 "
      "{" SM90_WGMMA_D_0_63 ", " SM90_WGMMA_D_64_95 "}, "
      "{%96, %97, %98, %99}, %100, p, 1, 1, 0;\n}"
      : SM90_WGMMA_ACC16(0), SM90_WGMMA_ACC16(16), SM90_WGMMA_ACC16(32), SM90_WGMMA_ACC16(48),
        SM90_WGMMA_ACC16(64), SM90_WGMMA_ACC16(80)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

#undef SM90_WGMMA_D_0_63
#undef SM90_WGMMA_D_64_95
#undef SM90_WGMMA_ACC16

// ---- launch-wide synchronisation through global memory (all CTAs resident) ----
__device__ __forceinline__ uint32_t ld_acquire_gpu(const uint32_t* addr) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(addr) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t ld_relaxed_gpu(const uint32_t* addr) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(addr) : "memory");
  return v;
}
// After relaxed polls have seen every flag: one fence makes them acquire what the flags released.
__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
__device__ __forceinline__ void st_release_gpu(uint32_t* addr, uint32_t value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(addr), "r"(value) : "memory");
}
// Orders generic-proxy global accesses against async-proxy (TMA) ones: global data written with
// plain stores and read by TMA needs it on both sides of the synchronisation.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}
__device__ __forceinline__ void st_global_v4(void* ptr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(ptr), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

// ---- thread-block clusters and distributed shared memory ----
__device__ __forceinline__ uint32_t cluster_cta_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Named barrier kId (0 is __syncthreads) over kThreads threads (whole warps).
template <int kId, int kThreads>
__device__ __forceinline__ void named_barrier_sync() {
  asm volatile("bar.sync %0, %1;" ::"n"(kId), "n"(kThreads) : "memory");
}
// Arrives at named barrier kId without waiting: the threads that wait on it (bar.sync, same count)
// see every memory access this thread made before arriving.
template <int kId, int kThreads>
__device__ __forceinline__ void named_barrier_arrive() {
  asm volatile("bar.arrive %0, %1;" ::"n"(kId), "n"(kThreads) : "memory");
}

// Per-warpgroup register budget (every warp of the warpgroup executes it): roles that need fewer
// registers give them back so that the math warpgroups can take more than the launch bound's share.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// Every thread of every CTA in the cluster arrives, then waits (release / acquire ordering).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::
                   : "memory");
}

}  // namespace sm90
