// The math warpgroups (consumers) of the sm_90a NVFP4 GEMM: each decodes its 64 B rows straight
// into wgmma register fragments and multiplies them with the fp16 A slice in shared memory
// (wgmma.m64n128k16, or m64n192k16 for a wide tile; A from registers), eight k-steps per K tile with
// up to eight wgmmas in flight.
#pragma once

#include <cstdint>

#include "sm90_config.cuh"
#include "sm90_decode.cuh"
#include "sm90_nvfp4_decode.cuh"
#include "sm90_pipeline.cuh"
#include "sm90_ptx.cuh"
#include "sm90_scheduler.cuh"
#include "sm90_split_k.cuh"  // hand_over_first_tile
#include "sm90_timeline.cuh"

namespace nvfp4_sm90 {

// ---- Math warpgroup: decode its 64 B rows into wgmma A fragments, multiply with decoded A ----
// Thread (warp, lane) holds B rows row_lo = wg*64 + warp*16 + lane/4 and row_hi = row_lo + 8 and
// decodes chunk t = lane%4 of each; word w of a chunk becomes the fragments of k-steps 2w, 2w+1.
struct BRows {
  uint32_t lo[4], hi[4];  // packed words of chunk t of both rows
  uint32_t sf_lo, sf_hi;  // e4m3 scales of k-blocks 2t (low byte) and 2t+1
};

// Per-thread shared-memory offsets inside a stage (the stage base is added per tile).
struct BRowOffsets {
  uint32_t packed_lo, sf_lo;  // the row_hi ones are + 8 rows: + 512 and + 128 bytes
};

__device__ __forceinline__ BRows load_b_rows(uint32_t stage_base, const BRowOffsets& off) {
  const uint4 raw_lo = sm90::ld_shared_v4(stage_base + off.packed_lo);
  const uint4 raw_hi = sm90::ld_shared_v4(stage_base + off.packed_lo + 8 * PACKED_ROW_BYTES);
  return BRows{{raw_lo.x, raw_lo.y, raw_lo.z, raw_lo.w},
               {raw_hi.x, raw_hi.y, raw_hi.z, raw_hi.w},
               sm90::ld_shared_u16(stage_base + off.sf_lo),
               sm90::ld_shared_u16(stage_base + off.sf_lo + 8 * 16)};
}

// Fragments of k-steps 2w (f0) and 2w+1 (f1): {row g, kappa 2t..}, {row g+8, ..}, {row g, kappa 2t+8..}, {row g+8, ..}
__device__ __forceinline__ void decode_b_word(const BRows& packed, int w, uint32_t (&f0)[4], uint32_t (&f1)[4],
                                              const nvfp4_decode::E2m1Table& table) {
  BRows rows = packed;  // inputs pinned after the caller's wgmma wait (see fence_operand)
  sm90::fence_operand(rows.lo[w]), sm90::fence_operand(rows.hi[w]);
  sm90::fence_operand(rows.sf_lo), sm90::fence_operand(rows.sf_hi);
#if NVFP4_SM90_EXPERIMENT(ABLATE_B_DECODE)
  f0[0] = f1[0] = rows.lo[w] & 0x3C003C00u, f0[1] = f1[1] = rows.hi[w] & 0x3C003C00u;
  f0[2] = f1[2] = rows.sf_lo & 0x3C00u, f0[3] = f1[3] = rows.sf_hi & 0x3C00u;
#else
  const nvfp4_decode::Fp16x2Quad lo =
      decode8(rows.lo[w], nvfp4_decode::e4m3_splat_f16x2(rows.sf_lo, w / 2), table);
  const nvfp4_decode::Fp16x2Quad hi =
      decode8(rows.hi[w], nvfp4_decode::e4m3_splat_f16x2(rows.sf_hi, w / 2), table);
  f0[0] = lo.h02, f0[1] = hi.h02, f0[2] = lo.h13, f0[3] = hi.h13;
  f1[0] = lo.h46, f1[1] = hi.h46, f1[2] = lo.h57, f1[3] = hi.h57;
#endif
}

template <int kTileM>
__device__ __forceinline__ void issue_wgmma(float (&acc)[acc_count<kTileM>()], const uint32_t (&frag)[4],
                                            uint32_t a_base, int ks, bool accumulate) {
#if NVFP4_SM90_EXPERIMENT(ABLATE_MMA)
  acc[ks] += __uint_as_float(frag[0] ^ frag[3] ^ a_base) * (accumulate ? 1.f : 0.f);
#else
  const uint32_t addr = a_base + (ks / 4) * a_atom_bytes<kTileM>() + (ks % 4) * WGMMA_K * 2;
  sm90::wgmma_fence();  // the fragment registers were just written
  if constexpr (kTileM == kWideTileM)
    sm90::wgmma_m64n192k16_rs(acc, frag, sm90::make_smem_desc_sw128(addr), accumulate ? 1u : 0u);
  else
    sm90::wgmma_m64n128k16_rs(acc, frag, sm90::make_smem_desc_sw128(addr), accumulate ? 1u : 0u);
  sm90::wgmma_commit();
#endif
}

// The ring state `pipe` goes on from tile to tile of a persistent CTA, which releases each tile's
// last stage after the call (release_last_stage).
template <bool kSharedA, bool kSpan, int kTileM = BLOCK_M>
__device__ __forceinline__ void math(const SharedStorage<kSharedA, kTileM>& smem, const TileCoords& tile, int wg,
                                     int thread, float (&acc)[acc_count<kTileM>()], int first_slot,
                                     PipelineState<Plan<kSharedA, kTileM>::kStages>& pipe) {
  using P = Plan<kSharedA, kTileM>;
  const int warp = thread / 32, lane = thread % 32;
  const int row_lo = wg * WGMMA_M + warp * 16 + lane / 4, t = lane % 4;
  // row_hi = row_lo + 8 keeps (row / 32) and lies 8 * 16 bytes further in the scale chunk
  const BRowOffsets offsets{uint32_t(P::kBPackedOffset + row_lo * PACKED_ROW_BYTES + t * 16),
                            uint32_t(P::kSfbOffset + scale_offset(row_lo, 2 * t))};
  const uint32_t smem_base = sm90::smem_addr(smem.base);
  const nvfp4_decode::E2m1Table table = nvfp4_decode::load_table(sm90::smem_addr(smem.e2m1_table()));
  PipelineState<kSharedA ? 1 : P::kABuffers> abuf;
  uint32_t frag[BLOCK_K / WGMMA_K][4];
#if NVFP4_SM90_EXPERIMENT(ABLATE_MMA)
#pragma unroll
  for (int j = 0; j < acc_count<kTileM>(); ++j) acc[j] = 0.f;
#endif
#if !NVFP4_SM90_EXPERIMENT(V1_TILE_WAIT)
  // One commit group per wgmma, up to 8 in flight. ptxas keeps wgmmas asynchronous only when no
  // instruction between a wgmma and the next wait defines wgmma inputs, so every decode sits right
  // after a wait (CUTLASS's mixed-input order): wait<6> after k-steps 2w, 2w+1 of tile i leaves
  // tile i-1's k-step 2w+3 done, so word w+1 may overwrite fragments 2w+2, 2w+3. After w = 3 the
  // previous tile's A buffer is free and the next tile's word 0 may be decoded. With shared A the
  // A slice sits in the stage itself, so the stage is released then instead of after the B loads.
  BRows rows;
  uint32_t a_base = 0;
  auto load_tile = [&]() {
    sm90::mbar_wait(&smem.full_barriers()[pipe.stage_idx], pipe.phase);
    if (wg == 0 && thread == 0) timeline_mark_first(kStageFull);
    rows = load_b_rows(smem_base + pipe.stage_idx * P::kStageBytes, offsets);
    if constexpr (kSharedA) {
      decode_b_word(rows, 0, frag[0], frag[1], table);
      a_base = sm90::smem_addr(smem.a_fp16_stage(pipe.stage_idx));
    } else {
      __syncwarp();
      if (lane == 0) sm90::mbar_arrive(&smem.empty_barriers()[pipe.stage_idx]);
      decode_b_word(rows, 0, frag[0], frag[1], table);
      sm90::mbar_wait(&smem.a_full_barriers()[abuf.stage_idx], abuf.phase);
      a_base = sm90::smem_addr(smem.a_fp16(abuf.stage_idx));
    }
  };
  // K tiles [begin, end): the accumulators start over at begin. A spanning range runs it twice, its
  // first tile's partial handed over in between, so the loop itself is the same in every kernel.
  const auto run_k_tiles = [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        issue_wgmma<kTileM>(acc, frag[2 * w], a_base, 2 * w, i > begin || w > 0);
        issue_wgmma<kTileM>(acc, frag[2 * w + 1], a_base, 2 * w + 1, true);
        sm90::wgmma_wait<6>();
        if (w < 3) decode_b_word(rows, w + 1, frag[2 * w + 2], frag[2 * w + 3], table);
      }
      if (i > 0) {  // tile i-1's last wgmma has completed
        __syncwarp();
        if (lane == 0) {
          if constexpr (kSharedA)
            sm90::mbar_arrive(&smem.empty_barriers()[pipe.stage_idx == 0 ? P::kStages - 1 : pipe.stage_idx - 1]);
          else
            sm90::mbar_arrive(&smem.a_empty_barriers()[abuf.stage_idx == 0 ? P::kABuffers - 1 : abuf.stage_idx - 1]);
        }
      }
      pipe.advance_pipeline(), abuf.advance_pipeline();
      if (i + 1 < tile.num_k_tiles) load_tile();
    }
  };
  load_tile();
  if (wg == 0 && thread == 0) timeline_mark_first(kFirstTile);
  if constexpr (kSpan) {
    run_k_tiles(0, tile.first_len);
    if (tile.first_len < tile.num_k_tiles) {
      sm90::wgmma_wait<0>();
      sm90::fence_accumulators(acc);
      hand_over_first_tile(acc, wg * 128 + thread, first_slot);
      run_k_tiles(tile.first_len, tile.num_k_tiles);
    }
  } else {
    run_k_tiles(0, tile.num_k_tiles);
  }
  sm90::wgmma_wait<0>();  // the accumulators are read next
  sm90::fence_accumulators(acc);
  if (wg == 0 && thread == 0) timeline_mark(kMainLoopDone);
#else
  // v1: decode the whole tile, issue its 8 wgmmas, wait for all of them.
  static_assert(!kSharedA, "v1's tile-wait loop exists for the per-CTA A path only");
  for (int i = 0; i < tile.num_k_tiles; ++i, pipe.advance_pipeline(), abuf.advance_pipeline()) {
    sm90::mbar_wait(&smem.full_barriers()[pipe.stage_idx], pipe.phase);
    const BRows rows = load_b_rows(smem_base + pipe.stage_idx * P::kStageBytes, offsets);
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(&smem.empty_barriers()[pipe.stage_idx]);
    sm90::mbar_wait(&smem.a_full_barriers()[abuf.stage_idx], abuf.phase);
    const uint32_t a_base = sm90::smem_addr(smem.a_fp16(abuf.stage_idx));
#pragma unroll
    for (int w = 0; w < 4; ++w) decode_b_word(rows, w, frag[2 * w], frag[2 * w + 1], table);
#pragma unroll
    for (int ks = 0; ks < BLOCK_K / WGMMA_K; ++ks) issue_wgmma<kTileM>(acc, frag[ks], a_base, ks, i > 0 || ks > 0);
    sm90::wgmma_wait<0>();
    sm90::fence_accumulators(acc);
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(&smem.a_empty_barriers()[abuf.stage_idx]);
  }
#endif
}

// Shared A, persistent: after a tile's last wgmma has completed (math waited for it), its stage goes
// back to the producer; inside a tile the next K tile's loop step releases the one before.
__device__ __forceinline__ void release_last_stage(const SharedStorage<true>& smem,
                                                   const PipelineState<Plan<true>::kStages>& pipe, int lane) {
  __syncwarp();
  if (lane == 0)
    sm90::mbar_arrive(&smem.empty_barriers()[pipe.stage_idx == 0 ? Plan<true>::kStages - 1 : pipe.stage_idx - 1]);
}

}  // namespace nvfp4_sm90
