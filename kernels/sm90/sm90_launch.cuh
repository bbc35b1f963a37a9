// Host side of the sm_90a NVFP4 GEMM: TMA descriptors for packed A and B and for the launch-wide
// fp16 copy of A, the launch of the planned kernel instance (sm90_plan.cuh), and the entry points of
// kernels/common/nvfp4_gemm_api.h plus the benchmark's plan query. Included at the end of
// nvfp4_gemm_sm90.cu, after the kernel template it launches.
#pragma once

#include <cuda.h>          // CUtensorMap types only (no -lcuda: the encoder comes from the runtime)
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "nvfp4_gemm_api.h"
#include "sm90_config.cuh"
#include "sm90_plan.cuh"
#include "sm90_scheduler.cuh"
#include "sm90_shared_a.cuh"  // g_shared_a
#include "sm90_timeline.cuh"
#include "tensor_map_encoder.cuh"

namespace nvfp4_sm90 {
namespace {  // internal linkage: see sm90_plan.cuh

using host_common::tensor_map_encoder;

// A 2-D uint8 map over packed fp4 rows (batch-major), one box = BLOCK_K/2 bytes x `box_rows` rows.
bool make_packed_map(CUtensorMap* map, const uint8_t* data, int rows, int k, int box_rows,
                     CUtensorMapSwizzle swizzle) {
  const cuuint64_t dims[2] = {cuuint64_t(k / 2), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(k / 2)};
  const cuuint32_t box[2] = {cuuint32_t(PACKED_ROW_BYTES), cuuint32_t(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  return tensor_map_encoder()(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<uint8_t*>(data), dims, strides,
                              box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// A 2-D fp16 map over the launch-wide decoded A copy ([l*m, k] row-major), one box = one 128B-swizzle
// atom (64 fp16 x tile_m rows: 128, or 192 for wide tiles), as the wgmma descriptors expect.
bool make_shared_a_map(CUtensorMap* map, int rows, int k, int tile_m) {
  void* copy = nullptr;  // looked up every call: a host-side static here reads like a result cache
  if (cudaGetSymbolAddress(&copy, g_shared_a) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  const cuuint64_t dims[2] = {cuuint64_t(k), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(k) * 2};
  const cuuint32_t box[2] = {cuuint32_t(A_ATOM_K), cuuint32_t(tile_m)};
  const cuuint32_t elem_strides[2] = {1, 1};
  return tensor_map_encoder()(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, copy, dims, strides, box, elem_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The launch count that tells one shared-A launch's barrier flags from the previous ones' (skips 0,
// the flags' initial value). Bookkeeping of launches, not of results.
uint32_t launch_epoch = 0;

// ctas: a spanning launch's grid (one dimension); a persistent launch's is plan.ctas; the others'
// grid is one CTA per (split-K rank, N tile, M tile of every batch), M tiles of kTileM rows.
template <int kClusterK, bool kSharedA, bool kSoftSplit = false, bool kSpan = false, bool kPersistent = false,
          int kTileM = BLOCK_M>
cudaError_t launch(const CUtensorMap& tmap_a, const CUtensorMap& tmap_b, const CUtensorMap& tmap_a16,
                   const Nvfp4GemmArgs& args, int ctas = 0, PersistentPlan plan = {0, 1, 0}) {
  const cudaError_t err = allow_large_smem<kClusterK, kSharedA, kSoftSplit, kSpan, kPersistent, kTileM>();
  if (err != cudaSuccess) return err;
  const dim3 grid = kPersistent ? dim3(plan.ctas, 1, 1)
                    : kSpan     ? dim3(ctas, 1, 1)
                                : dim3(kClusterK, args.n / BLOCK_N, (args.m / kTileM) * args.l);
  const int tiles = (args.m / BLOCK_M) * (args.n / BLOCK_N) * args.l;
  SpanSplit span{0, 0, 0};
  if constexpr (kSpan) {  // the planner keeps a spanning launch's units within an int (span_longest)
    span = span_split(tiles * (args.k / BLOCK_K), ctas, args.k / BLOCK_K);
  }
  const PersistentSplit persistent = persistent_split(tiles, args.k / BLOCK_K, plan.parts, plan.whole_tiles);
  if (++launch_epoch == 0) launch_epoch = 1;
  constexpr int kThreads = Plan<kSharedA, kTileM>::kThreads, kSmemBytes = Plan<kSharedA, kTileM>::kSmemBytes;
  nvfp4_gemm_sm90_kernel<kClusterK, kSharedA, kSoftSplit, kSpan, kPersistent, kTileM><<<grid, kThreads, kSmemBytes>>>(
      tmap_a, tmap_b, tmap_a16, args.a, args.sfa, args.sfb, static_cast<__half*>(args.c), args.m, args.n, args.k,
      args.l, launch_epoch, span, persistent);
  return cudaGetLastError();
}

template <int kWarpM16, int kWarpsK>
cudaError_t launch_direct(const Nvfp4GemmArgs& args) {
  const dim3 grid(unsigned(direct_grid_x(args.n, kWarpsK)), unsigned(direct_grid_y(args.m, args.l, 16 * kWarpM16)), 1);
  nvfp4_gemm_sm90_direct_kernel<kWarpM16, kWarpsK><<<grid, kDirectThreads>>>(
      args.a, args.b, args.sfa, args.sfb, static_cast<__half*>(args.c), args.m, args.n, args.k);
  return cudaGetLastError();
}

cudaError_t launch_direct(const DirectPlan& plan, const Nvfp4GemmArgs& args) {
  if (plan.warp_m == 64) return launch_direct<4, 1>(args);
  switch (plan.warps_k) {
    case 4: return launch_direct<2, 4>(args);
    case 2: return launch_direct<2, 2>(args);
    default: return launch_direct<2, 1>(args);
  }
}

template <bool kSharedA>
cudaError_t launch_with_cluster(int cluster_k, const CUtensorMap& tmap_a, const CUtensorMap& tmap_b,
                                const CUtensorMap& tmap_a16, const Nvfp4GemmArgs& args) {
  switch (cluster_k) {
    case 8: return launch<8, kSharedA>(tmap_a, tmap_b, tmap_a16, args);
    case 4: return launch<4, kSharedA>(tmap_a, tmap_b, tmap_a16, args);
#if NVFP4_SM90_ODD_SPLIT
    case 3: return launch<3, kSharedA>(tmap_a, tmap_b, tmap_a16, args);
#endif
    case 2: return launch<2, kSharedA>(tmap_a, tmap_b, tmap_a16, args);
    default: return launch<1, kSharedA>(tmap_a, tmap_b, tmap_a16, args);
  }
}

}  // namespace
}  // namespace nvfp4_sm90

const char* nvfp4_gemm_unsupported(int m, int n, int k, int l) {
  using namespace nvfp4_sm90;
  if (m <= 0 || n <= 0 || k <= 0 || l <= 0) return "m, n, k and l must be positive";
  if (m % BLOCK_M != 0) return "m must be a multiple of 128 (the kernel's tile M)";
  if (n % BLOCK_N != 0) return "n must be a multiple of 128 (the kernel's tile N)";
  if (k % 256 != 0) return "k must be a multiple of 256";
  if (int64_t(m / BLOCK_M) * l > 65535) return "m/128 * l must be at most 65535 (grid z limit)";
  if (int64_t(l) * m > INT_MAX || int64_t(l) * n > INT_MAX) return "l*m and l*n must fit in 32 bits";
  return nullptr;
}

// The launch plan for a supported shape (for benchmarks/sm90_kernel.py): the split-K cluster size,
// plus 100 when the launch shares one decoded copy of A, plus 1000 for a split without a cluster;
// a spanning split is 10000 + its number of CTAs, wide tiles 50000 + their number of CTAs, a
// persistent launch 100000 * its K parts per split tile + 1000 * its whole tiles per CTA + its number
// of CTAs, the direct kernel 10000000 + 10 * its A rows per warp + its warps along K.
int nvfp4_sm90_plan(int m, int n, int k, int l) {
  using namespace nvfp4_sm90;
  const LaunchPlan plan = choose_plan(m, n, k, l);
  if (plan.direct.warp_m > 0) return 10000000 + 10 * plan.direct.warp_m + plan.direct.warps_k;
  if (const PersistentPlan& p = plan.persistent; plan.shared_a && p.ctas > 0)
    return 100000 * p.parts + 1000 * min(p.whole_tiles / p.ctas, 99) + p.ctas;
  if (plan.shared_a && plan.span_ctas > 0) return 10000 + plan.span_ctas;
  if (plan.tile_m == kWideTileM) return 50000 + (m / kWideTileM) * (n / BLOCK_N) * l;
  return plan.cluster_k + (plan.shared_a ? 100 : 0) + (plan.soft_split ? 1000 : 0);
}

#if NVFP4_SM90_EXPERIMENT(TIMELINE)
// Copies the last launch's timeline ([CTA][TimelineEvent], up to max_ctas CTAs) to host memory.
int nvfp4_sm90_timeline(uint64_t* host, int max_ctas) {
  using namespace nvfp4_sm90;
  const size_t ctas = size_t(max_ctas < kTimelineMaxCtas ? max_ctas : kTimelineMaxCtas);
  return int(cudaMemcpyFromSymbol(host, g_timeline, ctas * kTimelineEvents * sizeof(uint64_t)));
}
#endif

cudaError_t nvfp4_gemm_launch(const Nvfp4GemmArgs& args) {
  using namespace nvfp4_sm90;
  const host_common::OnLaunchGpu on_gpu;  // one GPU query for the whole plan and launch
  if (nvfp4_gemm_unsupported(args.m, args.n, args.k, args.l) != nullptr) return cudaErrorInvalidValue;
  // TMA, bulk copies, the direct kernel's row loads and C's stores all move 16 bytes at a time
  for (const void* p : {static_cast<const void*>(args.a), static_cast<const void*>(args.b),
                        static_cast<const void*>(args.sfa), static_cast<const void*>(args.sfb),
                        static_cast<const void*>(args.c)})
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return cudaErrorInvalidValue;
  const LaunchPlan plan = choose_plan(args.m, args.n, args.k, args.l);
  if (plan.direct.warp_m > 0) return launch_direct(plan.direct, args);  // no tensor maps
  if (tensor_map_encoder() == nullptr) return cudaErrorSymbolNotFound;
  CUtensorMap tmap_a, tmap_b, tmap_a16 = {};
  if (!make_packed_map(&tmap_a, args.a, args.l * args.m, args.k, BLOCK_M, CU_TENSOR_MAP_SWIZZLE_64B) ||
      !make_packed_map(&tmap_b, args.b, args.l * args.n, args.k, BLOCK_N, CU_TENSOR_MAP_SWIZZLE_NONE))
    return cudaErrorInvalidValue;
#if NVFP4_SM90_SHARED_A
  if (plan.shared_a && make_shared_a_map(&tmap_a16, args.l * args.m, args.k, plan.tile_m)) {
    if (plan.tile_m == kWideTileM) return launch<1, true, false, false, false, kWideTileM>(tmap_a, tmap_b, tmap_a16, args);
#if NVFP4_SM90_PERSISTENT
    if (plan.persistent.ctas > 0)
      return launch<1, true, false, false, true>(tmap_a, tmap_b, tmap_a16, args, 0, plan.persistent);
#endif
#if NVFP4_SM90_SPAN
    if (plan.span_ctas > 0) return launch<1, true, false, true>(tmap_a, tmap_b, tmap_a16, args, plan.span_ctas);
#endif
    if (plan.soft_split)
      return plan.cluster_k == 8 ? launch<8, true, true>(tmap_a, tmap_b, tmap_a16, args)
                                 : launch<4, true, true>(tmap_a, tmap_b, tmap_a16, args);
    return launch_with_cluster<true>(plan.cluster_k, tmap_a, tmap_b, tmap_a16, args);
  }
#endif
  // per-CTA A (also if the shared copy's map could not be made: slower, never wrong)
  if (!plan.shared_a && plan.soft_split)
    return plan.cluster_k == 8 ? launch<8, false, true>(tmap_a, tmap_b, tmap_a16, args)
                               : launch<4, false, true>(tmap_a, tmap_b, tmap_a16, args);
  const int tiles = (args.m / BLOCK_M) * (args.n / BLOCK_N) * args.l;
  const PlanKnobs knobs = plan_knobs(args.m, args.n, args.k, args.l);
  return launch_with_cluster<false>(plan.shared_a ? choose_cluster_k<false>(tiles, args.k, knobs) : plan.cluster_k, tmap_a,
                                    tmap_b, tmap_a16, args);
}
