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
// kWarpsK) columns; its kWarpsK warps along K take K tiles w, w + kWarpsK, ... of the same output
// and add their accumulators through shared memory in warp order (deterministic), then warp 0 of
// each column stores C.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "sm90_config.cuh"
#include "sm90_nvfp4_decode.cuh"

namespace nvfp4_sm90 {

constexpr int kDirectThreads = 128;
constexpr int kDirectWarpN = 32;  // C columns per warp: 4 n8 tiles

// The host planner's choice: A rows per warp (32 or 64; 0: not this kernel) and the warps of a CTA
// that split K (1, 2 or 4 with 32 rows; 1 with 64).
struct DirectPlan {
  int warp_m = 0, warps_k = 0;
};

// The rule (sm90_plan.cuh passes the knobs and this GPU's SM count). Calls of at most `max_units`
// units (a 128 x 128 tile times a K tile): past that, decoding every operand in every warp that reads
// it costs more than the pipeline's fixed chain (bench --shapes small and task, H100, 2026-11-26:
// 128 x 1536 x 1024, 96 units, 6.5 us against 9.2; 256 x 7168 x 256, 224 units, 8.3 against 7.7).
// 64-row warps (fewer decodes per mma, 255 registers) only where they still give every SM two CTAs;
// then K splits in the CTA, while the grid has fewer CTAs than SMs and each warp keeps a K tile.
// Knob values other than 0 decide instead (warps_k only for 32-row warps).
inline DirectPlan direct_plan_for(int m, int n, int k, int l, int sms, int max_units, int warp_m_knob,
                                  int warps_k_knob) {
  const int k_tiles = k / BLOCK_K;
  const int64_t units = int64_t(l) * (m / BLOCK_M) * (n / BLOCK_N) * k_tiles;
  if (max_units <= 0 || units > max_units) return {};
  if (sms <= 0) sms = 1 << 20;  // unknown: as if the grid never filled the GPU
  const auto ctas = [&](int warp_m, int warps_k) {
    return int64_t(l) * (m / warp_m) * (n / (kDirectWarpN * 4 / warps_k));
  };
  int warp_m = warp_m_knob;
  if (warp_m != 32 && warp_m != 64) warp_m = ctas(64, 1) >= 2 * sms ? 64 : 32;
  int warps_k = warps_k_knob;
  if (warp_m == 64) {
    warps_k = 1;
  } else if (warps_k != 1 && warps_k != 2 && warps_k != 4) {
    warps_k = 1;
    while (warps_k < 4 && 2 * warps_k <= k_tiles && ctas(warp_m, warps_k) < sms) warps_k *= 2;
  }
  if (int64_t(l) * (m / warp_m) > 65535) return {};  // grid y
  return {warp_m, warps_k};
}

// A warp's raw operands for one K tile: its A rows g and g + 8 of every m16 tile, its B row of every
// n8 tile (16 bytes each), and the 32-bit scale word holding each row's two blocks.
template <int kWarpM16>
struct DirectRaw {
  uint4 a[kWarpM16][2];
  uint4 b[4];
  uint32_t sfa[kWarpM16][2];
  uint32_t sfb[4];
};

// Where this thread's rows start, for K tile 0: its chunk of A row g of the warp's first m16 tile
// and of its B row of n8 tile 0, and their scale words. The other rows are fixed offsets from these
// (A: 8 rows, B: 2 rows; scales: compile-time bytes), so four pointers serve them all.
struct DirectRows {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* sfa;
  const uint8_t* sfb;
  size_t row_bytes;
};

// Byte offset of row r in its 128-row scale chunk of the permuted layout (nvfp4_gemm_api.h); the
// chunk of 4 blocks q is q * 512 bytes on (q = 0 for the first 64 K values of the row).
__host__ __device__ constexpr int direct_scale_offset(int r) { return (r % 32) * 16 + ((r / 32) % 4) * 4; }

template <int kWarpM16>
__device__ __forceinline__ void direct_load(DirectRaw<kWarpM16>& raw, const DirectRows& rows, int kt) {
  const size_t bytes = size_t(kt) * (BLOCK_K / 2);
  const int scale_bytes = kt * 2 * 512;  // a K tile's 8 blocks: two 512-byte chunks
#pragma unroll
  for (int i = 0; i < kWarpM16; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // rows 16i + 8h + g of the warp's (32- or 64-row aligned) tile
      raw.a[i][h] = __ldg(reinterpret_cast<const uint4*>(rows.a + (16 * i + 8 * h) * rows.row_bytes + bytes));
      raw.sfa[i][h] = __ldg(reinterpret_cast<const uint32_t*>(rows.sfa + scale_bytes + direct_scale_offset(16 * i + 8 * h)));
    }
#pragma unroll
  for (int j = 0; j < 4; ++j) {  // B rows 8 (g / 2) + 2j + g % 2 of the warp's 32-aligned columns
    raw.b[j] = __ldg(reinterpret_cast<const uint4*>(rows.b + 2 * j * rows.row_bytes + bytes));
    raw.sfb[j] = __ldg(reinterpret_cast<const uint32_t*>(rows.sfb + scale_bytes + direct_scale_offset(2 * j)));
  }
}

__device__ __forceinline__ uint32_t uint4_word(const uint4& v, int w) {
  return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
}

__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One K tile: 4 words per row, each decoded once and used by two k-steps.
template <int kWarpM16>
__device__ __forceinline__ void direct_mma_tile(float (&acc)[kWarpM16][4][4], const DirectRaw<kWarpM16>& raw,
                                                int quad) {
  const uint32_t scale_byte = (quad & 1) * 2;  // this thread's two blocks in each row's scale word
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    const uint32_t byte = scale_byte + (w >> 1);
    nvfp4_decode::Fp16x2Quad qa[kWarpM16][2], qb[4];
#pragma unroll
    for (int i = 0; i < kWarpM16; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        qa[i][h] = nvfp4_decode::decode_e2m1x8_e4m3(uint4_word(raw.a[i][h], w),
                                                    nvfp4_decode::e4m3_splat_f16x2(raw.sfa[i][h], byte));
#pragma unroll
    for (int j = 0; j < 4; ++j)
      qb[j] = nvfp4_decode::decode_e2m1x8_e4m3(uint4_word(raw.b[j], w),
                                               nvfp4_decode::e4m3_splat_f16x2(raw.sfb[j], byte));
#pragma unroll
    for (int i = 0; i < kWarpM16; ++i) {
      // fragment registers: (row g, k lo), (row g + 8, k lo), (row g, k hi), (row g + 8, k hi)
      const uint32_t a_lo[4] = {qa[i][0].h02, qa[i][1].h02, qa[i][0].h13, qa[i][1].h13};
      const uint32_t a_hi[4] = {qa[i][0].h46, qa[i][1].h46, qa[i][0].h57, qa[i][1].h57};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        mma_m16n8k16(acc[i][j], a_lo, qb[j].h02, qb[j].h13);
        mma_m16n8k16(acc[i][j], a_hi, qb[j].h46, qb[j].h57);
      }
    }
  }
}

template <int kWarpM16, int kWarpsK>
__global__ void __launch_bounds__(kDirectThreads) nvfp4_gemm_sm90_direct_kernel(
    const uint8_t* a, const uint8_t* b, const uint8_t* sfa, const uint8_t* sfb, __half* c, int m, int n, int k) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(kWarpM16 == 2 || kWarpM16 == 4, "a warp holds 32 or 64 rows of A");
  static_assert(kWarpsK == 1 || kWarpsK == 2 || kWarpsK == 4, "the CTA's 4 warps split K 1, 2 or 4 ways");
  static_assert(kWarpM16 == 2 || kWarpsK == 1, "64-row warps use 255 registers and do not split K");
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
  const int chunk = 16 * quad, scale_word = (quad / 2) * 512;  // quad's blocks 2t, 2t + 1: word t / 2 of the tile
  const int a_row = row0 + group, b_row = col0 + 8 * (group / 2) + group % 2;  // the N order above
  // row0 and col0 are multiples of 32, so rows 16i + 8h (A) and 2j (B) further keep these scale bytes' pattern
  const DirectRows rows{a + (size_t(batch) * m + a_row) * row_bytes + chunk,
                        b + (size_t(batch) * n + b_row) * row_bytes + chunk,
                        sfa_batch + size_t(a_row / 128) * rest_k * 512 + direct_scale_offset(a_row) + scale_word,
                        sfb_batch + size_t(b_row / 128) * rest_k * 512 + direct_scale_offset(b_row) + scale_word,
                        row_bytes};

  float acc[kWarpM16][4][4] = {};
  // Two register sets: the next K tile's loads are in flight while this one is decoded and multiplied
  // (the loop is unrolled by two so that neither set is indexed at run time, which would put it in
  // local memory).
  DirectRaw<kWarpM16> even, odd;
  if (warp_k < k_tiles) direct_load(even, rows, warp_k);
  for (int kt = warp_k; kt < k_tiles; kt += 2 * kWarpsK) {
    if (kt + kWarpsK < k_tiles) direct_load(odd, rows, kt + kWarpsK);
    direct_mma_tile(acc, even, quad);
    if (kt + kWarpsK >= k_tiles) break;
    if (kt + 2 * kWarpsK < k_tiles) direct_load(even, rows, kt + 2 * kWarpsK);
    direct_mma_tile(acc, odd, quad);
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
