// Shared A: while every CTA of the launch is resident at once, the launch first decodes all of A
// once into a global fp16 copy (each thread a few 32-value items, 512 contiguous bytes per warp
// store), then waits on a launch-wide barrier (one flag per CTA), after which every CTA loads its
// fp16 A slices by TMA next to its packed B (sm90_pipeline.cuh, producer_shared_a).
#pragma once

#include <cuda_fp16.h>
#include <cstdint>

#include "sm90_config.cuh"
#include "sm90_decode.cuh"
#include "sm90_ptx.cuh"
#include "sm90_scheduler.cuh"
#include "sm90_timeline.cuh"

namespace nvfp4_sm90 {

// The launch-wide copy of A and the barrier that publishes it. One set per loaded module: two
// launches of the same module running at once (two CUDA queues) would share them, so the
// shared-A path assumes launches of this module are ordered, as the harness and the CLI make them.
__device__ __half g_shared_a[kSharedACapacity];
__device__ __align__(NVFP4_SM90_FLAG_STRIDE_BYTES) uint32_t g_decoded_epoch[kSharedAMaxCtas * kFlagStride];
__device__ __forceinline__ uint32_t* decoded_flag(uint32_t cta) { return &g_decoded_epoch[cta * kFlagStride]; }

// ---- Shared A, step 1: the launch decodes all of A once into g_shared_a ----
// Item = (row of the l*m rows, K tile, word w): word w of the four 16-byte chunks of the row's
// K tile (32 values) and the tile's 8 scales in, 64 contiguous bytes of fp16 out (logical k-steps
// 2w and 2w+1 of the stage, the order the decode warpgroups write to shared memory). The copy is
// then a plain row-major [l*m, k] fp16 matrix that TMA loads with the 128-byte swizzle. Small
// items keep the launch's critical path short; consecutive threads take consecutive words.

// Indices are 32-bit: the copy holds at most kSharedACapacity values (2^19 items), and 64-bit
// division is a long software routine on the launch's critical path.
struct AItem {
  uint32_t row, kt, w;
  uint32_t words[4], sf_words[2];
};

__device__ __forceinline__ AItem load_a_item(const uint8_t* a, const uint8_t* sfa, uint32_t item, int k) {
  const uint32_t k_tiles = uint32_t(k) / BLOCK_K, rest_k = uint32_t(k) / (4 * kSfVec);
  AItem it;
  it.w = item % 4, it.kt = (item / 4) % k_tiles, it.row = item / (4 * k_tiles);
  const uint8_t* packed = a + it.row * (k / 2) + it.kt * PACKED_ROW_BYTES + 4 * it.w;
#pragma unroll
  for (int t = 0; t < 4; ++t) it.words[t] = __ldg(reinterpret_cast<const uint32_t*>(packed + 16 * t));
  // scale chunks of 4 k-blocks x 128 rows: this row's k-blocks 8kt..8kt+3 and 8kt+4..8kt+7
  const uint8_t* sf_row = sfa + (it.row / 128) * rest_k * 512 + scale_offset(int(it.row % 128), 0);
  it.sf_words[0] = __ldg(reinterpret_cast<const uint32_t*>(sf_row + (2 * it.kt) * 512));
  it.sf_words[1] = __ldg(reinterpret_cast<const uint32_t*>(sf_row + (2 * it.kt + 1) * 512));
  return it;
}

// Item i's 64 bytes land at byte 64 i of the copy (logical k-steps 2w, 2w+1 of its row's K tile),
// and a warp's 32 items are consecutive, so the warp writes 2 KB in one piece. Each lane's four
// 16-byte groups go through a 2 KB shared-memory buffer of the warp so that every global store
// instruction writes 512 contiguous bytes (whole sectors) instead of 16 bytes every 64.
__device__ __forceinline__ void store_a_items_of_warp(const AItem& it, uint32_t item, uint32_t staging,
                                                      const nvfp4_decode::E2m1Table& table) {
  const uint32_t lane = threadIdx.x % 32;
  const RowWordFp16 d = decode_row_word(it.words, it.sf_words, int(it.w), table);
#if !NVFP4_SM90_EXPERIMENT(UNSTAGED_A_STORES)
#pragma unroll
  for (int j = 0; j < 4; ++j)
    sm90::st_shared_v4(staging + lane * 64 + 16 * j, d.group[j][0], d.group[j][1], d.group[j][2], d.group[j][3]);
  __syncwarp();
  uint8_t* out = reinterpret_cast<uint8_t*>(g_shared_a) + (item - lane) * 64 + lane * 16;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint4 v = sm90::ld_shared_v4(staging + lane * 16 + 512 * j);
    sm90::st_global_v4(out + 512 * j, v.x, v.y, v.z, v.w);
  }
  __syncwarp();  // the buffer is reused by the next item
#else
  (void)staging;
  uint8_t* out = reinterpret_cast<uint8_t*>(g_shared_a) + item * 64;
#pragma unroll
  for (int j = 0; j < 4; ++j) sm90::st_global_v4(out + 16 * j, d.group[j][0], d.group[j][1], d.group[j][2], d.group[j][3]);
#endif
}

// Every copying thread takes items thread, thread + threads, ... and loads up to kAItemsInFlight
// (sm90_config.cuh) of them before decoding any: one DRAM latency per round, and the rounds are as
// even as the item count allows (the launch waits for its slowest thread).

__device__ __forceinline__ uint32_t a_copy_items(int rows, int k) { return uint32_t(rows) * uint32_t(k / BLOCK_K) * 4; }

// Threads per CTA that copy: the first `setup_free` (every warp but the producer's, which sets up the
// barriers and issues the first loads meanwhile) where one round of theirs covers the copy, else all
// of them. With one round, the producer warp's items would start last and hold its CTA's arrival back.
__device__ __forceinline__ uint32_t a_copy_threads(int rows, int k, uint32_t setup_free) {
  const uint32_t ctas = gridDim.x * gridDim.y * gridDim.z;
  return a_copy_items(rows, k) <= kAItemsInFlight * ctas * setup_free ? setup_free : blockDim.x;
}

// Items come in whole warps: the item count is a multiple of 512 and every warp's first item a
// multiple of 32, so a warp's items are all valid or all past the end. Threads from copy_threads on
// (whole warps) take none.
__device__ __forceinline__ void decode_a_to_global(const uint8_t* a, const uint8_t* sfa, int rows, int k,
                                                   uint32_t copy_threads, uint32_t staging,
                                                   const nvfp4_decode::E2m1Table& table) {
  if (threadIdx.x >= copy_threads) return;
  const uint32_t items = a_copy_items(rows, k);
  const uint32_t threads = gridDim.x * gridDim.y * gridDim.z * copy_threads;
  for (uint32_t first = linear_cta() * copy_threads + threadIdx.x; first < items; first += kAItemsInFlight * threads) {
    AItem round[kAItemsInFlight];
#pragma unroll
    for (int u = 0; u < kAItemsInFlight; ++u)
      if (first + u * threads < items) round[u] = load_a_item(a, sfa, first + u * threads, k);
#pragma unroll
    for (int u = 0; u < kAItemsInFlight; ++u)
      if (first + u * threads < items) store_a_items_of_warp(round[u], first + u * threads, staging, table);
  }
}

// ---- Shared A, step 2: a launch-wide barrier (every CTA is resident: the host checks) ----
// Every launch carries a new epoch (a host-side launch count, never 0). A CTA whose threads have
// stored their share of A (they passed a __syncthreads) publishes it by writing the epoch into its
// own flag with release semantics; the producer warp's lanes each watch a few flags, kFlagStride
// words apart. No atomics: one counter that every CTA incremented cost ~1.5 us of same-address
// serialisation (H100).
__device__ __forceinline__ void grid_arrive(uint32_t epoch) { sm90::st_release_gpu(decoded_flag(linear_cta()), epoch); }

// Called by the whole producer warp; afterwards lane 0 may read the copy with TMA.
__device__ __forceinline__ void grid_wait(uint32_t epoch, int lane) {
#if !NVFP4_SM90_EXPERIMENT(ABLATE_GRID_BARRIER)
  const uint32_t num_ctas = gridDim.x * gridDim.y * gridDim.z;
  const uint64_t start = sm90::global_timer_ns();
  // each lane polls all of its flags at once (one round trip per poll, not one per flag)
  uint32_t pending = 0;  // bit i: flag lane + 32 i not seen yet
  for (uint32_t i = 0; lane + 32 * i < num_ctas; ++i) pending |= 1u << i;
  while (pending != 0) {
    uint32_t seen[kSharedAMaxCtas / 32];
#pragma unroll
    for (int i = 0; i < kSharedAMaxCtas / 32; ++i)
      if (pending & (1u << i)) seen[i] = poll_flag(decoded_flag(lane + 32 * i));
#pragma unroll
    for (int i = 0; i < kSharedAMaxCtas / 32; ++i)
      if ((pending & (1u << i)) && seen[i] == epoch) pending &= ~(1u << i);
    if (pending == 0) break;
    if (NVFP4_SM90_BARRIER_POLL_SLEEP_NS > 0) __nanosleep(NVFP4_SM90_BARRIER_POLL_SLEEP_NS);
    // Not every CTA is resident (another process holds SMs?): fail the launch instead of hanging.
    // No printf here: a call in the kernel makes ptxas serialise every wgmma (C7510).
    if (sm90::global_timer_ns() - start > kGridBarrierTimeoutNs) __trap();
  }
  if (lane == 0) timeline_mark(kFlagsSeen);
  acquire_polled_flags();
  __syncwarp();                      // every lane's acquire happens before lane 0's TMA
  sm90::fence_proxy_async_global();  // the copy was written by plain stores; TMA reads it next
#else
  (void)epoch, (void)lane;
#endif
}

}  // namespace nvfp4_sm90
