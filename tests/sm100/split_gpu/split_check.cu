// The tcgen05 kernel's split-K plan and reduction, run on any GPU from sm_90 on (an H100 in CI's
// GPU pass): this program includes kernels/sm100/nvfp4_gemm_sm100_tc.cu for its launch plan
// (plan_ctas / make_plan: the dispatch table and general rule), its workspace and flags
// (g_partials, g_partial_epoch) and the exchange of kernels/common/sm100_split.cuh, and replaces
// only the tcgen05 main loop: a segment's "accumulator" is computed by CUDA cores from small
// integers (exact in fp32). Each shape runs on the real SM count (capped by the plan like the
// kernel), twice; both outputs must equal the host's sums bit for bit (deterministic, complete).
//
// usage: split_check [M N K L ...]   (default: every task shape); prints one line per shape, exit 1 on any failure
#include "../../../kernels/sm100/nvfp4_gemm_sm100_tc.cu"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

__host__ __device__ inline float unit_value(int tile, int k_tile, int row, int col) {
  return float(((tile * 31 + k_tile * 7 + row * 3 + col * 5) % 17) - 8);
}

// One CTA = the kernel's epilogue warpgroup (128 threads, thread = TMEM lane = row), with the
// accumulator of each segment summed here instead of read from TMEM.
template <int kRows, int kCols>
__global__ void __launch_bounds__(kRows, 1)
    split_check_kernel(sm100_split::SpanPlan plan, float* out, uint32_t epoch) {
  const int cta = blockIdx.x, row = threadIdx.x;
  const sm100_split::Exchange<kRows, kCols, nvfp4_sm100_tc::kWaitTimeoutNs> exchange{&nvfp4_sm100_tc::g_partials[0][0],
                                                     nvfp4_sm100_tc::g_partial_epoch, epoch};
  for (int s = 0; s < plan.num_segments(cta); ++s) {
    const sm100_split::Segment seg = plan.segment(cta, s);
    float pre[kCols];
    if (seg.reduce) exchange.sum_sources(exchange.wait_sources(plan, seg, cta), cta, row, pre);
#pragma unroll
    for (int col = 0; col < kCols; col += 32) {
      float v[32];
      for (int j = 0; j < 32; ++j) {
        v[j] = 0.0f;
        for (int kt = seg.k_begin; kt < seg.k_end; ++kt) v[j] += unit_value(seg.tile, kt, row, col + j);
        if (seg.reduce) v[j] += pre[col + j];
      }
      if (seg.owner) {
        for (int j = 0; j < 32; ++j) out[(int64_t(seg.tile) * kCols + col + j) * kRows + row] = v[j];
      } else {
        exchange.store(cta, row, col, v);
      }
    }
    if (!seg.owner) exchange.publish(cta, row == 0, [] { __syncthreads(); });
  }
}

template <class Config>
bool check_plan(int m, int n, int k, int l, int sms, int ctas, uint32_t& epoch) {
  constexpr int kRows = Config::BLOCK_N, kCols = Config::BLOCK_M;
  const sm100_split::SpanPlan plan = nvfp4_sm100_tc::make_plan<Config>(m, n, k, l, ctas);
  const size_t elems = size_t(plan.tiles) * kRows * kCols;
  std::vector<float> want(elems), got(elems), again(elems);
  for (int tile = 0; tile < plan.tiles; ++tile)
    for (int col = 0; col < kCols; ++col)
      for (int row = 0; row < kRows; ++row) {
        float sum = 0.0f;
        for (int kt = 0; kt < plan.k_tiles; ++kt) sum += unit_value(tile, kt, row, col);
        want[(size_t(tile) * kCols + col) * kRows + row] = sum;
      }
  float* out = nullptr;
  if (cudaMalloc(&out, elems * sizeof(float)) != cudaSuccess) return false;
  bool ok = true;
  for (std::vector<float>* result : {&got, &again}) {
    cudaMemset(out, 0xff, elems * sizeof(float));  // NaN everywhere: an unwritten tile shows
    split_check_kernel<kRows, kCols><<<plan.ctas, kRows>>>(plan, out, ++epoch);
    const cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
      std::printf("FAIL %dx%dx%dx%d: %s\n", m, n, k, l, cudaGetErrorString(err));
      cudaFree(out);
      return false;
    }
    cudaMemcpy(result->data(), out, elems * sizeof(float), cudaMemcpyDeviceToHost);
  }
  cudaFree(out);
  for (size_t i = 0; i < elems && ok; ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0 || std::memcmp(&again[i], &got[i], sizeof(float)) != 0) {
      std::printf("FAIL %dx%dx%dx%d: element %zu (tile %zu) got %g then %g, want %g\n", m, n, k, l, i,
                  i / (kRows * kCols), got[i], again[i], want[i]);
      ok = false;
    }
  }
  if (ok)
    std::printf("ok   %dx%dx%dx%d: %d CTAs on %d SMs, %d tiles of %dx%d x %d K tiles\n", m, n, k, l, plan.ctas, sms,
                plan.tiles, kRows, kCols, plan.k_tiles);
  return ok;
}

// The config and CTA count the kernel itself would launch with on this GPU.
bool check_shape(int m, int n, int k, int l, int sms, uint32_t& epoch) {
  const nvfp4_sm100_tc::LaunchChoice choice = nvfp4_sm100_tc::choose_launch(m, n, k, l, sms);
  return nvfp4_sm100_tc::with_config(choice.config, [&](auto config) {
    return check_plan<decltype(config)>(m, n, k, l, sms, choice.ctas, epoch);
  });
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    std::printf("FAIL no GPU\n");
    return 1;
  }
  std::vector<std::vector<int>> shapes = {
      {128, 7168, 16384, 1}, {128, 4096, 7168, 1}, {128, 7168, 2048, 1}, {128, 256, 256, 1},  {128, 1536, 7168, 1},
      {128, 3072, 1536, 1},  {256, 7168, 256, 1},  {256, 7168, 2048, 1}, {2304, 4608, 7168, 1}, {384, 7168, 2304, 1},
      {512, 512, 7168, 1},   {512, 4096, 512, 1},  {512, 1536, 7168, 1}, {256, 512, 1024, 3}};
  if (argc > 1) {
    shapes.clear();
    for (int i = 1; i + 3 < argc; i += 4)
      shapes.push_back({std::atoi(argv[i]), std::atoi(argv[i + 1]), std::atoi(argv[i + 2]), std::atoi(argv[i + 3])});
  }
  uint32_t epoch = 1000;
  bool ok = true;
  for (const auto& s : shapes) ok = check_shape(s[0], s[1], s[2], s[3], sms, epoch) && ok;
  return ok ? 0 : 1;
}
