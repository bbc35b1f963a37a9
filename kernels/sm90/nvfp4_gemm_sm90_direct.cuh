// The direct kernel of the sm_90a NVFP4 GEMM (v15), for calls too short for the TMA pipeline: every
// warp loads its packed A and B rows and their scales straight from global memory into registers,
// decodes them into mma.sync fragments and multiplies; no shared-memory pipeline, no mbarriers, no
// launch-wide copy, no split-K exchange between CTAs. On the short task shapes the pipelined kernel
// reaches its first wgmma 1.2-2.2 us after entry and its split exchange adds 1-2 us; here the first
// mma waits only for one load's round trip.
//
// K order. mma.sync.m16n8k16 gives quad thread t (lane % 4) the logical k = 2t, 2t+1, 2t+8, 2t+9 of
// every k-step, in A and B alike. Within a K tile of 128, thread t loads the 16-byte chunk t of each
// of its rows (physical k = 32t .. 32t + 31); word w of it (physical 32t + 8w + i, nibble i) decodes
// (nvfp4_decode::decode_e2m1x8_e4m3) into the pairs (v0, v2), (v1, v3) for k-step 2w and (v4, v6),
// (v5, v7) for k-step 2w + 1. A and B use the same map, so every product pairs equal physical k, and
// each value keeps its own scale (words 0-1: block 2t of the tile, words 2-3: block 2t + 1).
//
// N order. The C fragment gives thread t the columns 2t, 2t + 1 of each n8 tile j. Column c of n8
// tile j is B row 8 (c / 2) + 2j + c % 2 of the warp's 32, so thread t's four n8 tiles hold the 8
// consecutive C columns 8t .. 8t + 7 of a row: one 16-byte store each.
//
// Roles: none; all 4 warps of a CTA compute. The CTA's tile is (16 kWarpM16) rows x (32 * 4 /
// kWarpsK) columns. With kWarpsK = 1 the 4 warps sit side by side along N on the same A rows: each
// decodes a quarter of them per K tile into shared memory for all four (one __syncthreads per K
// tile). Otherwise its kWarpsK warps along K take K tiles w, w + kWarpsK, ... of the same output and
// add their accumulators through shared memory in warp order (deterministic), then warp 0 of each
// column stores C. The host rule that picks the configuration: direct_plan_for below.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "sm90_config.cuh"
#include "sm90_nvfp4_decode.cuh"

namespace nvfp4_sm90 {

constexpr int kDirectThreads = 128;
constexpr int kDirectWarpN = 32;  // C columns per warp: 4 n8 tiles

// 32-row warps fit 3 CTAs per SM in 168 registers without spilling (64-row ones would spill). Same
// run (H100, 2026-11-26): 128 x 3072 x 1536 with K split 4 ways (384 CTAs, one wave) 10.6 us against
// 12.9 at 2 CTAs per SM (175 registers), and the pipelined kernel's 11.1.
template <int kWarpM16>
constexpr int kDirectMinCtasPerSm = kWarpM16 == 2 && !NVFP4_SM90_EXPERIMENT(DIRECT_TWO_CTAS_PER_SM) ? 3 : 1;

// The host planner's choice: A rows per warp (32 or 64; 0: not this kernel) and the warps of a CTA
// that split K (1, 2 or 4 with 32 rows; 1 with 64).
struct DirectPlan {
  int warp_m = 0, warps_k = 0;
};

// The launch's grid: x = column blocks of 32 * 4 / warps_k, y = row blocks of warp_m per batch
// (the launch and the rule below use the same two numbers).
inline int64_t direct_grid_x(int n, int warps_k) { return n / (kDirectWarpN * 4 / warps_k); }
inline int64_t direct_grid_y(int m, int l, int warp_m) { return int64_t(l) * (m / warp_m); }
constexpr int64_t kMaxGridY = 65535;

// The rule (sm90_plan.cuh passes the knobs and this GPU's SM count). Calls of at most `max_units`
// units (a 128 x 128 tile times a K tile): past that, decoding every operand in every warp that reads
// it costs more than the pipeline's fixed chain (bench --shapes small and task, H100, 2026-11-26:
// 128 x 1536 x 1024, 96 units, 6.5 us against 9.2; 256 x 7168 x 256, 224 units, 8.3 against 7.7).
// 64-row warps (fewer decodes per mma) where they still give every SM a CTA, or where 32-row ones
// would pass grid y's limit; 32-row warps split K in the CTA 2 or 4 ways while the split grid still
// runs in one wave (3 CTAs per SM) and each warp keeps a K tile.
// Knob values other than 0 decide instead (warps_k only for 32-row warps).
inline DirectPlan direct_plan_for(int m, int n, int k, int l, int sms, int max_units, int warp_m_knob,
                                  int warps_k_knob) {
  const int k_tiles = k / BLOCK_K;
  const int64_t units = int64_t(l) * (m / BLOCK_M) * (n / BLOCK_N) * k_tiles;
  if (max_units <= 0 || units > max_units) return {};
  if (sms <= 0) sms = 1 << 20;  // unknown: as if the grid never filled the GPU
  const auto ctas = [&](int warp_m, int warps_k) { return direct_grid_x(n, warps_k) * direct_grid_y(m, l, warp_m); };
  int warp_m = warp_m_knob;
  if (warp_m != 32 && warp_m != 64) warp_m = ctas(64, 1) >= sms || direct_grid_y(m, l, 32) > kMaxGridY ? 64 : 32;
  int warps_k = warps_k_knob;
  if (warp_m == 64) {
    warps_k = 1;
  } else if (warps_k != 1 && warps_k != 2 && warps_k != 4) {
    warps_k = 1;
    const int64_t one_wave = int64_t(kDirectMinCtasPerSm<2>) * sms;
    while (warps_k < 4 && 2 * warps_k <= k_tiles && ctas(warp_m, 2 * warps_k) <= one_wave) warps_k *= 2;
  }
  if (direct_grid_y(m, l, warp_m) > kMaxGridY) return {};
  return {warp_m, warps_k};
}

// A warp's A rows come in row sets: set r is row 8r + g of the warp's tile (set 2i + h: row g + 8h
// of m16 tile i). A warp decodes its own sets, or, where the CTA's 4 warps share their A rows
// (kShareA: all 4 along N), a quarter of them into shared memory for all four.
// Raw operands for one K tile: kASets A rows and the warp's B row of every n8 tile (16 bytes each),
// and the 32-bit scale word holding each row's two blocks.
template <int kASets>
struct DirectRaw {
  uint4 a[kASets];
  uint4 b[4];
  uint32_t sfa[kASets];
  uint32_t sfb[4];
};

// Where this thread's rows start, for K tile 0: its chunk of A row g of the warp's tile and of its B
// row of n8 tile 0, and their scale words. The other rows are fixed offsets from these (A: 8 rows,
// B: 2 rows; scales: compile-time bytes), so four pointers serve them all.
struct DirectRows {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* sfa;
  const uint8_t* sfb;
  size_t row_bytes;
};

// A sets first_set .. first_set + kASets - 1 and the B rows of K tile kt.
template <int kASets>
__device__ __forceinline__ void direct_load(DirectRaw<kASets>& raw, const DirectRows& rows, int kt, int first_set) {
  const size_t bytes = size_t(kt) * (BLOCK_K / 2);
  const int scale_bytes = kt * 2 * 512;  // a K tile's 8 blocks: two 512-byte chunks
  const uint8_t* a = rows.a + 8 * first_set * rows.row_bytes + bytes;
#pragma unroll
  for (int r = 0; r < kASets; ++r) {
    raw.a[r] = __ldg(reinterpret_cast<const uint4*>(a + 8 * r * rows.row_bytes));
    // the warp's tile is 32- or 64-row aligned, so set r's scale bytes keep row 8r's pattern
    raw.sfa[r] = __ldg(reinterpret_cast<const uint32_t*>(rows.sfa + scale_bytes + scale_offset(8 * (first_set + r), 0)));
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) {  // B rows 8 (g / 2) + 2j + g % 2 of the warp's 32-aligned columns
    raw.b[j] = __ldg(reinterpret_cast<const uint4*>(rows.b + 2 * j * rows.row_bytes + bytes));
    raw.sfb[j] = __ldg(reinterpret_cast<const uint32_t*>(rows.sfb + scale_bytes + scale_offset(2 * j, 0)));
  }
}

__device__ __forceinline__ uint32_t uint4_word(const uint4& v, int w) {
  return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
}

// Word w of a row (and its scale) as the fragment pairs of k-steps 2w (h02, h13) and 2w + 1 (h46, h57).
__device__ __forceinline__ nvfp4_decode::Fp16x2Quad direct_decode_word(const uint4& row, uint32_t scale_word, int w,
                                                                       int quad) {
  const uint32_t byte = (quad & 1) * 2 + (w >> 1);  // this thread's block of word w in the row's scale word
  return nvfp4_decode::decode_e2m1x8_e4m3(uint4_word(row, w), nvfp4_decode::e4m3_splat_f16x2(scale_word, byte));
}

__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Shared A: [row set][word][lane] fragment quads of one K tile (16 bytes per lane: conflict-free).
template <int kWarpM16>
using DirectSharedA = uint4[2 * kWarpM16][4][32];

// One K tile: 4 words per row, each decoded once and used by two k-steps. The A quads come from this
// warp's own registers, or from the CTA's shared copy (`shared`, written and synchronised before).
template <int kWarpM16, bool kShareA, int kASets>
__device__ __forceinline__ void direct_mma_tile(float (&acc)[kWarpM16][4][4], const DirectRaw<kASets>& raw,
                                                const DirectSharedA<kWarpM16>* shared, int lane) {
  const int quad = lane % 4;
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    nvfp4_decode::Fp16x2Quad qa[2 * kWarpM16], qb[4];
#pragma unroll
    for (int r = 0; r < 2 * kWarpM16; ++r) {
      if constexpr (kShareA) {
        const uint4 v = (*shared)[r][w][lane];
        qa[r] = {v.x, v.y, v.z, v.w};
      } else {
        qa[r] = direct_decode_word(raw.a[r], raw.sfa[r], w, quad);
      }
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) qb[j] = direct_decode_word(raw.b[j], raw.sfb[j], w, quad);
#pragma unroll
    for (int i = 0; i < kWarpM16; ++i) {
      // fragment registers: (row g, k lo), (row g + 8, k lo), (row g, k hi), (row g + 8, k hi)
      const uint32_t a_lo[4] = {qa[2 * i].h02, qa[2 * i + 1].h02, qa[2 * i].h13, qa[2 * i + 1].h13};
      const uint32_t a_hi[4] = {qa[2 * i].h46, qa[2 * i + 1].h46, qa[2 * i].h57, qa[2 * i + 1].h57};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        mma_m16n8k16(acc[i][j], a_lo, qb[j].h02, qb[j].h13);
        mma_m16n8k16(acc[i][j], a_hi, qb[j].h46, qb[j].h57);
      }
    }
  }
}

// The CTA's two shared A copies (one per K tile parity), or none.
template <int kWarpM16, bool kShareA>
__device__ __forceinline__ DirectSharedA<kWarpM16>* direct_shared_a() {
  if constexpr (kShareA) {
    __shared__ DirectSharedA<kWarpM16> copies[2];
    return copies;
  } else {
    return nullptr;
  }
}

// Shared A: this warp's row sets of one K tile decoded into the CTA's copy.
template <int kWarpM16, int kASets>
__device__ __forceinline__ void direct_share_a(DirectSharedA<kWarpM16>& shared, const DirectRaw<kASets>& raw,
                                               int first_set, int lane) {
#pragma unroll
  for (int r = 0; r < kASets; ++r)
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const nvfp4_decode::Fp16x2Quad q = direct_decode_word(raw.a[r], raw.sfa[r], w, lane % 4);
      shared[first_set + r][w][lane] = make_uint4(q.h02, q.h13, q.h46, q.h57);
    }
}

template <int kWarpM16, int kWarpsK>
__global__ void __launch_bounds__(kDirectThreads, kDirectMinCtasPerSm<kWarpM16>) nvfp4_gemm_sm90_direct_kernel(
    const uint8_t* a, const uint8_t* b, const uint8_t* sfa, const uint8_t* sfb, __half* c, int m, int n, int k) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(kWarpM16 == 2 || kWarpM16 == 4, "a warp holds 32 or 64 rows of A");
  static_assert(kWarpsK == 1 || kWarpsK == 2 || kWarpsK == 4, "the CTA's 4 warps split K 1, 2 or 4 ways");
  static_assert(kWarpM16 == 2 || kWarpsK == 1, "64-row warps do not split K: they run where the grid fills the SMs");
  // Without a K split the CTA's 4 warps run the same K tiles on the same A rows: each decodes a
  // quarter of them for all four (bench, H100, 2026-11-26: 256x7168x256 8.1 us against 8.4 with every
  // warp decoding all its rows; 128x512x256 with 32-row warps 4.4 against 4.5).
  constexpr bool kShareA = kWarpsK == 1;
  constexpr int kWarpM = 16 * kWarpM16, kWarpsN = 4 / kWarpsK;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32, group = lane / 4, quad = lane % 4;
  const int warp_k = warp / kWarpsN, warp_n = warp % kWarpsN;
  const int m_blocks = m / kWarpM, batch = int(blockIdx.y) / m_blocks;
  const int row0 = (int(blockIdx.y) % m_blocks) * kWarpM;  // within the batch
  const int col0 = (int(blockIdx.x) * kWarpsN + warp_n) * kDirectWarpN;
  const int rest_k = k / (4 * kSfVec), k_tiles = k / BLOCK_K;
  const size_t row_bytes = size_t(k) / 2;

  const uint8_t* sfa_batch = sfa + size_t(batch) * (m / 128) * rest_k * 512;
  const uint8_t* sfb_batch = sfb + size_t(batch) * (n / 128) * rest_k * 512;
  // quad's blocks 2t, 2t + 1 of a K tile lie in the tile's 512-byte scale chunk t / 2
  const int chunk = 16 * quad, scale_chunk = (quad / 2) * 512;
  const int a_row = row0 + group, b_row = col0 + 8 * (group / 2) + group % 2;  // the N order above
  // row0 is a multiple of the warp's rows and col0 of 32, so the rows 8s further (A, s < 8) and 2j
  // further (B) keep these scale bytes' pattern (direct_load)
  const DirectRows rows{a + (size_t(batch) * m + a_row) * row_bytes + chunk,
                        b + (size_t(batch) * n + b_row) * row_bytes + chunk,
                        sfa_batch + size_t(a_row / 128) * rest_k * 512 + scale_offset(a_row, 0) + scale_chunk,
                        sfb_batch + size_t(b_row / 128) * rest_k * 512 + scale_offset(b_row, 0) + scale_chunk,
                        row_bytes};

  float acc[kWarpM16][4][4] = {};
  // Own A sets: all of the warp's, or its quarter of the CTA's shared ones.
  constexpr int kASets = kShareA ? 2 * kWarpM16 / 4 : 2 * kWarpM16;
  const int first_set = kShareA ? warp * kASets : 0;
  // double-buffered by K tile: a warp writes tile t + 1's copy only after every warp has passed tile
  // t's barrier, so after all of them have read tile t - 1's
  DirectSharedA<kWarpM16>* const shared_a = direct_shared_a<kWarpM16, kShareA>();
  const auto multiply_tile = [&](const DirectRaw<kASets>& raw, int parity) {
    if constexpr (kShareA) {
      direct_share_a<kWarpM16>(shared_a[parity], raw, first_set, lane);
      __syncthreads();
    }
    direct_mma_tile<kWarpM16, kShareA>(acc, raw, kShareA ? shared_a + parity : nullptr, lane);
  };
  // Two register sets: the next K tile's loads are in flight while this one is decoded and multiplied
  // (the loop is unrolled by two so that neither set is indexed at run time, which would put it in
  // local memory).
  DirectRaw<kASets> even, odd;
  if (warp_k < k_tiles) direct_load(even, rows, warp_k, first_set);
  for (int kt = warp_k; kt < k_tiles; kt += 2 * kWarpsK) {
    if (kt + kWarpsK < k_tiles) direct_load(odd, rows, kt + kWarpsK, first_set);
    multiply_tile(even, 0);
    if (kt + kWarpsK >= k_tiles) break;
    if (kt + 2 * kWarpsK < k_tiles) direct_load(even, rows, kt + 2 * kWarpsK, first_set);
    multiply_tile(odd, 1);
  }

  if constexpr (kWarpsK > 1) {
    // partials of warps 1.. along K, [warp_k - 1][warp_n][value][lane]: 32 lanes write 128 contiguous bytes
    constexpr int kValues = kWarpM16 * 16;
    __shared__ float partials[kWarpsK - 1][kWarpsN][kValues][32];
    if (warp_k > 0) {
#pragma unroll
      for (int i = 0; i < kWarpM16; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) partials[warp_k - 1][warp_n][(i * 4 + j) * 4 + e][lane] = acc[i][j][e];
    }
    __syncthreads();
    if (warp_k > 0) return;
#pragma unroll
    for (int p = 0; p < kWarpsK - 1; ++p)
#pragma unroll
      for (int i = 0; i < kWarpM16; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][j][e] += partials[p][warp_n][(i * 4 + j) * 4 + e][lane];
  }

  // C: the decode's 2^-6 per operand undone (exact), then each thread's 8 consecutive columns of rows
  // g and g + 8 of every m16 tile as one 16-byte store.
  constexpr float kUnscale = nvfp4_decode::kE4m3DecodeUnscale;
#pragma unroll
  for (int i = 0; i < kWarpM16; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      uint32_t packed[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const __half2 v = __floats2half2_rn(acc[i][j][2 * h] * kUnscale, acc[i][j][2 * h + 1] * kUnscale);
        packed[j] = *reinterpret_cast<const uint32_t*>(&v);
      }
      const int r = row0 + 16 * i + 8 * h + group;
      __half* dst = c + (size_t(batch) * m + r) * n + col0 + 8 * quad;
      *reinterpret_cast<uint4*>(dst) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
    }
#endif
}

}  // namespace nvfp4_sm90
