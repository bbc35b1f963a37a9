// Adapts GPU MODE's nvfp4_group_gemm lists of tensors to nvfp4_group_gemm_launch
// (nvfp4_group_gemm_api.h). Every check failure raises one Python ValueError naming the group.
#include <torch/extension.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "nvfp4_group_gemm_api.h"

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

std::vector<torch::Tensor> nvfp4_group_gemm(std::vector<torch::Tensor> a, std::vector<torch::Tensor> b,
                                            std::vector<torch::Tensor> sfa, std::vector<torch::Tensor> sfb,
                                            std::vector<torch::Tensor> c) {
  const size_t groups = c.size();
  require(groups > 0, "no groups");
  require(a.size() == groups && b.size() == groups && sfa.size() == groups && sfb.size() == groups,
          "a, b, sfa, sfb and c must list the same number of groups");
  std::vector<Nvfp4GroupProblem> problems;
  problems.reserve(groups);
  for (size_t g = 0; g < groups; ++g) {
    const std::string at_group = "group " + std::to_string(g + 1) + ": ";
    require(c[g].dim() == 3 && c[g].size(2) == 1, at_group, "c must have shape (m, n, 1), got ", c[g].sizes());
    require(a[g].dim() == 3, at_group, "a must have shape (m, k/2, 1), got ", a[g].sizes());
    const int64_t m = c[g].size(0), n = c[g].size(1), k = a[g].size(1) * 2;
    check_operand(a[g], (at_group + "a").c_str(), at::kFloat4_e2m1fn_x2, m, k / 2, 1);
    check_operand(b[g], (at_group + "b").c_str(), at::kFloat4_e2m1fn_x2, n, k / 2, 1);
    check_operand(c[g], (at_group + "c").c_str(), at::kHalf, m, n, 1);
    check_scales(sfa[g], (at_group + "sfa_permuted").c_str(), m, k / 16, 1);
    check_scales(sfb[g], (at_group + "sfb_permuted").c_str(), n, k / 16, 1);
    problems.push_back(Nvfp4GroupProblem{static_cast<const uint8_t*>(a[g].data_ptr()),
                                         static_cast<const uint8_t*>(b[g].data_ptr()),
                                         static_cast<const uint8_t*>(sfa[g].data_ptr()),
                                         static_cast<const uint8_t*>(sfb[g].data_ptr()),
                                         c[g].data_ptr(),
                                         int(m),
                                         int(n),
                                         int(k)});
  }
  const char* why = nvfp4_group_gemm_unsupported(problems.data(), int(groups));
  require(why == nullptr, "unsupported groups: ", why ? why : "");
  const cudaError_t err = nvfp4_group_gemm_launch(Nvfp4GroupGemmArgs{problems.data(), int(groups)});
  if (err != cudaSuccess) throw std::runtime_error(std::string("nvfp4_group_gemm launch failed: ") + cudaGetErrorString(err));
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("nvfp4_group_gemm", &nvfp4_group_gemm,
        "C_g = A_g @ B_g^T per group with NVFP4 block-16 scales (lists: a, b, sfa_permuted, sfb_permuted, c)");
}
