// The sm_90a NVFP4 GEMM's shared-memory pipeline and its producer warp: the stage layout
// (SharedStorage over Plan<kSharedA>), the ring state every role advances, and the one thread that
// issues TMA tile loads and bulk scale copies, for per-CTA A (packed A and B) and for shared A
// (packed B before the launch-wide barrier, the fp16 A slices after it).
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cstdint>

#include "sm90_config.cuh"
#include "sm90_ptx.cuh"
#include "sm90_scheduler.cuh"
#include "sm90_timeline.cuh"  // timeline_mark_first (the timeline build only)

namespace nvfp4_sm90 {

using ptx_common::PipelineState;

template <bool kSharedA, int kTileM = BLOCK_M>
struct SharedStorage {
  using P = Plan<kSharedA, kTileM>;
  uint8_t* base;
  __device__ uint8_t* stage(int s) const { return base + s * P::kStageBytes; }
  __device__ uint8_t* a_fp16_stage(int s) const { return stage(s) + P::kA16Offset; }
  __device__ uint8_t* a_packed(int s) const { return stage(s) + P::kAPackedOffset; }
  __device__ uint8_t* b_packed(int s) const { return stage(s) + P::kBPackedOffset; }
  __device__ uint8_t* sfa(int s) const { return stage(s) + P::kSfaOffset; }
  __device__ uint8_t* sfb(int s) const { return stage(s) + P::kSfbOffset; }
  __device__ uint8_t* a_fp16(int b) const { return base + P::kABuffersOffset + b * A_BUFFER_BYTES; }
  __device__ uint64_t* barriers() const { return reinterpret_cast<uint64_t*>(base + P::kBarriersOffset); }
  __device__ uint64_t* full_barriers() const { return barriers(); }
  __device__ uint64_t* empty_barriers() const { return barriers() + P::kStages; }
  __device__ uint64_t* a_full_barriers() const { return barriers() + 2 * P::kStages; }
  __device__ uint64_t* a_empty_barriers() const { return barriers() + 2 * P::kStages + P::kABuffers; }
  __device__ uint64_t* local_a_barrier() const { return barriers() + 2 * P::kStages + 2 * P::kABuffers; }
  __device__ uint32_t* e2m1_table() const { return reinterpret_cast<uint32_t*>(barriers() + P::kNumBarriers); }
};

// Where one tile's loads come from: rows of the packed maps (and of A's copy) and its scale chunks.
struct TileOrigin {
  const uint8_t *sfa, *sfb;
  int row_a, row_b;
};

// Where one CTA's loads come from: its tile's origin, and the next tile's where a spanning range
// goes on there (N tile + 1, or N tile 0 of the next M tile; elsewhere the same as the first).
struct TileSources {
  const CUtensorMap *tmap_a, *tmap_b, *tmap_a16;
  TileOrigin first, next;
  // by value: returning a reference put every kernel's sources in local memory (72 bytes of stack)
  __device__ __forceinline__ TileOrigin of(const TileCoords& tile, int i) const {
    return in_next_tile(tile, i) ? next : first;
  }
};

// Packed B rows and their scale chunk of K tile kt into stage s (both paths), counted on its full barrier.
template <bool kSharedA, int kTileM>
__device__ __forceinline__ void load_packed_b(const SharedStorage<kSharedA, kTileM>& smem, const TileSources& src, int s,
                                              const TileCoords& tile, int i) {
  uint64_t* full = &smem.full_barriers()[s];
  const int kt = unit_k_tile(tile, i);
  const TileOrigin at = src.of(tile, i);
  sm90::tma_load_2d(smem.b_packed(s), src.tmap_b, kt * PACKED_ROW_BYTES, at.row_b, full);
  sm90::bulk_load(smem.sfb(s), at.sfb + size_t(kt) * SMEM_SF_BYTES, SMEM_SF_BYTES, full);
}

// ---- Producer (per-CTA A): one thread issues packed A/B tile loads (TMA) and scales (bulk copies) ----
// K tiles [begin, end) of the tile, the ring state carried between calls (the first stages go out
// before the CTA-wide sync, the rest from the producer role).
__device__ __forceinline__ void producer(const SharedStorage<false>& smem, const TileSources& src,
                                         const TileCoords& tile, PipelineState<Plan<false>::kStages>& pipe,
                                         int begin, int end) {
  for (int i = begin; i < end; ++i, pipe.advance_pipeline()) {
    const int s = pipe.stage_idx;
    const int kt = unit_k_tile(tile, i);
    sm90::mbar_wait(&smem.empty_barriers()[s], pipe.phase ^ 1);
    uint64_t* full = &smem.full_barriers()[s];
    sm90::mbar_arrive_expect_tx(full, Plan<false>::kStageTxBytes);
    sm90::tma_load_2d(smem.a_packed(s), src.tmap_a, kt * PACKED_ROW_BYTES, src.first.row_a, full);
    sm90::bulk_load(smem.sfa(s), src.first.sfa + size_t(kt) * SMEM_SF_BYTES, SMEM_SF_BYTES, full);
    load_packed_b(smem, src, s, tile, i);
    if (i == 0) timeline_mark_first(kFirstIssued);
  }
}

// ---- Producer (shared A) ----
// Bytes of A's fp16 slice a stage expects by TMA (experiment ABLATE_A16_LOADS: none, the slice keeps
// what it holds), and so a whole stage's; a local-A stage expects B and its scales only.
template <int kTileM>
constexpr int kA16StageBytes = NVFP4_SM90_EXPERIMENT(ABLATE_A16_LOADS) ? 0 : Plan<true, kTileM>::kA16Bytes;
template <int kTileM>
constexpr int kSharedAStageTxBytes = Plan<true, kTileM>::kLocalAStageTxBytes + kA16StageBytes<kTileM>;
// Local A (Plan, sm90_config.cuh): the first kLocalATiles stages get no fp16 A by TMA; the math warps
// decode it there from the packed tiles that wait in stage kLocalAStage's A slice.
template <int kTileM>
__device__ __forceinline__ int local_a_tiles(const TileCoords& tile) {
  return min(Plan<true, kTileM>::kLocalATiles, tile.num_k_tiles);
}

// Issued first of all: local A's loads do not depend on the copy or the barrier. Each local tile's
// boxes are the 128-row chunks of packed A that hold its rows (a wide tile's first row may lie in the
// middle of one, and its scale chunks are sf_chunk_bytes apart), one after the other in the stage.
template <int kTileM>
__device__ __forceinline__ void load_local_a(const SharedStorage<true, kTileM>& smem, const TileSources& src,
                                             const TileCoords& tile, size_t sf_chunk_bytes) {
  using P = Plan<true, kTileM>;
  uint64_t* bar = smem.local_a_barrier();
  sm90::mbar_arrive_expect_tx(bar, local_a_tiles<kTileM>(tile) * P::kLocalABoxes * kLocalAPackedBytes);
  for (int i = 0; i < local_a_tiles<kTileM>(tile); ++i) {
    const int kt = unit_k_tile(tile, i);
    const TileOrigin at = src.of(tile, i);  // a spanning range may go on in the next M tile
#pragma unroll
    for (int box = 0; box < P::kLocalABoxes; ++box) {
      uint8_t* dst = smem.a_fp16_stage(P::kLocalAStage) + (i * P::kLocalABoxes + box) * kLocalAPackedBytes;
      sm90::tma_load_2d(dst, src.tmap_a, kt * PACKED_ROW_BYTES, (at.row_a & ~(BLOCK_M - 1)) + box * BLOCK_M, bar);
      sm90::bulk_load(dst + SMEM_A_PACKED_BYTES, at.sfa + box * sf_chunk_bytes + size_t(kt) * SMEM_SF_BYTES,
                      SMEM_SF_BYTES, bar);
    }
  }
}

// Packed B and its scales do not depend on the launch-wide A copy: the first stages' B loads go out
// before this CTA decodes its share of A, so DRAM latency overlaps the decode and the barrier. The
// local tiles' stages plus one: the first stage that waits for the copy then waits only for its A
// slice from L2, not for B from DRAM too. 3 stages against 2, same runs on an H100 and an H200: the
// small bench shape 3-5 % faster per call, the two others within 1 %; 4 no better, all 5 slower
// (their DRAM traffic goes ahead of A's loads).
template <int kTileM>
__device__ __forceinline__ int prefill_b(const SharedStorage<true, kTileM>& smem, const TileSources& src,
                                         const TileCoords& tile) {
  using P = Plan<true, kTileM>;
  const int prefilled = min(max(NVFP4_SM90_PREFILL_STAGES, P::kLocalATiles), min(P::kStages, tile.num_k_tiles));
  for (int s = 0; s < prefilled; ++s) {
    // A's bytes come later by TMA, or never (local A)
    sm90::mbar_arrive_expect_tx(&smem.full_barriers()[s], s < local_a_tiles<kTileM>(tile)
                                                              ? P::kLocalAStageTxBytes
                                                              : kSharedAStageTxBytes<kTileM>);
    load_packed_b(smem, src, s, tile, s);
    if (s == 0) timeline_mark_first(kFirstIssued);
  }
  return prefilled;
}

// A's fp16 slice of unit i of the CTA's range, from the launch-wide copy, into stage s.
template <int kTileM>
__device__ __forceinline__ void load_a16(const SharedStorage<true, kTileM>& smem, const TileSources& src, int s,
                                         const TileCoords& tile, int i) {
  if constexpr (kA16StageBytes<kTileM> == 0) return;
  uint64_t* full = &smem.full_barriers()[s];
  const int kt = unit_k_tile(tile, i), row = src.of(tile, i).row_a;
#pragma unroll
  for (int atom = 0; atom < BLOCK_K / A_ATOM_K; ++atom)
    sm90::tma_load_2d(smem.a_fp16_stage(s) + atom * a_atom_bytes<kTileM>(), src.tmap_a16, kt * BLOCK_K + atom * A_ATOM_K, row,
                      full);
}

// After the launch-wide barrier: A for the prefilled stages in [first_stage, end_stage) (the local
// tiles' stages get none). The caller loads those below kLocalAStage at once and the others once the
// math warps have read local A's packed tiles out of that stage.
template <int kTileM>
__device__ __forceinline__ void load_prefilled_a16(const SharedStorage<true, kTileM>& smem, const TileSources& src,
                                                   const TileCoords& tile, int prefilled, int first_stage,
                                                   int end_stage) {
  for (int s = max(local_a_tiles<kTileM>(tile), first_stage); s < min(prefilled, end_stage); ++s) load_a16(smem, src, s, tile, s);
}

// After the prefilled stages' A (load_prefilled_a16): every further stage in full. The ring state
// goes on from tile to tile of a persistent CTA; only its first tile has prefilled stages.
template <int kTileM>
__device__ __forceinline__ void producer_shared_a(const SharedStorage<true, kTileM>& smem, const TileSources& src,
                                                  const TileCoords& tile, int prefilled,
                                                  PipelineState<Plan<true, kTileM>::kStages>& pipe) {
  for (int i = 0; i < prefilled; ++i) pipe.advance_pipeline();
  for (int i = prefilled; i < tile.num_k_tiles; ++i, pipe.advance_pipeline()) {
    const int s = pipe.stage_idx;
    sm90::mbar_wait(&smem.empty_barriers()[s], pipe.phase ^ 1);
    sm90::mbar_arrive_expect_tx(&smem.full_barriers()[s], kSharedAStageTxBytes<kTileM>);
    load_packed_b(smem, src, s, tile, i);
    load_a16(smem, src, s, tile, i);
  }
}

}  // namespace nvfp4_sm90
