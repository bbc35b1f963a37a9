// Exact NVFP4 -> fp16 decoding, two ways (sm_89+ for the e4m3 conversions). Both return the same
// pairs of values from a 32-bit word of eight e2m1 codes, multiplied by the e4m3 scale:
// - decode_e2m1x8_e4m3 (the kernel's default since v8): bit placement into e4m3 bytes and
//   cvt.rn.f16x2.e4m3x2, ~1.75 instructions per value; the values carry a factor 2^-6.
// - decode_e2m1x8: byte permutes with a table, ~2.6 instructions per value; the true values.
//
// Every e2m1 value is an fp16 whose low byte is zero: magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6 have the
// high bytes 00 38 3C 3E 40 42 44 46, and the sign is bit 15. A `prmt` with that 8-byte table turns
// 3-bit codes placed in selector nibbles 1 and 3 into one fp16x2 (nibbles 0 and 2 are zero and pick
// the 00 entry, which is the zero low byte). The sign comes from a second `prmt` in sign-replicate
// mode. e2m1 x e4m3 products have at most 6 significant bits and lie in [2^-10, 2688], so the
// multiply by the scale is exact in fp16.
#pragma once

#include <cstdint>

namespace nvfp4_decode {

__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t selector) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
  return d;
}

__device__ __forceinline__ uint32_t mul_f16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// The fp16 high bytes of the e2m1 magnitudes 0..7.
constexpr uint32_t kE2m1HighBytesLo = 0x3E3C3800u;
constexpr uint32_t kE2m1HighBytesHi = 0x46444240u;
constexpr uint32_t kSignBits = 0x80008000u;

// Eight e2m1 values of one 32-bit word (nibble i = value i) as four fp16x2, each pair taken from
// two nibbles of one 16-bit half: h02 = (v0, v2), h13 = (v1, v3), h46 = (v4, v6), h57 = (v5, v7).
// Callers place them into the MMA's K order; A and B use this same function, so they agree.
struct Fp16x2Quad {
  uint32_t h02, h13, h46, h57;
};

// The lookup table as two registers, loaded once per thread (load_table) and passed in.
struct E2m1Table {
  uint32_t lo, hi;
};

// A warp-uniform constant lives in a uniform register, which prmt cannot read, so the compiler
// copied it before every prmt; read back from shared memory it is an ordinary register.
__device__ __forceinline__ E2m1Table load_table(uint32_t smem_addr) {
  E2m1Table t;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(t.lo), "=r"(t.hi) : "r"(smem_addr) : "memory");
  return t;
}

__device__ __forceinline__ Fp16x2Quad decode_e2m1x8(uint32_t x, uint32_t scale_x2, const E2m1Table& table) {
  const uint32_t kE2m1HighBytesLo = table.lo, kE2m1HighBytesHi = table.hi;
  const uint32_t odd_codes = x & 0x70707070u;           // v1, v3, v5, v7 magnitudes at bits 4..6 of each byte
  const uint32_t x_even_up = x << 4;                    // even nibbles moved to the top of their byte
  const uint32_t even_codes = x_even_up & 0x70707070u;  // v0, v2, v4, v6 magnitudes
  Fp16x2Quad q;
  // Selector 0x9484: bytes 1 and 3 replicate the sign of byte 0 / byte 1; bytes 0 and 2 read zero.
  q.h13 = prmt(kE2m1HighBytesLo, kE2m1HighBytesHi, odd_codes) | (prmt(x, 0, 0x9484u) & kSignBits);
  q.h57 = prmt(kE2m1HighBytesLo, kE2m1HighBytesHi, odd_codes >> 16) | (prmt(x, 0, 0xB4A4u) & kSignBits);
  q.h02 = prmt(kE2m1HighBytesLo, kE2m1HighBytesHi, even_codes) | (prmt(x_even_up, 0, 0x9484u) & kSignBits);
  q.h46 = prmt(kE2m1HighBytesLo, kE2m1HighBytesHi, even_codes >> 16) |
          (prmt(x_even_up, 0, 0xB4A4u) & kSignBits);
  q.h02 = mul_f16x2(q.h02, scale_x2);
  q.h13 = mul_f16x2(q.h13, scale_x2);
  q.h46 = mul_f16x2(q.h46, scale_x2);
  q.h57 = mul_f16x2(q.h57, scale_x2);
  return q;
}

// The same pairs as decode_e2m1x8, every value times 2^-6, in fewer instructions: a nibble's 3
// magnitude bits placed at bits 4..2 of a byte (the low exponent bits and the top mantissa bit) and
// its sign at bit 7 read as e4m3 are the e2m1 value × 2^-6 exactly (normals and the 0.5 subnormal
// alike), and cvt.rn.f16x2.e4m3x2 turns two such bytes into an fp16x2. Two shifts and two lop3 (plus
// one for the signs) build four bytes per register. Times any e4m3 scale the values stay exact in
// fp16 (>= 2^-16 with <= 6 significant bits, above the 2^-24 subnormal step), so a GEMM of two such
// operands is the exact GEMM times 2^-12, undone exactly by the caller.
constexpr float kE4m3DecodeUnscale = 4096.0f;  // 2^12: one 2^-6 from each operand

__device__ __forceinline__ uint32_t select_bits(uint32_t in_mask, uint32_t outside_mask, uint32_t mask) {
  uint32_t d;  // (in_mask & mask) | (outside_mask & ~mask) in one lop3
  asm("lop3.b32 %0, %1, %2, %3, 0xE4;" : "=r"(d) : "r"(in_mask), "r"(outside_mask), "r"(mask));
  return d;
}

__device__ __forceinline__ void e4m3x4_to_f16x2(uint32_t bytes, uint32_t& lo_pair, uint32_t& hi_pair) {
  asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %2;\n"
      " cvt.rn.f16x2.e4m3x2 %0, lo;\n cvt.rn.f16x2.e4m3x2 %1, hi;\n}"
      : "=r"(lo_pair), "=r"(hi_pair)
      : "r"(bytes));
}

__device__ __forceinline__ Fp16x2Quad decode_e2m1x8_e4m3(uint32_t x, uint32_t scale_x2) {
  constexpr uint32_t kMagnitudeBits = 0x1C1C1C1Cu;  // bits 4..2 of every byte
  const uint32_t signs = x & 0x88888888u;
  // even nibbles (v0, v2, v4, v6: bits 0..3 of each byte): magnitude << 2, sign (bit 3) << 4 = bit 7
  const uint32_t even = select_bits(x << 2, signs << 4, kMagnitudeBits);
  // odd nibbles (v1, v3, v5, v7: bits 4..7): magnitude >> 2, sign already at bit 7
  const uint32_t odd = select_bits(x >> 2, signs, kMagnitudeBits);
  Fp16x2Quad q;
  e4m3x4_to_f16x2(even, q.h02, q.h46);
  e4m3x4_to_f16x2(odd, q.h13, q.h57);
  q.h02 = mul_f16x2(q.h02, scale_x2);
  q.h13 = mul_f16x2(q.h13, scale_x2);
  q.h46 = mul_f16x2(q.h46, scale_x2);
  q.h57 = mul_f16x2(q.h57, scale_x2);
  return q;
}

// The e4m3 byte `byte_idx` (0..3) of `word` as an fp16x2 holding it twice (exact: every finite e4m3
// value, subnormals included, is an fp16).
__device__ __forceinline__ uint32_t e4m3_splat_f16x2(uint32_t word, uint32_t byte_idx) {
  const uint32_t twice = prmt(word, 0, byte_idx | (byte_idx << 4));
  uint32_t d;
  asm("{\n .reg .b16 lo;\n cvt.u16.u32 lo, %1;\n cvt.rn.f16x2.e4m3x2 %0, lo;\n}" : "=r"(d) : "r"(twice));
  return d;
}

}  // namespace nvfp4_decode
