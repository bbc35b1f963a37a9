// Prints, as JSON, everything the tcgen05 kernel (kernels/sm100/nvfp4_gemm_sm100_tc.cu) decides on
// the host side of its data path, computed by the kernel's own constexpr functions (this file
// includes the kernel source): the tile configuration, instruction descriptor, per-stage and
// per-K-step shared-memory descriptors and TMEM columns, the TMA boxes, the launch plan (CTAs,
// segments in processing order, reduction sources) and, with `loads`, every stage load
// (TMA coordinates, scale offsets, pipeline stage) of every CTA. tests/sm100/tc_plan.py
// runs it; the UMMA model and the pipeline model consume its output.
//
// usage: sm100_tc_plan M N K L SMS [loads]
#include "../../../kernels/sm100/nvfp4_gemm_sm100_tc.cu"

#include <cstdlib>
#include <cstring>

namespace {

template <class Config>
void print_config(nvfp4_sm100_tc::ConfigId id) {
  std::printf("\"config_id\": %d,\n", int(id));
  std::printf("\"config\": {\"BLOCK_N\": %d, \"BLOCK_M\": %d, \"BLOCK_K\": %d, \"UMMA_M\": %d, \"UMMA_N\": %d, "
              "\"UMMA_K\": %d, \"kStages\": %d, \"kKSteps\": %d, \"kStageBytes\": %d, \"kStageTxBytes\": %d, "
              "\"kBOffset\": %d, \"kAOffset\": %d, \"kSfbOffset\": %d, \"kSfaOffset\": %d, \"SMEM_SF_BYTES\": %d, "
              "\"SF_CHUNK_BYTES\": %d, \"kSmemBytes\": %d, \"kTmemColumns\": %d, \"kNumAccumulators\": %d, "
              "\"kThreads\": %d, \"kNumEpilogueThreads\": %d, \"kMinUnitsPerCta\": %d, \"kMaxCtas\": %d, "
              "\"kASubTiles\": %d},\n",
              Config::BLOCK_N, Config::BLOCK_M, Config::BLOCK_K, Config::UMMA_M, Config::UMMA_N, Config::UMMA_K,
              Config::kStages, Config::kKSteps, Config::kStageBytes, Config::kStageTxBytes, Config::kBOffset,
              Config::kAOffset, Config::kSfbOffset, Config::kSfaOffset, Config::SMEM_SF_BYTES, Config::SF_CHUNK_BYTES,
              Config::kSmemBytes, Config::kTmemColumns, Config::kNumAccumulators, Config::kThreads,
              Config::kNumEpilogueThreads, nvfp4_sm100_tc::kMinUnitsPerCta, nvfp4_sm100_tc::kMaxCtas,
              Config::kASubTiles);
  const char* swizzle = Config::kTmaSwizzle == CU_TENSOR_MAP_SWIZZLE_128B  ? "128B"
                        : Config::kTmaSwizzle == CU_TENSOR_MAP_SWIZZLE_64B ? "64B"
                        : Config::kTmaSwizzle == CU_TENSOR_MAP_SWIZZLE_32B ? "32B"
                                                                           : "none";
  std::printf("\"tma\": {\"a\": {\"inner_bytes\": %d, \"rows\": %d, \"swizzle\": \"%s\", \"dst_offset\": %d}, "
              "\"b\": {\"inner_bytes\": %d, \"rows\": %d, \"swizzle\": \"%s\", \"dst_offset\": %d}, "
              "\"sfa\": {\"bytes\": %d, \"dst_offset\": %d}, \"sfb\": {\"bytes\": %d, \"dst_offset\": %d}},\n",
              Config::ROW_BYTES, Config::BLOCK_M, swizzle, Config::kAOffset, Config::ROW_BYTES, Config::BLOCK_N,
              swizzle, Config::kBOffset, Config::SMEM_SF_BYTES, Config::kSfaOffset, Config::SMEM_SF_BYTES,
              Config::kSfbOffset);
  std::printf("\"idesc\": %u,\n", Config::kInstrDesc);
  std::printf("\"accumulators\": [");
  for (int i = 0; i < Config::kNumAccumulators; ++i)
    std::printf("%s%u", i ? ", " : "", sm100::tmem_addr(0, 0, Config::accum_tmem_column(i)));
  std::printf("],\n\"stages\": [");
  // Descriptors with the 1024-aligned shared base at address 0: the kernel adds its real base,
  // which keeps every bit below 1024 (the swizzle phase) unchanged.
  for (int s = 0; s < Config::kStages; ++s) {
    std::printf("%s\n  {\"b_tile\": %u, \"a_tile\": %u, \"k_steps\": [", s ? "," : "", Config::b_tile(0, s),
                Config::a_tile(0, s));
    for (int j = 0; j < Config::kKSteps; ++j) {
      std::printf("%s{\"desc_a\": %llu, \"desc_b\": %llu, \"sfb_cp_desc\": %llu, \"sfa_cp_desc\": %llu, "
                  "\"tmem_sfa\": %u, \"sfa_cp_tmem\": %u, \"tmem_sfb_by_m_sub\": [%u, %u]}",
                  j ? ", " : "",
                  // the MMA's A operand is a slice of B, its B operand a slice of A (swap AB)
                  (unsigned long long)Config::b_desc(0, s, j), (unsigned long long)Config::a_desc(0, s, j),
                  (unsigned long long)sm100::make_smem_desc_scales(Config::sfb_chunk(0, s, j)),
                  (unsigned long long)sm100::make_smem_desc_scales(Config::sfa_chunk(0, s, j)),
                  sm100::tmem_addr(0, 0, Config::sfb_tmem_column(s, j)),
                  sm100::tmem_addr(0, 0, Config::sfa_tmem_column(s, j, 0)),
                  sm100::tmem_addr(0, 0, Config::sfa_tmem_column(s, j, 0)),
                  sm100::tmem_addr(0, 0, Config::sfa_tmem_column(s, j, Config::kASubTiles - 1)));
    }
    std::printf("]}");
  }
  std::printf("],\n");
}

template <class Config>
void print_plan(int m, int n, int k, int l, int sms, int ctas, bool loads) {
  const sm100_split::SpanPlan plan = nvfp4_sm100_tc::make_plan<Config>(m, n, k, l, ctas);
  const nvfp4_sm100_tc::Problem p = nvfp4_sm100_tc::make_problem<Config>(m, n, k, l);
  std::printf("\"problem\": {\"m\": %d, \"n\": %d, \"k\": %d, \"l\": %d, \"sms\": %d, \"unsupported\": %s},\n", m, n,
              k, l, sms, nvfp4_gemm_unsupported(m, n, k, l) ? "true" : "false");
  std::printf("\"plan\": {\"tiles\": %d, \"k_tiles\": %d, \"ctas\": %d},\n\"ctas\": [", plan.tiles, plan.k_tiles,
              plan.ctas);
  for (int cta = 0; cta < plan.ctas; ++cta) {
    std::printf("%s\n  {\"segments\": [", cta ? "," : "");
    int stage = 0;
    for (int i = 0; i < plan.num_segments(cta); ++i) {
      const sm100_split::Segment seg = plan.segment(cta, i);
      const nvfp4_sm100_tc::TileCoord t = nvfp4_sm100_tc::tile_coord(p, seg.tile);
      std::printf("%s{\"tile\": %d, \"batch\": %d, \"m_block\": %d, \"n_block\": %d, \"m_sub\": %d, "
                  "\"k_begin\": %d, \"k_end\": %d, \"owner\": %s, \"reduce\": %s, \"first_contributor\": %d",
                  i ? ", " : "", seg.tile, t.batch, t.m_block, t.n_block, t.m_block % Config::kASubTiles,
                  seg.k_begin, seg.k_end,
                  seg.owner ? "true" : "false", seg.reduce ? "true" : "false",
                  seg.reduce ? plan.first_contributor(seg.tile) : cta);
      if (loads) {
        std::printf(", \"loads\": [");
        for (int kt = seg.k_begin; kt < seg.k_end; ++kt) {
          const nvfp4_sm100_tc::StageLoad ld = nvfp4_sm100_tc::stage_load<Config>(p, seg.tile, kt);
          std::printf("%s[%d, %d, %d, %d, %lld, %lld]", kt > seg.k_begin ? ", " : "", stage, ld.x, ld.a_row, ld.b_row,
                      (long long)ld.sfa_offset, (long long)ld.sfb_offset);
          stage = stage + 1 == Config::kStages ? 0 : stage + 1;
        }
        std::printf("]");
      } else {
        stage = (stage + seg.k_end - seg.k_begin) % Config::kStages;
      }
      std::printf("}");
    }
    std::printf("]}");
  }
  std::printf("]\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s M N K L SMS [loads]\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]), l = std::atoi(argv[4]),
            sms = std::atoi(argv[5]);
  const bool loads = argc > 6 && std::strcmp(argv[6], "loads") == 0;
  std::printf("{\n\"load_fields\": [\"stage\", \"x\", \"a_row\", \"b_row\", \"sfa_offset\", \"sfb_offset\"],\n");
  if (nvfp4_gemm_unsupported(m, n, k, l) != nullptr) {
    print_config<nvfp4_sm100_tc::GeneralConfig>(nvfp4_sm100_tc::kTile128);
    std::printf("\"problem\": {\"m\": %d, \"n\": %d, \"k\": %d, \"l\": %d, \"sms\": %d, \"unsupported\": true}\n}\n",
                m, n, k, l, sms);
    return 0;
  }
  const nvfp4_sm100_tc::LaunchChoice choice = nvfp4_sm100_tc::choose_launch(m, n, k, l, sms);
  nvfp4_sm100_tc::with_config(choice.config, [&](auto config) {
    using Config = decltype(config);
    print_config<Config>(choice.config);
    print_plan<Config>(m, n, k, l, sms, choice.ctas, loads);
    return 0;
  });
  std::printf("}\n");
  return 0;
}
