"""Kernel builds: cpp_extension + ninja into a content-keyed cache, ptxas and SASS report."""

from nvfp4ctl.build.builder import build_kernel
from nvfp4ctl.build.compile import CompileError
from nvfp4ctl.build.loader import load_kernel_module
from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck

__all__ = ["BuildReport", "CompileError", "FunctionUsage", "TensorOpCheck", "build_kernel", "load_kernel_module"]
