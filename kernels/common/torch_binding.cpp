// Adapts torch tensors from GPU MODE's input tuple to nvfp4_gemm_launch (nvfp4_gemm_api.h).
// Every check failure raises one Python RuntimeError naming the problem.
#include <torch/extension.h>

#include "nvfp4_gemm_api.h"

namespace {

void check_operand(const torch::Tensor& t, const char* name, at::ScalarType dtype, int64_t rows,
                   int64_t cols, int64_t batch) {
  TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor, got ", t.device());
  TORCH_CHECK(t.scalar_type() == dtype, name, " must be ", dtype, ", got ", t.scalar_type());
  TORCH_CHECK(t.dim() == 3 && t.size(0) == rows && t.size(1) == cols && t.size(2) == batch, name,
              " must have shape (", rows, ", ", cols, ", ", batch, "), got ", t.sizes());
  TORCH_CHECK(t.stride(1) == 1 && t.stride(0) == cols && (batch == 1 || t.stride(2) == rows * cols),
              name, " must be K-major with the batch outermost (strides (", cols, ", 1, ",
              rows * cols, ")), got ", t.strides());
}

void check_scales(const torch::Tensor& t, const char* name, int64_t rows, int64_t sf_k,
                  int64_t batch) {
  const int64_t rest_rows = (rows + 127) / 128, rest_k = (sf_k + 3) / 4;
  TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor, got ", t.device());
  TORCH_CHECK(t.scalar_type() == at::kFloat8_e4m3fn, name, " must be float8_e4m3fn, got ",
              t.scalar_type());
  TORCH_CHECK(t.dim() == 6 && t.size(0) == 32 && t.size(1) == 4 && t.size(2) == rest_rows &&
                  t.size(3) == 4 && t.size(4) == rest_k && t.size(5) == batch,
              name, " must be the permuted (32, 4, ", rest_rows, ", 4, ", rest_k, ", ", batch,
              ") scale tensor, got ", t.sizes());
  const std::vector<int64_t> expected = {16, 4, rest_k * 512, 1, 512, rest_rows * rest_k * 512};
  for (int d = 0; d < 6; ++d) {
    TORCH_CHECK(t.size(d) == 1 || t.stride(d) == expected[d], name,
                " must keep generate_input's permuted storage (strides ", at::IntArrayRef(expected),
                "), got ", t.strides());
  }
}

}  // namespace

torch::Tensor nvfp4_gemm(torch::Tensor a, torch::Tensor b, torch::Tensor sfa, torch::Tensor sfb,
                         torch::Tensor c) {
  TORCH_CHECK(c.dim() == 3, "c must have shape (m, n, l), got ", c.sizes());
  const int64_t m = c.size(0), n = c.size(1), l = c.size(2);
  TORCH_CHECK(a.dim() == 3, "a must have shape (m, k/2, l), got ", a.sizes());
  const int64_t k = a.size(1) * 2;
  check_operand(a, "a", at::kFloat4_e2m1fn_x2, m, k / 2, l);
  check_operand(b, "b", at::kFloat4_e2m1fn_x2, n, k / 2, l);
  check_operand(c, "c", at::kHalf, m, n, l);
  check_scales(sfa, "sfa_permuted", m, k / 16, l);
  check_scales(sfb, "sfb_permuted", n, k / 16, l);
  TORCH_CHECK(a.get_device() == c.get_device() && b.get_device() == c.get_device(),
              "all operands must be on one GPU");
  if (const char* why = nvfp4_gemm_unsupported(int(m), int(n), int(k), int(l))) {
    TORCH_CHECK(false, "unsupported shape (m=", m, ", n=", n, ", k=", k, ", l=", l, "): ", why);
  }
  const Nvfp4GemmArgs args{static_cast<const uint8_t*>(a.data_ptr()),
                           static_cast<const uint8_t*>(b.data_ptr()),
                           static_cast<const uint8_t*>(sfa.data_ptr()),
                           static_cast<const uint8_t*>(sfb.data_ptr()),
                           c.data_ptr(),
                           int(m),
                           int(n),
                           int(k),
                           int(l)};
  const cudaError_t err = nvfp4_gemm_launch(args);
  TORCH_CHECK(err == cudaSuccess, "nvfp4_gemm launch failed: ", cudaGetErrorString(err));
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("nvfp4_gemm", &nvfp4_gemm,
        "C = A @ B^T with NVFP4 block-16 scales (GPU MODE nvfp4_gemm tuple order: a, b, "
        "sfa_permuted, sfb_permuted, c)");
}
