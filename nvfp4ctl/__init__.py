"""nvfp4ctl: build, check, benchmark and lint NVFP4 block-scaled GEMM kernels."""

__version__ = "0.1.0"
