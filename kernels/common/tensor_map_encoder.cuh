// The driver's cuTensorMapEncodeTiled, found through the runtime (no -lcuda), for the host side of the
// sm_90a and sm_100a kernels. Internal linkage: a function-local static in an inline function is one
// process-wide object shared by every loaded module with the same code (see sm90_plan.cuh).
#pragma once

#include <cuda.h>          // CUtensorMap types only
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

namespace host_common {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  if (encode == nullptr) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &status) ==
            cudaSuccess &&
        status == cudaDriverEntryPointSuccess)
      encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }
  return encode;
}

}  // namespace
}  // namespace host_common
