"""Kernel builds: cpp_extension + ninja into a content-keyed cache, ptxas and SASS report.

The names below load on first use (PEP 562): importing one light module of the package, such as
submission_sources for lint, must not load the builder, the loader and the compile steps."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nvfp4ctl.build.builder import build_kernel
    from nvfp4ctl.build.compile import CompileError
    from nvfp4ctl.build.loader import load_kernel_module
    from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck

_HOMES = {"build_kernel": "builder", "CompileError": "compile", "load_kernel_module": "loader",
          "BuildReport": "report", "FunctionUsage": "report", "TensorOpCheck": "report"}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:  # a submodule (nvfp4ctl.build.cache) is found by the import system, not here
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
