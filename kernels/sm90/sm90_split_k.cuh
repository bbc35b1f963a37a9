// Split-K for the sm_90a NVFP4 GEMM: the L2 workspace of fp32 partials, the three ways the CTAs of
// one output tile meet (a hardware cluster barrier in the kernel; global flags for a software split,
// meet_partners; a spanning split's hand-over and shared reduction, span_epilogue), and the
// epilogue that sums a tile's partials in K order and writes fp16 C (reduce_and_store_l2).
#pragma once

#include <cuda_fp16.h>
#include <cstdint>
#include <type_traits>

#include "sm90_config.cuh"
#include "sm90_decode.cuh"  // kOutputUnscale
#include "sm90_ptx.cuh"
#include "sm90_scheduler.cuh"
#include "sm90_timeline.cuh"

namespace nvfp4_sm90 {

// Split-K partials through L2. Math thread t of every CTA of a cluster holds the same (B row, A row)
// positions of the C^T tile, so the exchange needs no transposition: each CTA stores the float4
// groups acc[4j..4j+3] it does not own into its slot of a workspace, [group j][math thread]
// (16-byte stores, 512 contiguous bytes per warp), one cluster barrier, then the owner of group j
// adds the same thread's group from every slot in rank order (deterministic)
// and writes fp16 C from registers. Owner o of a cluster of kClusterK holds groups
// [kAccGroups * o / kClusterK, kAccGroups * (o + 1) / kClusterK). DSMEM moved these bytes at
// ~13 GB/s per SM (2.5 us for a cluster of 2 on an H100, timeline of v8; v9 replaced it).

// The split-K workspace: one slot per CTA of a split (two per spanning CTA, parts - 1 per tile of a
// persistent launch); same ordering assumption as the shared A copy.
__device__ float4 g_split_partials[kL2PartialSlots][kAccGroups][kMathThreads];
// Software split (no hardware cluster): slot s's partials are complete once its flag holds the launch's epoch.
__device__ __align__(NVFP4_SM90_FLAG_STRIDE_BYTES) uint32_t g_split_epoch[kL2PartialSlots * kFlagStride];
__device__ __forceinline__ uint32_t* split_flag(int slot) { return &g_split_epoch[slot * kFlagStride]; }

// A warp waits until every lane has seen its slot's flag at the launch's epoch (a lane with
// seen = true watches none), polling all at once: one round trip per poll.
template <typename SlotOf>
__device__ __forceinline__ void await_split_flags(bool seen, int lane, SlotOf slot_of, uint32_t epoch) {
  const uint64_t start = sm90::global_timer_ns();
  while (!__all_sync(0xffffffffu, seen)) {
    if (!seen) seen = poll_flag(split_flag(slot_of(lane))) == epoch;
    if (sm90::global_timer_ns() - start > kGridBarrierTimeoutNs) __trap();  // a partner never ran
  }
  acquire_polled_flags();
  __syncwarp();  // every lane's acquire happens before what the warp does next
}

// Accumulator group j (4 floats) of a math thread (64 accumulators; 96 in a wide tile).
template <int kAcc>
__device__ __forceinline__ float4 acc_group(const float (&acc)[kAcc], int j) {
  return make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
}

// The groups outside [kSkipBegin, kSkipEnd) to workspace slot `slot`: 16-byte stores, 512 contiguous
// bytes per warp.
template <int kSkipBegin, int kSkipEnd>
__device__ __forceinline__ void store_groups_l2(const float (&acc)[64], int math_thread, int slot) {
#pragma unroll
  for (int j = 0; j < kAccGroups; ++j)
    if (j < kSkipBegin || j >= kSkipEnd) __stcg(&g_split_partials[slot][j][math_thread], acc_group(acc, j));
}

// Spanning split: a range that started inside a tile it does not finish hands that tile's whole
// partial sum to the tile's owners: every group to its first slot. The stores drain while the main
// loop goes on; the slot's flag is raised with the CTA's last one, after the loop (span_epilogue),
// since every range ends at about the same time and its owners need it only then.
__device__ __forceinline__ void hand_over_first_tile(const float (&acc)[64], int math_thread, int slot) {
  store_groups_l2<0, 0>(acc, math_thread, slot);
}

// Calls f(std::integral_constant<int, rank>) for this CTA's cluster rank: the owned accumulator
// groups become compile-time, so the loops unroll without branches and every load of the
// reduction is issued before the first add (one L2 round trip, not one per group).
template <int kClusterK, int kRank = 0, typename F>
__device__ __forceinline__ void with_cluster_rank(uint32_t rank, F&& f) {
  if constexpr (kRank < kClusterK) {
    if (rank == uint32_t(kRank))
      f(std::integral_constant<int, kRank>{});
    else
      with_cluster_rank<kClusterK, kRank + 1>(rank, f);
  }
}

// Split-K through L2, step 1: the groups this CTA does not own go to its workspace slot.
template <int kClusterK, int kRank>
__device__ __forceinline__ void store_partials_l2(const float (&acc)[64], int math_thread, int slot) {
  constexpr int kBegin = owned_group_begin(kRank, kClusterK), kEnd = owned_group_begin(kRank + 1, kClusterK);
#if NVFP4_SM90_EXPERIMENT(ABLATE_EXCHANGE)  // keep the accumulators (and so the main loop) alive, send nothing
  float keep = 0.f;
#pragma unroll
  for (int j = 0; j < 64; ++j) keep += acc[j];
  if (keep == 1234.5f) g_split_partials[slot][0][math_thread].x = keep;
  return;
#endif
  store_groups_l2<kBegin, kEnd>(acc, math_thread, slot);
}

// Split-K through L2, step 2 (after the cluster barrier): sum the owned groups over the tile's
// kContrib contributions in K order (s = kRank: this CTA's own accumulators; others: slot slot_of(s))
// and write them as fp16 C. Group j of math thread (wg, warp, lane) holds C^T rows
// n = wg*64 + warp*16 + g + 8r (g = lane/4) and columns m = 8j + 2(lane%4) + e at acc[4j + 2r + e]
// (j < kTileM / 8: a wide tile, kClusterK = 1, has 24 groups).
// Lanes g and g^1 swap one value per (j, r) so each stores a half2 pair along n: even g row m(e=0)
// columns n, n+1; odd g row m(e=1) columns n-1, n. With kStaged those pairs go to the tile in
// shared memory at `staging` instead (kStagedCRowBytes per row), and the math threads then copy the
// owned rows out 16 bytes each, a warp's store 512 contiguous bytes: the direct stores fill half of
// each 32-byte sector they touch.
template <int kClusterK, int kRank, int kContrib, bool kStaged = false, int kTileM = BLOCK_M, typename SlotOf>
__device__ __forceinline__ void reduce_and_store_l2(const float (&acc)[acc_count<kTileM>()], int math_thread,
                                                    SlotOf slot_of, __half* c, int m, int n, const TileCoords& tile,
                                                    uint32_t staging = 0) {
  static_assert(kTileM == BLOCK_M || kClusterK == 1, "wide tiles are never split (the workspace holds 64 per thread)");
  constexpr int kGroups = acc_count<kTileM>() / 4;
  constexpr int kBegin = owned_group_begin(kRank, kClusterK, kGroups), kEnd = owned_group_begin(kRank + 1, kClusterK, kGroups);
  // every math warp is past its last wgmma: the stages the tile overwrites are no longer read
  if constexpr (kStaged) sm90::named_barrier_sync<3, kMathThreads>();
  // at most kMaxPartsInFlight float4 loads in flight per thread: owned groups go in chunks of kChunk
  constexpr int kChunk = kMaxPartsInFlight / kContrib > 0 ? kMaxPartsInFlight / kContrib : 1;
  const int warp = math_thread / 32, lane = math_thread % 32, g = lane / 4;
  const bool even = g % 2 == 0;
  const size_t m_first = size_t(tile.batch) * m + size_t(tile.m_tile) * kTileM, n_first = size_t(tile.n_tile) * BLOCK_N;
  const int m_in_tile = 2 * (lane % 4) + (even ? 0 : 1), n_in_tile = warp * 16 + (g & ~1);  // warp counts across both WGs
  const size_t m_row = m_first + m_in_tile, n_col = n_first + n_in_tile;
#pragma unroll
  for (int j0 = kBegin; j0 < kEnd; j0 += kChunk) {
    float4 parts[kChunk][kContrib];
#pragma unroll
    for (int j = j0; j < j0 + kChunk && j < kEnd; ++j)
#pragma unroll
      for (int s = 0; s < kContrib; ++s)
        parts[j - j0][s] = s == kRank || NVFP4_SM90_EXPERIMENT(ABLATE_EXCHANGE)
                               ? acc_group(acc, j)
                               : __ldcg(&g_split_partials[slot_of(s)][j][math_thread]);
#pragma unroll
    for (int j = j0; j < j0 + kChunk && j < kEnd; ++j) {
      float4 sum = parts[j - j0][0];
#pragma unroll
      for (int s = 1; s < kContrib; ++s) {
        const float4 p = parts[j - j0][s];
        sum.x += p.x, sum.y += p.y, sum.z += p.z, sum.w += p.w;
      }
      const float v[4] = {sum.x * kOutputUnscale, sum.y * kOutputUnscale, sum.z * kOutputUnscale, sum.w * kOutputUnscale};
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float other = __shfl_xor_sync(0xffffffffu, even ? v[2 * r + 1] : v[2 * r], 4);
        const __half2 pair = even ? __floats2half2_rn(v[2 * r], other) : __floats2half2_rn(other, v[2 * r + 1]);
        if constexpr (kStaged)
          sm90::st_shared_u32(staging + (m_in_tile + 8 * j) * kStagedCRowBytes + (n_in_tile + 8 * r) * 2,
                              *reinterpret_cast<const uint32_t*>(&pair));
        else
          *reinterpret_cast<__half2*>(c + (m_row + 8 * j) * n + n_col + 8 * r) = pair;
      }
    }
  }
  if constexpr (kStaged) {
    sm90::named_barrier_sync<3, kMathThreads>();  // the owned rows are complete in shared memory
    constexpr int kChunksPerRow = BLOCK_N * 2 / 16, kChunks = 8 * (kEnd - kBegin) * kChunksPerRow;
#pragma unroll
    for (int i = math_thread; i < kChunks; i += kMathThreads) {
      const int row = 8 * kBegin + i / kChunksPerRow, chunk = i % kChunksPerRow;
      const uint4 v = sm90::ld_shared_v4(staging + row * kStagedCRowBytes + chunk * 16);
      sm90::st_global_v4(c + (m_first + row) * n + n_first + chunk * 8, v.x, v.y, v.z, v.w);
    }
  }
}

// Without a hardware cluster (software split, spanning split) the CTAs of a tile meet through flags
// in global memory: a soft split's kClusterK CTAs (blockIdx.x = rank) cannot be a cluster, which
// must fit one GPC (32 clusters of 4 do not on an H100), and a spanning split's tiles have up to 5
// contributors; the host checks that the whole grid is resident. Partner s's partials are in slot
// slot_of(s); this CTA is partner `me`, and raises handed_over's flag too (a spanning range's first
// slot; -1: none).
template <typename SlotOf>
__device__ __forceinline__ void meet_partners(int math_thread, int partners, int me, SlotOf slot_of, uint32_t epoch,
                                              int handed_over = -1) {
  sm90::named_barrier_sync<2, kMathThreads>();  // this CTA's partials are stored
  if (math_thread < 32) {  // warp 0: lane s watches partner s, all at once (one round trip per poll)
    const int lane = math_thread;
    if (lane == 0) sm90::st_release_gpu(split_flag(slot_of(me)), epoch);
    if (lane == 1 && handed_over >= 0) sm90::st_release_gpu(split_flag(handed_over), epoch);
    await_split_flags(lane >= partners || lane == me, lane, slot_of, epoch);
  }
  sm90::named_barrier_sync<2, kMathThreads>();  // every partner's partials are complete
}

// Persistent launch, after a unit's main loop (sm90_scheduler.cuh, PersistentUnit): a part other
// than the tile's first K range goes to its slot and raises the slot's flag; the owner (the first K
// range, run after the other parts) waits for the other parts' flags, then adds them in K order and
// writes C; a whole tile (parts = 1) writes C. Slots: parts - 1 per split tile, split_tile its index
// among them.
__device__ __forceinline__ void persistent_epilogue(const float (&acc)[64], int math_thread, int part, int parts,
                                                    int split_tile, const TileCoords& tile, __half* c, int m, int n,
                                                    uint32_t epoch) {
  const auto slot_of = [=](int s) { return split_tile * (parts - 1) + s - 1; };
  if (part != 0) {
    store_groups_l2<0, 0>(acc, math_thread, slot_of(part));
    sm90::named_barrier_sync<2, kMathThreads>();  // every math thread's partials are stored
    if (math_thread == 0) sm90::st_release_gpu(split_flag(slot_of(part)), epoch);
    return;
  }
  if (parts > 1) {
    // Every math warp watches the parts itself (lane s: part s, all at once): a wait by warp 0 alone
    // put the next unit's main loop in code ptxas treats as divergent (an R2UR per wgmma descriptor).
    const int lane = math_thread % 32;
    await_split_flags(lane == 0 || lane >= parts, lane, slot_of, epoch);
  }
  with_cluster_rank<kMaxPersistentParts>(uint32_t(parts - 1), [&](auto parts_less_one) {
    reduce_and_store_l2<1, 0, decltype(parts_less_one)::value + 1>(acc, math_thread, slot_of, c, m, n, tile);
  });
}

// Spanning split, after the main loop: this CTA owns a part of its last tile, together with every
// other CTA whose range ends in that tile; the tile's last contributor is no owner when its range
// goes on into the next tile (it handed its share over mid-run, hand_over_first_tile). Owners store
// the groups they do not own to their second slot, meet, and add the tile's contributions in K order.
__device__ __forceinline__ void span_epilogue(const float (&acc)[64], int math_thread, int cta, SpanSplit split,
                                              int k_tiles, __half* c, int m, int n, uint32_t epoch, uint32_t staging) {
  const SpanTile st = span_tile(cta, split, k_tiles);
  if (st.owners > kMaxSpanOwners) __trap();  // the host keeps to it (span_longest); no instance below would run
  const auto slot_of = [=](int s) { return span_slot(st, s); };
  const TileCoords tile = tile_at(st.last, m / BLOCK_M, n / BLOCK_N);
  with_cluster_rank<kMaxSpanOwners>(uint32_t(st.owners - 1), [&](auto owners_less_one) {
    constexpr int kOwners = decltype(owners_less_one)::value + 1;
    with_cluster_rank<kOwners>(uint32_t(cta - st.first_cta), [&](auto rank) {
      constexpr int kRank = decltype(rank)::value;
      store_partials_l2<kOwners, kRank>(acc, math_thread, slot_of(kRank));
      if (math_thread == 0) timeline_mark(kPartialsSent);
      // st.spans: this CTA's first tile's partial waits in its hand-over slot
      if (st.partners > 1 || st.spans)
        meet_partners(math_thread, st.partners, kRank, slot_of, epoch, st.spans ? span_hand_over_slot(cta) : -1);
      if (math_thread == 0) timeline_mark(kPartialsLanded);
      if (st.tail)
        reduce_and_store_l2<kOwners, kRank, kOwners + 1, kStagedC>(acc, math_thread, slot_of, c, m, n, tile, staging);
      else
        reduce_and_store_l2<kOwners, kRank, kOwners, kStagedC>(acc, math_thread, slot_of, c, m, n, tile, staging);
    });
  });
}

}  // namespace nvfp4_sm90
