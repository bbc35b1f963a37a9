// Which K tiles each CTA of an sm_90a NVFP4 GEMM launch runs: a tile's K range (split-K over a
// cluster or a software split), one range of the launch's (tile, K tile) units per CTA that may
// cross a tile boundary (spanning split), or a persistent CTA's sequence of (tile, K part) units.
// The host picks the plan (sm90_plan.cuh).
#pragma once

#include <cstdint>

#include "sm90_config.cuh"
#include "sm90_ptx.cuh"

namespace nvfp4_sm90 {

// A CTA's work: num_k_tiles K tiles from k_tile_begin of tile (m_tile, n_tile, batch); with a
// spanning split the range continues after first_len of them at K tile 0 of the next tile (tile_at).
struct TileCoords {
  int m_tile, n_tile, batch, k_tile_begin, num_k_tiles;
  int first_len;  // = num_k_tiles unless the range spans two tiles
};

// Unit i of a CTA's range: its K tile, and whether it lies in the next tile.
__device__ __forceinline__ bool in_next_tile(const TileCoords& t, int i) { return i >= t.first_len; }
__device__ __forceinline__ int unit_k_tile(const TileCoords& t, int i) {
  return in_next_tile(t, i) ? i - t.first_len : t.k_tile_begin + i;
}

// Tile `index` of a launch, in launch order: N tile fastest, then the M tiles of each batch (the
// order of a split launch's grid, blockIdx.y = N tile, blockIdx.z = batch * M tiles + M tile).
__host__ __device__ __forceinline__ TileCoords tile_at(int index, int m_tiles, int n_tiles) {
  const int rest = index / n_tiles;
  return {rest % m_tiles, index % n_tiles, rest / m_tiles, 0, 0, 0};
}

// Spanning split (shared A): the launch's units (tile, K tile), tile-major in launch order, cut into
// one range per CTA, q or q + 1 units long (q = units / CTAs; the first r = units % CTAs get one more).
// A range is at most one tile long (the host checks), so it ends in the tile it starts in or in the
// next one: N tile + 1, or N tile 0 of the next M tile (or batch). CTA c's range is
// [span_begin(c), span_begin(c + 1)). The host passes q and r: a division in the kernel would move
// the range, and so the main loop's bounds, out of uniform registers, and every wgmma descriptor
// would then cost an R2UR (15 % slower per K tile, H100). The range's first tile is a unit index
// over k_tiles, by a multiply with the host's k_tiles_magic (span_split).
struct SpanSplit {
  int q, r;
  uint32_t k_tiles_magic;  // ceil(2^32 / K tiles)
};

// n / d as (n * ceil(2^32 / d)) >> 32: exact while n * (d - 1) < 2^32 (span_longest checks it; the
// host's plans stay far below: n <= 256 * 1024 units, d <= 1024 K tiles). The loop of subtractions
// it replaces cost ~20 cycles per tile before a spanning CTA's first load (1.3 us of setup at 112
// tiles, H100).
__host__ __device__ __forceinline__ uint32_t div_magic(uint32_t d) {
  return uint32_t(((uint64_t(1) << 32) + d - 1) / d);
}
__host__ __device__ __forceinline__ int div_by_magic(int n, uint32_t magic) {
  return int((uint64_t(uint32_t(n)) * magic) >> 32);
}
__host__ __device__ inline SpanSplit span_split(int units, int ctas, int k_tiles) {
  return {units / ctas, units % ctas, div_magic(uint32_t(k_tiles))};
}
__host__ __device__ __forceinline__ int span_begin(int cta, SpanSplit split) {
  return cta * split.q + (cta < split.r ? cta : split.r);
}
__host__ __device__ __forceinline__ int span_cta_of(int unit, SpanSplit split) {
  const int long_units = split.r * (split.q + 1);  // covered by the first r CTAs
  return unit < long_units ? unit / (split.q + 1) : split.r + (unit - long_units) / split.q;
}

// CTA c's range of a spanning split: its first tile (index `first`), from K tile k_tile_begin,
// first_len K tiles there and the rest from K tile 0 of tile first + 1. The range's bounds come from
// span_begin and the magic multiply (see SpanSplit); only the tile's coordinates divide.
struct SpanRange {
  TileCoords tile;
  int first;  // the first tile's index in launch order
};
__host__ __device__ __forceinline__ SpanRange span_range(int cta, SpanSplit split, int k_tiles, int m_tiles,
                                                         int n_tiles) {
  const int begin = span_begin(cta, split), end = span_begin(cta + 1, split);
  const int first = div_by_magic(begin, split.k_tiles_magic), offset = begin - first * k_tiles;
  TileCoords t = tile_at(first, m_tiles, n_tiles);
  t.k_tile_begin = offset, t.num_k_tiles = end - begin;
  t.first_len = end - begin < k_tiles - offset ? end - begin : k_tiles - offset;
  return {t, first};
}

// The longest range of a spanning split of `tiles` tiles of k_tiles K tiles over `ctas` CTAs, or 0
// where it cannot run: more tiles than CTAs, a range longer than one tile (it would touch three), or
// shorter than min_k_tiles or than a tile's share of kMaxSpanOwners (span_epilogue's owners).
__host__ __device__ inline int span_longest(int tiles, int k_tiles, int ctas, int min_k_tiles) {
  if (ctas <= 0 || tiles > ctas || k_tiles < 2) return 0;  // one K tile per tile: nothing to span (and no magic)
  const int units = tiles * k_tiles, shortest = units / ctas, longest = (units + ctas - 1) / ctas;
  const bool exact = int64_t(units) * (k_tiles - 1) < (int64_t(1) << 32);  // div_by_magic of every range start
  const bool fits = exact && longest <= k_tiles && kMaxSpanOwners * shortest >= k_tiles && shortest >= min_k_tiles;
  return fits ? longest : 0;
}

// Who reduces the tile CTA c's range ends in (`last`): the CTAs whose ranges end there (owners, one
// slice of the tile each), with the range that starts there and goes on into the next tile as one
// more partner (tail, its partial handed over mid-run) when there is one. CTA c itself hands over
// its first tile's partial when its range started in the tile before (spans).
struct SpanTile {
  int last, first_cta, owners, partners;
  bool tail, spans;
};
__host__ __device__ inline SpanTile span_tile(int cta, SpanSplit split, int k_tiles) {
  const int last = (span_begin(cta + 1, split) - 1) / k_tiles;
  const int first_cta = span_cta_of(last * k_tiles, split);
  const int last_cta = span_cta_of((last + 1) * k_tiles - 1, split);
  const bool tail = span_begin(last_cta + 1, split) > (last + 1) * k_tiles;
  const int owners = last_cta - first_cta + 1 - (tail ? 1 : 0);
  return {last, first_cta, owners, owners + (tail ? 1 : 0), tail, span_begin(cta, split) < last * k_tiles};
}

// Workspace slots of a spanning launch, two per CTA: CTA c hands its first tile's partial over in
// slot 2c and stores its share of its last tile's reduction in 2c + 1. Partner s of a tile's
// reduction (its owners in K order, then the tail) is read from span_slot(tile, s).
__host__ __device__ __forceinline__ int span_hand_over_slot(int cta) { return 2 * cta; }
__host__ __device__ __forceinline__ int span_slot(const SpanTile& t, int s) {
  return s < t.owners ? span_hand_over_slot(t.first_cta + s) + 1 : span_hand_over_slot(t.first_cta + s);
}

// Persistent launch (shared A, more tiles than resident CTAs): the launch's units are (tile, K
// range); CTA c runs units c, c + CTAs, ... Tiles go N tile fastest, so the CTAs at work at one
// time share few M tiles and each wave reads A's copy only in part from DRAM. With parts > 1 every
// split tile is cut into `parts` K ranges (as evenly as possible, as split-K does), so a last wave
// that would leave SMs idle is spread over all of them. Split units go in sweeps over the split
// tiles: sweep r runs part r + 1, and the last sweep part 0, the tile's owner, which adds the other
// parts (already in L2: earlier sweeps, or running at once on other CTAs) to its own in K order and
// writes C. An owner waits only on units of lower index, so with every CTA resident the launch
// cannot deadlock. Whole tiles (v16): the launch's first whole_tiles tiles (a multiple of the CTAs)
// run uncut, one per CTA per sweep, and only the rest are split: 384 x 7168 x 2304 (168 tiles on 132
// CTAs) then has 2 units on its busiest CTA (a tile and a third of one, 24 K tiles) instead of 3 (27
// K tiles), and each unit costs a boundary. Parts around the whole tiles (v17): a CTA runs its
// non-owner parts before its whole tiles and its owner part after them, so a part's partial is in L2
// long before its owner needs it, and the owner's exchange at the end of the call is only its loads
// (v16 ran both parts after the whole tiles: the owners waited 4 us for partials stored at the same
// time). Non-owner parts wait on nothing, so an owner waiting on them cannot deadlock either. With
// whole tiles the host keeps split tiles < CTAs: a CTA has at most one unit per sweep. The host
// passes the K split and the split tiles' magic: a division here would move the main loop's bounds
// out of uniform registers (see SpanSplit).
//
// The owner's part is the shortest (v17): after its main loop the owner still loads the other parts,
// adds them and writes C, 3.2 us on 384 x 7168 x 2304 against 1.3 for a part's store (H200 timeline,
// 2026-11-26), about 2.6 K tiles; kOwnerExchangeKTiles fewer K tiles than an even split (at least
// one) let the parts of a tile end together. The other parts share the rest as evenly as possible.
constexpr int kOwnerExchangeKTiles = 2;
__host__ __device__ inline int owner_k_tiles(int k_tiles, int parts) {
  if (parts <= 1) return k_tiles;
  const int shorter = k_tiles / parts - (NVFP4_SM90_EXPERIMENT(PERSISTENT_EVEN_PARTS) ? 0 : kOwnerExchangeKTiles);
  return shorter > 1 ? shorter : 1;
}
// The longest K part of a split tile (parts <= K tiles): the planner's measure of a split unit.
__host__ __device__ inline int longest_part(int k_tiles, int parts) {
  return parts <= 1 ? k_tiles : (k_tiles - owner_k_tiles(k_tiles, parts) + parts - 2) / (parts - 1);
}

struct PersistentSplit {
  int parts;
  int owner_k;       // K tiles of a split tile's owner part (part 0, the tile's first K tiles)
  int k_base, k_rem;  // parts 1.. share the rest: k_base = rest / (parts - 1), k_rem = rest % (parts - 1)
  int k_tiles;
  int whole_tiles;  // tiles [0, whole_tiles) run whole, before the split ones (0: every tile is split)
  int split_tiles;  // the others, >= 1
  uint32_t split_tiles_magic;  // div_magic(split_tiles), unused for one split tile
};
__host__ __device__ inline PersistentSplit persistent_split(int tiles, int k_tiles, int parts, int whole_tiles = 0) {
  const int split_tiles = tiles - whole_tiles, owner_k = owner_k_tiles(k_tiles, parts);
  const int others = parts > 1 ? parts - 1 : 1;
  return {parts, owner_k, (k_tiles - owner_k) / others, (k_tiles - owner_k) % others, k_tiles, whole_tiles, split_tiles,
          split_tiles > 1 ? div_magic(uint32_t(split_tiles)) : 0u};
}

// Host and device: tests/kernels/test_sm90_persistent_schedule.py runs this schedule on the CPU.
struct PersistentUnit {
  int sweep;  // -1: a whole tile; r >= 0: sweep r over the split tiles (r = parts - 1: the owners)
  int tile;   // a whole tile's index; a split unit's index among the split tiles
  int later;  // parts around whole tiles: on a non-owner part, the CTA's first whole tile; on a whole
              // tile, the CTA's owner unit (its split tile, -1: none)
  __host__ __device__ __forceinline__ bool active(const PersistentSplit& split) const { return sweep < split.parts; }
  __host__ __device__ __forceinline__ int part(const PersistentSplit& split) const {
    return sweep < 0 || sweep + 1 == split.parts ? 0 : sweep + 1;
  }
  __host__ __device__ __forceinline__ int parts(const PersistentSplit& split) const { return sweep < 0 ? 1 : split.parts; }
  __host__ __device__ __forceinline__ int launch_tile(const PersistentSplit& split) const {
    return sweep < 0 ? tile : split.whole_tiles + tile;
  }
  __host__ __device__ __forceinline__ static bool parts_around_whole(const PersistentSplit& split) {
    return split.whole_tiles > 0 && split.parts > 1 && !NVFP4_SM90_EXPERIMENT(PERSISTENT_PARTS_AFTER_WHOLE);
  }
  // The CTA's first unit.
  __host__ __device__ __forceinline__ static PersistentUnit first(int cta, const PersistentSplit& split) {
    if (!parts_around_whole(split)) {  // in index order: whole tiles, then sweep by sweep
      PersistentUnit u{-1, cta, 0};
      u.settle(split);
      return u;
    }
    PersistentUnit u{0, cta, cta};  // its split unit of sweep 0, or of a later sweep
    u.settle(split);
    u.leave_parts(split);
    return u;
  }
  // The CTA's next unit. The host keeps every step within one sweep or exact for the magic: CTAs <=
  // split tiles (at most one sweep on), or fewer split tiles than CTAs <= 256 (see persistent_plan_for).
  __host__ __device__ __forceinline__ void advance(int ctas, const PersistentSplit& split) {
    if (!parts_around_whole(split)) {
      tile += ctas;
      settle(split);
    } else if (sweep < 0) {  // whole tiles, then the owner unit if there is one
      tile += ctas;
      if (tile >= split.whole_tiles) sweep = later < 0 ? split.parts : split.parts - 1, tile = later;
    } else if (sweep + 1 == split.parts) {  // the owner unit was the CTA's last (one per sweep)
      sweep = split.parts;
    } else {
      tile += ctas;
      settle(split);
      leave_parts(split);
    }
  }
  // Past its non-owner parts, a CTA turns to its whole tiles and keeps its owner unit for after them.
  __host__ __device__ __forceinline__ void leave_parts(const PersistentSplit& split) {
    if (sweep + 1 < split.parts) return;
    const int owner = sweep + 1 == split.parts ? tile : -1;
    sweep = -1, tile = later, later = owner;
  }
  __host__ __device__ __forceinline__ void settle(const PersistentSplit& split) {
    if (sweep < 0) {
      if (tile < split.whole_tiles) return;
      tile -= split.whole_tiles, sweep = 0;
    }
    if (tile >= split.split_tiles) {  // one split tile has no 32-bit magic (2^32)
      const int q = tile < 2 * split.split_tiles ? 1
                    : split.split_tiles == 1     ? tile
                                                 : div_by_magic(tile, split.split_tiles_magic);
      sweep += q, tile -= q * split.split_tiles;
    }
  }
};

__host__ __device__ __forceinline__ TileCoords unit_coords(const PersistentUnit& u, const PersistentSplit& split,
                                                           int m_tiles, int n_tiles) {
  TileCoords t = tile_at(u.launch_tile(split), m_tiles, n_tiles);
  if (u.sweep < 0) {
    t.k_tile_begin = 0, t.num_k_tiles = t.first_len = split.k_tiles;
    return t;
  }
  const int other = u.part(split) - 1;  // -1: the owner
  if (other < 0) {
    t.k_tile_begin = 0, t.num_k_tiles = t.first_len = split.owner_k;
    return t;
  }
  const int num_k_tiles = split.k_base + (other < split.k_rem ? 1 : 0);
  t.k_tile_begin = split.owner_k + other * split.k_base + (other < split.k_rem ? other : split.k_rem);
  t.num_k_tiles = t.first_len = num_k_tiles;
  return t;
}

// The host's choice for a persistent launch of `tiles` tiles of k_tiles K tiles on `most` resident
// CTAs (more than that: tiles > most), with at most max_parts K parts per tile and `slots` workspace
// slots. Sweeps over all tiles: the parts that give the busiest CTA the fewest K tiles, the fewer
// on a tie; then as many CTAs as that busiest CTA's unit count requires, no more (the call takes as
// long either way, and fewer CTAs draw less power and DRAM at the start). Whole tiles first (where
// whole_first): every one of `most` CTAs runs tiles / most whole tiles, and the remaining tiles % most
// are cut into parts. Between the two, the busiest CTA's K tiles plus kUnitBoundaryKTiles per unit
// after its first decide, sweeps on a tie. ctas <= most < tiles; ctas <= split tiles, or split tiles
// < ctas <= 256 (PersistentUnit::advance's magic is exact below 2 * 256 * 256).
struct PersistentPlan {
  int ctas, parts, whole_tiles;
};

// A unit boundary of a persistent CTA, in K tiles of main loop: 384 x 7168 x 2304 whole tiles (2 units
// of 18 K tiles) took 36.5 us and 2 parts (3 units of 9) 33.2 on an H100 (2026-11-26); 2304 x 4608 x 7168's
// timeline, 0.76 us per K tile over 5 units against 0.72 without, puts a boundary at 2.9 us, 4 K tiles.
constexpr int kUnitBoundaryKTiles = 4;

inline PersistentPlan persistent_plan_for(int tiles, int k_tiles, int most, int max_parts, int slots,
                                          bool whole_first = true) {
  int best_parts = 1;
  int64_t best_k_tiles = INT64_MAX;
  for (int parts = 1; parts <= max_parts && parts <= k_tiles; ++parts) {
    if (int64_t(tiles) * (parts - 1) > slots) break;
    const int64_t units = int64_t(tiles) * parts;
    const int64_t busiest = (units + most - 1) / most * longest_part(k_tiles, parts);
    if (busiest < best_k_tiles) best_parts = parts, best_k_tiles = busiest;
  }
  const int64_t units = int64_t(tiles) * best_parts, waves = (units + most - 1) / most;
  const PersistentPlan sweeps{int((units + waves - 1) / waves), best_parts, 0};
  const int64_t split_tiles = tiles % most, whole_tiles = tiles - split_tiles;
  if (!whole_first || split_tiles == 0 || most > 256) return sweeps;
  int64_t best_cost = best_k_tiles + kUnitBoundaryKTiles * (waves - 1);
  PersistentPlan best = sweeps;
  for (int parts = 1; parts <= max_parts && parts <= k_tiles; ++parts) {
    if (split_tiles * (parts - 1) > slots) break;
    const int64_t split_units = (split_tiles * parts + most - 1) / most, units_on_busiest = whole_tiles / most + split_units;
    const int64_t cost = whole_tiles / most * k_tiles + split_units * longest_part(k_tiles, parts) +
                         kUnitBoundaryKTiles * (units_on_busiest - 1);
    if (cost < best_cost) best_cost = cost, best = {most, parts, int(whole_tiles)};
  }
  return best;
}

// Wide tiles (v20, shared A): the CTAs of a launch of 192-row tiles, one wave, unsplit; 0 where the
// plan keeps 128-row tiles. `knob` (NVFP4_SM90_WIDE_TILES) 1: only where the 128-row tiles would
// overfill one wave of resident CTAs (they would run persistent, the last tiles cut into K parts);
// 2: wherever the wide tiles fit one wave. Every CTA must be resident (the launch-wide barrier) and
// run at least min_k_tiles K tiles (what shared A needs to earn its copy back).
inline int wide_tiles_for(int m, int n, int l, int k_tiles, int resident_narrow, int resident_wide, int knob,
                          int min_k_tiles) {
  if (knob <= 0 || m % kWideTileM != 0 || k_tiles < min_k_tiles) return 0;
  const int64_t tiles = int64_t(m / kWideTileM) * (n / BLOCK_N) * l;
  if (tiles > resident_wide || tiles > kSharedAMaxCtas) return 0;
  const int64_t narrow = int64_t(m / BLOCK_M) * (n / BLOCK_N) * l;
  return knob >= 2 || narrow > resident_narrow ? int(tiles) : 0;
}

__device__ __forceinline__ uint32_t linear_cta() { return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }

// ---- Flags between CTAs (launch-wide barrier, split-K meetings): one poll, and what follows the last ----
// A flag is polled with acquire semantics, or (experiment RELAXED_POLLS) relaxed, with one acquire
// fence once every flag has been seen: ld.acquire.gpu invalidates L1 after each load.
__device__ __forceinline__ uint32_t poll_flag(const uint32_t* flag) {
  return NVFP4_SM90_EXPERIMENT(RELAXED_POLLS) ? sm90::ld_relaxed_gpu(flag) : sm90::ld_acquire_gpu(flag);
}
__device__ __forceinline__ void acquire_polled_flags() {
  if constexpr (NVFP4_SM90_EXPERIMENT(RELAXED_POLLS)) sm90::fence_acq_rel_gpu();
}

}  // namespace nvfp4_sm90
