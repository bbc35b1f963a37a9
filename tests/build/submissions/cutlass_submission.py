# Test fixture (written for nvfp4ctl): the structure of public GPU MODE nvfp4_gemm submissions that
# instantiate CUTLASS's sm100 block-scaled GEMM inside a load_inline string: CUTLASS headers from a
# checkout named in extra_include_paths (absent here: nvfp4ctl falls back to the nvidia-cutlass
# wheel or $CUTLASS_PATH), the arch in TORCH_CUDA_ARCH_LIST, the kernel source split in two strings.
import os

import torch
from torch.utils.cpp_extension import load_inline

os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"

CUTLASS_INCLUDES = ["/opt/cutlass/include", "/opt/cutlass/tools/util/include"]

GEMM_TYPES = r"""
#include <torch/extension.h>
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

using namespace cute;
using ElementA = cutlass::nv_float4_t<cutlass::float_e2m1_t>;
using ElementB = cutlass::nv_float4_t<cutlass::float_e2m1_t>;
using TileShape = Shape<_128, _128, _256>;
using ClusterShape = Shape<_1, _1, _1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm100, cutlass::arch::OpClassBlockScaledTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor, 8,
    cutlass::half_t, cutlass::layout::RowMajor, 8, cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;
using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm100, cutlass::arch::OpClassBlockScaledTensorOp, ElementA, cutlass::layout::RowMajor, 32,
    ElementB, cutlass::layout::ColumnMajor, 32, float, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::collective::KernelScheduleAuto>::CollectiveOp;
using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue, void>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
using ScaleConfig = typename CollectiveMainloop::Sm1xxBlkScaledConfig;
"""

GEMM_RUN = r"""
torch::Tensor nvfp4_gemm(torch::Tensor a, torch::Tensor b, torch::Tensor sfa, torch::Tensor sfb, torch::Tensor c) {
  const int m = c.size(0), n = c.size(1), k = a.size(1) * 2, l = 1;
  const auto problem = make_shape(m, n, k, l);
  typename Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGemm, {m, n, k, l},
      {reinterpret_cast<const cutlass::float_e2m1_t*>(a.data_ptr()),
       cutlass::make_cute_packed_stride(typename GemmKernel::StrideA{}, make_shape(m, k, l)),
       reinterpret_cast<const cutlass::float_e2m1_t*>(b.data_ptr()),
       cutlass::make_cute_packed_stride(typename GemmKernel::StrideB{}, make_shape(n, k, l)),
       reinterpret_cast<const cutlass::float_ue4m3_t*>(sfa.data_ptr()), ScaleConfig::tile_atom_to_shape_SFA(problem),
       reinterpret_cast<const cutlass::float_ue4m3_t*>(sfb.data_ptr()), ScaleConfig::tile_atom_to_shape_SFB(problem)},
      {{1.0f, 0.0f}, nullptr, cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, make_shape(m, n, l)),
       reinterpret_cast<cutlass::half_t*>(c.data_ptr()),
       cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, make_shape(m, n, l))}};
  Gemm gemm;
  TORCH_CHECK(gemm.can_implement(arguments) == cutlass::Status::kSuccess, "shape not supported");
  TORCH_CHECK(gemm.initialize(arguments, nullptr) == cutlass::Status::kSuccess, "initialize failed");
  TORCH_CHECK(gemm.run() == cutlass::Status::kSuccess, "run failed");
  return c;
}
"""

_module = None


def _load():
    global _module
    if _module is None:
        _module = load_inline(
            name="nvfp4_cutlass_gemm",
            cpp_sources="torch::Tensor nvfp4_gemm(torch::Tensor a, torch::Tensor b, torch::Tensor sfa, torch::Tensor sfb, torch::Tensor c);",
            cuda_sources=GEMM_TYPES + GEMM_RUN,
            functions=["nvfp4_gemm"],
            extra_include_paths=CUTLASS_INCLUDES,
            extra_cuda_cflags=["-O3", "-std=c++17", "--expt-relaxed-constexpr"],
        )
    return _module


def custom_kernel(data):
    a, b, _sfa_ref, _sfb_ref, sfa_permuted, sfb_permuted, c = data
    return _load().nvfp4_gemm(a[:, :, 0], b[:, :, 0], sfa_permuted, sfb_permuted, c[:, :, 0])
