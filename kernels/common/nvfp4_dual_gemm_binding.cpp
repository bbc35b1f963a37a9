// Adapts torch tensors from GPU MODE's nvfp4_dual_gemm tuple to nvfp4_dual_gemm_launch
// (nvfp4_dual_gemm_api.h). Every check failure raises one Python ValueError naming the problem
// (std::invalid_argument, as torch_binding.cpp does for the GEMM, rather than c10::Error).
#include "nvfp4_dual_gemm_api.h"
#include "binding_checks.h"
#include "launch_error.h"

torch::Tensor nvfp4_dual_gemm(torch::Tensor a, torch::Tensor b1, torch::Tensor b2, torch::Tensor sfa,
                              torch::Tensor sfb1, torch::Tensor sfb2, torch::Tensor c) {
  require(c.dim() == 3, "c must have shape (m, n, l), got ", c.sizes());
  const int64_t m = c.size(0), n = c.size(1), l = c.size(2);
  require(a.dim() == 3, "a must have shape (m, k/2, l), got ", a.sizes());
  const int64_t k = a.size(1) * 2;
  check_operand(a, "a", at::kFloat4_e2m1fn_x2, m, k / 2, l);
  check_operand(b1, "b1", at::kFloat4_e2m1fn_x2, n, k / 2, l);
  check_operand(b2, "b2", at::kFloat4_e2m1fn_x2, n, k / 2, l);
  check_operand(c, "c", at::kHalf, m, n, l);
  check_scales(sfa, "sfa_permuted", m, k / 16, l);
  check_scales(sfb1, "sfb1_permuted", n, k / 16, l);
  check_scales(sfb2, "sfb2_permuted", n, k / 16, l);
  require_one_gpu(c, a, b1, b2, sfa, sfb1, sfb2);
  const char* why = nvfp4_dual_gemm_unsupported(int(m), int(n), int(k), int(l));
  require(why == nullptr, "unsupported shape (m=", m, ", n=", n, ", k=", k, ", l=", l, "): ", why ? why : "");
  const Nvfp4DualGemmArgs args{static_cast<const uint8_t*>(a.data_ptr()),
                               static_cast<const uint8_t*>(b1.data_ptr()),
                               static_cast<const uint8_t*>(b2.data_ptr()),
                               static_cast<const uint8_t*>(sfa.data_ptr()),
                               static_cast<const uint8_t*>(sfb1.data_ptr()),
                               static_cast<const uint8_t*>(sfb2.data_ptr()),
                               c.data_ptr(),
                               int(m),
                               int(n),
                               int(k),
                               int(l)};
  const OnTensorsGpu on_gpu(c);
  const cudaError_t err = nvfp4_dual_gemm_launch(args);
  if (err != cudaSuccess) throw std::runtime_error(launch_failure("nvfp4_dual_gemm", err));
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("nvfp4_dual_gemm", &nvfp4_dual_gemm,
        "C = silu(A @ B1^T) * (A @ B2^T) with NVFP4 block-16 scales (GPU MODE nvfp4_dual_gemm tuple: a, b1, b2, "
        "sfa_permuted, sfb1_permuted, sfb2_permuted, c)");
}
