// The one line a torch binding raises when its kernel's launch fails: CUDA's text for the error,
// and for an error nvfp4ctl's kernels return on purpose, what it means there. Free of torch, so a
// host program can compile it alone (tests/sm100/host/sm100_tc_residency.cu).
#pragma once

#include <cuda_runtime.h>

#include <string>

inline std::string launch_failure(const char* function, cudaError_t err) {
  std::string line = std::string(function) + " launch failed: " + cudaGetErrorString(err);
  if (err == cudaErrorCooperativeLaunchTooLarge)  // the sm_100a kernel's residency check
    line += " (the kernel's CTAs wait for each other, so its whole grid must run at once, and this GPU cannot hold "
            "it: one CTA per SM does not fit, or the grid has more CTAs than the GPU can run together)";
  return line;
}
