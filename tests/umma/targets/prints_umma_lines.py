"""A check target that answers correctly (kernels/torch_dequant) and prints the `nvfp4ctl:umma` lines
a tcgen05 kernel would print under its debug macro (docs/byo_kernel.md): the MMAs of output tile
(0, 0) of a 128x128 tile, K tile 256, 128-byte swizzle, A at shared 0x400, B at 0x4400.
UMMA_LINES_BUG=k_advance prints the same lines without the K-step advance of desc_a; acc_reset clears
the accumulator (acc=0) at each K tile's first MMA; kt1_idesc prints N=64 in K tile 1; kt1_desc advances
desc_a by 16 B a K step in K tile 1. UMMA_LINES_LAUNCH_K=1 names the launch's K in its config line
(launch_k=512), so that each test case's launch prints a config line of its own."""

import importlib.util
import os
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "torch_dequant_submission", Path(__file__).resolve().parents[3] / "kernels" / "torch_dequant" / "submission.py")
_dequant = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_dequant)

IDESC = 0x08200480  # kind::mxf4nvf4, E2M1 x E2M1, K-major, N=128, UE4M3, M=128
SMEM_HI = 0x40004040  # SWIZZLE_128B, version 1, SBO 1024 B (upper 32 bits of the descriptor)
LBO = 1 << 16  # 16 B, unused by swizzled K-major operands


def _desc(address):
    return (SMEM_HI << 32) | LBO | (address >> 4)


def _print_lines(k):
    bug = os.environ.get("UMMA_LINES_BUG", "")
    launch = f" launch_k={k}" if os.environ.get("UMMA_LINES_LAUNCH_K") else ""
    print(f"nvfp4ctl:umma config mma=128,128,64 swizzle=128B block_k=256{launch}")
    for step in range(k // 64):
        within = step % 4  # K step inside the 256-deep K tile: the start moves 32 bytes per step
        a_advance = 0 if bug == "k_advance" else 32 * within
        k_tile = step // 4
        if bug == "kt1_desc" and k_tile == 1:
            a_advance = 16 * within
        idesc = 0x08100480 if bug == "kt1_idesc" and k_tile == 1 else IDESC
        acc = int(within > 0) if bug == "acc_reset" else int(step > 0)
        print(f"nvfp4ctl:umma k={step} idesc=0x{idesc:08x} desc_a=0x{_desc(0x400 + a_advance):016x}"
              f" desc_b=0x{_desc(0x4400 + 32 * within):016x} tmem_d=0x00000000"
              f" tmem_sfa=0x{128 + 4 * within:08x} tmem_sfb=0x{144 + 4 * within:08x} acc={acc}")


def custom_kernel(data):
    _print_lines(2 * data[0].shape[1])
    return _dequant.custom_kernel(data)
