// The tcgen05 kernel's residency check, on the host without a GPU: this file includes
// kernels/sm100/nvfp4_gemm_sm100_tc.cu and prints, as JSON, what its check_resident answers for each
// (CTAs, SMs, CTAs per SM by the occupancy API, TMEM columns per CTA) given, the TMEM columns of
// each compile-time config, the wait limit, and the line the torch binding raises for the error.
// tests/sm100/test_tc_residency.py runs it.
//
// usage: sm100_tc_residency [CTAS SMS BLOCKS_PER_SM TMEM_COLUMNS]...
#include "../../../kernels/sm100/nvfp4_gemm_sm100_tc.cu"

#include "launch_error.h"

#include <cstdlib>

int main(int argc, char** argv) {
  if ((argc - 1) % 4 != 0) {
    std::fprintf(stderr, "usage: %s [CTAS SMS BLOCKS_PER_SM TMEM_COLUMNS]...\n", argv[0]);
    return 2;
  }
  std::printf("{\"checks\": [");
  for (int i = 1; i + 3 < argc; i += 4) {
    const int ctas = std::atoi(argv[i]), sms = std::atoi(argv[i + 1]), per_sm = std::atoi(argv[i + 2]),
              tmem = std::atoi(argv[i + 3]);
    std::printf("%s\n  {\"ctas\": %d, \"sms\": %d, \"blocks_per_sm\": %d, \"tmem_columns\": %d, \"capacity\": %lld, "
                "\"error\": \"%s\"}",
                i > 1 ? "," : "", ctas, sms, per_sm, tmem,
                (long long)nvfp4_sm100_tc::resident_capacity(sms, per_sm, tmem),
                cudaGetErrorName(nvfp4_sm100_tc::check_resident(ctas, sms, per_sm, tmem)));
  }
  std::printf("],\n\"tmem_columns\": {\"Tile128\": %d, \"Tile64\": %d},\n", nvfp4_sm100_tc::Tile128::kTmemColumns,
              nvfp4_sm100_tc::Tile64::kTmemColumns);
  std::printf("\"wait_timeout_ns\": %llu,\n", (unsigned long long)nvfp4_sm100_tc::kWaitTimeoutNs);
  // the binding's line, JSON-escaped (it holds no quote or backslash; checked by the test's parse)
  std::printf("\"binding_error\": \"%s\"}\n", launch_failure("nvfp4_gemm", cudaErrorCooperativeLaunchTooLarge).c_str());
  return 0;
}
