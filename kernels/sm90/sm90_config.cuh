// Compile-time configuration of the sm_90a NVFP4 GEMM: the one place for its tunable knobs, tile
// sizes, shared-memory plan and the constants every other header of kernels/sm90/ reads.
//
// Knobs. Each is a macro with its shipped default, so a build may override it with -D (what
// benchmarks/sm90_kernel.py's variants and a later `nvfp4ctl tune` do). The line above each knob
// declares it for tools, in one fixed form:
//   // nvfp4ctl:knob NAME values=V1,V2,... scope=plan|kernel: what it decides
// `values` lists the values worth trying (the default is one of them); `scope=plan` knobs only
// steer the host planner (sm90_plan.cuh), `scope=kernel` knobs change device code.
//
// Experiments (earlier versions, ablations, the timeline build) are not knobs: their switches are
// declared in benchmarks/sm90_experiments.h, which only benchmarks/sm90_kernel.py's variant builds
// force-include (nvcc -include). The shipped build never sees that header, so there every
// NVFP4_SM90_EXPERIMENT(name) in these files is the literal 0 and its code is compiled out.
#pragma once

#include <cstdint>

// The dispatch table (tune's winners) comes first: its kernel-scope set overrides the defaults below.
// nvfp4ctl:dispatch file=sm90_dispatch.cuh
#include "sm90_dispatch.cuh"

#ifdef NVFP4_SM90_EXPERIMENTS
#define NVFP4_SM90_EXPERIMENT(name) NVFP4_SM90_##name
#else
#define NVFP4_SM90_EXPERIMENT(name) 0
#endif

// ---- Tile and pipeline ----
// nvfp4ctl:knob NVFP4_SM90_BLOCK_N values=128 scope=kernel: B rows (C columns) per CTA; fixed by two math warpgroups of 64
#ifndef NVFP4_SM90_BLOCK_N
#define NVFP4_SM90_BLOCK_N 128
#endif
// nvfp4ctl:knob NVFP4_SM90_STAGES_SHARED_A values=4,5 scope=kernel: pipeline stages of the shared-A kernels (41 KB each)
#ifndef NVFP4_SM90_STAGES_SHARED_A
#define NVFP4_SM90_STAGES_SHARED_A 5
#endif
// nvfp4ctl:knob NVFP4_SM90_STAGES_PER_CTA_A values=3,4,5,6,7 scope=kernel: pipeline stages of the per-CTA-A kernels (18 KB each)
#ifndef NVFP4_SM90_STAGES_PER_CTA_A
#define NVFP4_SM90_STAGES_PER_CTA_A 6
#endif
// 2 since v18: one decode warpgroup issued on 19 % of its cycles and held the math warps back (ncu,
// 2304 x 4608 x 7168 on per-CTA A, H100, 2026-11-26: 298 -> 272 us with two).
// nvfp4ctl:knob NVFP4_SM90_A_DECODE_WARPGROUPS values=1,2 scope=kernel: warpgroups that decode A in the per-CTA-A kernels (2: half the rows each, registers moved between roles with setmaxnreg)
#ifndef NVFP4_SM90_A_DECODE_WARPGROUPS
#define NVFP4_SM90_A_DECODE_WARPGROUPS 2
#endif
static_assert(NVFP4_SM90_A_DECODE_WARPGROUPS == 1 || NVFP4_SM90_A_DECODE_WARPGROUPS == 2,
              "NVFP4_SM90_A_DECODE_WARPGROUPS: 1 or 2");
// nvfp4ctl:knob NVFP4_SM90_A_BUFFERS values=2,3 scope=kernel: fp16 A buffers the per-CTA decode warpgroups fill (32 KB each)
#ifndef NVFP4_SM90_A_BUFFERS
#define NVFP4_SM90_A_BUFFERS 3
#endif

// ---- Split-K (host plan) ----
// nvfp4ctl:knob NVFP4_SM90_MAX_CLUSTER_K values=1,2,3,4,8 scope=plan: largest split-K (1 turns split-K off)
#ifndef NVFP4_SM90_MAX_CLUSTER_K
#define NVFP4_SM90_MAX_CLUSTER_K 8
#endif
// nvfp4ctl:knob NVFP4_SM90_ODD_SPLIT values=0,1 scope=plan: split-K may use a cluster of 3 (uneven K tiles)
#ifndef NVFP4_SM90_ODD_SPLIT
#define NVFP4_SM90_ODD_SPLIT 1
#endif
// nvfp4ctl:knob NVFP4_SM90_SOFT_SPLIT values=0,1 scope=plan: where every CTA is resident, splits of 4 or 8 may run without a hardware cluster
#ifndef NVFP4_SM90_SOFT_SPLIT
#define NVFP4_SM90_SOFT_SPLIT 1
#endif
// nvfp4ctl:knob NVFP4_SM90_SPAN values=0,1 scope=plan: with shared A, one equal K range per resident CTA, ranges crossing tile boundaries
#ifndef NVFP4_SM90_SPAN
#define NVFP4_SM90_SPAN 1
#endif
// nvfp4ctl:knob NVFP4_SM90_SPAN_CTAS values=0 scope=plan: spanning split: CTAs of the launch (0: one per SM)
#ifndef NVFP4_SM90_SPAN_CTAS
#define NVFP4_SM90_SPAN_CTAS 0
#endif
// nvfp4ctl:knob NVFP4_SM90_SPAN_MIN_GAIN values=0,5,10,20 scope=plan: spanning split: % fewer K tiles on the busiest CTA it must reach
#ifndef NVFP4_SM90_SPAN_MIN_GAIN
#define NVFP4_SM90_SPAN_MIN_GAIN 10
#endif
// Staged C, same run on an H100 (2026-11-26): 256x7168x256 9.0 -> 7.8 us, 512x4096x512 10.6 -> 10.1,
// 256x7168x2048 20.4 -> 19.5, geomean of the 13 task shapes 21.4 -> 20.8. A persistent launch's stages
// hold the next unit's loads while it writes C, so it stores from registers.
// nvfp4ctl:knob NVFP4_SM90_STAGED_C values=0,1 scope=kernel: C goes through shared memory (512-byte global stores per warp) instead of 4-byte stores from registers
#ifndef NVFP4_SM90_STAGED_C
#define NVFP4_SM90_STAGED_C 1
#endif
// nvfp4ctl:knob NVFP4_SM90_MAX_PARTS_IN_FLIGHT values=8,12,18,24 scope=kernel: float4 partial loads per thread at once in the split-K reduction
#ifndef NVFP4_SM90_MAX_PARTS_IN_FLIGHT
#define NVFP4_SM90_MAX_PARTS_IN_FLIGHT 18
#endif

// ---- The direct kernel (nvfp4_gemm_sm90_direct.cuh: register loads and mma.sync, no pipeline) ----
// nvfp4ctl:knob NVFP4_SM90_DIRECT_MAX_UNITS values=0,32,128,512 scope=plan: the direct kernel takes calls of at most this many units (a 128 x 128 tile times a K tile of 128; 0: never)
#ifndef NVFP4_SM90_DIRECT_MAX_UNITS
#define NVFP4_SM90_DIRECT_MAX_UNITS 128
#endif
// nvfp4ctl:knob NVFP4_SM90_DIRECT_WARP_M values=0,32,64 scope=plan: direct kernel: A rows per warp (0: the planner's choice)
#ifndef NVFP4_SM90_DIRECT_WARP_M
#define NVFP4_SM90_DIRECT_WARP_M 0
#endif
// nvfp4ctl:knob NVFP4_SM90_DIRECT_WARPS_K values=0,1,2,4 scope=plan: direct kernel: warps of a CTA that split K, with 32-row warps (0: the planner's choice)
#ifndef NVFP4_SM90_DIRECT_WARPS_K
#define NVFP4_SM90_DIRECT_WARPS_K 0
#endif
static_assert(NVFP4_SM90_DIRECT_WARP_M == 0 || NVFP4_SM90_DIRECT_WARP_M == 32 || NVFP4_SM90_DIRECT_WARP_M == 64,
              "NVFP4_SM90_DIRECT_WARP_M: 0 (the planner's choice), 32 or 64");
static_assert(NVFP4_SM90_DIRECT_WARPS_K == 0 || NVFP4_SM90_DIRECT_WARPS_K == 1 || NVFP4_SM90_DIRECT_WARPS_K == 2 ||
                  NVFP4_SM90_DIRECT_WARPS_K == 4,
              "NVFP4_SM90_DIRECT_WARPS_K: 0 (the planner's choice), 1, 2 or 4");

// ---- Shared A (the launch-wide decoded copy of A) ----
// The threshold comes before the switch: `nvfp4ctl tune` tries knobs in this order, and once shared A
// is off its threshold no longer matters, so a lower threshold must be tried while shared A is on.
// nvfp4ctl:knob NVFP4_SM90_SHARED_A_MIN_K_TILES values=1,4,8,12,16 scope=plan: shared A only where a CTA runs at least this many K tiles
#ifndef NVFP4_SM90_SHARED_A_MIN_K_TILES
#define NVFP4_SM90_SHARED_A_MIN_K_TILES 8
#endif
// nvfp4ctl:knob NVFP4_SM90_SHARED_A values=0,1 scope=plan: 0: every CTA decodes its own A (v6), no launch-wide copy
#ifndef NVFP4_SM90_SHARED_A
#define NVFP4_SM90_SHARED_A 1
#endif
// nvfp4ctl:knob NVFP4_SM90_PERSISTENT values=0,1 scope=plan: with shared A, a grid with more tiles than resident CTAs runs one CTA per SM looping over tiles
#ifndef NVFP4_SM90_PERSISTENT
#define NVFP4_SM90_PERSISTENT 1
#endif
// 2 by default, from v12's sweeps on 384 x 7168 x 2304 (H100, 2026-11-26): 2 parts 33.2 us, 3 parts 36.6,
// whole tiles 36.6. Since v16 that shape runs whole tiles first, and its dispatch-table entry (tune) is 3.
// nvfp4ctl:knob NVFP4_SM90_PERSISTENT_MAX_PARTS values=1,2,3,4 scope=plan: persistent launch: most K ranges a tile is cut into (a last wave's idle SMs take parts)
#ifndef NVFP4_SM90_PERSISTENT_MAX_PARTS
#define NVFP4_SM90_PERSISTENT_MAX_PARTS 2
#endif
// v20: a launch whose 128-row tiles overfill one wave of resident CTAs but whose 192-row tiles fit it
// (384 x 7168 x 2304: 168 tiles on 132 SMs, or 112 wide ones) runs one wave of wide tiles, unsplit,
// instead of a persistent launch that cuts the last tiles into K parts; 2 takes them wherever they
// fit one wave (tests and tune).
// nvfp4ctl:knob NVFP4_SM90_WIDE_TILES values=0,1,2 scope=plan: shared A: 192 rows of A per CTA (wgmma n192) where 128-row tiles overfill one wave and 192-row ones fit it (2: wherever they fit)
#ifndef NVFP4_SM90_WIDE_TILES
#define NVFP4_SM90_WIDE_TILES 1
#endif
// nvfp4ctl:knob NVFP4_SM90_PREFILL_STAGES values=2,3,4,5 scope=kernel: stages of packed B loaded before the launch-wide A decode
#ifndef NVFP4_SM90_PREFILL_STAGES
#define NVFP4_SM90_PREFILL_STAGES 3
#endif
// nvfp4ctl:knob NVFP4_SM90_LOCAL_A_TILES values=0,1,2,3 scope=kernel: first K tiles whose A the math warps decode themselves
#ifndef NVFP4_SM90_LOCAL_A_TILES
#define NVFP4_SM90_LOCAL_A_TILES 2
#endif
// nvfp4ctl:knob NVFP4_SM90_BARRIER_POLL_SLEEP_NS values=0,32,64,128 scope=kernel: pause between two polls of the launch-wide barrier's flags
#ifndef NVFP4_SM90_BARRIER_POLL_SLEEP_NS
#define NVFP4_SM90_BARRIER_POLL_SLEEP_NS 32
#endif
// nvfp4ctl:knob NVFP4_SM90_FLAG_STRIDE_BYTES values=4,128,512 scope=kernel: bytes between two flags of the launch-wide barrier and of the split-K meetings (4: packed, 32 to an L2 line)
#ifndef NVFP4_SM90_FLAG_STRIDE_BYTES
#define NVFP4_SM90_FLAG_STRIDE_BYTES 128
#endif
static_assert(NVFP4_SM90_FLAG_STRIDE_BYTES >= 4 && NVFP4_SM90_FLAG_STRIDE_BYTES % 4 == 0,
              "NVFP4_SM90_FLAG_STRIDE_BYTES: whole 32-bit flags, one per CTA or slot");
// nvfp4ctl:knob NVFP4_SM90_A_ITEMS_IN_FLIGHT values=2,4,6,8 scope=kernel: A-copy items a thread loads before decoding any
#ifndef NVFP4_SM90_A_ITEMS_IN_FLIGHT
#define NVFP4_SM90_A_ITEMS_IN_FLIGHT 4
#endif

namespace nvfp4_sm90 {

// ---- Tiles ----
constexpr int BLOCK_M = 128;  // rows of A / C per CTA = the N of every wgmma (and A's scale chunk)
constexpr int kWideTileM = 192;  // wide shared-A tiles (v20): rows of A per CTA, the wgmma's N
// A wide tile starts at row 0 or 64 of a 128-row scale chunk and so lies in two chunks, the two boxes
// local A loads; m is a multiple of 128 and of 192 there, so the second box never starts past A's end.
static_assert(kWideTileM == 192, "local A's two 128-row boxes cover a 192-row tile starting at row 0 or 64 of a chunk");
constexpr int BLOCK_N = NVFP4_SM90_BLOCK_N;  // rows of B / columns of C per CTA (64 per math warpgroup)
constexpr int BLOCK_K = 128;  // fp4 values along K per pipeline stage
constexpr int kNumMathWarpgroups = 2;  // each owns 64 of the CTA's B rows (one wgmma M)
constexpr int WGMMA_M = 64, WGMMA_N = BLOCK_M, WGMMA_K = 16;
constexpr int kSfVec = 16;  // K values per e4m3 scale

// ---- Shared memory sizes and offsets (from a 1024-byte aligned base) ----
constexpr int PACKED_ROW_BYTES = BLOCK_K / 2;                       // 64
constexpr int SMEM_A_PACKED_BYTES = BLOCK_M * PACKED_ROW_BYTES;    // 8 KB, 64B-swizzled by TMA
constexpr int SMEM_B_PACKED_BYTES = BLOCK_N * PACKED_ROW_BYTES;    // 8 KB, plain rows
constexpr int SMEM_SF_BYTES = BLOCK_K / (4 * kSfVec) * 512;        // 1 KB: (128-row, 4-block) chunks
// Byte offset of the scale of (row r, k-block j) inside one (128-row, BLOCK_K) scale stage of the
// permuted layout (nvfp4_gemm_api.h); both kernels of this file read scales with it.
__host__ __device__ constexpr int scale_offset(int r, int j) {
  return (j / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + j % 4;
}
constexpr int A_ATOM_K = 64;                                        // fp16 per 128-byte swizzle row
constexpr int A_ATOM_BYTES = BLOCK_M * 128;                         // 16 KB
constexpr int A_BUFFER_BYTES = (BLOCK_K / A_ATOM_K) * A_ATOM_BYTES;  // 32 KB
// One 128-row box of packed A and its scale chunk, as local A's tiles wait for their decode.
constexpr int kLocalAPackedBytes = SMEM_A_PACKED_BYTES + SMEM_SF_BYTES;  // 9 KB, a multiple of 1 KB
// The same for a tile of kTileM rows of A (the fp16 slice of a shared-A stage).
template <int kTileM> constexpr int a_atom_bytes() { return kTileM * 128; }
template <int kTileM> constexpr int a_slice_bytes() { return (BLOCK_K / A_ATOM_K) * a_atom_bytes<kTileM>(); }
// fp32 accumulators per math thread: a warpgroup's 64 B rows times kTileM A rows over 128 threads.
template <int kTileM> constexpr int acc_count() { return kTileM / 2; }
// Shared A: fp16 values of A (l * m * k) one launch can decode into its global copy (32 MB: the
// largest task shape's A, 2304 x 7168, is 16.5 M values).
constexpr int64_t kSharedACapacity = int64_t(1) << 24;
constexpr uint64_t kGridBarrierTimeoutNs = 2000000000ull;  // a CTA that never arrives: trap, don't hang
constexpr int kSharedAMaxCtas = 256;  // CTAs of one shared-A launch (all resident: <= SMs), one flag each
// Flags every CTA polls (launch-wide barrier, split-K meetings) sit kFlagStride words apart: packed,
// the polls of a whole launch queue on a few L2 lines.
constexpr int kFlagStride = NVFP4_SM90_FLAG_STRIDE_BYTES / 4;

// Shared memory plan of one variant. Per-CTA A: a stage holds packed A (64B-swizzled), packed B
// and both scale chunks, and the decode warpgroups fill 3 separate fp16 A buffers. Shared A: a stage
// holds the fp16 A slice (two 128B-swizzled atoms, straight from TMA), packed B and B's scales; no
// decode warpgroup, so the math warps release a stage only after their wgmmas have read it. Wide
// tiles (kTileM = 192, shared A only): a 48 KB A slice per stage, so 3 stages, and at most two local
// A tiles (the last stage holds their packed tiles).
template <bool kSharedA, int kTileM = BLOCK_M>
struct Plan {
  static_assert(kTileM == BLOCK_M || (kSharedA && kTileM == kWideTileM), "wide tiles exist for shared A only");
  static constexpr bool kWide = kTileM != BLOCK_M;
  static constexpr int kStages = kWide ? 3 : kSharedA ? NVFP4_SM90_STAGES_SHARED_A : NVFP4_SM90_STAGES_PER_CTA_A;
  static constexpr int kABuffers = kSharedA ? 0 : NVFP4_SM90_A_BUFFERS;
  // Per-CTA A decodes with one or two warpgroups. With one, ptxas allocates every role within the
  // launch-bound cap (65536 / 416 -> 152 registers), enough for the math role (64 accumulators +
  // 32 fragments + addresses), and no setmaxnreg is needed. Two decode warpgroups bring a whole producer
  // warpgroup (setmaxnreg works per warpgroup): 640 threads start at 96 registers, the producer and
  // decode warpgroups give some back and the math warpgroups take them (kMathRegs).
  static constexpr int kDecodeWarpgroups = kSharedA ? 0 : NVFP4_SM90_A_DECODE_WARPGROUPS;
  static constexpr bool kMovesRegisters = kDecodeWarpgroups > 1;
  static constexpr int kThreads = 128 * (kNumMathWarpgroups + kDecodeWarpgroups) + (kMovesRegisters ? 128 : 32);
  static constexpr int kProducerThread = kThreads - 32;  // the last warp issues TMA
  static constexpr int kStageReaderWarps = 4 * (kNumMathWarpgroups + kDecodeWarpgroups);
  static constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;
  static constexpr int kProducerRegs = 24, kDecodeRegs = 80;
  static constexpr int kMathRegs =  // only meaningful where registers move
      !kMovesRegisters ? kLaunchRegs
                       : kLaunchRegs + ((kLaunchRegs - kProducerRegs) * 128 +
                                        (kLaunchRegs - kDecodeRegs) * 128 * kDecodeWarpgroups) /
                                           (128 * kNumMathWarpgroups) / 8 * 8;
  static_assert(!kMovesRegisters || (kMathRegs >= 136 && kMathRegs <= 256 && kLaunchRegs >= kDecodeRegs),
                "the math warpgroups need >= 136 registers (64 accumulators, 32 fragments, addresses: ptxas uses ~122)");
  static constexpr int kA16Offset = 0;        // shared A only
  static constexpr int kAPackedOffset = 0;    // per-CTA A only
  static constexpr int kA16Bytes = kSharedA ? a_slice_bytes<kTileM>() : 0;  // shared A's fp16 slice
  static constexpr int kBPackedOffset = kSharedA ? kA16Bytes : SMEM_A_PACKED_BYTES;
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
  static_assert(!kSharedA || kThreads / 32 * 2048 <= kA16Bytes, "A-copy staging (2 KB per warp) must fit one A slice");
  // Local A: the first kLocalATiles K tiles of a CTA do not wait for the launch-wide A copy; the math
  // warps decode their A straight into those stages (which expect only B's bytes) from packed tiles
  // that wait in stage kLocalAStage's A slice, so the main loop starts while the copy is published.
  // The copy's store staging uses the slice before (a local tile's slice is free until local A is
  // decoded, after the copy). Both slices get their fp16 A by TMA, if at all, only later. A wide
  // tile's 192 rows lie in two 128-row boxes of packed A (and their scale chunks), the 128-row
  // chunks that hold them.
  static constexpr int kLocalATiles =
      !kSharedA ? 0 : kWide ? (NVFP4_SM90_LOCAL_A_TILES < 2 ? NVFP4_SM90_LOCAL_A_TILES : 2) : NVFP4_SM90_LOCAL_A_TILES;
  static_assert(NVFP4_SM90_LOCAL_A_TILES >= 0, "local A fills the first kLocalATiles stages");
  static constexpr int kLocalABoxes = kWide ? 2 : 1;
  static constexpr int kLocalAStage = kStages - 1, kCopyStagingStage = kStages - 2;
  // 128-row tiles keep the copy's staging out of local A's stages (as before v20: only wide tiles,
  // checked on a GPU with two local tiles, stage the copy in a local tile's slice)
  static_assert(kLocalATiles <= (kWide ? kLocalAStage : kCopyStagingStage) &&
                    kLocalATiles * kLocalABoxes * kLocalAPackedBytes <= kA16Bytes,
                "local A's stages, its packed tiles and the copy's staging must not overlap");
  // Bytes a stage expects by TMA: all of it, and for a local-A stage all but A's fp16 slice.
  static constexpr int kLocalAStageTxBytes = kStageTxBytes - kA16Bytes;
};

static_assert(BLOCK_M == 128 && WGMMA_N == 128, "the decode WG maps one thread per A row: BLOCK_M must be 128");
static_assert(BLOCK_N == kNumMathWarpgroups * WGMMA_M, "each math warpgroup owns 64 B rows");
static_assert(BLOCK_K == 128, "the K permutation assumes one 16-byte chunk per quad thread and row");

// ---- Split-K workspace (sm90_split_k.cuh) ----
constexpr int kAccGroups = 16;                        // float4 groups of a math thread's 64 accumulators
constexpr int kMathThreads = 128 * kNumMathWarpgroups;
constexpr int kL2PartialCtas = 160;                   // CTAs of one split-K launch (all resident: <= SMs)
// a spanning CTA has two (its first tile's and its last's); a persistent launch parts - 1 per tile
// (4 parts of 384 x 7168 x 2304's 168 tiles: 504). 512 slots of 64 KB: 32 MB
constexpr int kL2PartialSlots = 512;
static_assert(kL2PartialSlots >= 2 * kL2PartialCtas, "every spanning CTA needs two workspace slots");
constexpr int kMaxPersistentParts = 4;  // K ranges per tile of a persistent launch (compile-time reduction)
constexpr int kMaxSpanOwners = 4;                     // CTAs whose range ends in one tile (the host keeps to it)
constexpr int kMaxPartsInFlight = NVFP4_SM90_MAX_PARTS_IN_FLIGHT;  // float4 partial loads per thread at once (registers)
__host__ __device__ constexpr int owned_group_begin(int owner, int cluster_k, int groups = kAccGroups) {
  return groups * owner / cluster_k;
}
// Staged C (NVFP4_SM90_STAGED_C): the CTA's fp16 C tile, [128 m][128 n], in the first stages' shared
// memory once the main loop is over; rows padded by 16 bytes so the 8 rows a warp writes at once
// fall in different banks.
constexpr bool kStagedC = NVFP4_SM90_STAGED_C != 0;
constexpr int kStagedCRowBytes = BLOCK_N * 2 + 16;
constexpr int kStagedCBytes = BLOCK_M * kStagedCRowBytes;
static_assert(kStagedCBytes <= Plan<true>::kStageBytes && kStagedCBytes <= Plan<false>::kABuffersOffset,
              "the staged C tile must fit the shared-memory stages");
static_assert(kWideTileM * kStagedCRowBytes <= Plan<true, kWideTileM>::kStageBytes,
              "a wide tile's staged C must fit the shared-memory stages");

// Every thread of the launch-wide A decode loads up to kAItemsInFlight items before decoding any:
// one DRAM latency per round (sm90_shared_a.cuh).
constexpr int kAItemsInFlight = NVFP4_SM90_A_ITEMS_IN_FLIGHT;

}  // namespace nvfp4_sm90
