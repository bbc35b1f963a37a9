// Host proof for the sm_100a kernel: evaluates, on the CPU, the very CuTe objects the kernel's
// dispatch configs are built from (the kernel compiled with NVFP4CTL_CONFIG_ONLY), and
// prints them one fact per line for tests/sm100 to compare with nvfp4ctl's own encoders.
//
//   sm100_host_proof umma                -> per config: tile, stages, instruction descriptor,
//                                           A/B shared-memory descriptors, TMEM columns
//   sm100_host_proof layout M N K L      -> per config, operand, batch and row: the byte offset of
//                                           every scale k-block in the scale tensor
//   sm100_host_proof select M N K L ...  -> per shape: the config id the kernel's dispatch picks,
//                                           CUTLASS's can_implement() verdict on the kernel's own
//                                           arguments, and the workspace bytes it asks for
//
// The kernel comes first, through nvcc's -include of the very file `dump --umma --kernel` names (with
// -DNVFP4CTL_CONFIG_ONLY=1, umma/host_proof.py), not an #include by name, which would read whichever
// nvfp4_gemm_sm100.cu sits in the kernel's folder and check a copy under another name as its neighbour.
#ifndef NVFP4CTL_CONFIG_ONLY
#error "compile with -DNVFP4CTL_CONFIG_ONLY=1 -include <kernel .cu> (nvfp4ctl dump --umma passes both)"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace {

using namespace cute;

template <class Config>
void print_umma(int id) {
  using Mainloop = typename Config::CollectiveMainloop;
  using TiledMma = typename Mainloop::TiledMma;
  using TileShape = typename Config::TileShape;

  // Shared-memory descriptors exactly as the collective's mma_init builds them, with the stage
  // buffers placed at shared address 0 (on the host CuTe cannot translate a real shared address;
  // it prints one warning line that the parser ignores): stage 0, first MMA k-block.
  Tensor sA = make_tensor(make_smem_ptr(static_cast<typename Mainloop::SmemAllocTypeA*>(nullptr)),
                          typename Mainloop::SmemLayoutA{});
  Tensor sB = make_tensor(make_smem_ptr(static_cast<typename Mainloop::SmemAllocTypeB*>(nullptr)),
                          typename Mainloop::SmemLayoutB{});
  Tensor tCrA = TiledMma::make_fragment_A(sA);  // (MMA, MMA_M, MMA_K, PIPE) of descriptors
  Tensor tCrB = TiledMma::make_fragment_B(sB);
  const uint64_t smem_a = tCrA(_0{}, _0{}, _0{}, _0{});
  const uint64_t smem_b = tCrB(_0{}, _0{}, _0{}, _0{});
  const uint64_t smem_a_k1 = tCrA(_0{}, _0{}, _1{}, _0{});

  // TMEM: accumulators (all pipeline stages), then the SFA and SFB columns, as set_tmem_offsets
  // lays them out. Evaluated at compile time: TMEM pointer arithmetic is not meant to run on a CPU.
  constexpr int kAccStages = Mainloop::DispatchPolicy::Schedule::AccumulatorPipelineStageCount;
  using AccShape = decltype(partition_shape_C(TiledMma{}, take<0, 2>(TileShape{})));
  static_assert(kAccStages == 2, "the proof mirrors make_sm100_accumulator's non-overlapping case");
  constexpr int kAccCols = int(cutlass::detail::find_tmem_tensor_col_offset(
      TiledMma::make_fragment_C(append(AccShape{}, Int<kAccStages>{}))));
  constexpr int kSfaCols = int(cutlass::detail::find_tmem_tensor_col_offset(
      make_tensor<typename TiledMma::FrgTypeSFA>(shape(typename Mainloop::SmemLayoutAtomSFA{}))));
  constexpr int kSfbCols = int(cutlass::detail::find_tmem_tensor_col_offset(
      make_tensor<typename TiledMma::FrgTypeSFB>(shape(typename Mainloop::SmemLayoutAtomSFB{}))));
  const TiledMma tiled_mma{};

  std::printf("config id=%d name=%s tile=%dx%dx%d stages=%d acc_stages=%d smem_bytes=%d\n", id,
              Config::kName, int(size<0>(TileShape{})), int(size<1>(TileShape{})), int(size<2>(TileShape{})),
              int(Mainloop::DispatchPolicy::Stages), kAccStages, int(Config::GemmKernel::SharedStorageSize));
  std::printf("idesc id=%d value=0x%08x\n", id, static_cast<uint32_t>(tiled_mma.idesc_));
  std::printf("smem_a id=%d value=0x%016llx\n", id, static_cast<unsigned long long>(smem_a));
  std::printf("smem_b id=%d value=0x%016llx\n", id, static_cast<unsigned long long>(smem_b));
  std::printf("smem_a_k1 id=%d value=0x%016llx\n", id, static_cast<unsigned long long>(smem_a_k1));
  std::printf("tmem id=%d acc_cols=%d sfa_cols=%d sfb_cols=%d\n", id,
              kAccCols, kSfaCols, kSfbCols);
}

// One line per (operand, batch, row): the offsets of k-blocks 0 .. ceil(K/16)-1, read through the
// layout the kernel hands to CUTLASS (Sm1xxBlkScaledConfig::tile_atom_to_shape_SFA/SFB).
template <class Layout>
void print_rows(int id, char operand, Layout layout, int rows, int k, int l) {
  for (int b = 0; b < l; ++b) {
    for (int row = 0; row < rows; ++row) {
      std::printf("sf id=%d op=%c l=%d row=%d:", id, operand, b, row);
      for (int kb = 0; kb < k / 16; ++kb) std::printf(" %d", int(layout(row, kb * 16, b)));
      std::printf("\n");
    }
  }
}

template <class Config>
void print_layout(int id, int m, int n, int k, int l) {
  using ScaleConfig = typename Config::ScaleConfig;
  const auto problem = make_shape(m, n, k, l);
  print_rows(id, 'A', ScaleConfig::tile_atom_to_shape_SFA(problem), m, k, l);
  print_rows(id, 'B', ScaleConfig::tile_atom_to_shape_SFB(problem), n, k, l);
}

template <class Config>
void print_implement(const Nvfp4GemmArgs& args, int id) {
  using Gemm = typename Config::Gemm;
  auto arguments = nvfp4_sm100::make_arguments<Config>(args);
  arguments.hw_info.sm_count = 148;  // B200; no GPU here to ask
  const cutlass::Status status = Gemm::can_implement(arguments);
  std::printf("select m=%d n=%d k=%d l=%d id=%d implementable=%d workspace=%zu\n", args.m, args.n, args.k,
              args.l, id, int(status == cutlass::Status::kSuccess), Gemm::get_workspace_size(arguments));
}

template <int... kIds>
void print_select(std::integer_sequence<int, kIds...>, int m, int n, int k, int l) {
  // Aligned stand-in addresses: can_implement() looks at shapes and strides, never at the data.
  const auto fake = [](uintptr_t address) { return reinterpret_cast<const uint8_t*>(address); };
  const Nvfp4GemmArgs args{fake(1 << 20), fake(2 << 20), fake(3 << 20), fake(4 << 20),
                           const_cast<uint8_t*>(fake(5 << 20)), m, n, k, l};
  const int id = nvfp4_sm100::select_config(m, n, k, l);
  if (id == nvfp4_sm100::kNoConfig) {
    std::printf("select m=%d n=%d k=%d l=%d id=%d implementable=0 workspace=0\n", m, n, k, l, id);
    return;
  }
  ((id == kIds ? print_implement<nvfp4_sm100::ConfigById<kIds>>(args, id) : void()), ...);
}

template <int... kIds>
void for_each_config(std::integer_sequence<int, kIds...>, const char* mode, int m, int n, int k, int l) {
  if (std::strcmp(mode, "umma") == 0) {
    (print_umma<nvfp4_sm100::ConfigById<kIds>>(kIds), ...);
  } else {
    (print_layout<nvfp4_sm100::ConfigById<kIds>>(kIds, m, n, k, l), ...);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool umma = argc == 2 && std::strcmp(argv[1], "umma") == 0;
  const bool layout = argc == 6 && std::strcmp(argv[1], "layout") == 0;
  const bool select = argc >= 6 && (argc - 2) % 4 == 0 && std::strcmp(argv[1], "select") == 0;
  if (!umma && !layout && !select) {
    std::fprintf(stderr, "usage: %s umma | layout M N K L | select M N K L [M N K L ...]\n", argv[0]);
    return 2;
  }
  if (select) {
    for (int i = 2; i + 3 < argc; i += 4) {
      const int m = std::atoi(argv[i]), n = std::atoi(argv[i + 1]);
      const int k = std::atoi(argv[i + 2]), l = std::atoi(argv[i + 3]);
      print_select(std::make_integer_sequence<int, nvfp4_sm100::kNumConfigs>{}, m, n, k, l);
    }
    return 0;
  }
  const int m = layout ? std::atoi(argv[2]) : 0, n = layout ? std::atoi(argv[3]) : 0;
  const int k = layout ? std::atoi(argv[4]) : 0, l = layout ? std::atoi(argv[5]) : 0;
  for_each_config(std::make_integer_sequence<int, nvfp4_sm100::kNumConfigs>{}, argv[1], m, n, k, l);
  return 0;
}
