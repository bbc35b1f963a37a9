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
// Two ways to get A (SHARED_A decides per launch on the host):
// - shared A (v7, v9): while every CTA of the launch is resident at once, the launch first decodes
//   all of A once into a global fp16 copy (each thread a few 32-value pieces, written 512 contiguous
//   bytes per warp store), waits on a launch-wide barrier (one flag per CTA), and then every CTA
//   loads its fp16 A slices by TMA (128B swizzle) next to its packed B.
//   Each CTA used to decode A for its own K range: with M = 128 that is as much decode work as all
//   of B (56 N tiles repeat it), and it cost 22 us of 91 on the largest bench shape.
// - per-CTA A (v6, any grid): a decode warpgroup turns each packed A stage into fp16 buffers.
//
// Roles (DeepGEMM style): warpgroups 0-1 math (wgmma, B decode), warpgroup 2 (per-CTA A only)
// decodes A into the fp16 buffers, the last warp issues TMA. Split-K: a cluster of kClusterK
// (2, 3, 4 or 8) CTAs along K, K tiles split as evenly as possible; each CTA reduces one slice of
// the output tile from all CTAs' partials, exchanged through an L2 workspace (v9; distributed
// shared memory before, ~5x slower per byte). Spanning split (v10, one M tile with shared A, where it
// shortens the busiest CTA): one range of the launch's (N tile, K tile) units per SM, crossing tile
// boundaries, so all 132 SMs of an H100 work instead of 2 x 56; a range that leaves a tile hands its
// partial over mid-run, and the CTAs whose ranges end in a tile share its reduction.
#include <cuda.h>          // CUtensorMap types only (no -lcuda: the encoder comes from the runtime)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_fp16.h>

#include <climits>
#include <cstdio>
#include <cstdint>
#include <type_traits>

#include "nvfp4_gemm_api.h"
#include "sm90_nvfp4_decode.cuh"
#include "sm90_ptx.cuh"

// Compile-time switches. NVFP4_SM90_DEBUG prints the plan and first scale bytes from CTA 0.
// NVFP4_SM90_ABLATE_* leave one stage out to measure its cost (results are then wrong).
#ifndef NVFP4_SM90_DEBUG
#define NVFP4_SM90_DEBUG 0
#endif
#ifndef NVFP4_SM90_ABLATE_A_DECODE
#define NVFP4_SM90_ABLATE_A_DECODE 0
#endif
#ifndef NVFP4_SM90_ABLATE_B_DECODE
#define NVFP4_SM90_ABLATE_B_DECODE 0
#endif
#ifndef NVFP4_SM90_ABLATE_MMA
#define NVFP4_SM90_ABLATE_MMA 0
#endif
#ifndef NVFP4_SM90_ROLLING_WGMMA  // 0: v1, wait for a tile's 8 wgmmas before decoding the next
#define NVFP4_SM90_ROLLING_WGMMA 1
#endif
#ifndef NVFP4_SM90_MAX_CLUSTER_K  // 1 turns split-K off (to measure what it buys)
#define NVFP4_SM90_MAX_CLUSTER_K 8
#endif
#ifndef NVFP4_SM90_ODD_SPLIT  // 1: split-K may use a cluster of 3 (uneven K tiles)
#define NVFP4_SM90_ODD_SPLIT 1
#endif
#ifndef NVFP4_SM90_ABLATE_EXCHANGE  // 1: no partials sent (measures the split-K exchange)
#define NVFP4_SM90_ABLATE_EXCHANGE 0
#endif
#ifndef NVFP4_SM90_SHARED_A  // 0: v6, every CTA decodes its own A (no launch-wide A copy)
#define NVFP4_SM90_SHARED_A NVFP4_SM90_ROLLING_WGMMA
#endif
#ifndef NVFP4_SM90_E4M3_DECODE  // 0: v7's prmt-table decode (exact values) instead of e4m3 placement + cvt
#define NVFP4_SM90_E4M3_DECODE 1
#endif
#ifndef NVFP4_SM90_SHARED_A_MIN_K_TILES  // shared A only where a CTA runs at least this many K tiles
#define NVFP4_SM90_SHARED_A_MIN_K_TILES 8
#endif
#ifndef NVFP4_SM90_ABLATE_SHARED_A_DECODE  // 1: shared A without decoding it (barrier kept)
#define NVFP4_SM90_ABLATE_SHARED_A_DECODE 0
#endif
#ifndef NVFP4_SM90_ABLATE_GRID_BARRIER  // 1: shared A without decode or launch-wide barrier
#define NVFP4_SM90_ABLATE_GRID_BARRIER 0
#endif
#ifndef NVFP4_SM90_PREFILL_STAGES  // shared A: stages of packed B loaded before the launch-wide A decode
#define NVFP4_SM90_PREFILL_STAGES 3
#endif
#ifndef NVFP4_SM90_BARRIER_POLL_SLEEP_NS  // shared A: pause between two polls of the launch-wide barrier's flags
#define NVFP4_SM90_BARRIER_POLL_SLEEP_NS 32
#endif
#ifndef NVFP4_SM90_LOCAL_A_TILES  // shared A: first K tiles whose A the math warps decode themselves
#define NVFP4_SM90_LOCAL_A_TILES 2
#endif
#ifndef NVFP4_SM90_STAGED_A_STORES  // shared A: the copy is written 512 contiguous bytes per store instruction
#define NVFP4_SM90_STAGED_A_STORES 1
#endif
#ifndef NVFP4_SM90_SOFT_SPLIT  // 1: with shared A, splits of 4 or 8 may run without a hardware cluster
#define NVFP4_SM90_SOFT_SPLIT 1
#endif
#ifndef NVFP4_SM90_SPAN  // 1: with shared A, one equal K range per resident CTA, ranges crossing tile boundaries
#define NVFP4_SM90_SPAN 1
#endif
#ifndef NVFP4_SM90_SPAN_CTAS  // spanning split: CTAs of the launch (0: one per SM)
#define NVFP4_SM90_SPAN_CTAS 0
#endif
#ifndef NVFP4_SM90_SPAN_MIN_GAIN  // spanning split: % fewer K tiles on the busiest CTA it must reach
#define NVFP4_SM90_SPAN_MIN_GAIN 10
#endif
#ifndef NVFP4_SM90_TIMELINE  // 1: every CTA records when it reaches each phase (benchmarks/sm90_kernel.py timeline)
#define NVFP4_SM90_TIMELINE 0
#endif
#ifndef NVFP4_SM90_ABLATE_ALL  // 1: the kernel returns at once (launch and scheduling cost of this configuration)
#define NVFP4_SM90_ABLATE_ALL 0
#endif
#ifndef NVFP4_SM90_ABLATE_PIPELINE  // 1: no loads, decode or MMA; setup and split-K epilogue only
#define NVFP4_SM90_ABLATE_PIPELINE 0
#endif

namespace nvfp4_sm90 {

// ---- Configuration: the one place ----
constexpr int BLOCK_M = 128;  // rows of A / C per CTA = the N of every wgmma
constexpr int BLOCK_N = 128;  // rows of B / columns of C per CTA (64 per math warpgroup)
constexpr int BLOCK_K = 128;  // fp4 values along K per pipeline stage
constexpr int kNumMathWarpgroups = 2;  // each owns 64 of the CTA's B rows (one wgmma M)
constexpr int WGMMA_M = 64, WGMMA_N = BLOCK_M, WGMMA_K = 16;
constexpr int kSfVec = 16;  // K values per e4m3 scale

// ---- Shared memory sizes and offsets (from a 1024-byte aligned base) ----
constexpr int PACKED_ROW_BYTES = BLOCK_K / 2;                       // 64
constexpr int SMEM_A_PACKED_BYTES = BLOCK_M * PACKED_ROW_BYTES;    // 8 KB, 64B-swizzled by TMA
constexpr int SMEM_B_PACKED_BYTES = BLOCK_N * PACKED_ROW_BYTES;    // 8 KB, plain rows
constexpr int SMEM_SF_BYTES = BLOCK_K / (4 * kSfVec) * 512;        // 1 KB: (128-row, 4-block) chunks
constexpr int A_ATOM_K = 64;                                        // fp16 per 128-byte swizzle row
constexpr int A_ATOM_BYTES = BLOCK_M * 128;                         // 16 KB
constexpr int A_BUFFER_BYTES = (BLOCK_K / A_ATOM_K) * A_ATOM_BYTES;  // 32 KB
// Shared A: fp16 values of A (l * m * k) one launch can decode into its global copy (16 MB).
constexpr int64_t kSharedACapacity = int64_t(1) << 23;
constexpr uint64_t kGridBarrierTimeoutNs = 2000000000ull;  // a CTA that never arrives: trap, don't hang
constexpr int kSharedAMaxCtas = 256;  // CTAs of one shared-A launch (all resident: <= SMs), one flag each

// Decode route: e4m3 placement + cvt (values × 2^-6; the epilogue multiplies C by 2^12, exact) or
// the prmt table (exact values). Both give the same pairs of values, so the K order is unchanged.
__device__ __forceinline__ nvfp4_decode::Fp16x2Quad decode8(uint32_t x, uint32_t scale_x2,
                                                           const nvfp4_decode::E2m1Table& table) {
#if NVFP4_SM90_E4M3_DECODE
  (void)table;
  return nvfp4_decode::decode_e2m1x8_e4m3(x, scale_x2);
#else
  return nvfp4_decode::decode_e2m1x8(x, scale_x2, table);
#endif
}
constexpr float kOutputUnscale = NVFP4_SM90_E4M3_DECODE ? nvfp4_decode::kE4m3DecodeUnscale : 1.0f;

// Shared memory plan of one variant. Per-CTA A: a stage holds packed A (64B-swizzled), packed B
// and both scale chunks, and the decode warpgroup fills 3 separate fp16 A buffers. Shared A: a stage
// holds the fp16 A slice (two 128B-swizzled atoms, straight from TMA), packed B and B's scales; no
// decode warpgroup, so the math warps release a stage only after their wgmmas have read it.
template <bool kSharedA>
struct Plan {
  static constexpr int kStages = kSharedA ? 5 : 6;
  static constexpr int kABuffers = kSharedA ? 0 : 3;
  // No setmaxnreg: ptxas allocates every role within the launch-bound cap (65536 / 416 -> 152
  // registers per-CTA A), which the math role needs (64 accumulators + 32 fragments).
  static constexpr int kThreads = 128 * (kNumMathWarpgroups + (kSharedA ? 0 : 1)) + 32;
  static constexpr int kProducerThread = kThreads - 32;
  static constexpr int kStageReaderWarps = 4 * kNumMathWarpgroups + (kSharedA ? 0 : 4);
  static constexpr int kA16Offset = 0;        // shared A only
  static constexpr int kAPackedOffset = 0;    // per-CTA A only
  static constexpr int kBPackedOffset = kSharedA ? A_BUFFER_BYTES : SMEM_A_PACKED_BYTES;
  static constexpr int kSfaOffset = kBPackedOffset + SMEM_B_PACKED_BYTES;  // per-CTA A only
  static constexpr int kSfbOffset = kSfaOffset + (kSharedA ? 0 : SMEM_SF_BYTES);
  static constexpr int kStageTxBytes = kSfbOffset + SMEM_SF_BYTES;
  static constexpr int kStageBytes = (kStageTxBytes + 1023) / 1024 * 1024;
  static constexpr int kABuffersOffset = kStages * kStageBytes;
  static constexpr int kBarriersOffset = kABuffersOffset + kABuffers * A_BUFFER_BYTES;
  static constexpr int kNumBarriers = 2 * kStages + 2 * kABuffers + 1;  // + local A's (shared A)
  static constexpr int kSmemBytes = kBarriersOffset + kNumBarriers * 8 + 8;  // + the e2m1 lookup table
  static_assert(kStageBytes % 1024 == 0, "stages must keep the 1024-byte alignment of swizzled buffers");
  static_assert(kABuffersOffset % 1024 == 0, "decoded A buffers must be 1024-byte aligned (128B swizzle)");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory exceeds the sm_90 per-block limit");
  static_assert(!kSharedA || kThreads / 32 * 2048 <= A_BUFFER_BYTES, "A-copy staging (2 KB per warp) must fit one A slice");
};

static_assert(BLOCK_M == 128 && WGMMA_N == 128, "the decode WG maps one thread per A row: BLOCK_M must be 128");
static_assert(BLOCK_N == kNumMathWarpgroups * WGMMA_M, "each math warpgroup owns 64 B rows");
static_assert(BLOCK_K == 128, "the K permutation assumes one 16-byte chunk per quad thread and row");

// Split-K partials through L2. Math thread t of every CTA of a cluster holds the same (B row, A row)
// positions of the C^T tile, so the exchange needs no transposition: each CTA stores the float4
// groups acc[4j..4j+3] it does not own into its slot of a workspace, [group j][math thread]
// (16-byte stores, 512 contiguous bytes per warp), one cluster barrier, then the owner of group j
// adds the same thread's group from every slot in rank order (deterministic)
// and writes fp16 C from registers. Owner o of a cluster of kClusterK holds groups
// [kAccGroups * o / kClusterK, kAccGroups * (o + 1) / kClusterK). DSMEM moved these bytes at
// ~13 GB/s per SM (2.5 us for a cluster of 2 on an H100, timeline of v8; v9 replaced it).
constexpr int kAccGroups = 16;                        // float4 groups of a math thread's 64 accumulators
constexpr int kMathThreads = 128 * kNumMathWarpgroups;
constexpr int kL2PartialCtas = 160;                   // CTAs of one split-K launch (all resident: <= SMs)
constexpr int kL2PartialSlots = 2 * kL2PartialCtas;   // a spanning CTA has two: its first tile's and its last's
constexpr int kMaxSpanOwners = 4;                     // CTAs whose range ends in one tile (the host keeps to it)
constexpr int kMaxPartsInFlight = 18;                 // float4 partial loads per thread at once (registers)
__host__ __device__ constexpr int owned_group_begin(int owner, int cluster_k) { return kAccGroups * owner / cluster_k; }

// Ring position of a pipeline of kDepth slots; `phase` flips each time the ring wraps.
template <int kDepth>
struct PipelineState {
  int stage_idx = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance_pipeline() {
    stage_idx = stage_idx + 1 == kDepth ? 0 : stage_idx + 1;
    phase ^= stage_idx == 0 ? 1u : 0u;
  }
};

// Byte offset of the scale of (row r, k-block j) inside one (128-row, BLOCK_K) scale stage.
__device__ __forceinline__ int scale_offset(int r, int j) {
  return (j / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + j % 4;
}

template <bool kSharedA>
struct SharedStorage {
  using P = Plan<kSharedA>;
  uint8_t* base;
  __device__ uint8_t* stage(int s) const { return base + s * P::kStageBytes; }
  __device__ uint8_t* a_fp16_stage(int s) const { return stage(s) + P::kA16Offset; }
  __device__ uint8_t* a_packed(int s) const { return stage(s) + P::kAPackedOffset; }
  __device__ uint8_t* b_packed(int s) const { return stage(s) + P::kBPackedOffset; }
  __device__ uint8_t* sfa(int s) const { return stage(s) + P::kSfaOffset; }
  __device__ uint8_t* sfb(int s) const { return stage(s) + P::kSfbOffset; }
  __device__ uint8_t* a_fp16(int b) const { return base + P::kABuffersOffset + b * A_BUFFER_BYTES; }
  __device__ uint64_t* barriers() const { return reinterpret_cast<uint64_t*>(base + P::kBarriersOffset); }
  __device__ uint64_t* full_barriers() const { return barriers(); }
  __device__ uint64_t* empty_barriers() const { return barriers() + P::kStages; }
  __device__ uint64_t* a_full_barriers() const { return barriers() + 2 * P::kStages; }
  __device__ uint64_t* a_empty_barriers() const { return barriers() + 2 * P::kStages + P::kABuffers; }
  __device__ uint64_t* local_a_barrier() const { return barriers() + 2 * P::kStages + 2 * P::kABuffers; }
  __device__ uint32_t* e2m1_table() const { return reinterpret_cast<uint32_t*>(barriers() + P::kNumBarriers); }
};

// The launch-wide copy of A and the barrier that publishes it. One set per loaded module: two
// launches of the same module running at once (two CUDA queues) would share them, so the
// shared-A path assumes launches of this module are ordered, as the harness and the CLI make them.
__device__ __half g_shared_a[kSharedACapacity];
__device__ uint32_t g_decoded_epoch[kSharedAMaxCtas];

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

// The split-K workspace, one slot per CTA of the launch; same ordering assumption as the shared A copy.
__device__ float4 g_split_partials[kL2PartialSlots][kAccGroups][kMathThreads];
// Software split (no hardware cluster): slot s's partials are complete once its flag holds the launch's epoch.
__device__ uint32_t g_split_epoch[kL2PartialSlots];

// Accumulator group j (4 floats) of a math thread.
__device__ __forceinline__ float4 acc_group(const float (&acc)[64], int j) {
  return make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
}

// The groups outside [kSkipBegin, kSkipEnd) to workspace slot `slot`: 16-byte stores, 512 contiguous
// bytes per warp.
template <int kSkipBegin, int kSkipEnd>
__device__ __forceinline__ void store_groups_l2(const float (&acc)[64], int math_thread, int slot) {
#pragma unroll
  for (int j = 0; j < kAccGroups; ++j)
    if (j < kSkipBegin || j >= kSkipEnd) __stcg(&g_split_partials[slot][j][math_thread], acc_group(acc, j));
}

// Timeline (NVFP4_SM90_TIMELINE): per CTA, the global timer (ns) at each phase; the host copies it
// out after a launch with nvfp4_sm90_timeline.
enum TimelineEvent {
  kEntry,            // thread 0 starts
  kSetupDone,        // barriers initialised
  kADecoded,         // shared A: every thread of this CTA decoded its share of A
  kArrived,          // shared A: the producer arrived at the launch-wide barrier
  kGridBarrierDone,  // shared A: the producer passed the launch-wide barrier
  kFirstTile,        // math warp 0: the first stage is full
  kMainLoopDone,     // math warp 0: its last wgmma completed
  kPartialsSent,     // thread 0: its partials are stored
  kPartialsLanded,   // thread 0: the cluster barrier after the partials passed
  kExit,             // thread 0: C written
  kSmId,             // (not a time) the SM this CTA ran on
  kPreviousExit,     // (read at entry) the latest exit of the previous launch
  kTimelineEvents
};
#if NVFP4_SM90_TIMELINE
constexpr int kTimelineMaxCtas = 1024;
__device__ uint64_t g_timeline[kTimelineMaxCtas][kTimelineEvents];
__device__ uint64_t g_timeline_last_exit;
#endif

__device__ __forceinline__ void timeline_mark(TimelineEvent event) {
#if NVFP4_SM90_TIMELINE
  const uint32_t cta = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  if (cta >= kTimelineMaxCtas) return;
  uint64_t value = sm90::global_timer_ns();
  if (event == kSmId) asm volatile("{ .reg .u32 id; mov.u32 id, %%smid; cvt.u64.u32 %0, id; }" : "=l"(value));
  if (event == kPreviousExit) value = *reinterpret_cast<volatile uint64_t*>(&g_timeline_last_exit);
  g_timeline[cta][event] = value;
  if (event == kExit) atomicMax(reinterpret_cast<unsigned long long*>(&g_timeline_last_exit), value);
#else
  (void)event;
#endif
}

// Where one CTA's loads come from: rows of the packed maps and its tile's scale chunks.
struct TileSources {
  const CUtensorMap *tmap_a, *tmap_b, *tmap_a16;
  const uint8_t *sfa_tile, *sfb_tile;
  int row_a, row_b;
  int sfb_tile_bytes;  // from one N tile's scale chunks to the next's
};

// Packed B rows and their scale chunk of K tile kt into stage s (both paths), counted on its full barrier.
template <bool kSharedA>
__device__ __forceinline__ void load_packed_b(const SharedStorage<kSharedA>& smem, const TileSources& src, int s,
                                              const TileCoords& tile, int i) {
  uint64_t* full = &smem.full_barriers()[s];
  const int kt = unit_k_tile(tile, i);
  const bool next = in_next_tile(tile, i);
  sm90::tma_load_2d(smem.b_packed(s), src.tmap_b, kt * PACKED_ROW_BYTES, src.row_b + (next ? BLOCK_N : 0), full);
  sm90::bulk_load(smem.sfb(s), src.sfb_tile + (next ? src.sfb_tile_bytes : 0) + size_t(kt) * SMEM_SF_BYTES,
                  SMEM_SF_BYTES, full);
}

// ---- Producer (per-CTA A): one thread issues packed A/B tile loads (TMA) and scales (bulk copies) ----
__device__ __forceinline__ void producer(const SharedStorage<false>& smem, const TileSources& src,
                                         const TileCoords& tile) {
  PipelineState<Plan<false>::kStages> pipe;
  for (int i = 0; i < tile.num_k_tiles; ++i, pipe.advance_pipeline()) {
    const int s = pipe.stage_idx;
    const int kt = unit_k_tile(tile, i);
    sm90::mbar_wait(&smem.empty_barriers()[s], pipe.phase ^ 1);
    uint64_t* full = &smem.full_barriers()[s];
    sm90::mbar_arrive_expect_tx(full, Plan<false>::kStageTxBytes);
    sm90::tma_load_2d(smem.a_packed(s), src.tmap_a, kt * PACKED_ROW_BYTES, src.row_a, full);
    sm90::bulk_load(smem.sfa(s), src.sfa_tile + size_t(kt) * SMEM_SF_BYTES, SMEM_SF_BYTES, full);
    load_packed_b(smem, src, s, tile, i);
  }
}

// ---- Producer (shared A) ----
// The first kLocalATiles K tiles of a CTA do not wait for the launch-wide A copy: the math warps
// decode their A straight into those stages (local A), so the main loop starts while the copy is
// published. Their stages expect only B's bytes.
constexpr int kLocalATiles = NVFP4_SM90_LOCAL_A_TILES;
static_assert(kLocalATiles >= 0, "local A fills the first kLocalATiles stages");
__device__ __forceinline__ int local_a_tiles(const TileCoords& tile) { return min(kLocalATiles, tile.num_k_tiles); }
// Local A's packed tiles (TMA, 64B swizzle) and scale chunks wait in the last stage's A slice; the
// copy's store staging uses the one before. Both slices get their fp16 A by TMA only later.
constexpr int kLocalAPackedBytes = SMEM_A_PACKED_BYTES + SMEM_SF_BYTES;  // 9 KB, a multiple of 1 KB
constexpr int kLocalAStage = Plan<true>::kStages - 1, kCopyStagingStage = Plan<true>::kStages - 2;
static_assert(kLocalATiles <= kCopyStagingStage && kLocalATiles * kLocalAPackedBytes <= A_BUFFER_BYTES,
              "local A's stages, its packed tiles and the copy's staging must not overlap");

// Issued first of all: local A's loads do not depend on the copy or the barrier.
__device__ __forceinline__ void load_local_a(const SharedStorage<true>& smem, const TileSources& src,
                                             const TileCoords& tile) {
  uint64_t* bar = smem.local_a_barrier();
  sm90::mbar_arrive_expect_tx(bar, local_a_tiles(tile) * kLocalAPackedBytes);
  for (int i = 0; i < local_a_tiles(tile); ++i) {
    uint8_t* dst = smem.a_fp16_stage(kLocalAStage) + i * kLocalAPackedBytes;
    const int kt = unit_k_tile(tile, i);  // A's rows are the same in both tiles of a spanning range
    sm90::tma_load_2d(dst, src.tmap_a, kt * PACKED_ROW_BYTES, src.row_a, bar);
    sm90::bulk_load(dst + SMEM_A_PACKED_BYTES, src.sfa_tile + size_t(kt) * SMEM_SF_BYTES, SMEM_SF_BYTES, bar);
  }
}

// Packed B and its scales do not depend on the launch-wide A copy: the first stages' B loads go out
// before this CTA decodes its share of A, so DRAM latency overlaps the decode and the barrier. The
// local tiles' stages plus one: the first stage that waits for the copy then waits only for its A
// slice from L2, not for B from DRAM too. 3 stages against 2, same runs on an H100 and an H200: the
// small bench shape 3-5 % faster per call, the two others within 1 %; 4 no better, all 5 slower
// (their DRAM traffic goes ahead of A's loads).
__device__ __forceinline__ int prefill_b(const SharedStorage<true>& smem, const TileSources& src,
                                         const TileCoords& tile) {
  const int prefilled = min(max(NVFP4_SM90_PREFILL_STAGES, kLocalATiles), min(Plan<true>::kStages, tile.num_k_tiles));
  for (int s = 0; s < prefilled; ++s) {
    // A's bytes come later by TMA, or never (local A)
    sm90::mbar_arrive_expect_tx(&smem.full_barriers()[s],
                                Plan<true>::kStageTxBytes - (s < local_a_tiles(tile) ? A_BUFFER_BYTES : 0));
    load_packed_b(smem, src, s, tile, s);
  }
  return prefilled;
}

__device__ __forceinline__ void load_a16(const SharedStorage<true>& smem, const TileSources& src, int s, int kt) {
  uint64_t* full = &smem.full_barriers()[s];
#pragma unroll
  for (int atom = 0; atom < BLOCK_K / A_ATOM_K; ++atom)
    sm90::tma_load_2d(smem.a_fp16_stage(s) + atom * A_ATOM_BYTES, src.tmap_a16, kt * BLOCK_K + atom * A_ATOM_K,
                      src.row_a, full);
}

// After the launch-wide barrier: A for the prefilled stages, then every stage in full.
__device__ __forceinline__ void producer_shared_a(const SharedStorage<true>& smem, const TileSources& src,
                                                  const TileCoords& tile, int prefilled) {
  for (int s = local_a_tiles(tile); s < prefilled; ++s) load_a16(smem, src, s, unit_k_tile(tile, s));
  PipelineState<Plan<true>::kStages> pipe;
  for (int i = 0; i < prefilled; ++i) pipe.advance_pipeline();
  for (int i = prefilled; i < tile.num_k_tiles; ++i, pipe.advance_pipeline()) {
    const int s = pipe.stage_idx;
    sm90::mbar_wait(&smem.empty_barriers()[s], pipe.phase ^ 1);
    sm90::mbar_arrive_expect_tx(&smem.full_barriers()[s], Plan<true>::kStageTxBytes);
    load_packed_b(smem, src, s, tile, i);
    load_a16(smem, src, s, unit_k_tile(tile, i));
  }
}

// ---- Shared A, step 1: the launch decodes all of A once into g_shared_a ----
// Item = (row of the l*m rows, K tile, word w): word w of the four 16-byte chunks of the row's
// K tile (32 values) and the tile's 8 scales in, 64 contiguous bytes of fp16 out (logical k-steps
// 2w and 2w+1 of the stage, the order the decode warpgroup writes to shared memory). The copy is
// then a plain row-major [l*m, k] fp16 matrix that TMA loads with the 128-byte swizzle. Small
// items keep the launch's critical path short; consecutive threads take consecutive words.
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

__device__ __forceinline__ uint32_t linear_cta() { return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }

// Indices are 32-bit: the copy holds at most kSharedACapacity values (2^18 items), and 64-bit
// division is a long software routine on the launch's critical path.
struct AItem {
  uint32_t row, kt, w;
  uint32_t words[4], sf_words[2];
};

__device__ __forceinline__ AItem load_a_item(const uint8_t* a, const uint8_t* sfa, uint32_t item, int k) {
  const uint32_t k_tiles = uint32_t(k) / BLOCK_K, rest_k = uint32_t(k) / (4 * kSfVec);
  AItem it;
  it.w = item % 4, it.kt = (item / 4) % k_tiles, it.row = item / (4 * k_tiles);
  const uint8_t* packed = a + it.row * (k / 2) + it.kt * PACKED_ROW_BYTES + 4 * it.w;
#pragma unroll
  for (int t = 0; t < 4; ++t) it.words[t] = __ldg(reinterpret_cast<const uint32_t*>(packed + 16 * t));
  // scale chunks of 4 k-blocks x 128 rows: this row's k-blocks 8kt..8kt+3 and 8kt+4..8kt+7
  const uint8_t* sf_row = sfa + (it.row / 128) * rest_k * 512 + scale_offset(int(it.row % 128), 0);
  it.sf_words[0] = __ldg(reinterpret_cast<const uint32_t*>(sf_row + (2 * it.kt) * 512));
  it.sf_words[1] = __ldg(reinterpret_cast<const uint32_t*>(sf_row + (2 * it.kt + 1) * 512));
  return it;
}

// Item i's 64 bytes land at byte 64 i of the copy (logical k-steps 2w, 2w+1 of its row's K tile),
// and a warp's 32 items are consecutive, so the warp writes 2 KB in one piece. Each lane's four
// 16-byte groups go through a 2 KB shared-memory buffer of the warp so that every global store
// instruction writes 512 contiguous bytes (whole sectors) instead of 16 bytes every 64.
__device__ __forceinline__ void store_a_items_of_warp(const AItem& it, uint32_t item, uint32_t staging,
                                                      const nvfp4_decode::E2m1Table& table) {
  const uint32_t lane = threadIdx.x % 32;
  const RowWordFp16 d = decode_row_word(it.words, it.sf_words, int(it.w), table);
#if NVFP4_SM90_STAGED_A_STORES
#pragma unroll
  for (int j = 0; j < 4; ++j)
    sm90::st_shared_v4(staging + lane * 64 + 16 * j, d.group[j][0], d.group[j][1], d.group[j][2], d.group[j][3]);
  __syncwarp();
  uint8_t* out = reinterpret_cast<uint8_t*>(g_shared_a) + (item - lane) * 64 + lane * 16;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint4 v = sm90::ld_shared_v4(staging + lane * 16 + 512 * j);
    sm90::st_global_v4(out + 512 * j, v.x, v.y, v.z, v.w);
  }
  __syncwarp();  // the buffer is reused by the next item
#else
  (void)staging;
  uint8_t* out = reinterpret_cast<uint8_t*>(g_shared_a) + item * 64;
#pragma unroll
  for (int j = 0; j < 4; ++j) sm90::st_global_v4(out + 16 * j, d.group[j][0], d.group[j][1], d.group[j][2], d.group[j][3]);
#endif
}

// Every thread takes items thread, thread + threads, ... and loads up to kAItemsInFlight of them
// before decoding any: one DRAM latency per round, and the rounds are as even as the item count
// allows (the launch waits for its slowest thread).
constexpr int kAItemsInFlight = 4;

// Items come in whole warps: the item count is a multiple of 512 and every warp's first item a
// multiple of 32, so a warp's items are all valid or all past the end.
__device__ __forceinline__ void decode_a_to_global(const uint8_t* a, const uint8_t* sfa, int rows, int k,
                                                   uint32_t staging, const nvfp4_decode::E2m1Table& table) {
  const uint32_t items = uint32_t(rows) * uint32_t(k / BLOCK_K) * 4;
  const uint32_t threads = gridDim.x * gridDim.y * gridDim.z * blockDim.x;
  for (uint32_t first = linear_cta() * blockDim.x + threadIdx.x; first < items; first += kAItemsInFlight * threads) {
    AItem round[kAItemsInFlight];
#pragma unroll
    for (int u = 0; u < kAItemsInFlight; ++u)
      if (first + u * threads < items) round[u] = load_a_item(a, sfa, first + u * threads, k);
#pragma unroll
    for (int u = 0; u < kAItemsInFlight; ++u)
      if (first + u * threads < items) store_a_items_of_warp(round[u], first + u * threads, staging, table);
  }
}

// ---- Shared A, step 2: a launch-wide barrier (every CTA is resident: the host checks) ----
// Every launch carries a new epoch (a host-side launch count, never 0). A CTA whose threads have
// stored their share of A (they passed a __syncthreads) publishes it by writing the epoch into its
// own flag with release semantics; the producer warp's lanes each watch a few flags. No atomics:
// one counter that every CTA incremented cost ~1.5 us of same-address serialisation (H100).
__device__ __forceinline__ void grid_arrive(uint32_t epoch) { sm90::st_release_gpu(&g_decoded_epoch[linear_cta()], epoch); }

// Called by the whole producer warp; afterwards lane 0 may read the copy with TMA.
__device__ __forceinline__ void grid_wait(uint32_t epoch, int lane) {
#if !NVFP4_SM90_ABLATE_GRID_BARRIER
  const uint32_t num_ctas = gridDim.x * gridDim.y * gridDim.z;
  const uint64_t start = sm90::global_timer_ns();
  // each lane polls all of its flags at once (one round trip per poll, not one per flag)
  uint32_t pending = 0;  // bit i: flag lane + 32 i not seen yet
  for (uint32_t i = 0; lane + 32 * i < num_ctas; ++i) pending |= 1u << i;
  while (pending != 0) {
    uint32_t seen[kSharedAMaxCtas / 32];
#pragma unroll
    for (int i = 0; i < kSharedAMaxCtas / 32; ++i)
      if (pending & (1u << i)) seen[i] = sm90::ld_acquire_gpu(&g_decoded_epoch[lane + 32 * i]);
#pragma unroll
    for (int i = 0; i < kSharedAMaxCtas / 32; ++i)
      if ((pending & (1u << i)) && seen[i] == epoch) pending &= ~(1u << i);
    if (pending == 0) break;
    if (NVFP4_SM90_BARRIER_POLL_SLEEP_NS > 0) __nanosleep(NVFP4_SM90_BARRIER_POLL_SLEEP_NS);
    // Not every CTA is resident (another process holds SMs?): fail the launch instead of hanging.
    // No printf here: a call in the kernel makes ptxas serialise every wgmma (C7510).
    if (sm90::global_timer_ns() - start > kGridBarrierTimeoutNs) __trap();
  }
  __syncwarp();                      // every lane's acquire happens before lane 0's TMA
  sm90::fence_proxy_async_global();  // the copy was written by plain stores; TMA reads it next
#else
  (void)epoch, (void)lane;
#endif
}

// ---- A decode of one stage: packed A (TMA 64B-swizzled) + scale chunk -> fp16 A buffer in wgmma's
// K-major 128B-swizzled layout, by 128 threads; the decode warpgroup (per-CTA A) and local A
// (shared A) use it. Thread (warp q, lane) owns rows q*32 + lane%8 + 8r (r < 4) and word w = lane/8
// of each 16-byte chunk t; it writes logical k-steps 2w and 2w+1 (64 bytes) of each row with four
// 16-byte stores. Every address is a per-thread constant plus the stage / buffer base plus 512r or 1024r.
struct ADecodeLanes {
  uint32_t load_offset[4], sf_offset, store_offset[4];
  int w;
  __device__ explicit ADecodeLanes(int thread) {
    const int warp = thread / 32, lane = thread % 32, row0 = warp * 32 + lane % 8;  // rows r add 8r
    w = lane / 8;
    // TMA 64-byte swizzle: chunk t of row r sits at chunk t ^ ((row >> 1) & 3), the same for every r
#pragma unroll
    for (int t = 0; t < 4; ++t) load_offset[t] = row0 * PACKED_ROW_BYTES + ((t ^ ((row0 >> 1) & 3)) * 16) + 4 * w;
    sf_offset = scale_offset(row0, 0);  // + 512 for k-blocks 4..7; rows r add 8r*16
    // 128-byte swizzle of the fp16 rows: chunk c of row r sits at c ^ (row & 7) = c ^ (lane & 7)
#pragma unroll
    for (int j = 0; j < 4; ++j) store_offset[j] = (w / 2) * A_ATOM_BYTES + row0 * 128 + ((((w % 2) * 4 + j) ^ (lane & 7)) * 16);
  }
};

struct APackedRows {
  uint32_t words[4][4], sf_words[4][2];
};

__device__ __forceinline__ APackedRows load_a_stage(uint32_t packed, uint32_t sf_chunk, const ADecodeLanes& lanes) {
  APackedRows rows;
  const uint32_t sf = sf_chunk + lanes.sf_offset;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
#pragma unroll
    for (int t = 0; t < 4; ++t) rows.words[r][t] = sm90::ld_shared_u32(packed + lanes.load_offset[t] + 512 * r);
    rows.sf_words[r][0] = sm90::ld_shared_u32(sf + 128 * r);        // k-blocks 0..3 of row row0 + 8r
    rows.sf_words[r][1] = sm90::ld_shared_u32(sf + 512 + 128 * r);  // k-blocks 4..7
  }
  return rows;
}

__device__ __forceinline__ void store_a_stage(const APackedRows& rows, uint32_t a_fp16, const ADecodeLanes& lanes,
                                              const nvfp4_decode::E2m1Table& table) {
#if !NVFP4_SM90_ABLATE_A_DECODE
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const RowWordFp16 d = decode_row_word(rows.words[r], rows.sf_words[r], lanes.w, table);
    const uint32_t row_base = a_fp16 + 1024 * r;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      sm90::st_shared_v4(row_base + lanes.store_offset[j], d.group[j][0], d.group[j][1], d.group[j][2], d.group[j][3]);
  }
#endif
  sm90::fence_proxy_async_smem();  // make the generic stores visible to wgmma (async proxy)
}

// ---- A decoder warpgroup (per-CTA A) ----
__device__ __forceinline__ void a_decoder(const SharedStorage<false>& smem, const TileCoords& tile, int thread) {
  using P = Plan<false>;
  const ADecodeLanes lanes(thread);
  const uint32_t smem_base = sm90::smem_addr(smem.base);
  const nvfp4_decode::E2m1Table table = nvfp4_decode::load_table(sm90::smem_addr(smem.e2m1_table()));
  PipelineState<P::kStages> pipe;
  PipelineState<P::kABuffers> abuf;
  for (int i = 0; i < tile.num_k_tiles; ++i, pipe.advance_pipeline(), abuf.advance_pipeline()) {
    sm90::mbar_wait(&smem.full_barriers()[pipe.stage_idx], pipe.phase);
    const uint32_t stage = smem_base + pipe.stage_idx * P::kStageBytes;
    const APackedRows rows = load_a_stage(stage + P::kAPackedOffset, stage + P::kSfaOffset, lanes);
    __syncwarp();
    if (thread % 32 == 0) sm90::mbar_arrive(&smem.empty_barriers()[pipe.stage_idx]);
    sm90::mbar_wait(&smem.a_empty_barriers()[abuf.stage_idx], abuf.phase ^ 1);
    store_a_stage(rows, sm90::smem_addr(smem.a_fp16(abuf.stage_idx)), lanes, table);
    sm90::mbar_arrive(&smem.a_full_barriers()[abuf.stage_idx]);
  }
}

// Math warpgroup wg decodes local tiles wg, wg + 2, ... into their stages' A slices, after the CTA
// has arrived.
__device__ __forceinline__ void decode_local_a(const SharedStorage<true>& smem, const TileCoords& tile, int math_thread,
                                               const nvfp4_decode::E2m1Table& table) {
  const ADecodeLanes lanes(math_thread % 128);
  sm90::mbar_wait(smem.local_a_barrier(), 0);
  for (int i = math_thread / 128; i < local_a_tiles(tile); i += kNumMathWarpgroups) {
    const uint32_t packed = sm90::smem_addr(smem.a_fp16_stage(kLocalAStage)) + i * kLocalAPackedBytes;
    store_a_stage(load_a_stage(packed, packed + SMEM_A_PACKED_BYTES, lanes), sm90::smem_addr(smem.a_fp16_stage(i)),
                  lanes, table);
  }
}

// Spanning split: a range that started inside a tile it does not finish hands that tile's whole
// partial sum to the tile's owners: every group to its first slot. The stores drain while the main
// loop goes on; the slot's flag is raised with the CTA's last one, after the loop (span_epilogue),
// since every range ends at about the same time and its owners need it only then.
__device__ __forceinline__ void hand_over_first_tile(const float (&acc)[64], int math_thread, int slot) {
  store_groups_l2<0, 0>(acc, math_thread, slot);
}

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
#if NVFP4_SM90_ABLATE_B_DECODE
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

__device__ __forceinline__ void issue_wgmma(float (&acc)[64], const uint32_t (&frag)[4], uint32_t a_base, int ks,
                                            bool accumulate) {
#if NVFP4_SM90_ABLATE_MMA
  acc[ks] += __uint_as_float(frag[0] ^ frag[3] ^ a_base) * (accumulate ? 1.f : 0.f);
#else
  const uint32_t addr = a_base + (ks / 4) * A_ATOM_BYTES + (ks % 4) * WGMMA_K * 2;
  sm90::wgmma_fence();  // the fragment registers were just written
  sm90::wgmma_m64n128k16_rs(acc, frag, sm90::make_smem_desc_sw128(addr), accumulate ? 1u : 0u);
  sm90::wgmma_commit();
#endif
}

template <bool kSharedA, bool kSpan>
__device__ __forceinline__ void math(const SharedStorage<kSharedA>& smem, const TileCoords& tile, int wg,
                                     int thread, float (&acc)[64], int first_slot) {
  using P = Plan<kSharedA>;
  const int warp = thread / 32, lane = thread % 32;
  const int row_lo = wg * WGMMA_M + warp * 16 + lane / 4, t = lane % 4;
  // row_hi = row_lo + 8 keeps (row / 32) and lies 8 * 16 bytes further in the scale chunk
  const BRowOffsets offsets{uint32_t(P::kBPackedOffset + row_lo * PACKED_ROW_BYTES + t * 16),
                            uint32_t(P::kSfbOffset + scale_offset(row_lo, 2 * t))};
  const uint32_t smem_base = sm90::smem_addr(smem.base);
  const nvfp4_decode::E2m1Table table = nvfp4_decode::load_table(sm90::smem_addr(smem.e2m1_table()));
  PipelineState<P::kStages> pipe;
  PipelineState<kSharedA ? 1 : P::kABuffers> abuf;
  uint32_t frag[BLOCK_K / WGMMA_K][4];
#if NVFP4_SM90_ABLATE_MMA
#pragma unroll
  for (int j = 0; j < 64; ++j) acc[j] = 0.f;
#endif
#if NVFP4_SM90_ROLLING_WGMMA
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
        issue_wgmma(acc, frag[2 * w], a_base, 2 * w, i > begin || w > 0);
        issue_wgmma(acc, frag[2 * w + 1], a_base, 2 * w + 1, true);
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
  if (wg == 0 && thread == 0) timeline_mark(kFirstTile);
  if constexpr (kSpan) {
    run_k_tiles(0, tile.first_len);
    if (tile.first_len < tile.num_k_tiles) {
      sm90::wgmma_wait<0>();
      hand_over_first_tile(acc, wg * 128 + thread, first_slot);
      run_k_tiles(tile.first_len, tile.num_k_tiles);
    }
  } else {
    run_k_tiles(0, tile.num_k_tiles);
  }
  sm90::wgmma_wait<0>();  // the accumulators are read next
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
    for (int ks = 0; ks < BLOCK_K / WGMMA_K; ++ks) issue_wgmma(acc, frag[ks], a_base, ks, i > 0 || ks > 0);
    sm90::wgmma_wait<0>();
    __syncwarp();
    if (lane == 0) sm90::mbar_arrive(&smem.a_empty_barriers()[abuf.stage_idx]);
  }
#endif
}

// Calls f(std::integral_constant<int, rank>) for this CTA's cluster rank: the owned accumulator
// groups become compile-time, so the loops unroll without branches and every load of the
// reduction is issued before the first add (one L2 round trip, not one per group).
template <int kClusterK, int kRank = 0, typename F>
__device__ __forceinline__ void with_cluster_rank(uint32_t rank, F&& f) {
  if constexpr (kRank < kClusterK) {
    if (rank == uint32_t(kRank))
      f(std::integral_constant<int, kRank>{});
    else
      with_cluster_rank<kClusterK, kRank + 1>(rank, f);
  }
}

// Split-K through L2, step 1: the groups this CTA does not own go to its workspace slot.
template <int kClusterK, int kRank>
__device__ __forceinline__ void store_partials_l2(const float (&acc)[64], int math_thread, int slot) {
  constexpr int kBegin = owned_group_begin(kRank, kClusterK), kEnd = owned_group_begin(kRank + 1, kClusterK);
#if NVFP4_SM90_ABLATE_EXCHANGE  // keep the accumulators (and so the main loop) alive, send nothing
  float keep = 0.f;
#pragma unroll
  for (int j = 0; j < 64; ++j) keep += acc[j];
  if (keep == 1234.5f) g_split_partials[slot][0][math_thread].x = keep;
  return;
#endif
  store_groups_l2<kBegin, kEnd>(acc, math_thread, slot);
}

// Split-K through L2, step 2 (after the cluster barrier): sum the owned groups over the tile's
// kContrib contributions in K order (s = kRank: this CTA's own accumulators; others: slot slot_of(s))
// and write them as fp16 C. Group j of math thread (wg, warp, lane) holds C^T rows
// n = wg*64 + warp*16 + g + 8r (g = lane/4) and columns m = 8j + 2(lane%4) + e at acc[4j + 2r + e].
// Lanes g and g^1 swap one value per (j, r) so each stores a half2 pair along n: even g row m(e=0)
// columns n, n+1; odd g row m(e=1) columns n-1, n.
template <int kClusterK, int kRank, int kContrib, typename SlotOf>
__device__ __forceinline__ void reduce_and_store_l2(const float (&acc)[64], int math_thread, SlotOf slot_of, __half* c,
                                                    int m, int n, const TileCoords& tile) {
  constexpr int kBegin = owned_group_begin(kRank, kClusterK), kEnd = owned_group_begin(kRank + 1, kClusterK);
  // at most kMaxPartsInFlight float4 loads in flight per thread: owned groups go in chunks of kChunk
  constexpr int kChunk = kMaxPartsInFlight / kContrib > 0 ? kMaxPartsInFlight / kContrib : 1;
  const int warp = math_thread / 32, lane = math_thread % 32, g = lane / 4;
  const bool even = g % 2 == 0;
  const size_t m_row = size_t(tile.batch) * m + size_t(tile.m_tile) * BLOCK_M + 2 * (lane % 4) + (even ? 0 : 1);
  const size_t n_col = size_t(tile.n_tile) * BLOCK_N + warp * 16 + (g & ~1);  // warp counts across both WGs
#pragma unroll
  for (int j0 = kBegin; j0 < kEnd; j0 += kChunk) {
    float4 parts[kChunk][kContrib];
#pragma unroll
    for (int j = j0; j < j0 + kChunk && j < kEnd; ++j)
#pragma unroll
      for (int s = 0; s < kContrib; ++s)
        parts[j - j0][s] = s == kRank || NVFP4_SM90_ABLATE_EXCHANGE
                               ? acc_group(acc, j)
                               : __ldcg(&g_split_partials[slot_of(s)][j][math_thread]);
#pragma unroll
    for (int j = j0; j < j0 + kChunk && j < kEnd; ++j) {
      float4 sum = parts[j - j0][0];
#pragma unroll
      for (int s = 1; s < kContrib; ++s) {
        const float4 p = parts[j - j0][s];
        sum.x += p.x, sum.y += p.y, sum.z += p.z, sum.w += p.w;
      }
      const float v[4] = {sum.x * kOutputUnscale, sum.y * kOutputUnscale, sum.z * kOutputUnscale, sum.w * kOutputUnscale};
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float other = __shfl_xor_sync(0xffffffffu, even ? v[2 * r + 1] : v[2 * r], 4);
        const __half2 pair = even ? __floats2half2_rn(v[2 * r], other) : __floats2half2_rn(other, v[2 * r + 1]);
        *reinterpret_cast<__half2*>(c + (m_row + 8 * j) * n + n_col + 8 * r) = pair;
      }
    }
  }
}

// Without a hardware cluster (software split, spanning split) the CTAs of a tile meet through flags
// in global memory: a soft split's kClusterK CTAs (blockIdx.x = rank) cannot be a cluster, which
// must fit one GPC (32 clusters of 4 do not on an H100), and a spanning split's tiles have up to 5
// contributors; the host checks that the whole grid is resident. Partner s's partials are in slot
// slot_of(s); this CTA is partner `me`, and raises handed_over's flag too (a spanning range's first
// slot; -1: none).
template <typename SlotOf>
__device__ __forceinline__ void meet_partners(int math_thread, int partners, int me, SlotOf slot_of, uint32_t epoch,
                                              int handed_over = -1) {
  sm90::named_barrier_sync<2, kMathThreads>();  // this CTA's partials are stored
  if (math_thread < 32) {  // warp 0: lane s watches partner s, all at once (one round trip per poll)
    const int lane = math_thread;
    if (lane == 0) sm90::st_release_gpu(&g_split_epoch[slot_of(me)], epoch);
    if (lane == 1 && handed_over >= 0) sm90::st_release_gpu(&g_split_epoch[handed_over], epoch);
    bool seen = lane >= partners || lane == me;
    const uint64_t start = sm90::global_timer_ns();
    while (!__all_sync(0xffffffffu, seen)) {
      if (!seen) seen = sm90::ld_acquire_gpu(&g_split_epoch[slot_of(lane)]) == epoch;
      if (sm90::global_timer_ns() - start > kGridBarrierTimeoutNs) __trap();  // a partner never ran
    }
    __syncwarp();  // every lane's acquire happens before the barrier below
  }
  sm90::named_barrier_sync<2, kMathThreads>();  // every partner's partials are complete
}

// Spanning split, after the main loop: this CTA owns a part of its last tile, together with every
// other CTA whose range ends in that tile; the tile's last contributor is no owner when its range
// goes on into the next tile (it handed its share over mid-run, hand_over_first_tile). Owners store
// the groups they do not own to their second slot, meet, and add the tile's contributions in K order.
__device__ __forceinline__ void span_epilogue(const float (&acc)[64], int math_thread, int cta, SpanSplit split,
                                              int k_tiles, __half* c, int m, int n, uint32_t epoch) {
  const int last = (span_begin(cta + 1, split) - 1) / k_tiles;
  const int first_cta = span_cta_of(last * k_tiles, split);
  const int last_cta = span_cta_of((last + 1) * k_tiles - 1, split);
  const bool tail = span_begin(last_cta + 1, split) > (last + 1) * k_tiles;
  const int owners = last_cta - first_cta + 1 - (tail ? 1 : 0), partners = owners + (tail ? 1 : 0);
  const auto slot_of = [=](int s) { return 2 * (first_cta + s) + (s < owners ? 1 : 0); };
  const bool spans = span_begin(cta, split) < last * k_tiles;  // its first tile's partial waits in slot 2 cta
  const TileCoords tile{0, last, 0, 0, 0, 0};
  with_cluster_rank<kMaxSpanOwners>(uint32_t(owners - 1), [&](auto owners_less_one) {
    constexpr int kOwners = decltype(owners_less_one)::value + 1;
    with_cluster_rank<kOwners>(uint32_t(cta - first_cta), [&](auto rank) {
      constexpr int kRank = decltype(rank)::value;
      store_partials_l2<kOwners, kRank>(acc, math_thread, slot_of(kRank));
      if (partners > 1 || spans) meet_partners(math_thread, partners, kRank, slot_of, epoch, spans ? 2 * cta : -1);
      if (tail)
        reduce_and_store_l2<kOwners, kRank, kOwners + 1>(acc, math_thread, slot_of, c, m, n, tile);
      else
        reduce_and_store_l2<kOwners, kRank, kOwners>(acc, math_thread, slot_of, c, m, n, tile);
    });
  });
}

template <int kClusterK, bool kSharedA, bool kSoftSplit = false, bool kSpan = false>
__global__ void __cluster_dims__(kSoftSplit ? 1 : kClusterK, 1, 1) __launch_bounds__(Plan<kSharedA>::kThreads, 1)
    nvfp4_gemm_sm90_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                           const __grid_constant__ CUtensorMap tmap_a16, const uint8_t* a, const uint8_t* sfa,
                           const uint8_t* sfb, __half* c, int m, int n, int k, int l, uint32_t epoch,
                           SpanSplit span) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#if NVFP4_SM90_ABLATE_ALL
  return;
#endif
  if (threadIdx.x == 0) timeline_mark(kPreviousExit), timeline_mark(kEntry), timeline_mark(kSmId);
  using P = Plan<kSharedA>;
  static_assert(kClusterK <= kAccGroups, "every CTA of a split-K cluster owns at least one accumulator group");
  // The dynamic shared memory window starts 1024-byte aligned (no static shared memory here);
  // the swizzled TMA / wgmma layouts rely on it, so a misaligned base traps instead of computing garbage.
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const SharedStorage<kSharedA> smem{smem_raw};
  if (sm90::smem_addr(smem_raw) % 1024 != 0) __trap();

  static_assert(!kSpan || (kClusterK == 1 && kSharedA && !kSoftSplit), "a spanning split is its own kind of launch");
  const int m_tiles = m / BLOCK_M;
  const uint32_t my_rank = kSoftSplit ? blockIdx.x : sm90::cluster_cta_rank();
  const int k_tiles = k / BLOCK_K;
  const TileCoords tile = [&]() -> TileCoords {
    if constexpr (kSpan) {  // one M tile (the host checks)
      const int begin = span_begin(blockIdx.x, span), end = span_begin(blockIdx.x + 1, span);
      int first = 0, offset = begin;  // begin / k_tiles without a division (see SpanSplit)
      while (offset >= k_tiles) offset -= k_tiles, ++first;
      return {0, first, 0, offset, end - begin, min(end - begin, k_tiles - offset)};
    } else {
      // K tiles split as evenly as possible (the host keeps kClusterK <= K tiles): every CTA has one or more
      const int k_base = k_tiles / kClusterK, k_rem = k_tiles % kClusterK;
      const int num_k_tiles = k_base + (int(my_rank) < k_rem ? 1 : 0);
      return {int(blockIdx.z) % m_tiles, int(blockIdx.y), int(blockIdx.z) / m_tiles,
              int(my_rank) * k_base + min(int(my_rank), k_rem), num_k_tiles, num_k_tiles};
    }
  }();
  const int rest_k = k / (4 * kSfVec);  // 512-byte scale chunks per 128-row tile
  const TileSources src{&tmap_a, &tmap_b, &tmap_a16,
                        sfa + (size_t(tile.batch) * m_tiles + tile.m_tile) * rest_k * 512,
                        sfb + (size_t(tile.batch) * (n / BLOCK_N) + tile.n_tile) * rest_k * 512,
                        tile.batch * m + tile.m_tile * BLOCK_M, tile.batch * n + tile.n_tile * BLOCK_N, rest_k * 512};
  const bool is_producer = threadIdx.x == P::kProducerThread;

  // ---- Barrier init ----
  if (threadIdx.x == 0) {
    for (int s = 0; s < P::kStages; ++s) {
      sm90::mbar_init(&smem.full_barriers()[s], 1);
      sm90::mbar_init(&smem.empty_barriers()[s], P::kStageReaderWarps);  // one per reading warp
    }
    for (int b = 0; b < P::kABuffers; ++b) {
      sm90::mbar_init(&smem.a_full_barriers()[b], 128);                      // every decode thread
      sm90::mbar_init(&smem.a_empty_barriers()[b], 4 * kNumMathWarpgroups);  // one per math warp
    }
    sm90::mbar_init(smem.local_a_barrier(), 1);
    smem.e2m1_table()[0] = nvfp4_decode::kE2m1HighBytesLo;
    smem.e2m1_table()[1] = nvfp4_decode::kE2m1HighBytesHi;
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) timeline_mark(kSetupDone);
  if (is_producer) {
    sm90::prefetch_tensor_map(&tmap_a);
    sm90::prefetch_tensor_map(&tmap_b);
    if constexpr (kSharedA) sm90::prefetch_tensor_map(&tmap_a16);
#if NVFP4_SM90_DEBUG
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0)
      printf("nvfp4_sm90: m=%d n=%d k=%d clusterK=%d sharedA=%d k_tiles/CTA=%d sfa[0..3]=%02x %02x %02x %02x\n", m,
             n, k, kClusterK, int(kSharedA), num_k_tiles, sfa[0], sfa[1], sfa[2], sfa[3]);
#endif
  }

  // ---- Shared A: B loads go out, every thread decodes its share of A, the launch synchronises ----
  int prefilled = 0;
  if constexpr (kSharedA) {
    if (is_producer && !NVFP4_SM90_ABLATE_PIPELINE) {
      if (kLocalATiles > 0) load_local_a(smem, src, tile);
      prefilled = prefill_b(smem, src, tile);
    }
    const nvfp4_decode::E2m1Table table = nvfp4_decode::load_table(sm90::smem_addr(smem.e2m1_table()));
#if !NVFP4_SM90_ABLATE_SHARED_A_DECODE && !NVFP4_SM90_ABLATE_GRID_BARRIER
    // staging: 2 KB per warp in an A slice that TMA fills only after the barrier
    decode_a_to_global(a, sfa, l * m, k, sm90::smem_addr(smem.a_fp16_stage(kCopyStagingStage)) + (threadIdx.x / 32) * 2048,
                       table);
#endif
    sm90::fence_proxy_async_global();
    __syncthreads();  // this CTA's share of the copy is written
#if !NVFP4_SM90_ABLATE_GRID_BARRIER
    if (threadIdx.x == 0) timeline_mark(kADecoded);
    if (is_producer) grid_arrive(epoch), timeline_mark(kArrived);
#endif
    // Local A is decoded only after this CTA has arrived: the whole launch waits for the last CTA to
    // arrive, so nothing else goes before that (loads through the threads there cost ~1 us, H100).
    // The named barrier also holds the producer warp until the packed local tiles have been read.
    if (kLocalATiles > 0 && !NVFP4_SM90_ABLATE_PIPELINE && threadIdx.x < kMathThreads) {
      decode_local_a(smem, tile, threadIdx.x, table);
      sm90::named_barrier_sync<1, P::kThreads>();
    }
  }

  // ---- Dispatch warps into different roles ----
  // Broadcast from lane 0 so ptxas knows the role is warp-uniform: computed per thread, the per-CTA-A
  // kernels' math loop left the uniform datapath (an R2UR per wgmma descriptor, 14 per K tile).
  const int wg = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0);
  float acc[64];
#if NVFP4_SM90_ABLATE_PIPELINE
  for (int j = 0; j < 64; ++j) acc[j] = 0.f;
  (void)prefilled;
#else
  if (wg < kNumMathWarpgroups) {
    math<kSharedA, kSpan>(smem, tile, wg, threadIdx.x % 128, acc, 2 * int(blockIdx.x));
  } else if (threadIdx.x >= P::kProducerThread) {  // the producer warp
    if constexpr (kSharedA) {
      if (kLocalATiles > 0) sm90::named_barrier_sync<1, P::kThreads>();  // local A's packed tiles are read
      grid_wait(epoch, threadIdx.x % 32);
      if (is_producer) timeline_mark(kGridBarrierDone), producer_shared_a(smem, src, tile, prefilled);
    } else if (is_producer) {
      producer(smem, src, tile);
    }
  } else if constexpr (!kSharedA) {
    if (wg == kNumMathWarpgroups) a_decoder(smem, tile, threadIdx.x % 128);
  }
#endif

  // ---- Split-K epilogue through an L2 workspace ----
  if constexpr (kSpan) {
    if (threadIdx.x == 0) timeline_mark(kPartialsSent);
    if (wg < kNumMathWarpgroups) span_epilogue(acc, threadIdx.x, blockIdx.x, span, k_tiles, c, m, n, epoch);
  } else {
    const int first_slot = int(blockIdx.z * gridDim.y + blockIdx.y) * kClusterK;
    if (kClusterK > 1 && wg < kNumMathWarpgroups) {
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
        reduce_and_store_l2<kClusterK, decltype(rank)::value, kClusterK>(
            acc, threadIdx.x, [=](int s) { return first_slot + s; }, c, m, n, tile);
      });
    }
  }
  if (threadIdx.x == 0) timeline_mark(kExit);
#else
  if (threadIdx.x == 0) printf("nvfp4_gemm_sm90_kernel needs sm_90a (wgmma)\n");
  __trap();
#endif
}

// ---- Host side ----
// Everything host-side has internal linkage. A function-local static in a template (or inline)
// function is one process-wide object (STB_GNU_UNIQUE) shared by every module that contains the
// same code: with two builds of this kernel loaded (ctypes variants, the torch extension), the
// second one skipped its own cudaFuncSetAttribute and its launches failed with "invalid argument".
namespace {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  if (encode == nullptr) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &status) ==
            cudaSuccess &&
        status == cudaDriverEntryPointSuccess)
      encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }
  return encode;
}

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
// atom (64 fp16 x 128 rows), as the wgmma descriptors expect.
bool make_shared_a_map(CUtensorMap* map, int rows, int k) {
  void* copy = nullptr;  // looked up every call: a host-side static here reads like a result cache
  if (cudaGetSymbolAddress(&copy, g_shared_a) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  const cuuint64_t dims[2] = {cuuint64_t(k), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(k) * 2};
  const cuuint32_t box[2] = {cuuint32_t(A_ATOM_K), cuuint32_t(BLOCK_M)};
  const cuuint32_t elem_strides[2] = {1, 1};
  return tensor_map_encoder()(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, copy, dims, strides, box, elem_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

constexpr int kClusterKSlots = 5;  // cluster_k = 1, 2, 4, 8, 3
constexpr int cluster_slot(int cluster_k) {
  return cluster_k == 3 ? 4 : cluster_k == 8 ? 3 : cluster_k == 4 ? 2 : cluster_k == 2 ? 1 : 0;
}
// launch settings and properties of this GPU and kernel, not results
bool smem_limit_raised[2][2][2][kClusterKSlots] = {};  // [shared A][software split][spanning][cluster slot]
int max_active_clusters_cached[2][kClusterKSlots] = {{-1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1}};  // [shared A][slot]

template <int kClusterK, bool kSharedA, bool kSoftSplit = false, bool kSpan = false>
cudaError_t allow_large_smem() {
  if (!smem_limit_raised[kSharedA][kSoftSplit][kSpan][cluster_slot(kClusterK)]) {
    const cudaError_t err = cudaFuncSetAttribute(nvfp4_gemm_sm90_kernel<kClusterK, kSharedA, kSoftSplit, kSpan>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 Plan<kSharedA>::kSmemBytes);
    if (err != cudaSuccess) return err;
    smem_limit_raised[kSharedA][kSoftSplit][kSpan][cluster_slot(kClusterK)] = true;
  }
  return cudaSuccess;
}

// How many clusters of kClusterK CTAs the GPU runs at once. Clusters must fit inside one GPC, so
// this is below num_sms / kClusterK (seen on an H100: 128 CTAs in clusters of 4 ran as two waves).
template <int kClusterK, bool kSharedA>
int max_active_clusters() {
  int& cached = max_active_clusters_cached[kSharedA][cluster_slot(kClusterK)];
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

// Software split (shared A only): the kernel's resident CTAs on this GPU, one per SM.
int resident_ctas_cached = -1;

int resident_ctas() {
  if (resident_ctas_cached < 0) {
    int device = 0, sms = 0, per_sm = 0;
    if (allow_large_smem<4, true, true>() != cudaSuccess || cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, nvfp4_gemm_sm90_kernel<4, true, true>,
                                                      Plan<true>::kThreads, Plan<true>::kSmemBytes) != cudaSuccess) {
      (void)cudaGetLastError();  // not fatal: no software split
      sms = per_sm = 0;
    }
    resident_ctas_cached = sms * per_sm;
  }
  return resident_ctas_cached;
}

struct Split {
  int cluster_k;
  bool soft;  // the CTAs of a tile meet through global flags, not as a hardware cluster
};

// Split K only while the whole grid still runs in one wave and SMs would otherwise idle; every CTA
// keeps whole K tiles (one or more). The split with the fewest K tiles on its busiest CTA wins, the
// smaller one on a tie. Hardware clusters must fit the GPCs (on an H100, 32 clusters of 4 ran as two
// waves); with shared A (every CTA resident anyway) a split of 4 or 8 may run without a cluster.
template <bool kSharedA>
Split choose_split(int tiles, int k, bool allow_soft) {
  const int k_tiles = k / BLOCK_K;
  Split best{1, false};
  int best_k_tiles = k_tiles;
  const auto consider = [&](int cluster_k, bool soft_allowed) {
    const int busiest = (k_tiles + cluster_k - 1) / cluster_k;
    if (NVFP4_SM90_MAX_CLUSTER_K < cluster_k || cluster_k > k_tiles || busiest >= best_k_tiles ||
        tiles * cluster_k > kL2PartialCtas)
      return;
    if (tiles <= max_active_clusters_of<kSharedA>(cluster_k))
      best = {cluster_k, false}, best_k_tiles = busiest;
    else if (NVFP4_SM90_SOFT_SPLIT && kSharedA && allow_soft && soft_allowed && tiles * cluster_k <= resident_ctas())
      best = {cluster_k, true}, best_k_tiles = busiest;
  };
  consider(2, false);
#if NVFP4_SM90_ODD_SPLIT
  consider(3, false);
#endif
  consider(4, true);
  consider(8, true);
  return best;
}

template <bool kSharedA>
int choose_cluster_k(int tiles, int k) {
  return choose_split<kSharedA>(tiles, k, false).cluster_k;
}

struct LaunchPlan {
  int cluster_k;
  bool shared_a;
  bool soft_split;
  int span_ctas = 0;  // > 0: a spanning split over this many CTAs (shared A, cluster_k 1)
};

// A spanning split needs one M tile (its ranges share A's rows), every CTA resident (it meets through
// flags) with two workspace slots, ranges of at most one tile (so at most two tiles each) and of at
// least a quarter of one (at most kMaxSpanOwners owners per tile), enough K tiles per CTA for shared A,
// and it must shorten the busiest CTA's range by at least a tenth over the split it replaces.
int span_ctas(int m, int n, int k, int l, int busiest_k_tiles) {
  const int most = min(resident_ctas(), min(kSharedAMaxCtas, kL2PartialSlots / 2));
  const int ctas = NVFP4_SM90_SPAN_CTAS > 0 ? min(NVFP4_SM90_SPAN_CTAS, most) : most;
  const int n_tiles = n / BLOCK_N, k_tiles = k / BLOCK_K;
  if (!NVFP4_SM90_SPAN || (m / BLOCK_M) * l != 1 || ctas <= 0 || n_tiles > ctas) return 0;
  const int units = n_tiles * k_tiles;  // n_tiles <= ctas <= 160 and k_tiles <= 2^16 (shared A's capacity)
  const int shortest = units / ctas, longest = (units + ctas - 1) / ctas;
  const bool fits = longest <= k_tiles && 4 * shortest >= k_tiles &&
                    shortest >= max(NVFP4_SM90_SHARED_A_MIN_K_TILES, max(kLocalATiles, 1));
  return fits && 100 * longest <= (100 - NVFP4_SM90_SPAN_MIN_GAIN) * busiest_k_tiles ? ctas : 0;
}

// Shared A needs every CTA of the launch resident at once (its barrier waits for all of them) and
// A small enough for the global copy; it costs a few microseconds up front (the launch-wide decode
// and barrier), so it is used only where CTAs run long enough to earn that back. Otherwise each
// CTA decodes its own A.
LaunchPlan choose_plan(int m, int n, int k, int l) {
  const int tiles = (m / BLOCK_M) * (n / BLOCK_N) * l;
#if NVFP4_SM90_SHARED_A
  if (int64_t(l) * m * k <= kSharedACapacity) {
    for (const bool allow_soft : {true, false}) {  // a finer split without a cluster may leave too few K tiles
      const Split split = choose_split<true>(tiles, k, allow_soft);
      const int busiest_k_tiles = (k / BLOCK_K + split.cluster_k - 1) / split.cluster_k;
      const bool resident = split.soft || tiles <= max_active_clusters_of<true>(split.cluster_k);
      if (busiest_k_tiles >= NVFP4_SM90_SHARED_A_MIN_K_TILES && resident && tiles * split.cluster_k <= kSharedAMaxCtas)
        return {split.cluster_k, true, split.soft, span_ctas(m, n, k, l, busiest_k_tiles)};
    }
  }
#endif
  return {choose_cluster_k<false>(tiles, k), false, false};
}

// The launch count that tells one shared-A launch's barrier flags from the previous ones' (skips 0,
// the flags' initial value). Bookkeeping of launches, not of results.
uint32_t launch_epoch = 0;

template <int kClusterK, bool kSharedA, bool kSoftSplit = false, bool kSpan = false>
cudaError_t launch(const CUtensorMap& tmap_a, const CUtensorMap& tmap_b, const CUtensorMap& tmap_a16,
                   const Nvfp4GemmArgs& args, int span_ctas = 0) {
  const cudaError_t err = allow_large_smem<kClusterK, kSharedA, kSoftSplit, kSpan>();
  if (err != cudaSuccess) return err;
  const dim3 grid = kSpan ? dim3(span_ctas, 1, 1) : dim3(kClusterK, args.n / BLOCK_N, (args.m / BLOCK_M) * args.l);
  const int span_units = (args.n / BLOCK_N) * (args.k / BLOCK_K);
  const SpanSplit span = kSpan ? SpanSplit{span_units / span_ctas, span_units % span_ctas} : SpanSplit{0, 0};
  if (++launch_epoch == 0) launch_epoch = 1;
  constexpr int kThreads = Plan<kSharedA>::kThreads, kSmemBytes = Plan<kSharedA>::kSmemBytes;
  nvfp4_gemm_sm90_kernel<kClusterK, kSharedA, kSoftSplit, kSpan><<<grid, kThreads, kSmemBytes>>>(
      tmap_a, tmap_b, tmap_a16, args.a, args.sfa, args.sfb, static_cast<__half*>(args.c), args.m, args.n, args.k,
      args.l, launch_epoch, span);
  return cudaGetLastError();
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
// a spanning split is 10000 + its number of CTAs.
int nvfp4_sm90_plan(int m, int n, int k, int l) {
  using namespace nvfp4_sm90;
  const LaunchPlan plan = choose_plan(m, n, k, l);
  if (plan.shared_a && plan.span_ctas > 0) return 10000 + plan.span_ctas;
  return plan.cluster_k + (plan.shared_a ? 100 : 0) + (plan.soft_split ? 1000 : 0);
}

#if NVFP4_SM90_TIMELINE
// Copies the last launch's timeline ([CTA][TimelineEvent], up to max_ctas CTAs) to host memory.
int nvfp4_sm90_timeline(uint64_t* host, int max_ctas) {
  using namespace nvfp4_sm90;
  const size_t ctas = size_t(max_ctas < kTimelineMaxCtas ? max_ctas : kTimelineMaxCtas);
  return int(cudaMemcpyFromSymbol(host, g_timeline, ctas * kTimelineEvents * sizeof(uint64_t)));
}
#endif

cudaError_t nvfp4_gemm_launch(const Nvfp4GemmArgs& args) {
  using namespace nvfp4_sm90;
  if (nvfp4_gemm_unsupported(args.m, args.n, args.k, args.l) != nullptr) return cudaErrorInvalidValue;
  if (tensor_map_encoder() == nullptr) return cudaErrorSymbolNotFound;
  CUtensorMap tmap_a, tmap_b, tmap_a16 = {};
  if (!make_packed_map(&tmap_a, args.a, args.l * args.m, args.k, BLOCK_M, CU_TENSOR_MAP_SWIZZLE_64B) ||
      !make_packed_map(&tmap_b, args.b, args.l * args.n, args.k, BLOCK_N, CU_TENSOR_MAP_SWIZZLE_NONE))
    return cudaErrorInvalidValue;
  const LaunchPlan plan = choose_plan(args.m, args.n, args.k, args.l);
#if NVFP4_SM90_SHARED_A
  if (plan.shared_a && make_shared_a_map(&tmap_a16, args.l * args.m, args.k)) {
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
  const int tiles = (args.m / BLOCK_M) * (args.n / BLOCK_N) * args.l;
  return launch_with_cluster<false>(plan.shared_a ? choose_cluster_k<false>(tiles, args.k) : plan.cluster_k, tmap_a,
                                    tmap_b, tmap_a16, args);
}
