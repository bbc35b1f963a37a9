"""The tools a build needs, found without importing torch (importing it costs ~2.5 s on a cached rebuild).

nvcc from $CUDA_HOME / $CUDA_PATH, the PATH or /usr/local/cuda; cuobjdump and nvdisasm from the
PATH, the toolkit, or the pip wheels nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm (binaries under
site-packages/nvidia/cu*/bin); CUTLASS headers where an exported submission finds them at import:
$CUTLASS_PATH, $CUTLASS_HOME, /usr/local/cutlass, then the nvidia-cutlass wheel (cutlass_library/source/...),
looked up only on demand.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from nvfp4ctl.console import get_console
from nvfp4ctl.errors import UsageError

NVCC_MISSING = "nvcc not found: install the CUDA toolkit (13.0) or set CUDA_HOME"
SASS_TOOLS_HINT = "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm"
# Where CUTLASS's headers are looked for, in order, before the wheel: by build, dump and the host proof here,
# and at import by an exported submission, whose _include_dirs() export.CUTLASS_LOOKUP writes from these
CUTLASS_ROOT_VARIABLES = ("CUTLASS_PATH", "CUTLASS_HOME")
CUTLASS_SYSTEM_ROOT = "/usr/local/cutlass"
WHEEL = "the nvidia-cutlass wheel"
# the lookup in words, as build's note on an export's _include_dirs() names it
CUTLASS_LOOKUP_ORDER = ", ".join([*(f"${name}" for name in CUTLASS_ROOT_VARIABLES), CUTLASS_SYSTEM_ROOT,
                                  f"then {WHEEL}"])
CUTLASS_MISSING = (f"the kernel includes CUTLASS/CuTe headers but none were found"
                   f" ({', '.join(f'${name}' for name in CUTLASS_ROOT_VARIABLES)}, {CUTLASS_SYSTEM_ROOT})"
                   " and the nvidia-cutlass wheel is not installed (pip install nvidia-cutlass)")


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


TORCH_MISSING = "torch is not installed (pip install torch)"


def _torch_folder() -> Path:
    """torch's package folder, found without importing torch; the UsageError TORCH_MISSING where there is none."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(TORCH_MISSING)
    return Path(next(iter(spec.submodule_search_locations)))


def require_torch() -> None:
    """The UsageError TORCH_MISSING, for a command that needs torch to say before it starts a child or
    imports torch: else its import's traceback, a child that cannot load the target, or "no CUDA GPU"
    would stand for it. Not cached, unlike torch_build: a test hides torch after another found it."""
    _torch_folder()


@lru_cache(maxsize=1)
def torch_build() -> TorchBuild:
    """torch's version and CUDA version read from torch/version.py without importing torch."""
    version_file = _torch_folder() / "version.py"
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


@dataclass(frozen=True)
class CutlassHeaders:
    """The CUTLASS whose headers a build compiles with: the first root of the lookup holding include/cute."""

    root: Path  # holds include/cute and tools/util/include
    whose: str  # "$CUTLASS_PATH", "$CUTLASS_HOME", "/usr/local/cutlass" or "the nvidia-cutlass wheel"

    @property
    def wheel(self) -> bool:
        return self.whose == WHEEL

    @property
    def include_dirs(self) -> list[Path]:
        return [self.root / "include", self.root / "tools" / "util" / "include"]

    def described(self) -> str:
        """Whose headers and their include folder: "$CUTLASS_HOME's (/opt/cutlass/include)"."""
        version = f"{cutlass_version()}: " if self.wheel else ""
        return f"{self.whose}'s ({version}{self.include_dirs[0]})"


def cutlass_candidates(environ: Mapping[str, str]) -> list[tuple[str, Path]]:
    """The lookup's roots in order, each with whose it is: a variable set to "" counts as unset, as at import."""
    roots = [(f"${name}", Path(environ[name])) for name in CUTLASS_ROOT_VARIABLES if environ.get(name)]
    roots.append((CUTLASS_SYSTEM_ROOT, Path(CUTLASS_SYSTEM_ROOT)))
    wheel = cutlass_root()
    if wheel is not None:
        roots.append((WHEEL, wheel / "source"))
    return roots


def look_up_cutlass(environ: Mapping[str, str] | None = None) -> tuple[CutlassHeaders | None, tuple[str, ...]]:
    """The first root holding include/cute, as an export's _include_dirs() takes it at import (None where none
    does), and a line for each variable before it that names no CUTLASS: passed over there without a word."""
    passed_over: list[str] = []
    for whose, root in cutlass_candidates(os.environ if environ is None else environ):
        if (root / "include" / "cute").is_dir():
            return CutlassHeaders(root, whose), tuple(passed_over)
        if whose.startswith("$"):
            what = "does not exist" if not root.exists() else "has no include/cute"
            # said for a kernel's build as for an export's: what nvfp4ctl does, then that an export does the same
            passed_over.append(f"{whose}={root} {what}: no CUTLASS headers there, passed over: the next place in"
                               " the lookup order is used, as an exported submission's lookup also does")
    return None, tuple(passed_over)


_SAID: set[str] = set()  # the passed-over lines this run has said: a build looks up many times


def cutlass_headers() -> CutlassHeaders:
    """look_up_cutlass()'s CUTLASS, or a UsageError saying why none. A variable it passed over is said once."""
    found, passed_over = look_up_cutlass()
    if found is None:
        raise UsageError("; ".join([CUTLASS_MISSING, *passed_over]))
    _say(passed_over)
    return found


def say_cutlass_lookup(passed_over: tuple[str, ...] | None = None) -> None:
    """Say each variable the lookup passes over, for a command whose lookup runs in a child process (check,
    bench and tune --kernel build there, dump --runtime too): a child's warning lands in its log, unread.
    `passed_over`: what a look_up_cutlass() the caller ran already found, not looked up again."""
    _say(look_up_cutlass()[1] if passed_over is None else passed_over)


def forget_said_lookups() -> None:
    """A new run says its own (tests run many commands in one process)."""
    _SAID.clear()


def _say(passed_over: tuple[str, ...]) -> None:
    for line in passed_over:
        if line not in _SAID:
            _SAID.add(line)
            get_console().warn(line)


def cutlass_include_dirs() -> list[Path]:
    return cutlass_headers().include_dirs


def cutlass_version() -> str:
    """The wheel's version: CUTLASS headers are too many to hash, so a new wheel means a new build (a
    checkout counts by its headers' stamps: submission_headers.machine_cutlass_key)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nvidia-cutlass")
    except PackageNotFoundError:
        return str(cutlass_root())
