"""Compiler flags, written once for `build` and `export` so both produce the same machine code."""

from __future__ import annotations

import os
from pathlib import Path

from nvfp4ctl.build import toolchain
from nvfp4ctl.build.arch_names import gencode_flag
from nvfp4ctl.build.sources import BuildInputs

# Flags that change the code. `-gencode` names the arch-specific target (sm_90a / sm_100a): the
# `-arch=sm_90a` shorthand also runs a plain sm_90 pass that rejects wgmma/setmaxnreg.
# torch's cpp_extension adds its own COMMON_NVCC_FLAGS on top.
# No -std: cpp_extension appends the standard its headers need where no flag starts with -std=, and that
# changes between releases (torch 2.14's ATen.h refuses C++17: "#error C++20 or later compatible compiler is
# required"). A -std here would replace it in every module build and every export's CUDA_FLAGS, whichever torch
# compiles them (the leaderboard's too). nvfp4ctl's own nvcc runs add a standard themselves: the one torch
# would append (compile.build_device_code), or OWN_STANDARD.
BASE_CUDA_FLAGS = ("-O3", "--expt-relaxed-constexpr", "-lineinfo")

# The standard of nvfp4ctl's nvcc runs that neither include a torch header nor import torch (tune's host check):
# the one torch 2.13 and 2.14 append, so the kernel compiles there as in their modules. The shipped kernels
# compile under C++17 and C++20 alike (nvcc 13.0, sm_90a and sm_100a, CUTLASS headers included).
OWN_STANDARD = "-std=c++20"

# The torch binding (.cpp) goes to the host compiler, which cpp_extension and load_inline call with no
# optimisation level (-O0) unless told: pybind11's dispatch, torch's accessors and the checks then cost
# about 10 µs more CPU per call (18 against 8 µs at -O3; H100 machine, 2026-11-27). -O1 calls within
# 0.1 µs of -O3 and compiles as fast as -O0, 4 s sooner than -O3, and a small kernel's build waits for
# its binding (benchmarks/binding_levels.py; docs/sm90_performance.md "Host cost per call").
BINDING_CFLAGS = ("-O1",)

# Environment variables the compile reads that change the code it makes, so part of every cache key: nvcc
# adds NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS to its command line and takes its host compiler from
# NVCC_CCBIN (nvcc --help, "Environment variables"); torch's cpp_extension passes CC to nvcc as -ccbin,
# compiles the binding with CXX and runs PYTORCH_NVCC in place of nvcc.
CODE_CHANGING_ENV = ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "CC", "CXX", "PYTORCH_NVCC")


def code_changing_env() -> dict[str, str]:
    """The CODE_CHANGING_ENV variables set now, with their values; empty where none is (the usual case)."""
    return {name: os.environ[name] for name in CODE_CHANGING_ENV if os.environ.get(name)}


# ptxas prints registers, shared memory, stack frame and spills per function; the code is unchanged.
REPORT_FLAGS = ("-Xptxas", "-v")


def cuda_flags(arch: str) -> list[str]:
    return [gencode_flag(arch), *BASE_CUDA_FLAGS]


def define_flags(defines: tuple[str, ...]) -> list[str]:
    """`-DNAME=VALUE` per define ("NAME=VALUE" or "NAME"): a tune candidate's knob settings."""
    return [f"-D{define}" for define in defines]


def include_dirs(inputs: BuildInputs) -> list[Path]:
    # ours first, then your kernels/common/ that is no override: a header of ours by the same name wins
    dirs = list(inputs.search)
    if inputs.needs_cutlass:
        dirs.extend(toolchain.cutlass_include_dirs())
    return dirs
