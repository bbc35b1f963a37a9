// PTX wrappers the sm_90a and sm_100a kernels share: shared-memory addresses, mbarriers, the ring
// state their pipelines wait with, the global timer their bounded waits read, and the tensor-map
// prefetch. Each kernel's own header (sm90_ptx.cuh, sm100_ptx.cuh) brings them into its namespace.
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

// One try: true once the phase of parity `phase` has completed. The hardware may hold the thread a
// while before it answers false, so a failed try is not a busy spin.
__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, uint32_t phase) {
  uint32_t done;
  asm volatile(
      "{\n .reg .pred p;\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      " selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(phase)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t phase) {
  while (!mbar_try_wait(bar, phase)) {
  }
}

__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// mbar_wait that traps after kTimeoutNs instead of hanging the GPU (a missed phase, an expect-tx
// byte count the copies never deliver). The timer is read only every kPollsPerTimerCheck failed
// tries, and first at that point: a wait that succeeds early runs the same tries as mbar_wait.
constexpr uint32_t kPollsPerTimerCheck = 1024;
template <uint64_t kTimeoutNs>
__device__ __forceinline__ void mbar_wait_or_trap(uint64_t* bar, uint32_t phase) {
  static_assert(kTimeoutNs >= 1000000ull, "a bounded wait's limit must be far above any real wait");
  uint64_t start = 0;
  for (uint32_t failed = 1; !mbar_try_wait(bar, phase); ++failed) {
    if (failed % kPollsPerTimerCheck != 0) continue;
    const uint64_t now = global_timer_ns();
    if (failed == kPollsPerTimerCheck) start = now;
    else if (now - start > kTimeoutNs) __trap();
  }
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
