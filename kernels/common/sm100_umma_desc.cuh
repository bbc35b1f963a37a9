// UMMA descriptors for sm_100a as plain constexpr arithmetic (no PTX), so the kernel and the host
// programs that print its plan for the Python model build them from the same code.
//
// Bit positions: CUTLASS include/cute/arch/mma_sm100_desc.hpp and the PTX ISA tcgen05 chapter
// (nvfp4ctl/umma/descriptors.py decodes the same fields).
#pragma once

#include <cstdint>

namespace sm100 {

// ---- Instruction descriptor of tcgen05.mma kind::mxf4nvf4 (the 32-bit word the MMA takes) ----
constexpr uint32_t kFormatE2M1 = 1;   // a_format / b_format code for kind::mxf4nvf4
constexpr uint32_t kScaleUE4M3 = 0;   // bit 23: 0 = UE4M3 scales (NVFP4), 1 = UE8M0
constexpr uint32_t kMajorK = 0;

// D[umma_m x umma_n] fp32 += A[umma_m x 64] . B[umma_n x 64]^T, both K-major, e2m1, UE4M3 block-16
// scales; scale ids 0 (block16 reads all four bytes of each 32-bit scale column).
// umma_m must be 128 or 256: M is written as CuTe writes it, M >> 4 from bit 24; the PTX ISA's
// block-scaled table has M >> 7 at bits [27,29) with [24,27) reserved, and the two agree only there
// (M = 64 would set a reserved bit). The kernel static_asserts its UMMA_M.
__host__ __device__ constexpr uint32_t make_instr_desc_nvf4(uint32_t umma_m, uint32_t umma_n) {
  return (kFormatE2M1 << 7) | (kFormatE2M1 << 10) | (kMajorK << 15) | (kMajorK << 16) |
         ((umma_n >> 3) << 17) | (kScaleUE4M3 << 23) | ((umma_m >> 4) << 24);
}

// ---- Shared-memory matrix descriptor ----
constexpr uint64_t kSmemDescVersion = 1;      // bits [46,48): 1 on sm_100
constexpr uint64_t kLayoutSwizzleNone = 0;    // bits [61,64)
constexpr uint64_t kLayoutSwizzle128B = 2;

// A K-major operand whose rows are exactly one 128-byte swizzle atom wide (256 fp4): 8-row groups
// 1024 B apart (SBO); LBO is unused by swizzled K-major layouts and set to 16 B as CuTe does.
// `smem_byte_addr` may point inside an atom row (the K-step advance adds 32 B per 64 fp4); base
// offset stays 0 because every stage buffer is 1024-byte aligned.
__host__ __device__ constexpr uint64_t make_smem_desc_kmajor_sw128(uint32_t smem_byte_addr) {
  return uint64_t((smem_byte_addr & 0x3FFFF) >> 4) | (uint64_t(16 >> 4) << 16) | (uint64_t(1024 >> 4) << 32) |
         (kSmemDescVersion << 46) | (kLayoutSwizzle128B << 61);
}

// Source of tcgen05.cp .32x128b.warpx4: 32 rows of 16 bytes, no swizzle; the 8-row core matrices
// are 128 B apart (SBO). One 512-byte chunk of GPU MODE's blocked scale layout is exactly this.
__host__ __device__ constexpr uint64_t make_smem_desc_scales(uint32_t smem_byte_addr) {
  return uint64_t((smem_byte_addr & 0x3FFFF) >> 4) | (uint64_t(128 >> 4) << 32) |
         (kSmemDescVersion << 46) | (kLayoutSwizzleNone << 61);
}

// TMEM address: lane in bits [16,32), column in [0,16).
__host__ __device__ constexpr uint32_t tmem_addr(uint32_t base, uint32_t lane, uint32_t column) {
  return base + (lane << 16) + column;
}

}  // namespace sm100
