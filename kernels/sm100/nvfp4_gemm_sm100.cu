// nvfp4ctl: never-run-on sm_100a
//
// NVFP4 block-scaled GEMM for sm_100a (B200): C[l] = A[l] . B[l]^T, fp4 e2m1 operands with one e4m3
// scale per 16 K-elements, fp32 accumulation in TMEM, fp16 output.
//
// Built on CUTLASS's CollectiveBuilder (OpClassBlockScaledTensorOp, Sm100): TMA loads of A, B and
// their scales, UTCCP scale staging SMEM -> TMEM, tcgen05.mma kind::mxf4nvf4 block16 (SASS
// UTCOMMA.4X), TMEM -> registers -> TMA store epilogue. No source is handwritten PTX.
//
// Inputs are consumed exactly as GPU MODE hands them over:
//   * A (m, k) and B (n, k) are both K-major ("TN"); B is not copied or transposed.
//   * sfa_permuted / sfb_permuted are read in place: their storage is CUTLASS's
//     Sm1xxBlkScaledConfig layout (tests/sm100/test_host_proof.py proves it on the host by
//     evaluating the very layout objects make_arguments() builds, for many shapes).
//   * Scales are read as UE4M3 (the MMA's only 16-block scale format): e4m3 bytes with the sign bit
//     clear, which is all GPU MODE's generator (and --scales full) produce.
//
// Launch: default launch queue, no graphs, nothing cached but the SM count and, if a config ever
// needs one, its scheduler workspace (cached per size, never results).
//
// Debug: compile with -DNVFP4CTL_DEBUG_DUMP=1 and CTA 0 of a probe kernel prints what the kernel
// uses (instruction descriptor, scale bytes read through the kernel's scale layout, first outputs);
// `nvfp4ctl dump --runtime` parses it. Normal builds contain none of it.
#include "../common/nvfp4_gemm_api.h"

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/detail/sm100_blockscaled_layout.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

#if NVFP4CTL_DEBUG_DUMP
#include <cstdio>
#endif

namespace nvfp4_sm100 {

using namespace cute;

// ---- Problem types (fixed by the task) ---------------------------------------------------------
using ElementA = cutlass::nv_float4_t<cutlass::float_e2m1_t>;  // fp4 e2m1 + ue4m3 scale per 16
using ElementB = cutlass::nv_float4_t<cutlass::float_e2m1_t>;
using LayoutATag = cutlass::layout::RowMajor;     // A (m, k): K contiguous
using LayoutBTag = cutlass::layout::ColumnMajor;  // B as (k, n) column-major == (n, k) K-major
using ElementD = cutlass::half_t;
using LayoutDTag = cutlass::layout::RowMajor;     // C (m, n): N contiguous, batch outermost
using ElementAccumulator = float;
constexpr int kAlignmentAB = 32;                  // 32 fp4 values = 16 bytes per TMA row chunk
constexpr int kAlignmentD = 128 / cutlass::sizeof_bits<ElementD>::value;

// ---- One GEMM per tile configuration -----------------------------------------------------------
// C is never read (beta = 0), so the epilogue gets ElementC = void and loads nothing.
template <int BLOCK_M, int BLOCK_N, int BLOCK_K>
struct GemmConfig {
  static_assert(BLOCK_M == 128, "1-SM block-scaled UMMA needs a 128-row tile");
  static_assert(BLOCK_N == 64 || BLOCK_N == 128 || BLOCK_N == 192 || BLOCK_N == 256,
                "the block-scaled collective takes N tiles of 64, 128, 192 or 256");
  static_assert(BLOCK_K == 256, "one 256-deep K tile = 4 UMMA K steps of 64 = 16 scale blocks");

  using TileShape = Shape<Int<BLOCK_M>, Int<BLOCK_N>, Int<BLOCK_K>>;
  using ClusterShape = Shape<_1, _1, _1>;  // 1-SM MMA, no multicast: every CTA loads its own tiles

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm100, cutlass::arch::OpClassBlockScaledTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementAccumulator,
      void, LayoutDTag, kAlignmentD, ElementD, LayoutDTag, kAlignmentD,
      cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;

  // Stages: as many as shared memory holds after the epilogue's share (memory-bound at M = 128).
  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm100, cutlass::arch::OpClassBlockScaledTensorOp, ElementA, LayoutATag,
      kAlignmentAB, ElementB, LayoutBTag, kAlignmentAB, ElementAccumulator, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<
          static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      cutlass::gemm::collective::KernelScheduleAuto>::CollectiveOp;

  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>,
                                                          CollectiveMainloop, CollectiveEpilogue,
                                                          void>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
  using ScaleConfig = typename CollectiveMainloop::Sm1xxBlkScaledConfig;
};

// ---- Dispatch table: the one place that maps a shape to a config ------------------------------
// M = 128 benchmark shapes are memory-bound (B is 7-59 MB, A at most 1 MB): the narrowest N tile
// the block-scaled collective accepts (64) gives the most CTAs on B200's 148 SMs, and the auto
// stage count gives deep TMA pipelines:
//   (128, 7168, 16384), (128, 7168, 2048): 112 CTAs;  (128, 4096, 7168): 64 CTAs.
// Everything else (every task.yml test shape): 128x128 tiles, M % 128 == 0, N % 128 == 0.
// `nvfp4ctl dump --umma` reads the ConfigById lines below; keep one per line.
template <int kId>
struct ConfigById;
template <>
struct ConfigById<0> : GemmConfig<128, 64, 256> {
  static constexpr const char* kName = "m128_n64";
  static constexpr const char* kUse = "m == 128 and n % 64 == 0 (the three benchmark shapes)";
};
template <>
struct ConfigById<1> : GemmConfig<128, 128, 256> {
  static constexpr const char* kName = "general";
  static constexpr const char* kUse = "m % 128 == 0 and n % 128 == 0 (every test shape)";
};
inline constexpr int kNumConfigs = 2;  // ConfigById<0 .. kNumConfigs-1>
inline constexpr int kNoConfig = -1;

inline int select_config(int m, int n, int k, int l) {
  if (m <= 0 || n <= 0 || k <= 0 || l <= 0 || k % 256 != 0 || m % 128 != 0) return kNoConfig;
  if (m == 128 && n % 64 == 0) return 0;
  if (n % 128 == 0) return 1;
  return kNoConfig;
}

// ---- Host launch --------------------------------------------------------------------------------
// The SM count is a device property, queried once per device (CUTLASS would otherwise ask on
// every call).
inline int sm_count_of_current_device() {
  static int cached_device = -1, cached_count = 0;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (device != cached_device) {
    cudaDeviceGetAttribute(&cached_count, cudaDevAttrMultiProcessorCount, device);
    cached_device = device;
  }
  return cached_count;
}

template <class Config>
typename Config::Gemm::Arguments make_arguments(const Nvfp4GemmArgs& args) {
  using Gemm = typename Config::Gemm;
  using StrideA = typename Gemm::GemmKernel::StrideA;
  using StrideB = typename Gemm::GemmKernel::StrideB;
  using StrideD = typename Gemm::GemmKernel::StrideD;
  using ScaleConfig = typename Config::ScaleConfig;
  const int m = args.m, n = args.n, k = args.k, l = args.l;
  const auto problem = make_shape(m, n, k, l);

  typename Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {m, n, k, l},
      {reinterpret_cast<const typename ElementA::DataType*>(args.a),
       cutlass::make_cute_packed_stride(StrideA{}, make_shape(m, k, l)),
       reinterpret_cast<const typename ElementB::DataType*>(args.b),
       cutlass::make_cute_packed_stride(StrideB{}, make_shape(n, k, l)),
       reinterpret_cast<const typename ElementA::ScaleFactorType*>(args.sfa),
       ScaleConfig::tile_atom_to_shape_SFA(problem),
       reinterpret_cast<const typename ElementB::ScaleFactorType*>(args.sfb),
       ScaleConfig::tile_atom_to_shape_SFB(problem)},
      {{1.0f, 0.0f},
       nullptr,
       cutlass::make_cute_packed_stride(StrideD{}, make_shape(m, n, l)),
       reinterpret_cast<ElementD*>(args.c),
       cutlass::make_cute_packed_stride(StrideD{}, make_shape(m, n, l))}};
  arguments.hw_info.sm_count = sm_count_of_current_device();
  return arguments;
}

#if !defined(NVFP4CTL_CONFIG_ONLY)  // the host proofs include this file for its arguments only
// A scheduler workspace, should CUTLASS ever ask for one (the host proof shows 0 bytes for every
// config and task shape): allocated once, grown, reused. GemmUniversalAdapter::initialize() runs the
// scheduler's own workspace initialization on every call; nothing else lives in it.
inline void* cached_workspace(size_t bytes) {
  static void* buffer = nullptr;
  static size_t capacity = 0;
  if (bytes == 0) return nullptr;
  if (bytes > capacity) {
    if (buffer != nullptr) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, bytes) != cudaSuccess) return nullptr;
    capacity = bytes;
  }
  return buffer;
}

#if NVFP4CTL_DEBUG_DUMP
// CTA 0 prints what the GEMM consumed, read through the kernel's own layouts: the scale bytes of
// rows 0..3, k-blocks 0..3 (via LayoutSFA/SFB) and the first 8 outputs of row 0.
template <class LayoutSF>
__global__ void debug_dump_probe(const uint8_t* sfa, LayoutSF layout_sfa, const uint8_t* sfb,
                                 LayoutSF layout_sfb, const cutlass::half_t* c, int n) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  for (int row = 0; row < 4; ++row) {
    for (int kb = 0; kb < 4; ++kb) {
      const int off_a = layout_sfa(row, kb * 16, 0), off_b = layout_sfb(row, kb * 16, 0);
      printf("NVFP4CTL sf row=%d kblock=%d sfa_offset=%d sfa=0x%02x sfb_offset=%d sfb=0x%02x\n",
             row, kb, off_a, sfa[off_a], off_b, sfb[off_b]);
    }
  }
  for (int col = 0; col < 8 && col < n; ++col) {
    printf("NVFP4CTL out row=0 col=%d value=%.6f\n", col, float(c[col]));
  }
}

template <class Config>
void debug_dump(const Nvfp4GemmArgs& args, int config_id) {
  using TiledMma = typename Config::CollectiveMainloop::TiledMma;
  using ScaleConfig = typename Config::ScaleConfig;
  const auto problem = make_shape(args.m, args.n, args.k, args.l);
  // The instruction descriptor the collective's MMA atom carries (built by CuTe at compile time).
  const TiledMma tiled_mma{};
  printf("NVFP4CTL config id=%d tile=%dx%dx%d\n", config_id, int(size<0>(typename Config::TileShape{})),
         int(size<1>(typename Config::TileShape{})), int(size<2>(typename Config::TileShape{})));
  printf("NVFP4CTL idesc=0x%08x\n", static_cast<uint32_t>(tiled_mma.idesc_));
  fflush(stdout);
  debug_dump_probe<<<1, 1>>>(args.sfa, ScaleConfig::tile_atom_to_shape_SFA(problem), args.sfb,
                             ScaleConfig::tile_atom_to_shape_SFB(problem),
                             reinterpret_cast<const cutlass::half_t*>(args.c), args.n);
  cudaDeviceSynchronize();
}
#endif

template <class Config>
cudaError_t launch(const Nvfp4GemmArgs& args, [[maybe_unused]] int config_id) {
  using Gemm = typename Config::Gemm;
  const auto arguments = make_arguments<Config>(args);
  Gemm gemm;
  if (gemm.can_implement(arguments) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
  const size_t workspace_bytes = Gemm::get_workspace_size(arguments);
  void* workspace = cached_workspace(workspace_bytes);
  if (workspace_bytes != 0 && workspace == nullptr) return cudaErrorMemoryAllocation;
  if (gemm.initialize(arguments, workspace) != cutlass::Status::kSuccess) {
    return cudaErrorInvalidValue;
  }
  const cutlass::Status status = gemm.run();  // default launch queue
  if (status != cutlass::Status::kSuccess) {
    const cudaError_t error = cudaGetLastError();
    return error != cudaSuccess ? error : cudaErrorLaunchFailure;
  }
#if NVFP4CTL_DEBUG_DUMP
  debug_dump<Config>(args, config_id);
#endif
  return cudaGetLastError();
}

#endif  // !NVFP4CTL_CONFIG_ONLY

}  // namespace nvfp4_sm100

#if !defined(NVFP4CTL_CONFIG_ONLY)

const char* nvfp4_gemm_unsupported(int m, int n, int k, int l) {
  if (m <= 0 || n <= 0 || k <= 0 || l <= 0) return "m, n, k and l must be positive";
  if (k % 256 != 0) return "k must be a multiple of 256 (the kernel's K tile)";
  if (m % 128 != 0) return "m must be a multiple of 128 (the kernel's M tile)";
  if (nvfp4_sm100::select_config(m, n, k, l) == nvfp4_sm100::kNoConfig) {
    return "n must be a multiple of 128 (64 when m == 128)";
  }
  return nullptr;
}

cudaError_t nvfp4_gemm_launch(const Nvfp4GemmArgs& args) {
  using namespace nvfp4_sm100;
  switch (select_config(args.m, args.n, args.k, args.l)) {
    case 0: return launch<ConfigById<0>>(args, 0);
    case 1: return launch<ConfigById<1>>(args, 1);
    default: return cudaErrorInvalidValue;
  }
}

#endif  // !NVFP4CTL_CONFIG_ONLY
