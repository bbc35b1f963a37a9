// Which K tiles each CTA of an sm_90a NVFP4 GEMM launch runs: a tile's K range (split-K over a
// cluster or a software split), or one range of the launch's (N tile, K tile) units per CTA that may
// cross a tile boundary (spanning split). The host picks the split (sm90_plan.cuh).
#pragma once

#include <cstdint>

#include "sm90_config.cuh"

namespace nvfp4_sm90 {

// A CTA's work: num_k_tiles K tiles from k_tile_begin of tile (m_tile, n_tile, batch); with a
// spanning split the range continues after first_len of them at K tile 0 of N tile n_tile + 1.
struct TileCoords {
  int m_tile, n_tile, batch, k_tile_begin, num_k_tiles;
  int first_len;  // = num_k_tiles unless the range spans two tiles
};

// Unit i of a CTA's range: its K tile, and whether it lies in the next N tile.
__device__ __forceinline__ bool in_next_tile(const TileCoords& t, int i) { return i >= t.first_len; }
__device__ __forceinline__ int unit_k_tile(const TileCoords& t, int i) {
  return in_next_tile(t, i) ? i - t.first_len : t.k_tile_begin + i;
}

// Spanning split (one M tile, shared A): the launch's units (N tile, K tile), N-tile-major, cut into
// one range per CTA, q or q + 1 units long (q = units / CTAs; the first r = units % CTAs get one more).
// A range is at most one tile long (the host checks), so it ends in the tile it starts in or in the
// next one. CTA c's range is [span_begin(c), span_begin(c + 1)). The host passes q and r: a division
// in the kernel would move the range, and so the main loop's bounds, out of uniform registers, and
// every wgmma descriptor would then cost an R2UR (15 % slower per K tile, H100).
struct SpanSplit {
  int q, r;
};
__device__ __forceinline__ int span_begin(int cta, SpanSplit split) { return cta * split.q + min(cta, split.r); }
__device__ __forceinline__ int span_cta_of(int unit, SpanSplit split) {
  const int long_units = split.r * (split.q + 1);  // covered by the first r CTAs
  return unit < long_units ? unit / (split.q + 1) : split.r + (unit - long_units) / split.q;
}

__device__ __forceinline__ uint32_t linear_cta() { return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }

}  // namespace nvfp4_sm90
