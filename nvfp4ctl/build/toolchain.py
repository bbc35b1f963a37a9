"""The tools a build needs, found without importing torch (importing it costs ~2.5 s on a cached rebuild).

nvcc from $CUDA_HOME / $CUDA_PATH, the PATH or /usr/local/cuda; cuobjdump and nvdisasm from the
PATH, the toolkit, or the pip wheels nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm (binaries under
site-packages/nvidia/cu*/bin); CUTLASS headers from the nvidia-cutlass wheel
(cutlass_library/source/...), looked up only on demand.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from nvfp4ctl.errors import UsageError

NVCC_MISSING = "nvcc not found: install the CUDA toolkit (13.0) or set CUDA_HOME"
SASS_TOOLS_HINT = "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm"
CUTLASS_MISSING = "the kernel includes CUTLASS/CuTe headers but the nvidia-cutlass wheel is not installed (pip install nvidia-cutlass)"


def _env_cuda_home() -> Path | None:
    value = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    return Path(value) if value else None


DEFAULT_CUDA_HOME = Path("/usr/local/cuda")  # where the toolkit installs itself; torch's last resort too


@lru_cache(maxsize=1)
def nvcc_path() -> Path:
    """$CUDA_HOME/$CUDA_PATH, else the PATH, else /usr/local/cuda, as torch's cpp_extension looks (a
    toolkit installed without its bin/ on the PATH was 'not found' here while torch would build with it)."""
    home = _env_cuda_home()
    if home is not None and (home / "bin" / "nvcc").is_file():
        return home / "bin" / "nvcc"
    found = shutil.which("nvcc")
    if found is not None:
        return Path(found)
    if (DEFAULT_CUDA_HOME / "bin" / "nvcc").is_file():
        return DEFAULT_CUDA_HOME / "bin" / "nvcc"
    raise UsageError(NVCC_MISSING)


def _run(args: list[str], timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"could not run {args[0]}: {error}") from error


@lru_cache(maxsize=1)
def nvcc_version() -> str:
    """The full `nvcc --version` banner: part of every cache key (a new compiler means a new build)."""
    done = _run([str(nvcc_path()), "--version"])
    if done.returncode != 0:
        raise UsageError(f"{nvcc_path()} --version failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def nvcc_release() -> str:
    """"13.0" from the banner, for messages."""
    match = re.search(r"release (\d+\.\d+)", nvcc_version())
    return match.group(1) if match else "?"


@lru_cache(maxsize=1)
def cuda_home() -> Path:
    """The toolkit root. nvcc on the PATH may be a wrapper script (/usr/local/bin/nvcc here), so ask
    nvcc itself: its dry run prints `_HERE_=<toolkit>/bin`."""
    home = _env_cuda_home()
    if home is not None and (home / "bin" / "nvcc").is_file():
        return home
    done = _run([str(nvcc_path()), "--dryrun", "-c", "-x", "cu", os.devnull, "-o", os.devnull])
    match = re.search(r"^#\$ _HERE_=(.+)$", done.stdout + done.stderr, re.MULTILINE)
    if match:
        return Path(match.group(1).strip()).parent
    return nvcc_path().resolve().parent.parent


@dataclass(frozen=True)
class TorchBuild:
    version: str  # "2.13.0+cpu", "2.11.0+cu130"
    cuda: str | None  # "13.0", or None for a CPU-only build

    @property
    def has_cuda(self) -> bool:
        return self.cuda is not None


@lru_cache(maxsize=1)
def torch_build() -> TorchBuild:
    """torch's version and CUDA version read from torch/version.py without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("torch is not installed (pip install torch)")
    version_file = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    namespace: dict[str, object] = {}
    exec(compile(version_file.read_text(), str(version_file), "exec"), namespace)  # a generated constants file
    cuda = namespace.get("cuda")
    return TorchBuild(version=str(namespace.get("__version__")), cuda=str(cuda) if cuda else None)


def python_abi() -> str:
    """Extension modules are per Python version and platform."""
    return f"cp{sys.version_info.major}{sys.version_info.minor}-{sys.platform}"


def _wheel_bin_dirs() -> list[Path]:
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    dirs: list[Path] = []
    for root in spec.submodule_search_locations:
        dirs.extend(sorted(Path(root).glob("cu*/bin"), reverse=True))  # cu13 before cu12
        dirs.extend(sorted(Path(root).glob("cuda_*/bin")))
    return dirs


@lru_cache(maxsize=None)
def find_tool(name: str) -> Path | None:
    """A CUDA binary utility: the PATH, then the toolkit's bin, then the pip wheels."""
    found = shutil.which(name)
    if found:
        return Path(found)
    candidates = [_env_cuda_home(), Path("/usr/local/cuda")]
    try:
        candidates.append(cuda_home())
    except UsageError:
        pass
    for folder in [*(home / "bin" for home in candidates if home is not None), *_wheel_bin_dirs()]:
        if (folder / name).is_file() and os.access(folder / name, os.X_OK):
            return folder / name
    return None


def sass_tools() -> tuple[Path, Path] | None:
    """(cuobjdump, nvdisasm), or None when either is missing; cuobjdump needs nvdisasm for SASS."""
    cuobjdump, nvdisasm = find_tool("cuobjdump"), find_tool("nvdisasm")
    return (cuobjdump, nvdisasm) if cuobjdump and nvdisasm else None


@lru_cache(maxsize=1)
def cutlass_root() -> Path | None:
    """cutlass_library's folder, located without importing it (the import is slow and the wheel
    may be absent on GPU machines that only build the Hopper kernel)."""
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def cutlass_include_dirs() -> list[Path]:
    root = cutlass_root()
    if root is None or not (root / "source" / "include" / "cute").is_dir():
        raise UsageError(CUTLASS_MISSING)
    return [root / "source" / "include", root / "source" / "tools" / "util" / "include"]


def cutlass_version() -> str:
    """The wheel's version: CUTLASS headers are too many to hash, so a new wheel means a new build."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nvidia-cutlass")
    except PackageNotFoundError:
        return str(cutlass_root())
