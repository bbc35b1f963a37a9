// Which K tiles each CTA of an sm_90a NVFP4 GEMM launch runs: a tile's K range (split-K over a
// cluster or a software split), one range of the launch's (N tile, K tile) units per CTA that may
// cross a tile boundary (spanning split), or a persistent CTA's sequence of (tile, K part) units.
// The host picks the plan (sm90_plan.cuh).
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

// Persistent launch (shared A, more tiles than resident CTAs): the launch's units are (tile, K
// range); CTA c runs units c, c + CTAs, ... Tiles go N tile fastest, so the CTAs at work at one
// time share few M tiles and each wave reads A's copy only in part from DRAM. With parts > 1 every
// tile is cut into `parts` K ranges (as evenly as possible, as split-K does), so a last wave that
// would leave SMs idle is spread over all of them. Units go in sweeps over all tiles: sweep r runs
// part r + 1, and the last sweep part 0, the tile's owner, which adds the other parts (already in
// L2: earlier sweeps) to its own in K order and writes C. An owner waits only on units of lower
// index, so with every CTA resident the launch cannot deadlock. The host passes the K split (a
// division here would move the main loop's bounds out of uniform registers, see SpanSplit).
struct PersistentSplit {
  int parts, k_base, k_rem;  // k_base = K tiles / parts, k_rem = K tiles % parts
};
__host__ __device__ inline PersistentSplit persistent_split(int k_tiles, int parts) {
  return {parts, k_tiles / parts, k_tiles % parts};
}

// Host and device: tests/kernels/test_sm90_persistent_schedule.py runs this schedule on the CPU.
struct PersistentUnit {
  int sweep, tile;  // the unit is sweep * tiles + tile
  __host__ __device__ __forceinline__ int part(PersistentSplit split) const {
    return sweep + 1 == split.parts ? 0 : sweep + 1;
  }
  // The next unit of this CTA (ctas <= tiles: the host checks), without a division.
  __host__ __device__ __forceinline__ void advance(int ctas, int tiles) {
    tile += ctas;
    if (tile >= tiles) tile -= tiles, ++sweep;
  }
};

__host__ __device__ __forceinline__ TileCoords unit_coords(const PersistentUnit& u, PersistentSplit split, int m_tiles,
                                                           int n_tiles) {
  const int part = u.part(split), rest = u.tile / n_tiles;
  const int num_k_tiles = split.k_base + (part < split.k_rem ? 1 : 0);
  return {rest % m_tiles, u.tile % n_tiles, rest / m_tiles, part * split.k_base + (part < split.k_rem ? part : split.k_rem),
          num_k_tiles, num_k_tiles};
}

// The host's choice for a persistent launch of `tiles` tiles of k_tiles K tiles on `most` resident
// CTAs (more than that: tiles > most), with at most max_parts K parts per tile and `slots` workspace
// slots: the parts that give the busiest CTA the fewest K tiles, the fewer on a tie; then as many
// CTAs as that busiest CTA's unit count requires, no more (the call takes as long either way, and
// fewer CTAs draw less power and DRAM at the start). ctas <= most < tiles, as advance needs.
struct PersistentPlan {
  int ctas, parts;
};

inline PersistentPlan persistent_plan_for(int tiles, int k_tiles, int most, int max_parts, int slots) {
  int best_parts = 1;
  int64_t best_k_tiles = INT64_MAX;
  for (int parts = 1; parts <= max_parts && parts <= k_tiles; ++parts) {
    if (int64_t(tiles) * (parts - 1) > slots) break;
    const int64_t units = int64_t(tiles) * parts;
    const int64_t busiest = (units + most - 1) / most * ((k_tiles + parts - 1) / parts);
    if (busiest < best_k_tiles) best_parts = parts, best_k_tiles = busiest;
  }
  const int64_t units = int64_t(tiles) * best_parts, waves = (units + most - 1) / most;
  return {int((units + waves - 1) / waves), best_parts};
}

__device__ __forceinline__ uint32_t linear_cta() { return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }

}  // namespace nvfp4_sm90
