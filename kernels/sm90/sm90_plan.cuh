// Host planner of the sm_90a NVFP4 GEMM: what this GPU can run at once (occupancy queries, cached
// per GPU) and, per problem, the launch plan (split-K over a cluster or without one, spanning
// split, shared or per-CTA A). The thresholds are knobs of sm90_config.cuh, overridable per shape in
// the dispatch table (sm90_dispatch.cuh). Included at the end of nvfp4_gemm_sm90.cu, after the
// kernel template it queries.
#pragma once

#include <cuda_runtime.h>
#include <cstdint>

#include "nvfp4_gemm_sm90_direct.cuh"  // DirectPlan, direct_plan_for
#include "sm90_config.cuh"
#include "sm90_dispatch.cuh"
#include "per_gpu.cuh"

namespace nvfp4_sm90 {
// Everything host-side has internal linkage. A function-local static in a template (or inline)
// function is one process-wide object (STB_GNU_UNIQUE) shared by every module that contains the
// same code: with two builds of this kernel loaded (ctypes variants, the torch extension), the
// second one skipped its own cudaFuncSetAttribute and its launches failed with "invalid argument".
namespace {

constexpr int kClusterKSlots = 5;  // cluster_k = 1, 2, 4, 8, 3
constexpr int cluster_slot(int cluster_k) {
  return cluster_k == 3 ? 4 : cluster_k == 8 ? 3 : cluster_k == 4 ? 2 : cluster_k == 2 ? 1 : 0;
}
// Launch settings and properties of one GPU and this kernel, not results: one set per GPU
// (host_common::per_device), since a process may drive several.
struct GpuState {
  // [shared A][software split][spanning][persistent][cluster slot][wide tile]
  bool smem_limit_raised[2][2][2][2][kClusterKSlots][2] = {};
  int max_active_clusters[2][kClusterKSlots] = {{-1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1}};  // [shared A][slot]
  // software split, spanning split, persistent launch: resident CTAs for [shared A]; wide tiles
  int resident_ctas[2] = {-1, -1};
  int resident_wide_ctas = -1;
};
GpuState gpu_states[host_common::kMaxCachedDevices];
GpuState gpu_state_scratch;
GpuState& gpu_state() { return host_common::per_device(gpu_states, gpu_state_scratch); }

template <int kClusterK, bool kSharedA, bool kSoftSplit = false, bool kSpan = false, bool kPersistent = false,
          int kTileM = BLOCK_M>
cudaError_t allow_large_smem() {
  bool& raised =
      gpu_state().smem_limit_raised[kSharedA][kSoftSplit][kSpan][kPersistent][cluster_slot(kClusterK)][kTileM != BLOCK_M];
  if (!raised) {
    const cudaError_t err =
        cudaFuncSetAttribute(nvfp4_gemm_sm90_kernel<kClusterK, kSharedA, kSoftSplit, kSpan, kPersistent, kTileM>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, Plan<kSharedA, kTileM>::kSmemBytes);
    if (err != cudaSuccess) return err;
    raised = true;
  }
  return cudaSuccess;
}

// How many clusters of kClusterK CTAs the GPU runs at once. Clusters must fit inside one GPC, so
// this is below num_sms / kClusterK (seen on an H100: 128 CTAs in clusters of 4 ran as two waves).
template <int kClusterK, bool kSharedA>
int max_active_clusters() {
  int& cached = gpu_state().max_active_clusters[kSharedA][cluster_slot(kClusterK)];
  if (cached < 0) {
    int clusters = 0;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(kClusterK, 1, 1);
    config.blockDim = dim3(Plan<kSharedA>::kThreads, 1, 1);
    config.dynamicSmemBytes = Plan<kSharedA>::kSmemBytes;
    if (allow_large_smem<kClusterK, kSharedA>() != cudaSuccess ||
        cudaOccupancyMaxActiveClusters(&clusters, nvfp4_gemm_sm90_kernel<kClusterK, kSharedA, false>, &config) !=
            cudaSuccess) {
      (void)cudaGetLastError();  // not fatal: fall back to no split (and no shared A)
      clusters = 0;
    }
    cached = clusters;
  }
  return cached;
}

template <bool kSharedA>
int max_active_clusters_of(int cluster_k) {
  switch (cluster_k) {
    case 8: return max_active_clusters<8, kSharedA>();
    case 4: return max_active_clusters<4, kSharedA>();
    case 3: return max_active_clusters<3, kSharedA>();
    case 2: return max_active_clusters<2, kSharedA>();
    default: return max_active_clusters<1, kSharedA>();
  }
}

// The resident CTAs on this GPU of one kernel instance (one per SM), queried once per GPU into
// `cached`; 0 where the query fails (not fatal: the plans that need it are not taken).
template <int kClusterK, bool kSharedA, bool kSoftSplit, int kTileM = BLOCK_M>
int resident_ctas_of(int& cached) {
  if (cached < 0) {
    int device = 0, sms = 0, per_sm = 0;
    using P = Plan<kSharedA, kTileM>;
    if (allow_large_smem<kClusterK, kSharedA, kSoftSplit, false, false, kTileM>() != cudaSuccess ||
        cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, nvfp4_gemm_sm90_kernel<kClusterK, kSharedA, kSoftSplit, false, false, kTileM>, P::kThreads,
            P::kSmemBytes) != cudaSuccess) {
      (void)cudaGetLastError();
      sms = per_sm = 0;
    }
    cached = sms * per_sm;
  }
  return cached;
}

// Software split, spanning split, persistent launch: the kernel's resident CTAs, for shared A or
// per-CTA A; wide tiles (one per SM: 171 KB of shared memory).
template <bool kSharedA = true>
int resident_ctas() {
  if constexpr (kSharedA && !NVFP4_SM90_SHARED_A) {  // no shared-A kernel is built (the v1 experiment's loop has none)
    return 0;
  } else {
    return resident_ctas_of<4, kSharedA, true>(gpu_state().resident_ctas[kSharedA]);
  }
}

int resident_wide_ctas() {
  if constexpr (!NVFP4_SM90_SHARED_A) {
    return 0;
  } else {
    return resident_ctas_of<1, true, false, kWideTileM>(gpu_state().resident_wide_ctas);
  }
}

// The plan knobs for one shape: their compile-time values, overridden by the shape's entries in
// the dispatch table (sm90_dispatch.cuh). Build-time limits still apply: a kernel instance a knob
// would need but the build lacks (ODD_SPLIT, SOFT_SPLIT, SHARED_A, PERSISTENT, SPAN compiled as 0) is never chosen.
struct PlanKnobs {
  int max_cluster_k = NVFP4_SM90_MAX_CLUSTER_K;
  int odd_split = NVFP4_SM90_ODD_SPLIT;
  int soft_split = NVFP4_SM90_SOFT_SPLIT;
  int span = NVFP4_SM90_SPAN;
  int span_ctas = NVFP4_SM90_SPAN_CTAS;
  int span_min_gain = NVFP4_SM90_SPAN_MIN_GAIN;
  int shared_a = NVFP4_SM90_SHARED_A;
  int shared_a_min_k_tiles = NVFP4_SM90_SHARED_A_MIN_K_TILES;
  int persistent = NVFP4_SM90_PERSISTENT;
  int persistent_max_parts = NVFP4_SM90_PERSISTENT_MAX_PARTS;
  int direct_max_units = NVFP4_SM90_DIRECT_MAX_UNITS;
  int direct_warp_m = NVFP4_SM90_DIRECT_WARP_M;
  int direct_warps_k = NVFP4_SM90_DIRECT_WARPS_K;
  int wide_tiles = NVFP4_SM90_WIDE_TILES;
};

PlanKnobs plan_knobs(int m, int n, int k, int l) {
  PlanKnobs knobs;
#ifdef NVFP4CTL_TUNE  // a `nvfp4ctl tune` candidate: its -D values alone decide, the table would override them
  (void)m, (void)n, (void)k, (void)l;
#else
  for (const DispatchEntry& e : kDispatchTable) {
    if (e.m != m || e.n != n || e.k != k || e.l != l) continue;
    switch (e.knob) {
      case PlanKnob::MAX_CLUSTER_K: knobs.max_cluster_k = e.value; break;
      case PlanKnob::ODD_SPLIT: knobs.odd_split = e.value; break;
      case PlanKnob::SOFT_SPLIT: knobs.soft_split = e.value; break;
      case PlanKnob::SPAN: knobs.span = e.value; break;
      case PlanKnob::SPAN_CTAS: knobs.span_ctas = e.value; break;
      case PlanKnob::SPAN_MIN_GAIN: knobs.span_min_gain = e.value; break;
      case PlanKnob::SHARED_A: knobs.shared_a = e.value; break;
      case PlanKnob::SHARED_A_MIN_K_TILES: knobs.shared_a_min_k_tiles = e.value; break;
      case PlanKnob::PERSISTENT: knobs.persistent = e.value; break;
      case PlanKnob::PERSISTENT_MAX_PARTS: knobs.persistent_max_parts = e.value; break;
      case PlanKnob::DIRECT_MAX_UNITS: knobs.direct_max_units = e.value; break;
      case PlanKnob::DIRECT_WARP_M: knobs.direct_warp_m = e.value; break;
      case PlanKnob::DIRECT_WARPS_K: knobs.direct_warps_k = e.value; break;
      case PlanKnob::WIDE_TILES: knobs.wide_tiles = e.value; break;
    }
  }
#endif
  return knobs;
}

struct Split {
  int cluster_k;
  bool soft;  // the CTAs of a tile meet through global flags, not as a hardware cluster
};

// Split K only while the whole grid still runs in one wave and SMs would otherwise idle; every CTA
// keeps whole K tiles (one or more). The split with the fewest K tiles on its busiest CTA wins, the
// smaller one on a tie. Hardware clusters must fit the GPCs (on an H100, 32 clusters of 4 ran as two
// waves); while every CTA is resident a split of 4 or 8 may run without a cluster (shared A, or
// per-CTA A where the caller allows it).
template <bool kSharedA>
Split choose_split(int tiles, int k, bool allow_soft, const PlanKnobs& knobs) {
  const int k_tiles = k / BLOCK_K;
  Split best{1, false};
  int best_k_tiles = k_tiles;
  const auto consider = [&](int cluster_k, bool soft_allowed) {
    const int busiest = (k_tiles + cluster_k - 1) / cluster_k;
    if (knobs.max_cluster_k < cluster_k || cluster_k > k_tiles || busiest >= best_k_tiles ||
        tiles * cluster_k > kL2PartialCtas)
      return;
    if (tiles <= max_active_clusters_of<kSharedA>(cluster_k))
      best = {cluster_k, false}, best_k_tiles = busiest;
    // a build compiled with NVFP4_SM90_SOFT_SPLIT=0 has none, whatever the table says (a GPU shared with other work)
    else if (NVFP4_SM90_SOFT_SPLIT && knobs.soft_split && allow_soft && soft_allowed &&
             tiles * cluster_k <= resident_ctas<kSharedA>())
      best = {cluster_k, true}, best_k_tiles = busiest;
  };
  consider(2, false);
#if NVFP4_SM90_ODD_SPLIT
  if (knobs.odd_split) consider(3, false);
#endif
  consider(4, true);
  consider(8, true);
  return best;
}

template <bool kSharedA>
int choose_cluster_k(int tiles, int k, const PlanKnobs& knobs) {
  return choose_split<kSharedA>(tiles, k, false, knobs).cluster_k;
}

struct LaunchPlan {
  int cluster_k;
  bool shared_a;
  bool soft_split;
  int span_ctas = 0;  // > 0: a spanning split over this many CTAs (shared A, cluster_k 1)
  PersistentPlan persistent = {0, 1, 0};  // ctas > 0: a persistent launch (shared A, cluster_k 1)
  DirectPlan direct = {};  // warp_m > 0: the direct kernel (nvfp4_gemm_sm90_direct.cuh) instead of all the above
  int tile_m = BLOCK_M;    // kWideTileM: one unsplit wave of wide tiles (shared A, cluster_k 1)
};

// A spanning split needs every CTA resident (it meets through flags) with two workspace slots, no
// more tiles than CTAs, ranges of at most one tile (so at most two tiles each) and of at least a
// quarter of one (at most kMaxSpanOwners owners per tile), enough K tiles per CTA for shared A, and it
// must shorten the busiest CTA's range by at least SPAN_MIN_GAIN % over the split it replaces. Its
// ranges may cross from one M tile (or batch) into the next: each tile's A rows come from the copy.
// In place of an unsplit launch (no partials at all) it must also save more than the exchange costs:
// kSpanExchangeKTiles K tiles of main loop. Timeline of 256 x 7168 x 2048 (H100, 2026-11-26): the
// spanning epilogue took 3.8 us from the last wgmma to exit, the unsplit one 1.0 (staged C), ~4 K
// tiles at 0.72 us; there the span's 14 K tiles instead of 16 measured 22.4 us against 19.3.
constexpr int kSpanExchangeKTiles = 4;
int span_ctas(int m, int n, int k, int l, int busiest_k_tiles, bool replaces_split, const PlanKnobs& knobs) {
  const int most = min(resident_ctas(), min(kSharedAMaxCtas, kL2PartialSlots / 2));
  const int ctas = knobs.span_ctas > 0 ? min(knobs.span_ctas, most) : most;
  const int tiles = (m / BLOCK_M) * (n / BLOCK_N) * l, k_tiles = k / BLOCK_K;
  if (!NVFP4_SM90_SPAN || !knobs.span || (NVFP4_SM90_EXPERIMENT(SPAN_ONE_M_TILE) && (m / BLOCK_M) * l != 1)) return 0;
  // tiles <= ctas <= 256 and k_tiles <= 1024 (shared A's capacity / 128 rows): the units fit an int
  const int longest = span_longest(tiles, k_tiles, ctas, max(knobs.shared_a_min_k_tiles, max(Plan<true>::kLocalATiles, 1)));
  const bool worth_exchange = replaces_split || longest + kSpanExchangeKTiles < busiest_k_tiles;
  return longest > 0 && worth_exchange && 100 * longest <= (100 - knobs.span_min_gain) * busiest_k_tiles ? ctas : 0;
}

// A persistent launch: more tiles than resident CTAs, so one CTA per SM loops over them (shared A
// needs every CTA resident); its parts, whole tiles and CTAs: persistent_plan_for (sm90_scheduler.cuh).
PersistentPlan plan_persistent(int tiles, int k, const PlanKnobs& knobs) {
  const int most = min(resident_ctas(), kSharedAMaxCtas), k_tiles = k / BLOCK_K;
  if (!NVFP4_SM90_PERSISTENT || !knobs.persistent || most <= 0 || tiles <= most ||
      k_tiles < knobs.shared_a_min_k_tiles)
    return {0, 1, 0};
  return persistent_plan_for(tiles, k_tiles, most, min(knobs.persistent_max_parts, kMaxPersistentParts),
                             kL2PartialSlots, !NVFP4_SM90_EXPERIMENT(PERSISTENT_SWEEPS_ONLY));
}

// The direct kernel (nvfp4_gemm_sm90_direct.cuh, direct_plan_for): for calls too short for the
// pipeline's fixed chain. An unknown SM count (0) plans as if the grid never filled the GPU.
DirectPlan plan_direct(int m, int n, int k, int l, const PlanKnobs& knobs) {
  if (knobs.direct_max_units <= 0 || NVFP4_SM90_EXPERIMENT(NO_DIRECT)) return {};
  return direct_plan_for(m, n, k, l, host_common::sm_count(), knobs.direct_max_units, knobs.direct_warp_m,
                         knobs.direct_warps_k);
}

// Shared A needs every CTA of the launch resident at once (its barrier waits for all of them) and
// A small enough for the global copy; it costs a few microseconds up front (the launch-wide decode
// and barrier), so it is used only where CTAs run long enough to earn that back. Wide tiles come
// first (wide_tiles_for: where 128-row tiles overfill a wave that 192-row ones fit). A grid too large
// to be resident runs persistent. Otherwise each CTA decodes its own A.
LaunchPlan choose_plan(int m, int n, int k, int l) {
  const PlanKnobs knobs = plan_knobs(m, n, k, l);
  if (const DirectPlan direct = plan_direct(m, n, k, l, knobs); direct.warp_m > 0) {
    LaunchPlan plan{1, false, false};
    plan.direct = direct;
    return plan;
  }
  const int tiles = (m / BLOCK_M) * (n / BLOCK_N) * l;
#if NVFP4_SM90_SHARED_A
  if (knobs.shared_a && int64_t(l) * m * k <= kSharedACapacity) {
    // the wide kernel's occupancy is queried (and the kernel loaded) only where wide tiles could run
    if (knobs.wide_tiles > 0 && m % kWideTileM == 0 &&
        wide_tiles_for(m, n, l, k / BLOCK_K, resident_ctas(), resident_wide_ctas(), knobs.wide_tiles,
                       knobs.shared_a_min_k_tiles) > 0) {
      LaunchPlan plan{1, true, false};
      plan.tile_m = kWideTileM;
      return plan;
    }
    for (const bool allow_soft : {true, false}) {  // a finer split without a cluster may leave too few K tiles
      const Split split = choose_split<true>(tiles, k, allow_soft, knobs);
      const int busiest_k_tiles = (k / BLOCK_K + split.cluster_k - 1) / split.cluster_k;
      const bool resident = split.soft || tiles <= max_active_clusters_of<true>(split.cluster_k);
      if (busiest_k_tiles >= knobs.shared_a_min_k_tiles && resident && tiles * split.cluster_k <= kSharedAMaxCtas)
        return {split.cluster_k, true, split.soft, span_ctas(m, n, k, l, busiest_k_tiles, split.cluster_k > 1, knobs)};
    }
    if (const PersistentPlan p = plan_persistent(tiles, k, knobs); p.ctas > 0) return {1, true, false, 0, p};
  }
#endif
  const Split split = choose_split<false>(tiles, k, !NVFP4_SM90_EXPERIMENT(SHARED_A_ONLY_SOFT_SPLIT), knobs);
  return {split.cluster_k, false, split.soft};
}

}  // namespace
}  // namespace nvfp4_sm90
