"""Kernels that fail on the device itself (a spin, an illegal address, a trap), and a right answer otherwise.

The submissions beside this file fail only on the task's m = 256 tests, so one check run shows a failing
test and a passing one; the right answer comes from the project's plain-torch submission.
"""

import importlib.util
from pathlib import Path

from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
__global__ void spin_kernel(volatile int* flag) { while (flag[0] == 0) { } }
__global__ void bad_address_kernel(int* p) { p[threadIdx.x * 1000003] = 1; }
__global__ void trap_kernel() { asm volatile("trap;"); }
void spin(torch::Tensor flag) { spin_kernel<<<1, 1>>>(flag.data_ptr<int>()); }
void bad_address() { bad_address_kernel<<<1, 32>>>(reinterpret_cast<int*>(0x100)); }
void trap() { trap_kernel<<<1, 1>>>(); }
"""
device = load_inline(name="nvfp4ctl_test_device_faults", cpp_sources="void spin(torch::Tensor flag); void bad_address(); void trap();",
                     cuda_sources=_CUDA, functions=["spin", "bad_address", "trap"])

_plain = Path(__file__).resolve().parents[4] / "kernels" / "torch_dequant" / "submission.py"
_spec = importlib.util.spec_from_file_location("device_faults_plain_torch", _plain)
plain_torch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plain_torch)


def fails_at_m256(data, fault) -> object:
    if data[0].shape[0] == 256:
        fault()
        import torch

        torch.cuda.synchronize()
    return plain_torch.custom_kernel(data)
