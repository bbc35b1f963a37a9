// Exact NVFP4 -> fp16 decoding in the sm_90a GEMM's K order, for A: one 32-value word of a row
// (shared by every decoder), one pipeline stage of packed A into a wgmma-ready fp16 buffer, the
// per-CTA decode warpgroups, and local A (the math warps decode a shared-A CTA's first K tiles).
// The bit operations are kernels/common/sm90_nvfp4_decode.cuh; the K order is described in
// nvfp4_gemm_sm90.cu. B is decoded by the math warpgroups themselves (sm90_math.cuh).
#pragma once

#include <cstdint>

#include "sm90_config.cuh"
#include "sm90_nvfp4_decode.cuh"
#include "sm90_pipeline.cuh"
#include "sm90_ptx.cuh"
#include "sm90_scheduler.cuh"

namespace nvfp4_sm90 {

// Decode route: e4m3 placement + cvt (values × 2^-6; the epilogue multiplies C by 2^12, exact), or
// v7's prmt table (exact values; experiment PRMT_DECODE). Both give the same pairs of values, so
// the K order is unchanged.
__device__ __forceinline__ nvfp4_decode::Fp16x2Quad decode8(uint32_t x, uint32_t scale_x2,
                                                           const nvfp4_decode::E2m1Table& table) {
#if !NVFP4_SM90_EXPERIMENT(PRMT_DECODE)
  (void)table;
  return nvfp4_decode::decode_e2m1x8_e4m3(x, scale_x2);
#else
  return nvfp4_decode::decode_e2m1x8(x, scale_x2, table);
#endif
}
constexpr float kOutputUnscale = !NVFP4_SM90_EXPERIMENT(PRMT_DECODE) ? nvfp4_decode::kE4m3DecodeUnscale : 1.0f;

// Word w of a row's four 16-byte chunks of one K tile (32 values; word (t, w) lies in k-block
// 2t + w/2, whose scale is byte (t%2)*2 + w/2 of scale word t/2) as the 64 bytes of logical k-steps
// 2w and 2w+1: group[j] is the j-th 16 bytes. Both A decoders (per-CTA into shared memory, shared A
// into global memory) write these groups, so both produce the K order the math warps expect.
struct RowWordFp16 {
  uint32_t group[4][4];
};

__device__ __forceinline__ RowWordFp16 decode_row_word(const uint32_t (&words)[4], const uint32_t (&sf_words)[2],
                                                       int w, const nvfp4_decode::E2m1Table& table) {
  RowWordFp16 d;
#pragma unroll
  for (int t = 0; t < 4; ++t) {
    const uint32_t scale = nvfp4_decode::e4m3_splat_f16x2(sf_words[t / 2], (t % 2) * 2 + w / 2);
    const nvfp4_decode::Fp16x2Quad q = decode8(words[t], scale, table);
    d.group[0][t] = q.h02, d.group[1][t] = q.h13, d.group[2][t] = q.h46, d.group[3][t] = q.h57;
  }
  return d;
}

// ---- A decode of one stage: packed A (TMA 64B-swizzled) + scale chunk -> fp16 A buffer in wgmma's
// K-major 128B-swizzled layout, by 128 threads; the decode warpgroups (per-CTA A) and local A
// (shared A) use it. Thread (warp q, lane) owns rows q*32 + lane%8 + 8r (r < 4) and word w = lane/8
// of each 16-byte chunk t; it writes logical k-steps 2w and 2w+1 (64 bytes) of each row with four
// 16-byte stores. Every address is a per-thread constant plus the stage / buffer base plus 512r or 1024r.
// Where two warpgroups share a stage, each takes kRows = 2 of the four rows, from first_r on.
struct ADecodeLanes {
  uint32_t load_offset[4], sf_offset, store_offset[4];
  int w;
  __device__ explicit ADecodeLanes(int thread, int first_r = 0, int atom_bytes = A_ATOM_BYTES) {
    const int warp = thread / 32, lane = thread % 32;
    const int row0 = warp * 32 + lane % 8 + 8 * first_r;  // rows r add 8r, which keeps both swizzles below
    w = lane / 8;
    // TMA 64-byte swizzle: chunk t of row r sits at chunk t ^ ((row >> 1) & 3), the same for every r
#pragma unroll
    for (int t = 0; t < 4; ++t) load_offset[t] = row0 * PACKED_ROW_BYTES + ((t ^ ((row0 >> 1) & 3)) * 16) + 4 * w;
    sf_offset = scale_offset(row0, 0);  // + 512 for k-blocks 4..7; rows r add 8r*16
    // 128-byte swizzle of the fp16 rows: chunk c of row r sits at c ^ (row & 7) = c ^ (lane & 7)
#pragma unroll
    for (int j = 0; j < 4; ++j) store_offset[j] = (w / 2) * atom_bytes + row0 * 128 + ((((w % 2) * 4 + j) ^ (lane & 7)) * 16);
  }
};

struct APackedRows {
  uint32_t words[4][4], sf_words[4][2];
};

template <int kRows = 4>
__device__ __forceinline__ APackedRows load_a_stage(uint32_t packed, uint32_t sf_chunk, const ADecodeLanes& lanes) {
  APackedRows rows;
  const uint32_t sf = sf_chunk + lanes.sf_offset;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int t = 0; t < 4; ++t) rows.words[r][t] = sm90::ld_shared_u32(packed + lanes.load_offset[t] + 512 * r);
    rows.sf_words[r][0] = sm90::ld_shared_u32(sf + 128 * r);        // k-blocks 0..3 of row row0 + 8r
    rows.sf_words[r][1] = sm90::ld_shared_u32(sf + 512 + 128 * r);  // k-blocks 4..7
  }
  return rows;
}

template <int kRows = 4>
__device__ __forceinline__ void store_a_stage(const APackedRows& rows, uint32_t a_fp16, const ADecodeLanes& lanes,
                                              const nvfp4_decode::E2m1Table& table) {
#if !NVFP4_SM90_EXPERIMENT(ABLATE_A_DECODE)
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const RowWordFp16 d = decode_row_word(rows.words[r], rows.sf_words[r], lanes.w, table);
    const uint32_t row_base = a_fp16 + 1024 * r;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      sm90::st_shared_v4(row_base + lanes.store_offset[j], d.group[j][0], d.group[j][1], d.group[j][2], d.group[j][3]);
  }
#endif
  sm90::fence_proxy_async_smem();  // make the generic stores visible to wgmma (async proxy)
}

// ---- A decoder warpgroups (per-CTA A) ----
// thread: 0 .. 128 * kDecodeWarpgroups - 1; warpgroup d decodes rows r = d * kRows .. of every thread's four.
__device__ __forceinline__ void a_decoder(const SharedStorage<false>& smem, const TileCoords& tile, int thread) {
  using P = Plan<false>;
  constexpr int kRows = 4 / P::kDecodeWarpgroups;
  const ADecodeLanes lanes(thread % 128, (thread / 128) * kRows);
  const uint32_t smem_base = sm90::smem_addr(smem.base);
  const nvfp4_decode::E2m1Table table = nvfp4_decode::load_table(sm90::smem_addr(smem.e2m1_table()));
  PipelineState<P::kStages> pipe;
  PipelineState<P::kABuffers> abuf;
  for (int i = 0; i < tile.num_k_tiles; ++i, pipe.advance_pipeline(), abuf.advance_pipeline()) {
    sm90::mbar_wait(&smem.full_barriers()[pipe.stage_idx], pipe.phase);
    const uint32_t stage = smem_base + pipe.stage_idx * P::kStageBytes;
    const APackedRows rows = load_a_stage<kRows>(stage + P::kAPackedOffset, stage + P::kSfaOffset, lanes);
    __syncwarp();
    if (thread % 32 == 0) sm90::mbar_arrive(&smem.empty_barriers()[pipe.stage_idx]);
    sm90::mbar_wait(&smem.a_empty_barriers()[abuf.stage_idx], abuf.phase ^ 1);
    store_a_stage<kRows>(rows, sm90::smem_addr(smem.a_fp16(abuf.stage_idx)), lanes, table);
    sm90::mbar_arrive(&smem.a_full_barriers()[abuf.stage_idx]);
  }
}

// After the CTA has arrived, the math warps decode local A into its stages' A slices (load_local_a
// put the packed boxes there). 128-row tiles: warpgroup wg decodes tiles wg, wg + 2, ... A wide tile
// (first row first_row): warpgroup b decodes box b of every local tile, whose row r is the tile's row
// r + 128 b - first_row % 128 and is kept where that lies in the tile; the offset is 0 or 64, so a
// warp's 32 rows are kept or skipped together.
template <int kTileM>
__device__ __forceinline__ void decode_local_a(const SharedStorage<true, kTileM>& smem, const TileCoords& tile,
                                               int first_row, int math_thread, const nvfp4_decode::E2m1Table& table) {
  using P = Plan<true, kTileM>;
  const uint32_t packed_tiles = sm90::smem_addr(smem.a_fp16_stage(P::kLocalAStage));
  sm90::mbar_wait(smem.local_a_barrier(), 0);
  if constexpr (!P::kWide) {
    const ADecodeLanes lanes(math_thread % 128);
    (void)first_row;
    for (int i = math_thread / 128; i < local_a_tiles<kTileM>(tile); i += kNumMathWarpgroups) {
      const uint32_t packed = packed_tiles + i * kLocalAPackedBytes;
      store_a_stage(load_a_stage(packed, packed + SMEM_A_PACKED_BYTES, lanes), sm90::smem_addr(smem.a_fp16_stage(i)),
                    lanes, table);
    }
  } else {
    static_assert(P::kLocalABoxes == kNumMathWarpgroups, "one box per math warpgroup");
    const int box = math_thread / 128, shift = box * BLOCK_M - first_row % BLOCK_M;
    const int warp_first_row = (math_thread % 128) / 32 * 32 + shift;
    if (warp_first_row < 0 || warp_first_row >= kTileM) return;
    const ADecodeLanes lanes(math_thread % 128, 0, a_atom_bytes<kTileM>());
    for (int i = 0; i < local_a_tiles<kTileM>(tile); ++i) {
      const uint32_t packed = packed_tiles + (i * P::kLocalABoxes + box) * kLocalAPackedBytes;
      store_a_stage(load_a_stage(packed, packed + SMEM_A_PACKED_BYTES, lanes),
                    uint32_t(int(sm90::smem_addr(smem.a_fp16_stage(i))) + shift * 128), lanes, table);
    }
  }
}

}  // namespace nvfp4_sm90
