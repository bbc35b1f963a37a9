// Adapts torch tensors from GPU MODE's input tuple to nvfp4_gemm_launch (nvfp4_gemm_api.h).
// Every check failure raises one Python ValueError naming the problem. The checks throw plain
// std::invalid_argument (pybind11 turns it into ValueError) rather than c10::Error: on an H100 with
// torch 2.11 a TORCH_CHECK failure in this module took the whole process down instead of raising.
#include <torch/extension.h>

#include <stdexcept>
#include <string>

#include "nvfp4_gemm_api.h"
#include "binding_checks.h"
#include "launch_error.h"

torch::Tensor nvfp4_gemm(torch::Tensor a, torch::Tensor b, torch::Tensor sfa, torch::Tensor sfb,
                         torch::Tensor c) {
  require(c.dim() == 3, "c must have shape (m, n, l), got ", c.sizes());
  const int64_t m = c.size(0), n = c.size(1), l = c.size(2);
  require(a.dim() == 3, "a must have shape (m, k/2, l), got ", a.sizes());
  const int64_t k = a.size(1) * 2;
  check_operand(a, "a", at::kFloat4_e2m1fn_x2, m, k / 2, l);
  check_operand(b, "b", at::kFloat4_e2m1fn_x2, n, k / 2, l);
  check_operand(c, "c", at::kHalf, m, n, l);
  check_scales(sfa, "sfa_permuted", m, k / 16, l);
  check_scales(sfb, "sfb_permuted", n, k / 16, l);
  require_one_gpu(c, a, b, sfa, sfb);
  check_aligned(a, "a"), check_aligned(b, "b"), check_aligned(c, "c");
  check_aligned(sfa, "sfa_permuted"), check_aligned(sfb, "sfb_permuted");
  const char* why = nvfp4_gemm_unsupported(int(m), int(n), int(k), int(l));
  require(why == nullptr, "unsupported shape (m=", m, ", n=", n, ", k=", k, ", l=", l, "): ", why ? why : "");
  const Nvfp4GemmArgs args{static_cast<const uint8_t*>(a.data_ptr()),
                           static_cast<const uint8_t*>(b.data_ptr()),
                           static_cast<const uint8_t*>(sfa.data_ptr()),
                           static_cast<const uint8_t*>(sfb.data_ptr()),
                           c.data_ptr(),
                           int(m),
                           int(n),
                           int(k),
                           int(l)};
  const OnTensorsGpu on_gpu(c);
  const cudaError_t err = nvfp4_gemm_launch(args);
  if (err != cudaSuccess) throw std::runtime_error(launch_failure("nvfp4_gemm", err));
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("nvfp4_gemm", &nvfp4_gemm,
        "C = A @ B^T with NVFP4 block-16 scales (GPU MODE nvfp4_gemm tuple order: a, b, "
        "sfa_permuted, sfb_permuted, c)");
}
