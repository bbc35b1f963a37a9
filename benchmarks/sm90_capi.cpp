// A torch-free C entry into an nvfp4ctl kernel, for benchmarks/sm90_kernel.py: variants (ablation
// flags) are compiled here, with no GPU, into small shared libraries that ctypes loads next to any
// torch version. The CLI's own path is kernels/common/torch_binding.cpp.
#include "nvfp4_gemm_api.h"

extern "C" const char* nvfp4_capi_unsupported(int m, int n, int k, int l) {
  return nvfp4_gemm_unsupported(m, n, k, l);
}

extern "C" int nvfp4_capi_launch(const void* a, const void* b, const void* sfa, const void* sfb, void* c,
                                 int m, int n, int k, int l) {
  const Nvfp4GemmArgs args{static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b),
                           static_cast<const uint8_t*>(sfa), static_cast<const uint8_t*>(sfb), c, m, n, k, l};
  // an error left by earlier work is reported as 10000 + code, so it is not blamed on this launch
  const cudaError_t prior = cudaGetLastError();
  if (prior != cudaSuccess) return 10000 + static_cast<int>(prior);
  return static_cast<int>(nvfp4_gemm_launch(args));
}

extern "C" const char* nvfp4_capi_error_string(int err) {
  return cudaGetErrorString(static_cast<cudaError_t>(err));
}

int nvfp4_sm90_plan(int m, int n, int k, int l);  // kernels/sm90/sm90_launch.cuh

extern "C" int nvfp4_capi_plan(int m, int n, int k, int l) { return nvfp4_sm90_plan(m, n, k, l); }

#if NVFP4_SM90_TIMELINE  // benchmarks/sm90_experiments.h (force-included)
int nvfp4_sm90_timeline(uint64_t* host, int max_ctas);  // kernels/sm90/sm90_launch.cuh

extern "C" int nvfp4_capi_timeline(uint64_t* host, int max_ctas) { return nvfp4_sm90_timeline(host, max_ctas); }
#endif
