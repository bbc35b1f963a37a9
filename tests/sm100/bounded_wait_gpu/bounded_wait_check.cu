// The bounded mbarrier wait of the sm_100a kernel (ptx_common::mbar_wait_or_trap, plain PTX that runs
// from sm_90 on) on a real GPU, with limits scaled down from the kernel's seconds to milliseconds:
//   legal   a wait that lasts 3/4 of the limit (another warp arrives late) finishes without a trap
//   missed  a phase that never completes traps after the limit instead of hanging
// usage: bounded_wait_check legal|missed   prints the outcome and the milliseconds it took
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "mbarrier_ptx.cuh"

constexpr uint64_t kLimitNs = 200000000ull;  // 200 ms

__global__ void wait_kernel(bool arrive_late, uint32_t* passed) {
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) ptx_common::mbar_init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx_common::mbar_wait_or_trap<kLimitNs>(&bar, 0);
    *passed = 1;
  } else if (threadIdx.x == 32 && arrive_late) {
    const uint64_t start = ptx_common::global_timer_ns();
    while (ptx_common::global_timer_ns() - start < kLimitNs * 3 / 4) __nanosleep(1000);
    ptx_common::mbar_arrive(&bar);
  }
}

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "legal") != 0 && std::strcmp(argv[1], "missed") != 0)) {
    std::fprintf(stderr, "usage: %s legal|missed\n", argv[0]);
    return 2;
  }
  const bool legal = std::strcmp(argv[1], "legal") == 0;
  uint32_t* passed = nullptr;
  if (cudaMallocManaged(&passed, sizeof(uint32_t)) != cudaSuccess) return 3;
  *passed = 0;
  const auto start = std::chrono::steady_clock::now();
  wait_kernel<<<1, 64>>>(legal, passed);
  const cudaError_t err = cudaDeviceSynchronize();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %s after %.1f ms (limit %.0f ms)\n", argv[1], err == cudaSuccess ? "finished" : cudaGetErrorName(err),
              ms, kLimitNs / 1e6);
  if (legal) return err == cudaSuccess && *passed == 1 ? 0 : 1;
  return err == cudaErrorLaunchFailure && ms >= kLimitNs / 1e6 ? 0 : 1;
}
