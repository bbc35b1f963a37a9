"""What the child loading a submission builds with: the CUDA toolkit `nvfp4ctl build` finds, and a torch
extensions folder in nvfp4ctl's cache, each where the user set none.

torch's cpp_extension guesses CUDA_HOME from the nvcc on the PATH: a wrapper script (/usr/local/bin/nvcc) made
it /usr/local, and a load_inline then failed on cuda_runtime.h where `build` compiled the same code. Its builds
went to ~/.cache/torch_extensions, outside NVFP4CTL_CACHE."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from nvfp4ctl.errors import UsageError
from nvfp4ctl.runner.targets import SUBMISSION, TargetSpec

EXTENSIONS_VARIABLE = "TORCH_EXTENSIONS_DIR"
EXTENSIONS_FOLDER = "torch_extensions"  # in the cache folder
# torch reads the toolkit from either, CUDA_HOME first
TOOLKIT_VARIABLES = ("CUDA_HOME", "CUDA_PATH")


def submission_build_env(target: TargetSpec, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables to set in the child that loads `target`: none for a kernel (nvfp4ctl's own build sets
    them), TORCH_EXTENSIONS_DIR unless set, and CUDA_HOME, where a load_inline/load call of the submission
    may compile, unless CUDA_HOME or CUDA_PATH is set or no toolkit is found (torch then says so itself)."""
    environ = os.environ if environ is None else environ
    if target.kind != SUBMISSION:
        return {}
    from nvfp4ctl.project import cache_root

    settings = {}
    if not environ.get(EXTENSIONS_VARIABLE):
        settings[EXTENSIONS_VARIABLE] = str(cache_root() / EXTENSIONS_FOLDER / _build_folder())
    if not any(environ.get(name) for name in TOOLKIT_VARIABLES) and _compiles(target.path):
        from nvfp4ctl.build import toolchain

        try:
            settings["CUDA_HOME"] = str(toolchain.cuda_home())
        except UsageError:  # no nvcc: torch's own look fails as it did, and the child says `nvcc not found`
            pass
    return settings


def _build_folder() -> str:
    """torch's own name for its default folder's part (py311_cu130, py311_cpu), which a TORCH_EXTENSIONS_DIR it is
    given gets none of: a build of another Python or torch is not taken for this one's by its name alone."""
    from nvfp4ctl.build import toolchain

    cuda = toolchain.torch_build().cuda
    return f"py{sys.version_info.major}{sys.version_info.minor}_{'cu' + cuda.replace('.', '') if cuda else 'cpu'}"


def _compiles(path: Path) -> bool:
    """Whether the submission holds a load_inline/load call (nvcc's look-up costs a process: not for plain torch)."""
    from nvfp4ctl.build.submission_sources import find_sources

    try:
        return bool(find_sources(path).extensions)
    except UsageError:  # read as check reads it, which says what is wrong with it
        return False
