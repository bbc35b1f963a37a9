// Fused NVFP4 block-scaled GEMM for sm_90a (H100 / H200): C[m, n] = sum_k A[m, k] B[n, k], with
// A, B e2m1 (two per byte, K-major), one e4m3 scale per 16 K values of every row, fp32
// accumulation and fp16 C. Hopper has no fp4 tensor-core op, so the kernel decodes to fp16 (exact)
// and multiplies with wgmma.
//
// It computes C^T = B * A^T: B (n rows, the big operand) is decoded straight into registers as
// wgmma's A operand; A (128 rows per CTA) sits in shared memory as fp16, wgmma's B operand (N = 128),
// shared by both math warpgroups.
//
// K order. A dot product may visit K in any order as long as both operands agree, and every value
// keeps its own block's scale. Within a K step of BLOCK_K = 128 a math thread with quad index t
// (lane % 4) loads one 16-byte chunk t of each of its two B rows (physical k = 32t .. 32t + 31);
// word w of that chunk (physical k = 32t + 8w + i, nibble i) feeds wgmma k-steps 2w and 2w + 1:
//   logical (k-step ks = 2w + h, column kappa = 2t + e + 8f)  <->  physical k = 32t + 8w + 4h + 2e + f
// The decode WG writes A into shared memory in exactly that logical order, with the same decoder.
//
// Three ways to get A (the host planner decides per launch):
// - shared A (v7, v9): while every CTA of the launch is resident at once, the launch first decodes
//   all of A once into a global fp16 copy (each thread a few 32-value pieces, written 512 contiguous
//   bytes per warp store), waits on a launch-wide barrier (one flag per CTA), and then every CTA
//   loads its fp16 A slices by TMA (128B swizzle) next to its packed B. v19 starts the copy at
//   once, beside the producer's setup, and polls the barrier while the math warps decode local A.
//   Each CTA used to decode A for its own K range: with M = 128 that is as much decode work as all
//   of B (56 N tiles repeat it), and it cost 22 us of 91 on the largest bench shape.
// - persistent shared A (v12): a grid with more tiles than resident CTAs gets one CTA per SM, each
//   looping over (tile, K part) units with the same copy; a tile's owner part runs last and adds the
//   others (sm90_scheduler.cuh, PersistentUnit). v16 runs whole tiles and cuts only the remainder
//   that leaves SMs idle; v17 runs a CTA's other parts before its whole tiles and its owner part
//   (the shortest) after them, so the owner finds the partials in L2 and the parts end together.
// - per-CTA A (v6, any grid): decode warpgroups (two since v18) turn each packed A stage into fp16 buffers.
// Wide tiles (v20, kTileM = 192): where 128-row tiles would overfill one wave of resident CTAs but
// 192-row ones fit it (384 x 7168 x 2304: 112 tiles instead of 168 on 132 SMs), a shared-A launch
// runs one unsplit wave of 192-row tiles (wgmma n192, 96 accumulators per math thread, 3 stages of
// 57 KB) instead of a persistent launch that cuts the last tiles into K parts. Their local A tiles
// come from the two 128-row chunks of packed A that hold the tile's rows.
//
// Roles (DeepGEMM style): warpgroups 0-1 math (wgmma, B decode), warpgroups 2-3 (per-CTA A only;
// v18, one before: NVFP4_SM90_A_DECODE_WARPGROUPS) decode A into the fp16 buffers, the last warp
// issues TMA. With two decode warpgroups the producer is a whole warpgroup and setmaxnreg moves
// registers from it and the decoders to the math warpgroups. Split-K: a cluster of kClusterK
// (2, 3, 4 or 8) CTAs along K, K tiles split as evenly as possible; each CTA reduces one slice of
// the output tile from all CTAs' partials, exchanged through an L2 workspace (v9; distributed
// shared memory before, ~5x slower per byte). Spanning split (v10 one M tile, v14 any resident grid;
// shared A, where it shortens the busiest CTA): one range of the launch's (tile, K tile) units per SM,
// crossing tile boundaries, so all 132 SMs of an H100 work instead of 2 x 56; a range that leaves a
// tile hands its partial over mid-run, and the CTAs whose ranges end in a tile share its reduction. A split of 4
// or 8 without a hardware cluster (v7 shared A, v13 per-CTA A) meets through flags where every CTA
// is resident. C goes through the freed stages in 512-byte warp stores (v12, staged C), except in
// persistent launches, whose stages already hold the next unit's loads.
//
// Layout (docs/sm90_kernel.md): this file holds the kernel itself, in DeepGEMM's order (asserts,
// shared memory, barrier init, the shared-A prologue, role dispatch, split-K epilogue); device code
// per concern in the sm90_*.cuh headers below, every knob in sm90_config.cuh, the host planner and
// launch in sm90_plan.cuh / sm90_launch.cuh (included at the end, after the kernel they launch).
// Experiments (old versions, ablations) are benchmarks/sm90_experiments.h's, never compiled here.
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include <cstdio>
#include <cstdint>

#include "nvfp4_gemm_api.h"
#include "sm90_nvfp4_decode.cuh"
#include "sm90_ptx.cuh"

// Device code, one concern per header (docs/sm90_kernel.md has the map); knobs in sm90_config.cuh.
#include "sm90_config.cuh"
#include "sm90_scheduler.cuh"
#include "sm90_pipeline.cuh"
#include "sm90_decode.cuh"
#include "sm90_shared_a.cuh"
#include "sm90_split_k.cuh"
#include "sm90_timeline.cuh"
#include "sm90_math.cuh"

namespace nvfp4_sm90 {

template <int kClusterK, bool kSharedA, bool kSoftSplit = false, bool kSpan = false, bool kPersistent = false,
          int kTileM = BLOCK_M>
__global__ void __cluster_dims__(kSoftSplit ? 1 : kClusterK, 1, 1) __launch_bounds__(Plan<kSharedA, kTileM>::kThreads, 1)
    nvfp4_gemm_sm90_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                           const __grid_constant__ CUtensorMap tmap_a16, const uint8_t* a, const uint8_t* sfa,
                           const uint8_t* sfb, __half* c, int m, int n, int k, int l, uint32_t epoch,
                           SpanSplit span, PersistentSplit persistent) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#if NVFP4_SM90_EXPERIMENT(ABLATE_ALL)
  return;
#endif
  if (threadIdx.x == 0) timeline_mark(kPreviousExit), timeline_mark(kEntry), timeline_mark(kSmId);
  using P = Plan<kSharedA, kTileM>;
  static_assert(kTileM == BLOCK_M || (kClusterK == 1 && !kSpan && !kPersistent),
                "a wide tile (v20) runs in one unsplit wave: its launch has no split, span or persistence");
  static_assert(kClusterK <= kAccGroups, "every CTA of a split-K cluster owns at least one accumulator group");
  // The dynamic shared memory window starts 1024-byte aligned (no static shared memory here);
  // the swizzled TMA / wgmma layouts rely on it, so a misaligned base traps instead of computing garbage.
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const SharedStorage<kSharedA, kTileM> smem{smem_raw};
  if (sm90::smem_addr(smem_raw) % 1024 != 0) __trap();

  static_assert(!kSpan || (kClusterK == 1 && kSharedA && !kSoftSplit), "a spanning split is its own kind of launch");
  static_assert(!kPersistent || (kClusterK == 1 && kSharedA && !kSoftSplit && !kSpan),
                "a persistent launch is its own kind of launch");
  const int m_tiles = m / kTileM, n_tiles = n / BLOCK_N;
  const uint32_t my_rank = kSoftSplit ? blockIdx.x : sm90::cluster_cta_rank();
  const int k_tiles = k / BLOCK_K;
  [[maybe_unused]] const SpanRange range =
      kSpan ? span_range(int(blockIdx.x), span, k_tiles, m_tiles, n_tiles) : SpanRange{};
  const TileCoords tile = [&]() -> TileCoords {
    if constexpr (kSpan) {
      return range.tile;
    } else if constexpr (kPersistent) {
      return unit_coords(PersistentUnit::first(int(blockIdx.x), persistent), persistent, m_tiles, n_tiles);
    } else {
      // K tiles split as evenly as possible (the host keeps kClusterK <= K tiles): every CTA has one or more
      const int k_base = k_tiles / kClusterK, k_rem = k_tiles % kClusterK;
      const int num_k_tiles = k_base + (int(my_rank) < k_rem ? 1 : 0);
      return {int(blockIdx.z) % m_tiles, int(blockIdx.y), int(blockIdx.z) / m_tiles,
              int(my_rank) * k_base + min(int(my_rank), k_rem), num_k_tiles, num_k_tiles};
    }
  }();
  const int rest_k = k / (4 * kSfVec);  // 512-byte scale chunks per 128-row tile
  const auto origin_of = [&](const TileCoords& t) {
    // A's scales: the 128-row chunk that holds the tile's first row (a wide tile's may lie mid-chunk)
    const int row_a = t.batch * m + t.m_tile * kTileM;
    return TileOrigin{sfa + size_t(row_a / BLOCK_M) * rest_k * 512,
                      sfb + (size_t(t.batch) * n_tiles + t.n_tile) * rest_k * 512, row_a, t.batch * n + t.n_tile * BLOCK_N};
  };
  const auto sources_of = [&](const TileCoords& t) {
    const TileOrigin first = origin_of(t);
    return TileSources{&tmap_a, &tmap_b, &tmap_a16, first, first};
  };
  const TileSources src = [&]() {
    TileSources sources = sources_of(tile);
    // a spanning range that does not end in its first tile goes on in the next (never past the last)
    if constexpr (kSpan)
      if (tile.first_len < tile.num_k_tiles) sources.next = origin_of(tile_at(range.first + 1, m_tiles, n_tiles));
    return sources;
  }();
  const bool is_producer = threadIdx.x == P::kProducerThread;
  // The descriptors' first fetch overlaps the barrier init (v12 issued it after the init's __syncthreads).
  const auto prefetch_maps = [&]() {
    sm90::prefetch_tensor_map(&tmap_a);
    sm90::prefetch_tensor_map(&tmap_b);
    if constexpr (kSharedA) sm90::prefetch_tensor_map(&tmap_a16);
  };
  if (is_producer && !NVFP4_SM90_EXPERIMENT(LATE_MAP_PREFETCH)) prefetch_maps();

  // ---- Barrier init, and the first loads ----
  // The producer thread initialises the barriers and issues its first stages' loads (per-CTA A: the
  // first kStages; shared A: local A and the B prefill) before the CTA-wide __syncthreads, so DRAM
  // latency starts before the other warps have passed it (before v13 thread 0 initialised them and
  // every load waited for the sync: experiment LATE_FIRST_LOADS).
  [[maybe_unused]] PipelineState<P::kStages> producer_pipe;  // the producer's ring, carried from these loads to its role
  int prefilled = 0;                        // shared A: stages of B loaded ahead of the copy
  [[maybe_unused]] const int early_stages = min(P::kStages, tile.num_k_tiles);
  if (threadIdx.x == (NVFP4_SM90_EXPERIMENT(LATE_FIRST_LOADS) ? 0 : P::kProducerThread)) {
    for (int s = 0; s < P::kStages; ++s) {
      sm90::mbar_init(&smem.full_barriers()[s], 1);
      sm90::mbar_init(&smem.empty_barriers()[s], P::kStageReaderWarps);  // one per reading warp
    }
    for (int b = 0; b < P::kABuffers; ++b) {
      sm90::mbar_init(&smem.a_full_barriers()[b], 128 * P::kDecodeWarpgroups);  // every decode thread
      sm90::mbar_init(&smem.a_empty_barriers()[b], 4 * kNumMathWarpgroups);  // one per math warp
    }
    sm90::mbar_init(smem.local_a_barrier(), 1);
    smem.e2m1_table()[0] = nvfp4_decode::kE2m1HighBytesLo;
    smem.e2m1_table()[1] = nvfp4_decode::kE2m1HighBytesHi;
    sm90::fence_barrier_init();
    sm90::fence_proxy_async_smem();  // the barriers' init is seen by the TMA unit that completes them
    timeline_mark(kBarriersReady);
  }
  const auto first_loads = [&]() {
    if constexpr (kSharedA) {
      if constexpr (P::kLocalATiles > 0) load_local_a(smem, src, tile, size_t(rest_k) * 512);
      prefilled = prefill_b(smem, src, tile);
    } else {
      producer(smem, src, tile, producer_pipe, 0, early_stages);
    }
  };
  if (is_producer && !NVFP4_SM90_EXPERIMENT(LATE_FIRST_LOADS) && !NVFP4_SM90_EXPERIMENT(ABLATE_PIPELINE)) first_loads();

  // ---- Shared A: every CTA decodes its share of A, the launch synchronises ----
  // The copy starts at once (v19), beside the producer's setup, which it does not depend on: its
  // staging (2 KB per warp, in an A slice that TMA or local A fills only after the barrier or the
  // sync below) is no TMA target before then, and the e4m3 decode reads no table (the prmt decode
  // of experiment PRMT_DECODE does, and copies after the setup, as v18 did: experiment LATE_A_COPY;
  // so does v12's setup by thread 0, experiment LATE_FIRST_LOADS).
  constexpr bool kEarlyACopy = kSharedA && !NVFP4_SM90_EXPERIMENT(LATE_A_COPY) &&
                               !NVFP4_SM90_EXPERIMENT(PRMT_DECODE) && !NVFP4_SM90_EXPERIMENT(LATE_FIRST_LOADS);
  [[maybe_unused]] const auto copy_share_of_a = [&](const nvfp4_decode::E2m1Table& table) {
#if !NVFP4_SM90_EXPERIMENT(ABLATE_SHARED_A_DECODE) && !NVFP4_SM90_EXPERIMENT(ABLATE_GRID_BARRIER)
    decode_a_to_global(a, sfa, l * m, k, kEarlyACopy ? a_copy_threads(l * m, k, P::kProducerThread) : P::kThreads,
                       sm90::smem_addr(smem.a_fp16_stage(P::kCopyStagingStage)) + (threadIdx.x / 32) * 2048, table);
#endif
    sm90::fence_proxy_async_global();
    sm90::fence_proxy_async_smem();  // the staging slice may be refilled by TMA after the barrier
  };
  if constexpr (kEarlyACopy) copy_share_of_a(nvfp4_decode::E2m1Table{});
  __syncthreads();  // the barriers are initialised (early copy: and this CTA's share of A is written)
  if (threadIdx.x == 0) timeline_mark(kSetupDone);
  if (is_producer && NVFP4_SM90_EXPERIMENT(LATE_MAP_PREFETCH)) prefetch_maps();
  if (is_producer && NVFP4_SM90_EXPERIMENT(LATE_FIRST_LOADS) && !NVFP4_SM90_EXPERIMENT(ABLATE_PIPELINE)) first_loads();

  if constexpr (kSharedA) {
    const nvfp4_decode::E2m1Table table = nvfp4_decode::load_table(sm90::smem_addr(smem.e2m1_table()));
    if constexpr (!kEarlyACopy) {
      copy_share_of_a(table);
      __syncthreads();  // this CTA's share of the copy is written
    }
#if !NVFP4_SM90_EXPERIMENT(ABLATE_GRID_BARRIER)
    if (threadIdx.x == 0) timeline_mark(kADecoded);
    if (is_producer) grid_arrive(epoch), timeline_mark(kArrived);
#endif
    // Local A is decoded only once this CTA's share of the copy is written (the sync above), so that
    // nothing goes before its arrival, which the whole launch waits for (loads through the threads
    // there cost ~1 us, H100).
    // Meanwhile the producer warp polls the launch-wide barrier (v19; v18 polled only once local A
    // was decoded: experiment LATE_GRID_WAIT); barrier 1 tells it when local A's packed tiles have
    // been read, so that their stage may be refilled.
    if constexpr (P::kLocalATiles > 0) {
      if (!NVFP4_SM90_EXPERIMENT(ABLATE_PIPELINE) && threadIdx.x < kMathThreads) {
        decode_local_a(smem, tile, src.first.row_a, threadIdx.x, table);
        if constexpr (NVFP4_SM90_EXPERIMENT(LATE_GRID_WAIT)) {
          sm90::named_barrier_sync<1, P::kThreads>();
        } else {
          sm90::named_barrier_arrive<1, P::kThreads>();  // local A's packed tiles are read
          sm90::named_barrier_sync<4, kMathThreads>();   // both warpgroups' local A is in shared memory
        }
      }
    }
  }

  // ---- Dispatch warps into different roles ----
  // Broadcast from lane 0 so ptxas knows the role is warp-uniform: computed per thread, the per-CTA-A
  // kernels' math loop left the uniform datapath (an R2UR per wgmma descriptor, 14 per K tile).
  const int wg = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0);
  // With registers moved between roles (P::kMovesRegisters), each role sets its budget first thing in
  // its own branch, and the producer and decode warpgroups leave from theirs (leave_without_epilogue):
  // code after a join would have to fit the smallest budget.
  const auto leave_without_epilogue = [&]() {
    if constexpr (kClusterK > 1 && !kSoftSplit) sm90::cluster_sync();  // the math warps' barrier counts every thread
  };
  float acc[acc_count<kTileM>()];
#if NVFP4_SM90_EXPERIMENT(ABLATE_PIPELINE)
  for (int j = 0; j < acc_count<kTileM>(); ++j) acc[j] = 0.f;
  (void)prefilled;
#else
  if (wg < kNumMathWarpgroups) {
    if constexpr (P::kMovesRegisters) sm90::setmaxnreg_inc<P::kMathRegs>();
    PipelineState<P::kStages> pipe;
    if constexpr (kPersistent) {  // each unit's partial or C is written before the next unit's wgmmas start
      for (PersistentUnit u = PersistentUnit::first(int(blockIdx.x), persistent); u.active(persistent);
           u.advance(int(gridDim.x), persistent)) {
        TileCoords job = unit_coords(u, persistent, m_tiles, n_tiles);
        math<kSharedA, kSpan>(smem, job, wg, threadIdx.x % 128, acc, 0, pipe);
        release_last_stage(smem, pipe, threadIdx.x % 32);
#if NVFP4_SM90_EXPERIMENT(ABLATE_PERSISTENT_C)  // keep the accumulators (and so the main loop) alive, store nothing
        float keep = 0.f;
#pragma unroll
        for (int j = 0; j < 64; ++j) keep += acc[j];
        if (keep == 1234.5f) c[threadIdx.x] = __float2half(keep);
#else
        persistent_epilogue(acc, threadIdx.x, u.part(persistent), u.parts(persistent), u.tile, job, c, m, n, epoch);
#endif
      }
    } else {
      math<kSharedA, kSpan, kTileM>(smem, tile, wg, threadIdx.x % 128, acc, span_hand_over_slot(int(blockIdx.x)), pipe);
    }
  } else if (P::kMovesRegisters ? wg == kNumMathWarpgroups + P::kDecodeWarpgroups
                                : threadIdx.x >= P::kProducerThread) {  // the producer warp (or warpgroup)
    if constexpr (P::kMovesRegisters) sm90::setmaxnreg_dec<P::kProducerRegs>();
    if constexpr (kSharedA) {
      constexpr bool kLateGridWait = NVFP4_SM90_EXPERIMENT(LATE_GRID_WAIT);
      if (P::kLocalATiles > 0 && kLateGridWait) sm90::named_barrier_sync<1, P::kThreads>();
      grid_wait(epoch, threadIdx.x % 32);
      if (is_producer)
        timeline_mark(kGridBarrierDone), load_prefilled_a16(smem, src, tile, prefilled, 0, P::kLocalAStage);
      if (P::kLocalATiles > 0 && !kLateGridWait) {
        __syncwarp();
        sm90::named_barrier_sync<1, P::kThreads>();  // local A's packed tiles are read: their stage may be refilled
      }
      if (is_producer) {
        load_prefilled_a16(smem, src, tile, prefilled, P::kLocalAStage, P::kStages);
        PipelineState<P::kStages> pipe;
        producer_shared_a(smem, src, tile, prefilled, pipe);
        if constexpr (kPersistent) {
          PersistentUnit u = PersistentUnit::first(int(blockIdx.x), persistent);
          for (u.advance(int(gridDim.x), persistent); u.active(persistent); u.advance(int(gridDim.x), persistent)) {
            const TileCoords job = unit_coords(u, persistent, m_tiles, n_tiles);
            producer_shared_a(smem, sources_of(job), job, 0, pipe);
          }
        }
      }
    } else {
      if (is_producer) producer(smem, src, tile, producer_pipe, early_stages, tile.num_k_tiles);
      if constexpr (P::kMovesRegisters) return leave_without_epilogue();
    }
  } else if constexpr (!kSharedA) {  // the decode warpgroups
    if constexpr (P::kMovesRegisters) sm90::setmaxnreg_dec<P::kDecodeRegs>();
    if (wg < kNumMathWarpgroups + P::kDecodeWarpgroups) a_decoder(smem, tile, threadIdx.x - kMathThreads);
    if constexpr (P::kMovesRegisters) return leave_without_epilogue();
  }
#endif

  // ---- Split-K epilogue through an L2 workspace (a persistent CTA wrote C tile by tile) ----
  if constexpr (kSpan) {
    if (wg < kNumMathWarpgroups) span_epilogue(acc, threadIdx.x, blockIdx.x, span, k_tiles, c, m, n, epoch,
                                                  sm90::smem_addr(smem.stage(0)));
  } else if constexpr (!kPersistent) {
    const int first_slot = int(blockIdx.z * gridDim.y + blockIdx.y) * kClusterK;
    if constexpr (kClusterK > 1) {
      if (wg < kNumMathWarpgroups)
        with_cluster_rank<kClusterK>(my_rank, [&](auto rank) {
          store_partials_l2<kClusterK, decltype(rank)::value>(acc, threadIdx.x, first_slot + rank);
        });
    }
    if (threadIdx.x == 0) timeline_mark(kPartialsSent);
    // release / acquire (cluster or GPU scope): every slot is complete in L2 before its owner reads it
    if constexpr (kClusterK > 1 && kSoftSplit) {
      if (wg < kNumMathWarpgroups)
        meet_partners(threadIdx.x, kClusterK, int(my_rank), [=](int s) { return first_slot + s; }, epoch);
    } else if constexpr (kClusterK > 1) {
      sm90::cluster_sync();
    }
    if (threadIdx.x == 0) timeline_mark(kPartialsLanded);
    if (wg < kNumMathWarpgroups) {
      with_cluster_rank<kClusterK>(my_rank, [&](auto rank) {
        reduce_and_store_l2<kClusterK, decltype(rank)::value, kClusterK, kStagedC, kTileM>(
            acc, threadIdx.x, [=](int s) { return first_slot + s; }, c, m, n, tile, sm90::smem_addr(smem.stage(0)));
      });
    }
  }
  if (threadIdx.x == 0) timeline_mark(kExit);
#else
  if (threadIdx.x == 0) printf("nvfp4_gemm_sm90_kernel needs sm_90a (wgmma)\n");
  __trap();
#endif
}

}  // namespace nvfp4_sm90

// The direct kernel for calls too short for the pipeline above (v15), launched by the same planner.
#include "nvfp4_gemm_sm90_direct.cuh"

// Host side: the planner (what runs, per problem and GPU) and the launch with its TMA descriptors.
#include "sm90_plan.cuh"
#include "sm90_launch.cuh"
