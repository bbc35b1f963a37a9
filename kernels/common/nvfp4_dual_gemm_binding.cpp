// Adapts torch tensors from GPU MODE's nvfp4_dual_gemm tuple to nvfp4_dual_gemm_launch
// (nvfp4_dual_gemm_api.h). Every check failure raises one Python ValueError naming the problem
// (std::invalid_argument, as torch_binding.cpp does for the GEMM, rather than c10::Error).
#include <torch/extension.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "nvfp4_dual_gemm_api.h"

namespace {

std::string to_text(const char* text) { return text; }
std::string to_text(const std::string& text) { return text; }
std::string to_text(int64_t value) { return std::to_string(value); }
std::string to_text(int value) { return std::to_string(value); }
std::string to_text(at::ScalarType dtype) { return c10::toString(dtype); }
std::string to_text(const c10::Device& device) { return device.str(); }
std::string to_text(at::IntArrayRef values) {
  std::string text = "(";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + ")";
}

template <typename... Parts>
void require(bool ok, const Parts&... parts) {
  if (ok) return;
  std::string message;
  ((message += to_text(parts)), ...);
  throw std::invalid_argument(message);
}

void check_operand(const torch::Tensor& t, const char* name, at::ScalarType dtype, int64_t rows,
                   int64_t cols, int64_t batch) {
  require(t.is_cuda(), name, " must be a CUDA tensor, got ", t.device());
  require(t.scalar_type() == dtype, name, " must be ", dtype, ", got ", t.scalar_type());
  require(t.dim() == 3 && t.size(0) == rows && t.size(1) == cols && t.size(2) == batch, name,
          " must have shape (", rows, ", ", cols, ", ", batch, "), got ", t.sizes());
  require(t.stride(1) == 1 && t.stride(0) == cols && (batch == 1 || t.stride(2) == rows * cols),
          name, " must be K-major with the batch outermost (strides (", cols, ", 1, ", rows * cols,
          ")), got ", t.strides());
}

void check_scales(const torch::Tensor& t, const char* name, int64_t rows, int64_t sf_k,
                  int64_t batch) {
  const int64_t rest_rows = (rows + 127) / 128, rest_k = (sf_k + 3) / 4;
  require(t.is_cuda(), name, " must be a CUDA tensor, got ", t.device());
  require(t.scalar_type() == at::kFloat8_e4m3fn, name, " must be float8_e4m3fn, got ",
          t.scalar_type());
  require(t.dim() == 6 && t.size(0) == 32 && t.size(1) == 4 && t.size(2) == rest_rows &&
              t.size(3) == 4 && t.size(4) == rest_k && t.size(5) == batch,
          name, " must be the permuted (32, 4, ", rest_rows, ", 4, ", rest_k, ", ", batch,
          ") scale tensor, got ", t.sizes());
  const std::vector<int64_t> expected = {16, 4, rest_k * 512, 1, 512, rest_rows * rest_k * 512};
  for (int d = 0; d < 6; ++d) {
    require(t.size(d) == 1 || t.stride(d) == expected[d], name,
            " must keep generate_input's permuted storage (strides ", at::IntArrayRef(expected),
            "), got ", t.strides());
  }
}

}  // namespace

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
  require(a.get_device() == c.get_device() && b1.get_device() == c.get_device() &&
              b2.get_device() == c.get_device(),
          "all operands must be on one GPU");
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
  const cudaError_t err = nvfp4_dual_gemm_launch(args);
  if (err != cudaSuccess) throw std::runtime_error(std::string("nvfp4_dual_gemm launch failed: ") + cudaGetErrorString(err));
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("nvfp4_dual_gemm", &nvfp4_dual_gemm,
        "C = silu(A @ B1^T) * (A @ B2^T) with NVFP4 block-16 scales (GPU MODE nvfp4_dual_gemm tuple: a, b1, b2, "
        "sfa_permuted, sfb1_permuted, sfb2_permuted, c)");
}
