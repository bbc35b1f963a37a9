// nvfp4ctl: never-run-on sm_100a
//
// Hand-written tcgen05 NVFP4 block-scaled GEMM for sm_100a (B200): C[l] = A[l] . B[l]^T, e2m1
// operands with one UE4M3 scale per 16 K values, fp32 accumulation in tensor memory, fp16 C.
// No CUTLASS: raw TMA / mbarrier / tcgen05 PTX behind the helpers of kernels/common/sm100_*.cuh.
//
// Operand roles (swap AB). The MMA computes C^T tiles: its A operand (the 128-row side, UMMA_M)
// is a 128-row slice of B (n rows), its B operand (UMMA_N) a 128- or 64-row slice of A (m rows).
// At M = 128 A is one or two such slices, shared through L2 by every CTA, while N fills the MMA's
// 128 rows; the accumulator holds n on TMEM lanes and m on columns.
//
// Inputs as GPU MODE passes them: A (m, k/2, l) and B (n, k/2, l) K-major bytes are loaded by TMA
// into 128-byte-swizzled tiles (one K tile of 256 fp4 = one 128-byte row); sfa_permuted /
// sfb_permuted are read in place: their storage is the blocked layout whose 512-byte chunks hold
// 128 rows x 4 scale blocks as 32 lines of 16 bytes, exactly the source of tcgen05.cp .32x128b
// .warpx4, so each K tile's scales are one contiguous 2 KB bulk copy per operand, then 4 UTCCPs.
//
// Work split (kernels/common/sm100_split.cuh): one contiguous range of (tile, K tile) units per
// CTA, ranges crossing tile boundaries, deterministic reduction of partials through an L2
// workspace and per-CTA flags. Every CTA is resident at once (ctas <= SMs, one CTA per SM; the host
// checks it with the occupancy API before launching). Every wait traps after kWaitTimeoutNs.
//
// Warp roles: warp 0 TMA producer, warp 1 MMA issuer (and TMEM owner), warps 2-5 epilogue
// (TMEM -> registers -> fp16 C, or -> fp32 partial slot). Two TMEM accumulators let the MMA run
// the next segment while the epilogue drains the previous one; an owner's epilogue sums the other
// CTAs' partials into registers before its own accumulator is ready, and adds the sum once.
//
// The mark on the first line: no B200 has executed this file yet; `export` warns while it is there.
// Remove it once `nvfp4ctl check` passed on a B200.
#include <cuda.h>          // CUtensorMap types only (no -lcuda: the encoder comes from the runtime)
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>

#include "nvfp4_gemm_api.h"
#include "sm100_ptx.cuh"
#include "sm100_split.cuh"
#include "sm100_umma_desc.cuh"
#include "per_gpu.cuh"
#include "tensor_map_encoder.cuh"

namespace nvfp4_sm100_tc {

// ---- Configuration: the one place ----
// A compile-time tile/pipeline configuration. Every dispatch entry names one (see kDispatch).
template <int BLOCK_M_, int kStages_>
struct TileConfig {
  static constexpr int BLOCK_N = 128;      // rows of B per tile = UMMA_M (TMEM lanes)
  static constexpr int BLOCK_M = BLOCK_M_;  // rows of A per tile = UMMA_N (TMEM columns)
  static constexpr int BLOCK_K = 256;  // fp4 per K tile = one 128-byte swizzle row
  static constexpr int UMMA_M = BLOCK_N, UMMA_N = BLOCK_M, UMMA_K = 64;
  static constexpr int kStages = kStages_;
  static constexpr int kSfVec = 16;
  // TMA boxes of A and B: one K tile (ROW_BYTES) x BLOCK_M / BLOCK_N rows, 128-byte swizzle.
  static constexpr CUtensorMapSwizzle kTmaSwizzle = CU_TENSOR_MAP_SWIZZLE_128B;

  // Shared memory of one stage (offsets from a 1024-byte aligned base).
  static constexpr int ROW_BYTES = BLOCK_K / 2;                           // 128
  static constexpr int SMEM_B_BYTES = BLOCK_N * ROW_BYTES;                // 16 KB, MMA operand A
  static constexpr int SMEM_A_BYTES = BLOCK_M * ROW_BYTES;                // 8 or 16 KB, MMA operand B
  static constexpr int SF_CHUNK_BYTES = 512;                              // 128 rows x 4 blocks
  // Scale chunks always cover 128 rows; a 64-row A tile uses half of its chunk: rows 64..127 of a
  // chunk sit 2 TMEM columns further (row i at column i / 32 after the warpx4 copy).
  static constexpr int kASubTiles = 128 / BLOCK_M;
  static constexpr int kKSteps = BLOCK_K / UMMA_K;                        // 4 MMAs per K tile
  static constexpr int SMEM_SF_BYTES = kKSteps * SF_CHUNK_BYTES;          // 2 KB per operand
  static constexpr int kBOffset = 0;
  static constexpr int kAOffset = kBOffset + SMEM_B_BYTES;
  static constexpr int kSfbOffset = kAOffset + SMEM_A_BYTES;
  static constexpr int kSfaOffset = kSfbOffset + SMEM_SF_BYTES;
  static constexpr int kStageTxBytes = kSfaOffset + SMEM_SF_BYTES;       // what TMA delivers per stage
  static constexpr int kStageBytes = (kStageTxBytes + 1023) / 1024 * 1024;
  static constexpr int kNumAccumulators = 2;
  static constexpr int kBarriersOffset = kStages * kStageBytes;
  static constexpr int kNumBarriers = 2 * kStages + 2 * kNumAccumulators;
  static constexpr int kTmemPtrOffset = kBarriersOffset + kNumBarriers * 8;
  static constexpr int kSmemBytes = kTmemPtrOffset + 16 + 1024;  // + slack to align the base to 1024

  // Tensor memory: accumulators first, then per stage the 4 scale chunks of each operand.
  static constexpr int kAccumColumns = UMMA_N;                  // fp32, one column per A row
  static constexpr int kSfColumnsPerChunk = 4;                  // 32x128b.warpx4 -> 4 columns
  static constexpr int kSfbTmemColumn = kNumAccumulators * kAccumColumns;
  static constexpr int kSfColumnsPerStage = 2 * kKSteps * kSfColumnsPerChunk;  // 32
  static constexpr int kTmemColumnsUsed = kSfbTmemColumn + kStages * kSfColumnsPerStage;
  static constexpr int kTmemColumns = kTmemColumnsUsed <= 256 ? 256 : 512;

  // Threads: warp 0 TMA, warp 1 MMA, warps 2-5 epilogue.
  static constexpr int kNumEpilogueThreads = 128;
  static constexpr int kEpilogueWarp0 = 2;
  static constexpr int kThreads = 64 + kNumEpilogueThreads;

  static_assert(UMMA_M == 128, "1-CTA block-scaled UMMA with every TMEM lane: UMMA_M must be 128");
  static_assert(UMMA_N % 16 == 0 && UMMA_N >= 16 && UMMA_N <= 256, "UMMA_N must be a multiple of 16 in [16, 256]");
  static_assert(ROW_BYTES == 128, "a K tile must be exactly one 128-byte swizzle row (the descriptors assume it)");
  static_assert(BLOCK_M == 64 || BLOCK_M == 128, "a scale chunk covers 128 rows: BLOCK_M must be 64 or 128");
  static_assert(kStageBytes % 1024 == 0, "stages must keep the 1024-byte alignment of 128B-swizzled tiles");
  static_assert(kSfbOffset % 128 == 0 && kSfaOffset % 128 == 0, "scale chunks must be 128-byte aligned for UTCCP");
  static_assert(kTmemColumnsUsed <= 512, "accumulators and scales exceed 512 TMEM columns");
  static_assert(kSmemBytes <= 232448, "shared memory exceeds the sm_100 per-block limit (227 KB)");

  // ---- addresses the MMA uses, shared with the host plan printer ----
  __host__ __device__ static constexpr uint32_t b_tile(uint32_t base, int stage) { return base + stage * kStageBytes + kBOffset; }
  __host__ __device__ static constexpr uint32_t a_tile(uint32_t base, int stage) { return base + stage * kStageBytes + kAOffset; }
  __host__ __device__ static constexpr uint32_t sfb_chunk(uint32_t base, int stage, int k_step) {
    return base + stage * kStageBytes + kSfbOffset + k_step * SF_CHUNK_BYTES;
  }
  __host__ __device__ static constexpr uint32_t sfa_chunk(uint32_t base, int stage, int k_step) {
    return base + stage * kStageBytes + kSfaOffset + k_step * SF_CHUNK_BYTES;
  }
  // K step j reads 64 fp4 = 32 bytes further along the swizzled row.
  __host__ __device__ static constexpr uint64_t b_desc(uint32_t base, int stage, int k_step) {
    return sm100::make_smem_desc_kmajor_sw128(b_tile(base, stage) + k_step * (UMMA_K / 2));
  }
  __host__ __device__ static constexpr uint64_t a_desc(uint32_t base, int stage, int k_step) {
    return sm100::make_smem_desc_kmajor_sw128(a_tile(base, stage) + k_step * (UMMA_K / 2));
  }
  __host__ __device__ static constexpr uint32_t sfb_tmem_column(int stage, int k_step) {
    return kSfbTmemColumn + stage * kSfColumnsPerStage + k_step * kSfColumnsPerChunk;
  }
  // The chunk of A's scales; the MMA reads it from column m_sub * BLOCK_M / 32 on (m_sub = which
  // 64-row half of the 128-row chunk this tile's A rows are, 0 for 128-row tiles).
  __host__ __device__ static constexpr uint32_t sfa_tmem_column(int stage, int k_step, int m_sub) {
    return sfb_tmem_column(stage, k_step) + kKSteps * kSfColumnsPerChunk + m_sub * (BLOCK_M / 32);
  }
  __host__ __device__ static constexpr uint32_t accum_tmem_column(int accumulator) { return accumulator * kAccumColumns; }
  static constexpr uint32_t kInstrDesc = sm100::make_instr_desc_nvf4(UMMA_M, UMMA_N);
};

// The compile-time configurations (one kernel each) and the dispatch table that names them.
using Tile128 = TileConfig<128, 6>;  // 36 KB stages: 128 B rows x 128 A rows
using Tile64 = TileConfig<64, 8>;    // 28 KB stages: 128 B rows x 64 A rows (M = 128 as two tiles)
enum ConfigId { kTile128 = 0, kTile64 = 1 };

// Calls f(Config{}) for a config id: the one switch from ids to types.
template <class F>
decltype(auto) with_config(ConfigId id, F&& f) {
  switch (id) {
    case kTile64: return f(Tile64{});
    default: return f(Tile128{});
  }
}

// Dispatch table: the benchmark shapes by (m, n, k) with their config and CTA count (the counts
// benchmarks/sm100_cost_model.py models fastest with at least 128 SMs busy); every other shape
// takes Tile128 and the general rule below. The model rates K = 2048 unsplit on 112 CTAs faster
// (its split's partial exchange costs more than the idle SMs); a B200 run should decide that line.
struct DispatchEntry {
  int m, n, k;
  ConfigId config;
  int ctas;
};
constexpr DispatchEntry kDispatch[] = {
    {128, 7168, 16384, kTile128, 140},  // 56 tiles x 64 K tiles: 25-26 K tiles per CTA
    {128, 4096, 7168, kTile64, 144},    // 64 tiles x 28 K tiles: 12-13 K tiles per CTA
    {128, 7168, 2048, kTile64, 140},    // 112 tiles x 8 K tiles: 6-7 K tiles per CTA
};
// General rule: one CTA per SM, but at least kMinUnitsPerCta K tiles each (fewer CTAs on small
// problems, so partial traffic stays below the work it splits).
constexpr int kMinUnitsPerCta = 4;
constexpr int kMaxCtas = 160;  // workspace slots and flags (>= 148 SMs of a B200)
using GeneralConfig = Tile128;
// Every wait (mbarrier phases, split-K flags) traps after this long instead of hanging the GPU: a
// missed phase, a wrong expect-tx byte count, a CTA that never became resident. A whole launch
// takes microseconds, so only a broken wait comes near it.
constexpr uint64_t kWaitTimeoutNs = 2000000000ull;

// Split-K exchange: one fp32 slot of a tile per CTA, and its flag (the epoch of the launch whose
// partial the slot holds). One set per loaded module: launches of this module are assumed ordered.
__device__ float g_partials[kMaxCtas][Tile128::BLOCK_N * Tile128::BLOCK_M];  // the largest tile
__device__ uint32_t g_partial_epoch[kMaxCtas];

struct Problem {
  int m, n, k, l;
  int n_tiles, m_tiles;
  __host__ __device__ int rest_k() const { return k / 64; }  // 512-byte scale chunks per 128 rows
};

using ptx_common::PipelineState;

struct TileCoord {
  int batch, m_block, n_block;
};
// Tiles are numbered n fastest, then m, then batch: CTAs running side by side share A's rows.
__host__ __device__ inline TileCoord tile_coord(const Problem& p, int tile) {
  return {tile / (p.n_tiles * p.m_tiles), (tile / p.n_tiles) % p.m_tiles, tile % p.n_tiles};
}

// What the producer loads for K tile `k_tile` of `tile`: TMA box coordinates (x in bytes along K,
// y = row of the batch-stacked operand) and the byte offsets of the two 2 KB scale runs.
struct StageLoad {
  int x, a_row, b_row;
  int64_t sfa_offset, sfb_offset;
};
template <class Config>
__host__ __device__ inline StageLoad stage_load(const Problem& p, int tile, int k_tile) {
  const TileCoord t = tile_coord(p, tile);
  // Chunk (row block rb, K step j) of a batch sits at (rb * rest_k + j) * 512; a K tile's 4 K steps
  // are consecutive chunks.
  const int64_t chunk = int64_t(k_tile) * Config::kKSteps * Config::SF_CHUNK_BYTES;
  const int64_t row_block_bytes = int64_t(p.rest_k()) * Config::SF_CHUNK_BYTES;
  StageLoad s;
  s.x = k_tile * Config::ROW_BYTES;
  s.a_row = t.batch * p.m + t.m_block * Config::BLOCK_M;
  s.b_row = t.batch * p.n + t.n_block * Config::BLOCK_N;
  s.sfa_offset = (int64_t(t.batch) * (p.m / 128) + t.m_block / Config::kASubTiles) * row_block_bytes + chunk;
  s.sfb_offset = (int64_t(t.batch) * p.n_tiles + t.n_block) * row_block_bytes + chunk;
  return s;
}

// ---- Roles ----
template <class Config>
__device__ __forceinline__ void load_role(const Problem& p, const sm100_split::SpanPlan& plan, const CUtensorMap* tmap_a,
                                          const CUtensorMap* tmap_b, const uint8_t* sfa, const uint8_t* sfb,
                                          uint8_t* smem, uint64_t* full_barriers, uint64_t* empty_barriers) {
  const uint64_t keep = sm100::l2_policy_evict_last(), once = sm100::l2_policy_evict_first();
  PipelineState<Config::kStages> pipe;
  const int segments = plan.num_segments(blockIdx.x);
  for (int s = 0; s < segments; ++s) {
    const sm100_split::Segment seg = plan.segment(blockIdx.x, s);
    for (int k_tile = seg.k_begin; k_tile < seg.k_end; ++k_tile) {
      sm100::mbar_wait<kWaitTimeoutNs>(&empty_barriers[pipe.stage_idx], pipe.phase ^ 1);
      uint8_t* stage = smem + pipe.stage_idx * Config::kStageBytes;
      uint64_t* full = &full_barriers[pipe.stage_idx];
      const StageLoad load = stage_load<Config>(p, seg.tile, k_tile);
      sm100::mbar_arrive_expect_tx(full, Config::kStageTxBytes);
      sm100::tma_load_2d(stage + Config::kBOffset, tmap_b, load.x, load.b_row, full, once);
      sm100::tma_load_2d(stage + Config::kAOffset, tmap_a, load.x, load.a_row, full, keep);
      sm100::bulk_load(stage + Config::kSfbOffset, sfb + load.sfb_offset, Config::SMEM_SF_BYTES, full);
      sm100::bulk_load(stage + Config::kSfaOffset, sfa + load.sfa_offset, Config::SMEM_SF_BYTES, full);
      pipe.advance_pipeline();
    }
  }
  // Drain: wait for the release of the last fill of every stage, as the next kStages loads would,
  // so that no tcgen05.commit arrival on an empty barrier is still in flight when the CTA exits
  // (the epilogue's wait on tmem_full orders the MMAs, not the arrivals of earlier commits).
  // Stages never filled pass at once (fresh barrier, parity 1). CUTLASS: load_tail / producer_tail.
  for (int i = 0; i < Config::kStages; ++i) {
    sm100::mbar_wait<kWaitTimeoutNs>(&empty_barriers[pipe.stage_idx], pipe.phase ^ 1);
    pipe.advance_pipeline();
  }
}

template <class Config>
__device__ __forceinline__ void mma_role(const Problem& p, const sm100_split::SpanPlan& plan, uint32_t smem_base,
                                         uint32_t tmem_base,
                                         uint64_t* full_barriers, uint64_t* empty_barriers,
                                         uint64_t* tmem_full_barriers, uint64_t* tmem_empty_barriers) {
  PipelineState<Config::kStages> pipe;
  const int segments = plan.num_segments(blockIdx.x);
  for (int s = 0; s < segments; ++s) {
    const sm100_split::Segment seg = plan.segment(blockIdx.x, s);
    const int accumulator = s % Config::kNumAccumulators;
    const uint32_t accumulator_phase = (s / Config::kNumAccumulators) & 1;
    sm100::mbar_wait<kWaitTimeoutNs>(&tmem_empty_barriers[accumulator], accumulator_phase ^ 1);
    sm100::tcgen05_after_thread_sync();
    const uint32_t d_tmem = sm100::tmem_addr(tmem_base, 0, Config::accum_tmem_column(accumulator));
    const int m_sub = tile_coord(p, seg.tile).m_block % Config::kASubTiles;
    for (int k_tile = seg.k_begin; k_tile < seg.k_end; ++k_tile) {
      sm100::mbar_wait<kWaitTimeoutNs>(&full_barriers[pipe.stage_idx], pipe.phase);
      sm100::tcgen05_after_thread_sync();
      const int stage = pipe.stage_idx;
#pragma unroll
      for (int j = 0; j < Config::kKSteps; ++j) {
        sm100::tmem_copy_scales_32x128b_warpx4(sm100::tmem_addr(tmem_base, 0, Config::sfb_tmem_column(stage, j)),
                                               sm100::make_smem_desc_scales(Config::sfb_chunk(smem_base, stage, j)));
        sm100::tmem_copy_scales_32x128b_warpx4(sm100::tmem_addr(tmem_base, 0, Config::sfa_tmem_column(stage, j, 0)),
                                               sm100::make_smem_desc_scales(Config::sfa_chunk(smem_base, stage, j)));
      }
#pragma unroll
      for (int j = 0; j < Config::kKSteps; ++j) {
        sm100::umma_nvf4(d_tmem, Config::b_desc(smem_base, stage, j), Config::a_desc(smem_base, stage, j),
                         Config::kInstrDesc, sm100::tmem_addr(tmem_base, 0, Config::sfb_tmem_column(stage, j)),
                         sm100::tmem_addr(tmem_base, 0, Config::sfa_tmem_column(stage, j, m_sub)),
                         k_tile > seg.k_begin || j > 0);
      }
      sm100::umma_commit(&empty_barriers[stage]);  // the stage is free once these MMAs have read it
      pipe.advance_pipeline();
    }
    sm100::umma_commit(&tmem_full_barriers[accumulator]);
  }
}

// Epilogue: thread `row` of the 128 owns TMEM lane `row` = C column n0 + row; it walks the
// accumulator's BLOCK_M columns (C rows m0 .. m0 + BLOCK_M - 1) 32 at a time.
template <class Config>
__device__ __forceinline__ void epilogue_role(const Problem& p, const sm100_split::SpanPlan& plan, uint32_t tmem_base,
                                              __half* c, uint32_t epoch, uint64_t* tmem_full_barriers,
                                              uint64_t* tmem_empty_barriers) {
  const int warp = threadIdx.x / 32;
  const int quarter = warp % 4;  // a warp may only touch its own 32-lane quarter of TMEM
  const int row = quarter * 32 + int(sm100::lane_id());
  const int segments = plan.num_segments(blockIdx.x);
  const int cta = blockIdx.x;
  const sm100_split::Exchange<Config::BLOCK_N, Config::BLOCK_M, kWaitTimeoutNs> exchange{&g_partials[0][0],
                                                                                          g_partial_epoch, epoch};
  for (int s = 0; s < segments; ++s) {
    const sm100_split::Segment seg = plan.segment(cta, s);
    const TileCoord t = tile_coord(p, seg.tile);
    const int accumulator = s % Config::kNumAccumulators;
    // An owner of a split tile sums the other CTAs' partials first, while its own MMAs may still run.
    float pre[Config::BLOCK_M];
    if (seg.reduce) exchange.sum_sources(exchange.wait_sources(plan, seg, cta), cta, row, pre);
    sm100::mbar_wait<kWaitTimeoutNs>(&tmem_full_barriers[accumulator], (s / Config::kNumAccumulators) & 1);
    sm100::tcgen05_after_thread_sync();
    __half* c_col = c + (int64_t(t.batch) * p.m + t.m_block * Config::BLOCK_M) * p.n + t.n_block * Config::BLOCK_N + row;
#pragma unroll
    for (int col = 0; col < Config::BLOCK_M; col += 32) {
      uint32_t raw[32];
      sm100::tmem_load_32cols(
          sm100::tmem_addr(tmem_base, quarter * 32, Config::accum_tmem_column(accumulator) + col), raw);
      sm100::tmem_load_wait();
      float v[32];
#pragma unroll
      for (int j = 0; j < 32; ++j) v[j] = __uint_as_float(raw[j]);
      if (seg.reduce) {
#pragma unroll
        for (int j = 0; j < 32; ++j) v[j] += pre[col + j];
      }
      if (seg.owner) {
#pragma unroll
        for (int j = 0; j < 32; ++j) c_col[int64_t(col + j) * p.n] = __float2half_rn(v[j]);
      } else {
        exchange.store(cta, row, col, v);
      }
    }
    sm100::tcgen05_before_thread_sync();
    sm100::mbar_arrive(&tmem_empty_barriers[accumulator]);
    if (!seg.owner)
      exchange.publish(cta, row == 0, [] { sm100::named_barrier_sync(1, Config::kNumEpilogueThreads); });
  }
}

template <class Config>
__global__ void __launch_bounds__(Config::kThreads, 1)
    nvfp4_gemm_sm100_tc_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                               const uint8_t* __restrict__ sfa, const uint8_t* __restrict__ sfb, __half* c,
                               Problem p, sm100_split::SpanPlan plan, uint32_t epoch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000 && defined(__CUDA_ARCH_FEAT_SM100_ALL)
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // 128B-swizzled tiles need a 1024-byte aligned base; the dynamic window only promises 16.
  uint8_t* smem = smem_raw + ((1024 - (sm100::smem_addr(smem_raw) & 1023)) & 1023);
  uint64_t* barriers = reinterpret_cast<uint64_t*>(smem + Config::kBarriersOffset);
  uint64_t* full_barriers = barriers;
  uint64_t* empty_barriers = barriers + Config::kStages;
  uint64_t* tmem_full_barriers = barriers + 2 * Config::kStages;
  uint64_t* tmem_empty_barriers = tmem_full_barriers + Config::kNumAccumulators;
  uint32_t* tmem_base_slot = reinterpret_cast<uint32_t*>(smem + Config::kTmemPtrOffset);
  const int warp = threadIdx.x / 32;

  // ---- Setup: barriers (thread 0), TMEM (warp 1), descriptor prefetch ----
  if (threadIdx.x == 0) {
    sm100::prefetch_tensor_map(&tmap_a);
    sm100::prefetch_tensor_map(&tmap_b);
    for (int i = 0; i < Config::kStages; ++i) {
      sm100::mbar_init(&full_barriers[i], 1);   // the producer's arrive + TMA bytes
      sm100::mbar_init(&empty_barriers[i], 1);  // one tcgen05.commit
    }
    for (int i = 0; i < Config::kNumAccumulators; ++i) {
      sm100::mbar_init(&tmem_full_barriers[i], 1);
      sm100::mbar_init(&tmem_empty_barriers[i], Config::kNumEpilogueThreads);
    }
    sm100::fence_barrier_init();
  }
  if (warp == 1) sm100::tmem_alloc(tmem_base_slot, Config::kTmemColumns);
  sm100::tcgen05_before_thread_sync();
  __syncthreads();
  sm100::tcgen05_after_thread_sync();
  const uint32_t tmem_base = *tmem_base_slot;

  // ---- Dispatch warps into their roles ----
  if (warp == 0) {
    if (sm100::elect_one())
      load_role<Config>(p, plan, &tmap_a, &tmap_b, sfa, sfb, smem, full_barriers, empty_barriers);
  } else if (warp == 1) {
    if (sm100::elect_one())
      mma_role<Config>(p, plan, sm100::smem_addr(smem), tmem_base, full_barriers, empty_barriers, tmem_full_barriers,
                       tmem_empty_barriers);
  } else {
    epilogue_role<Config>(p, plan, tmem_base, c, epoch, tmem_full_barriers, tmem_empty_barriers);
  }

  // ---- Teardown: every TMEM read is done before the owner warp frees it ----
  __syncwarp();
  sm100::tcgen05_before_thread_sync();
  __syncthreads();
  sm100::tcgen05_after_thread_sync();
  if (warp == 1) sm100::tmem_dealloc(tmem_base, Config::kTmemColumns);
#else
  if (threadIdx.x == 0) printf("nvfp4_gemm_sm100_tc_kernel needs sm_100a (compile with -gencode=arch=compute_100a,code=sm_100a)\n");
  __trap();
#endif
}

// ---- Host side ----
// Launch settings of this GPU and kernel, never results.
namespace {

using host_common::tensor_map_encoder;

// 2-D uint8 map over packed fp4 rows (batch-major): one box = one K tile (128 bytes) x `box_rows`.
template <class Config>
bool make_operand_map(CUtensorMap* map, const uint8_t* data, int rows, int k, int box_rows) {
  const cuuint64_t dims[2] = {cuuint64_t(k / 2), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(k / 2)};
  const cuuint32_t box[2] = {cuuint32_t(Config::ROW_BYTES), cuuint32_t(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  return tensor_map_encoder()(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<uint8_t*>(data), dims, strides, box,
                              elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, Config::kTmaSwizzle,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Kept out of template functions: a function-local static of a template is one symbol shared by
// every loaded module holding this code (the sm90 kernel hit that), so two builds would share it.
struct GpuState {  // per GPU (host_common::per_device): a launch setting, never a result
  bool smem_limit_raised[2] = {false, false};  // per ConfigId
  int blocks_per_sm[2] = {-1, -1};             // per ConfigId, the occupancy API's answer; -1: not asked yet
};
GpuState gpu_states[host_common::kMaxCachedDevices];
GpuState gpu_state_scratch;
uint32_t launch_epoch = 0;  // tells one launch's flags from the previous ones' (skips 0)

}  // namespace

// The config and CTA count for a supported shape: the dispatch table, else Tile128 and the general
// rule; never more CTAs than SMs (every CTA resident: the flag waits need it; launch() checks that
// one CTA per SM fits), workspace slots or units of work.
struct LaunchChoice {
  ConfigId config;
  int ctas;
};
inline LaunchChoice choose_launch(int m, int n, int k, int l, int sms) {
  LaunchChoice choice{kTile128, 0};
  for (const DispatchEntry& e : kDispatch)
    if (l == 1 && e.m == m && e.n == n && e.k == k) choice = {e.config, e.ctas};
  return with_config(choice.config, [&](auto config) {
    using C = decltype(config);
    const int64_t units = int64_t(m / C::BLOCK_M) * (n / C::BLOCK_N) * l * (k / C::BLOCK_K);
    int64_t ctas = choice.ctas > 0 ? choice.ctas : (units + kMinUnitsPerCta - 1) / kMinUnitsPerCta;
    ctas = ctas < sms ? ctas : sms;
    ctas = ctas < kMaxCtas ? ctas : kMaxCtas;
    ctas = ctas < units ? ctas : units;
    return LaunchChoice{choice.config, int(ctas > 0 ? ctas : 1)};
  });
}

// ---- Residency: the flag waits need every CTA of a launch running at once ----
constexpr int kTmemColumnsPerSm = 512;

// The CTAs of one launch that can all run at once on `sms` SMs: `blocks_per_sm` (the occupancy
// API: shared memory, registers, threads) capped by tensor memory, which it does not count (a CTA
// that cannot allocate its columns waits for one that may itself wait on that CTA's flag).
constexpr int64_t resident_capacity(int sms, int blocks_per_sm, int tmem_columns_per_cta) {
  const int by_tmem = tmem_columns_per_cta > 0 ? kTmemColumnsPerSm / tmem_columns_per_cta : blocks_per_sm;
  const int per_sm = blocks_per_sm < by_tmem ? blocks_per_sm : by_tmem;
  return int64_t(sms > 0 ? sms : 0) * (per_sm > 0 ? per_sm : 0);
}

// cudaSuccess when a grid of `ctas` fits at once, else cudaErrorCooperativeLaunchTooLarge (CUDA's
// error for a grid whose CTAs must all be resident and cannot be): launched anyway, the CTAs of a
// later wave never start, and the ones waiting for their flags trap after kWaitTimeoutNs.
constexpr cudaError_t check_resident(int ctas, int sms, int blocks_per_sm, int tmem_columns_per_cta) {
  return ctas <= resident_capacity(sms, blocks_per_sm, tmem_columns_per_cta) ? cudaSuccess
                                                                            : cudaErrorCooperativeLaunchTooLarge;
}

template <class Config>
Problem make_problem(int m, int n, int k, int l) {
  return {m, n, k, l, n / Config::BLOCK_N, m / Config::BLOCK_M};
}

template <class Config>
sm100_split::SpanPlan make_plan(int m, int n, int k, int l, int ctas) {
  return {(m / Config::BLOCK_M) * (n / Config::BLOCK_N) * l, k / Config::BLOCK_K, ctas};
}

// This GPU's resident CTAs per SM of the kernel (after its shared-memory limit is raised, which the
// answer depends on), asked once per GPU and config.
template <class Config>
cudaError_t blocks_per_sm(ConfigId id, int* blocks) {
  GpuState& state = host_common::per_device(gpu_states, gpu_state_scratch);
  if (!state.smem_limit_raised[id]) {
    const cudaError_t err = cudaFuncSetAttribute(nvfp4_gemm_sm100_tc_kernel<Config>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize, Config::kSmemBytes);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // returned to the caller; left set, torch's next launch check would raise it again
      return err;
    }
    state.smem_limit_raised[id] = true;
  }
  if (state.blocks_per_sm[id] < 0) {
    int answer = 0;
    const cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &answer, nvfp4_gemm_sm100_tc_kernel<Config>, Config::kThreads, Config::kSmemBytes);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // as above
      return err;
    }
    state.blocks_per_sm[id] = answer;
  }
  *blocks = state.blocks_per_sm[id];
  return cudaSuccess;
}

template <class Config>
cudaError_t launch(const Nvfp4GemmArgs& args, ConfigId id, int ctas, int sms) {
  int per_sm = 0;
  cudaError_t err = blocks_per_sm<Config>(id, &per_sm);
  if (err == cudaSuccess) err = check_resident(ctas, sms, per_sm, Config::kTmemColumns);
  if (err != cudaSuccess) return err;
  CUtensorMap tmap_a, tmap_b;
  if (!make_operand_map<Config>(&tmap_a, args.a, args.l * args.m, args.k, Config::BLOCK_M) ||
      !make_operand_map<Config>(&tmap_b, args.b, args.l * args.n, args.k, Config::BLOCK_N))
    return cudaErrorInvalidValue;
  const Problem problem = make_problem<Config>(args.m, args.n, args.k, args.l);
  const sm100_split::SpanPlan plan = make_plan<Config>(args.m, args.n, args.k, args.l, ctas);
  if (++launch_epoch == 0) launch_epoch = 1;
  nvfp4_gemm_sm100_tc_kernel<Config><<<plan.ctas, Config::kThreads, Config::kSmemBytes>>>(
      tmap_a, tmap_b, args.sfa, args.sfb, static_cast<__half*>(args.c), problem, plan, launch_epoch);
  return cudaGetLastError();
}

}  // namespace nvfp4_sm100_tc

const char* nvfp4_gemm_unsupported(int m, int n, int k, int l) {
  using C = nvfp4_sm100_tc::GeneralConfig;
  if (m <= 0 || n <= 0 || k <= 0 || l <= 0) return "m, n, k and l must be positive";
  if (m % C::BLOCK_M != 0) return "m must be a multiple of 128 (the kernel's tile M)";
  if (n % C::BLOCK_N != 0) return "n must be a multiple of 128 (the kernel's tile N)";
  if (k % C::BLOCK_K != 0) return "k must be a multiple of 256 (the kernel's K tile)";
  if (int64_t(l) * m > INT_MAX / 2 || int64_t(l) * n > INT_MAX / 2) return "l*m and l*n must fit in 31 bits";
  return nullptr;
}


cudaError_t nvfp4_gemm_launch(const Nvfp4GemmArgs& args) {
  using namespace nvfp4_sm100_tc;
  const host_common::OnLaunchGpu on_gpu;  // one GPU query for the whole plan and launch
  if (nvfp4_gemm_unsupported(args.m, args.n, args.k, args.l) != nullptr) return cudaErrorInvalidValue;
  if (tensor_map_encoder() == nullptr) return cudaErrorSymbolNotFound;
  const int sms = std::max(host_common::sm_count(), 1);
  const LaunchChoice choice = choose_launch(args.m, args.n, args.k, args.l, sms);
  return with_config(choice.config,
                     [&](auto config) { return launch<decltype(config)>(args, choice.config, choice.ctas, sms); });
}
