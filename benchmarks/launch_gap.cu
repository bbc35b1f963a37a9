// How much of a back-to-back launch's time is launch overhead, per launch configuration: every CTA
// spins for a fixed time on the global timer, so (time per launch - spin) is what the GPU spends
// between one launch's end and the next one's start. The host issues launches faster than they
// run, so the queue never drains. Build: nvcc -arch=sm_90a -O2 -o launch_gap benchmarks/launch_gap.cu
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void spin(unsigned long long ns) {
  const unsigned long long start = now_ns();
  while (now_ns() - start < ns) {
  }
}

__global__ void plain(unsigned long long ns) { spin(ns); }
__global__ void __cluster_dims__(2, 1, 1) clustered(unsigned long long ns) { spin(ns); }
__global__ void with_maps(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,
                          const __grid_constant__ CUtensorMap c, unsigned long long ns) {
  spin(ns + (a.opaque[0] & b.opaque[0] & c.opaque[0] & 0));
}
__global__ void __cluster_dims__(2, 1, 1) clustered_with_maps(const __grid_constant__ CUtensorMap a,
                                                              const __grid_constant__ CUtensorMap b,
                                                              const __grid_constant__ CUtensorMap c,
                                                              unsigned long long ns) {
  spin(ns + (a.opaque[0] & b.opaque[0] & c.opaque[0] & 0));
}

template <typename Launch>
float per_launch_us(Launch launch, int launches) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start), cudaEventCreate(&stop);
  for (int i = 0; i < 10; ++i) launch();
  cudaEventRecord(start);
  for (int i = 0; i < launches; ++i) launch();
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, start, stop);
  return ms * 1000.f / launches;
}

int main() {
  const unsigned long long spin_ns = 20000;
  const int smem = 210 * 1024, threads = 288, launches = 400;
  cudaFuncSetAttribute(plain, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(clustered, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(with_maps, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(clustered_with_maps, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  CUtensorMap map = {};
  struct Row {
    const char* name;
    float us;
  };
  Row rows[] = {
      {"112 CTAs, no smem", per_launch_us([&] { plain<<<112, threads>>>(spin_ns); }, launches)},
      {"112 CTAs, 210 KB smem", per_launch_us([&] { plain<<<112, threads, smem>>>(spin_ns); }, launches)},
      {"112 CTAs, 210 KB, 3 tensor maps", per_launch_us([&] { with_maps<<<112, threads, smem>>>(map, map, map, spin_ns); }, launches)},
      {"56 clusters of 2, no smem", per_launch_us([&] { clustered<<<dim3(2, 56), threads>>>(spin_ns); }, launches)},
      {"56 clusters of 2, 210 KB smem", per_launch_us([&] { clustered<<<dim3(2, 56), threads, smem>>>(spin_ns); }, launches)},
      {"56 clusters of 2, 210 KB, 3 maps", per_launch_us([&] { clustered_with_maps<<<dim3(2, 56), threads, smem>>>(map, map, map, spin_ns); }, launches)},
      {"132 CTAs, 210 KB, 3 maps", per_launch_us([&] { with_maps<<<132, threads, smem>>>(map, map, map, spin_ns); }, launches)},
  };
  const cudaError_t err = cudaDeviceSynchronize();
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("%s, spin %.1f us per CTA, %d back-to-back launches (%s)\n", prop.name, spin_ns / 1000.0, launches,
         cudaGetErrorString(err));
  for (const Row& r : rows) printf("  %-34s %7.2f us per launch, overhead %5.2f us\n", r.name, r.us, r.us - spin_ns / 1000.0);
  return err == cudaSuccess ? 0 : 1;
}
