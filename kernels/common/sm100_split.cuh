// Spanning split-K for the sm_100a tcgen05 kernel, kept free of tcgen05 so the same code builds for
// sm_90a and runs on an H100 (tests/sm100/split_gpu) and on the host (the plan printer).
//
// The launch's work is tiles x k_tiles units (tile-major). CTA c of `ctas` takes the contiguous
// units [c*U/ctas, (c+1)*U/ctas): a range may start inside one tile and end inside another. The
// part of a range inside one tile is a segment. A segment that holds its tile's last K tile is the
// tile's owner: it writes C. Every other segment (at most one per CTA: the last one of its range)
// stores its fp32 partial in its CTA's workspace slot and raises its CTA's flag. An owner whose
// segment starts after the tile's first K tile adds the partials of the CTAs before it, in CTA
// order, to its own accumulator (deterministic: the order depends on the shape only).
//
// Order of work inside a CTA: its partial segment first, then the others in K order. A partial is
// then ready early in its CTA's run, so an owner never waits for a CTA that is itself waiting:
// no chain of waits across the launch. The flag waits need every CTA resident at once; the host
// keeps ctas <= SMs (one CTA per SM) and checks with the occupancy API that they fit.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#include "mbarrier_ptx.cuh"  // global_timer_ns (plain PTX: builds for sm_90a too)
#endif

namespace sm100_split {

struct Segment {
  int tile;
  int k_begin;       // first K tile (in units of the kernel's BLOCK_K) of this segment
  int k_end;         // one past the last
  bool owner;        // holds the tile's last K tile: writes C
  bool reduce;       // owner that also adds partials of earlier CTAs (first K tile not ours)
};

struct SpanPlan {
  int tiles;
  int k_tiles;  // per tile
  int ctas;

  __host__ __device__ int64_t units() const { return int64_t(tiles) * k_tiles; }
  __host__ __device__ int64_t range_begin(int cta) const { return int64_t(cta) * units() / ctas; }
  __host__ __device__ int64_t range_end(int cta) const { return range_begin(cta + 1); }

  __host__ __device__ int first_tile(int cta) const { return int(range_begin(cta) / k_tiles); }
  __host__ __device__ int last_tile(int cta) const { return int((range_end(cta) - 1) / k_tiles); }
  __host__ __device__ int num_segments(int cta) const {
    return range_end(cta) > range_begin(cta) ? last_tile(cta) - first_tile(cta) + 1 : 0;
  }
  // The range's last segment stops inside its tile: that segment yields a partial.
  __host__ __device__ bool ends_in_partial(int cta) const { return range_end(cta) % k_tiles != 0; }

  // Segment i of CTA `cta` in processing order (partial segment first).
  __host__ __device__ Segment segment(int cta, int i) const {
    const int count = num_segments(cta);
    const bool rotate = ends_in_partial(cta) && count > 1;
    const int natural = rotate ? (i == 0 ? count - 1 : i - 1) : i;
    const int tile = first_tile(cta) + natural;
    const int64_t tile_begin = int64_t(tile) * k_tiles;
    const int64_t begin = range_begin(cta) > tile_begin ? range_begin(cta) : tile_begin;
    const int64_t end = range_end(cta) < tile_begin + k_tiles ? range_end(cta) : tile_begin + k_tiles;
    Segment s;
    s.tile = tile;
    s.k_begin = int(begin - tile_begin);
    s.k_end = int(end - tile_begin);
    s.owner = s.k_end == k_tiles;
    s.reduce = s.owner && s.k_begin > 0;
    return s;
  }

  // The first CTA whose range reaches into `tile` (the owner adds partials from it up to itself).
  __host__ __device__ int first_contributor(int tile) const {
    // smallest c with range_end(c) > tile * k_tiles, i.e. (c + 1) * U / ctas > tile * k_tiles
    const int64_t start = int64_t(tile) * k_tiles;
    int64_t c = (start + 1) * ctas / units();  // close from below; step to the exact one
    while (c > 0 && range_end(int(c - 1)) > start) --c;
    while (range_end(int(c)) <= start) ++c;
    return int(c);
  }
};

#if defined(__CUDACC__)
// ---- the exchange: workspace slots and flags in global memory ----
// A flag holds the epoch of the launch whose partial is in the slot, so flags never need a reset.
__device__ __forceinline__ void publish_flag(uint32_t* flag, uint32_t epoch) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(epoch) : "memory");
}

__device__ __forceinline__ uint32_t load_flag(const uint32_t* flag) {
  uint32_t value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// Spins until `flag` holds `epoch`; traps after kTimeoutNs instead of hanging the GPU (a CTA that
// never ran: not every CTA resident). Each poll is an L2 round trip, so reading the timer on every
// one costs nothing that matters.
template <uint64_t kTimeoutNs>
__device__ __forceinline__ void wait_flag(const uint32_t* flag, uint32_t epoch) {
  const uint64_t start = ptx_common::global_timer_ns();
  while (load_flag(flag) != epoch) {
    __nanosleep(64);
    if (ptx_common::global_timer_ns() - start > kTimeoutNs) __trap();
  }
}

// The exchange of one launch: a fp32 slot of one tile per CTA and the CTA's flag. Slot layout
// [column][row] for a tile of kRows x kCols, so the 32 lanes of a warp (32 consecutive rows) write
// and read 128 contiguous bytes per column. A flag wait traps after kTimeoutNs.
template <int kRows, int kCols, uint64_t kTimeoutNs>
struct Exchange {
  float* slots;     // [ctas][kCols][kRows]
  uint32_t* flags;  // [ctas]
  uint32_t epoch;

  __device__ float* slot(int cta) const { return slots + int64_t(cta) * kRows * kCols; }

  // Waits for every partial an owner segment adds (none unless seg.reduce); returns the first
  // source CTA (sources are first .. cta - 1).
  __device__ int wait_sources(const SpanPlan& plan, const Segment& seg, int cta) const {
    const int first = seg.reduce ? plan.first_contributor(seg.tile) : cta;
    for (int source = first; source < cta; ++source) wait_flag<kTimeoutNs>(&flags[source], epoch);
    return first;
  }

  // pre[c] = sum of every source's partial at (row, c), added in CTA order starting from 0: the
  // same additions in the same order on every run. All kCols loads of a source are independent, so
  // a thread keeps many in flight (this runs while the owner's own MMAs may still be going).
  __device__ void sum_sources(int first, int cta, int row, float (&pre)[kCols]) const {
#pragma unroll
    for (int c = 0; c < kCols; ++c) pre[c] = 0.0f;
    for (int source = first; source < cta; ++source) {
      const float* s = slot(source);
#pragma unroll
      for (int c = 0; c < kCols; ++c) pre[c] += __ldcg(s + c * kRows + row);
    }
  }

  __device__ void store(int cta, int row, int col, const float (&v)[32]) const {
    float* s = slot(cta);
#pragma unroll
    for (int j = 0; j < 32; ++j) __stcg(s + (col + j) * kRows + row, v[j]);
  }

  // After every thread of the storing group stored its part: fence, the group's barrier, then one
  // release of the flag.
  template <class GroupBarrier>
  __device__ void publish(int cta, bool leader, GroupBarrier group_barrier) const {
    __threadfence();
    group_barrier();
    if (leader) publish_flag(&flags[cta], epoch);
  }
};
#endif

}  // namespace sm100_split
