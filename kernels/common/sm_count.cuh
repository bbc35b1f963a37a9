// This GPU's number of SMs, for the host planners of the sm_90a and sm_100a kernels: queried once per
// loaded module (internal linkage, as in tensor_map_encoder.cuh), 0 if the query fails.
#pragma once

#include <cuda_runtime.h>

namespace host_common {
namespace {

int sm_count_cached = -1;  // a device property, not a result

int sm_count() {
  if (sm_count_cached < 0) {
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      (void)cudaGetLastError();
      sms = 0;
    }
    sm_count_cached = sms;
  }
  return sm_count_cached;
}

}  // namespace
}  // namespace host_common
