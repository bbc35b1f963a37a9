// Adapts GPU MODE's nvfp4_group_gemm lists of tensors to nvfp4_group_gemm_launch
// (nvfp4_group_gemm_api.h). Every check failure raises one Python ValueError naming the group.
#include "nvfp4_group_gemm_api.h"
#include "binding_checks.h"
#include "launch_error.h"

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
    require_one_gpu(c[0], a[g], b[g], sfa[g], sfb[g], c[g]);
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
  const OnTensorsGpu on_gpu(c[0]);
  const cudaError_t err = nvfp4_group_gemm_launch(Nvfp4GroupGemmArgs{problems.data(), int(groups)});
  if (err != cudaSuccess) throw std::runtime_error(launch_failure("nvfp4_group_gemm", err));
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("nvfp4_group_gemm", &nvfp4_group_gemm,
        "C_g = A_g @ B_g^T per group with NVFP4 block-16 scales (lists: a, b, sfa_permuted, sfb_permuted, c)");
}
