"""The build cache: one folder per content key, landed whole by a directory rename.

key = sha256 of the bytes of the kernel, the local headers it includes and the torch binding, the
code flags, any extra `-D` defines (a tune candidate's knobs), the nvcc banner, torch's version, the Python ABI, the arch, the build mode and (when
used) the CUTLASS wheel version. A lookup reads files only and imports nothing heavy, so an
unchanged rebuild never starts ninja. Builders of one key serialize on a file lock; readers need
no lock because an entry appears complete or not at all.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock

from nvfp4ctl.build import flags, toolchain
from nvfp4ctl.build.sources import BuildInputs
from nvfp4ctl.project import cache_root

CACHE_FORMAT = 2  # bump when an entry's layout changes
LOCK_TIMEOUT_S = 3600.0  # a CUTLASS build on 2 cores takes minutes; a second builder waits for it


def cache_key(inputs: BuildInputs, arch: str, mode: str, defines: tuple[str, ...] = ()) -> str:
    torch = toolchain.torch_build()
    material = {
        "format": CACHE_FORMAT,
        "arch": arch,
        "mode": mode,
        "files": [[path.name, hashlib.sha256(path.read_bytes()).hexdigest()] for path in inputs.files],
        "cuda_flags": [*flags.cuda_flags(arch), *flags.REPORT_FLAGS],
        "binding_flags": list(flags.BINDING_CFLAGS),
        "nvcc": toolchain.nvcc_version(),
        "torch": [torch.version, torch.cuda],
        "python": toolchain.python_abi(),
        "cutlass": toolchain.cutlass_version() if inputs.needs_cutlass else None,
        "sass_tools": toolchain.sass_tools() is not None,  # an unchecked report is redone once they exist
    }
    if defines:  # only when given, so the keys of plain builds stay what they were
        material["defines"] = list(defines)
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def entry_dir(source: Path, arch: str, key: str) -> Path:
    return cache_root() / f"{source.stem}-{arch}-{key[:16]}"


@contextmanager
def locked(entry: Path) -> Iterator[None]:
    locks = cache_root() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with FileLock(str(locks / f"{entry.name}.lock"), timeout=LOCK_TIMEOUT_S):
        yield


@contextmanager
def staging(entry: Path) -> Iterator[Path]:
    """A temporary folder beside the entry (same filesystem, so the rename is atomic); removed
    unless `land` moved it into place. Its name says which process made it (_maker): one killed
    before the finally runs (tune's compile workers on Ctrl-C) leaves it to remove_staging_of."""
    scratch = cache_root() / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{entry.name}{_maker(os.getpid())}", dir=scratch))
    folder.chmod(0o755)  # mkdtemp makes it private; the entry it becomes is an ordinary cache folder
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def remove_staging_of(pids: Iterable[int]) -> None:
    """Removes the staging folders that processes `pids` of this machine made and left, once they have
    ended: a process killed by a signal never runs staging()'s finally."""
    scratch = cache_root() / "tmp"
    for pid in pids:
        for folder in scratch.glob(f"*{glob.escape(_maker(pid))}*"):
            shutil.rmtree(folder, ignore_errors=True)


def _maker(pid: int) -> str:
    """What a staging folder's name holds of the process that made it: the machine too, as a cache on a
    shared filesystem may hold another machine's folders, with pids of their own."""
    return f".{socket.gethostname()}.pid{pid}-"


def land(folder: Path, entry: Path) -> None:
    if entry.exists():  # left by a run that did not hold the lock (older format, manual copy)
        shutil.rmtree(entry, ignore_errors=True)
    os.rename(folder, entry)
