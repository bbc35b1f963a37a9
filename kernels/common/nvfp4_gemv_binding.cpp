// Adapts torch tensors from GPU MODE's nvfp4_gemv tuple to nvfp4_gemv_launch (nvfp4_gemv_api.h).
// Every check failure raises one Python ValueError naming the problem (std::invalid_argument).
#include "nvfp4_gemv_api.h"
#include "binding_checks.h"
#include "launch_error.h"

constexpr int64_t kPaddedRows = 128;  // GPU MODE pads b (and its scales) to 128 rows

torch::Tensor nvfp4_gemv(torch::Tensor a, torch::Tensor b, torch::Tensor sfa, torch::Tensor sfb,
                         torch::Tensor c) {
  require(c.dim() == 3 && c.size(1) == 1, "c must have shape (m, 1, l), got ", c.sizes());
  const int64_t m = c.size(0), l = c.size(2);
  require(a.dim() == 3, "a must have shape (m, k/2, l), got ", a.sizes());
  const int64_t k = a.size(1) * 2;
  check_operand(a, "a", at::kFloat4_e2m1fn_x2, m, k / 2, l);
  check_operand(b, "b", at::kFloat4_e2m1fn_x2, kPaddedRows, k / 2, l);
  require(c.is_cuda() && c.scalar_type() == at::kHalf, "c must be a CUDA float16 tensor");
  require(c.stride(0) == 1 && (l == 1 || c.stride(2) == m), "c must be (m, 1, l) with strides (1, *, m), got ",
          c.strides());
  check_scales(sfa, "sfa_permuted", m, k / 16, l);
  check_scales(sfb, "sfb_permuted", kPaddedRows, k / 16, l);
  require_one_gpu(c, a, b, sfa, sfb);
  const char* why = nvfp4_gemv_unsupported(int(m), int(k), int(l));
  require(why == nullptr, "unsupported shape (m=", m, ", k=", k, ", l=", l, "): ", why ? why : "");
  const Nvfp4GemvArgs args{static_cast<const uint8_t*>(a.data_ptr()),
                           static_cast<const uint8_t*>(b.data_ptr()),
                           static_cast<const uint8_t*>(sfa.data_ptr()),
                           static_cast<const uint8_t*>(sfb.data_ptr()),
                           c.data_ptr(),
                           int(m),
                           int(k),
                           int(l)};
  const OnTensorsGpu on_gpu(c);
  const cudaError_t err = nvfp4_gemv_launch(args);
  if (err != cudaSuccess) throw std::runtime_error(launch_failure("nvfp4_gemv", err));
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("nvfp4_gemv", &nvfp4_gemv,
        "c = A @ b with NVFP4 block-16 scales (GPU MODE nvfp4_gemv tuple: a, b, sfa_permuted, sfb_permuted, c)");
}
