// PTX wrappers the sm_90a and sm_100a kernels share: shared-memory addresses, mbarriers, the ring
// state their pipelines wait with, and the tensor-map prefetch. Each kernel's own header (sm90_ptx.cuh, sm100_ptx.cuh) brings them into its
// namespace.
#pragma once

#include <cstdint>

namespace ptx_common {

__device__ __forceinline__ uint32_t smem_addr(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

// ---- mbarrier ----
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t arrive_count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrive_count));
}

// Makes barrier initialisation visible to the async proxy (TMA) and to the cluster.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t phase) {
  const uint32_t addr = smem_addr(bar);
  uint32_t done;
  do {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(addr), "r"(phase)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

__device__ __forceinline__ void prefetch_tensor_map(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(tensor_map)) : "memory");
}


// The parity a ring of mbarriers waits on: ring position of a pipeline of kDepth slots; `phase` flips each time the ring wraps.
template <int kDepth>
struct PipelineState {
  int stage_idx = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance_pipeline() {
    stage_idx = stage_idx + 1 == kDepth ? 0 : stage_idx + 1;
    phase ^= stage_idx == 0 ? 1u : 0u;
  }
};

}  // namespace ptx_common
