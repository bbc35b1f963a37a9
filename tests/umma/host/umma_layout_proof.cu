// Host proof for nvfp4ctl's UMMA model (nvfp4ctl/umma/smem.py, tmem.py): evaluates, on the CPU,
// CuTe's own K-major UMMA shared-memory layouts, the descriptors CuTe builds from them for every
// MMA K step, and CuTe's TMEM scale-factor layout, and prints them one fact per line for
// tests/umma/test_model_cute.py to compare with the model. CuTe headers only (no kernel).
//
//   umma_layout_proof smem  -> per (swizzle, operand, rows, K step): the descriptor, then per row
//                              the byte offset of each of the 32 K bytes one MMA reads
//   umma_layout_proof sf    -> per (operand, rows, K step, row): the TMEM (lane, column, byte) of
//                              each of the 4 scale factors one block16 MMA reads
//
// On the host CuTe translates every shared pointer to address 0 (it prints one warning line that
// the parser ignores), so descriptors carry start = the offset CuTe's descriptor iterator adds.
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cutlass/float8.h>
#include <cutlass/float_subbyte.h>

#include <cstdio>
#include <cstring>

using namespace cute;
using Fp4 = cutlass::float_e2m1_t;
using Sf = cutlass::float_ue4m3_t;
constexpr int kTileK = 256;  // one K tile: 4 MMA K steps of 64

template <int N>
using Mma = decltype(make_tiled_mma(SM100_MMA_MXF4_SS<Fp4, Fp4, float, Sf, 128, N, 16, UMMA::Major::K, UMMA::Major::K>{}));

// A layout of one operand stage exactly as CUTLASS's sm100 block-scaled collective builds it
// (K-major: tile along K first), its descriptors per K step, and its byte map.
template <class Atom, int N, bool kIsA>
void print_smem(const char* swizzle) {
  using TiledMma = Mma<N>;
  constexpr int kRows = kIsA ? 128 : N;
  auto mma_shape = [] {
    if constexpr (kIsA) return partition_shape_A(TiledMma{}, make_shape(Int<kRows>{}, Int<kTileK>{}));
    else return partition_shape_B(TiledMma{}, make_shape(Int<kRows>{}, Int<kTileK>{}));
  }();
  auto layout = UMMA::tile_to_mma_shape(Atom{}, append(mma_shape, Int<1>{}), Step<_1, _2, _3>{});
  Tensor s = make_tensor(make_smem_ptr(static_cast<Fp4*>(nullptr)), layout);
  auto frag = [&] {
    if constexpr (kIsA) return TiledMma::make_fragment_A(s);
    else return TiledMma::make_fragment_B(s);
  }();
  constexpr int kSteps = size<2>(decltype(layout){});
  constexpr int kMmaK = size<0, 1>(decltype(layout){});
  for (int step = 0; step < kSteps; ++step) {
    const uint64_t desc = frag(_0{}, _0{}, step, _0{});
    std::printf("desc swizzle=%s op=%c rows=%d n=%d step=%d value=0x%016llx\n", swizzle, kIsA ? 'A' : 'B', kRows, N,
                step, static_cast<unsigned long long>(desc));
    for (int row = 0; row < kRows; ++row) {
      std::printf("bytes swizzle=%s op=%c n=%d step=%d row=%d:", swizzle, kIsA ? 'A' : 'B', N, step, row);
      for (int k = 0; k < kMmaK; k += 2) {
        // The swizzle of a smem_ptr_flag layout acts on byte addresses (CuTe applies it to the
        // pointer, not to fp4 element offsets): unswizzled element offset -> byte -> swizzle.
        const int lo = layout.layout_b()(make_coord(make_coord(row, k), 0, step, 0));
        const int hi = layout.layout_b()(make_coord(make_coord(row, k + 1), 0, step, 0));
        if (hi != lo + 1 || lo % 2) std::printf(" split");  // an fp4 pair not in one byte: never for K-major
        std::printf(" %d", int(layout.layout_a()(lo / 2)));
      }
      std::printf("\n");
    }
  }
}

template <class Atom>
void print_swizzle(const char* name) {
  print_smem<Atom, 128, true>(name);
  print_smem<Atom, 64, false>(name);
  print_smem<Atom, 128, false>(name);
  print_smem<Atom, 192, false>(name);
  print_smem<Atom, 256, false>(name);
}

// CuTe's TMEM scale layout for one operand: ((MMA_MN, (16, 4)), 1, steps) for block16 K64.
template <int kRows, bool kIsA>
void print_sf() {
  auto shape = make_shape(make_shape(Int<kRows>{}, make_shape(_16{}, _4{})), _1{}, Int<kTileK / 64>{});
  auto t = UMMA::tmem_sf_frg<Sf, 16, 1, kIsA>::make(shape);
  auto layout = t.layout();
  // An offset of an 8-bit TMEM tensor: lane << 18 | column << 2 | byte (tmem_ptr<uint8>::OffsetShift = 2)
  for (int step = 0; step < kTileK / 64; ++step) {
    for (int row = 0; row < kRows; ++row) {
      std::printf("sf op=%c rows=%d step=%d row=%d:", kIsA ? 'A' : 'B', kRows, step, row);
      for (int kb = 0; kb < 4; ++kb) {
        const int offset = layout(make_coord(make_coord(row, make_coord(0, kb)), 0, step));
        std::printf(" %d,%d,%d", offset >> 18, (offset & 0x3FFFF) >> 2, offset & 3);
      }
      std::printf("\n");
    }
  }
}

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "smem") == 0) {
    print_swizzle<UMMA::Layout_K_INTER_Atom<Fp4>>("none");
    print_swizzle<UMMA::Layout_K_SW32_Atom<Fp4>>("32B");
    print_swizzle<UMMA::Layout_K_SW64_Atom<Fp4>>("64B");
    print_swizzle<UMMA::Layout_K_SW128_Atom<Fp4>>("128B");
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "sf") == 0) {
    print_sf<128, true>();
    print_sf<64, false>();
    print_sf<128, false>();
    print_sf<256, false>();
    return 0;
  }
  std::fprintf(stderr, "usage: %s smem | sf\n", argv[0]);
  return 2;
}
