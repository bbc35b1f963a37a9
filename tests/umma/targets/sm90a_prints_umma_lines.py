"""A check target for an H100 that proves the `check --dump` plumbing with a real device printf: an
sm_90a kernel (built by load_inline) prints the `nvfp4ctl:umma` lines a tcgen05 kernel would print
under NVFP4CTL_UMMA_DUMP (the macro of docs/byo_kernel.md), for output tile (0, 0) of a 128x128 tile,
K tile 256, 128-byte swizzle, A at shared 0x400, B at 0x4400. The answer comes from torch_dequant."""

import importlib.util
from pathlib import Path

import torch
from torch.utils.cpp_extension import load_inline

_spec = importlib.util.spec_from_file_location(
    "torch_dequant_submission", Path(__file__).resolve().parents[3] / "kernels" / "torch_dequant" / "submission.py")
_dequant = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_dequant)

CUDA_SRC = r"""
#include <cstdint>
#include <cstdio>
#include <torch/extension.h>

#define NVFP4CTL_UMMA_DUMP 1
#if NVFP4CTL_UMMA_DUMP
#define NVFP4CTL_UMMA_PRINT(k, idesc, desc_a, desc_b, tmem_d, tmem_sfa, tmem_sfb, acc)                        \
  printf("nvfp4ctl:umma k=%d idesc=0x%08x desc_a=0x%016llx desc_b=0x%016llx tmem_d=0x%08x tmem_sfa=0x%08x "   \
         "tmem_sfb=0x%08x acc=%d\n", (int)(k), (unsigned)(idesc), (unsigned long long)(desc_a),               \
         (unsigned long long)(desc_b), (unsigned)(tmem_d), (unsigned)(tmem_sfa), (unsigned)(tmem_sfb), (int)(acc))
#else
#define NVFP4CTL_UMMA_PRINT(...)
#endif

__global__ void print_umma_plan(int k_total) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const uint32_t idesc = 0x08200480u;  // kind::mxf4nvf4, E2M1 x E2M1, K-major, N=128, UE4M3, M=128
  const uint64_t high = (0x40004040ull << 32) | (1ull << 16);  // SWIZZLE_128B, version 1, SBO 1024, LBO 16
  printf("nvfp4ctl:umma config mma=128,128,64 swizzle=128B block_k=256\n");
  for (int step = 0; step < k_total / 64; ++step) {
    const unsigned within = step % 4;  // the start moves 32 bytes per K step inside a 256-deep K tile
    NVFP4CTL_UMMA_PRINT(step, idesc, high | ((0x400u + 32u * within) >> 4), high | ((0x4400u + 32u * within) >> 4),
                        0u, 128u + 4u * within, 144u + 4u * within, step > 0);
  }
}

void print_plan(int64_t k) { print_umma_plan<<<1, 32>>>(static_cast<int>(k)); }
"""
CPP_SRC = "void print_plan(int64_t k);"
_module = None


def _load():
    global _module
    if _module is None:
        _module = load_inline(name="nvfp4ctl_umma_lines_sm90a", cpp_sources=[CPP_SRC], cuda_sources=[CUDA_SRC],
                              functions=["print_plan"], extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])
    return _module


def custom_kernel(data):
    _load().print_plan(2 * data[0].shape[1])
    torch.cuda.synchronize()  # device printf reaches fd 1 at a synchronization point
    return _dequant.custom_kernel(data)
