"""The local headers a submission unit's CUDA includes, for its cache key: an edit to one must rebuild
the unit, as an edit to a kernel's own header does (sources.local_headers).

Followed as nvcc finds them: `#include "x"` beside the including file, then in the -I folders in order,
then in the -isystem ones; `#include <x>` in the -I and -isystem folders only. The folders that matter
are the submission's own (extra_include_paths, the flags' -I and -isystem): torch's, the toolkit's and
CUTLASS's headers are not read, their versions are in the key instead; a CUTLASS checkout of the
submission's own (an include folder that is none of the toolchain's) counts by its files' sizes and
times (checkout_stamp). An include in a comment or an `#if 0` group is not followed
(nvfp4ctl/preprocessor.py). A header not found is left to the compiler, whose error is never cached.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sysconfig
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from nvfp4ctl.build import toolchain
from nvfp4ctl.build.read_once import header_file
from nvfp4ctl.preprocessor import live_code
from nvfp4ctl.build.sources import find_header
from nvfp4ctl.errors import UsageError

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.MULTILINE)
# CUTLASS/CuTe's headers are many hundreds (reading them costs seconds on every lookup); the key holds
# the CUTLASS in use instead (build/toolchain.py: cutlass_version)
_CUTLASS_NAMES = ("cute/", "cutlass/")
_CUTLASS_TREES = ("cute", "cutlass")


def header_digests(code: str, beside: Path | None, search: Sequence[Path]) -> list[tuple[str, str]]:
    """(path, sha256) of every local header `code` reaches, transitively, in first-seen order.
    `beside`: the folder of the file `code` is (None for a generated .cu, which nothing lives beside);
    `search`: the submission's include folders in nvcc's search order (-I, then -isystem)."""
    digests: dict[Path, str] = {}
    pending: list[tuple[str, Path | None]] = [(live_code(code), beside)]  # live code, and its folder
    while pending:
        live, folder = pending.pop(0)
        for quoted, bracketed in _INCLUDE.findall(live):
            name = quoted or bracketed
            beside_folder = folder if quoted else None
            if name.startswith(_CUTLASS_NAMES):
                checkout = _cutlass_checkout(name, [*([beside_folder] if beside_folder else []), *search])
                if checkout is not None and checkout not in digests:
                    digests[checkout] = checkout_stamp(checkout)
                continue
            header = find_header(name, beside_folder, search)
            if header is None or header in digests or _in_toolchain(header):
                continue
            try:
                read = header_file(header)  # once per command however many units include it (read_once)
            except OSError:  # unreadable: the compiler's error to report, and a failed build is not cached
                continue
            digests[header] = read.digest
            pending.append((read.live, header.parent))
    return [(str(path), digest) for path, digest in digests.items()]


def machine_cutlass_key() -> list[str] | str:
    """What identifies the CUTLASS toolchain.cutlass_headers() finds, for a cache key: a checkout by its path
    and its headers' stamps (it may be updated in place), the wheel by its version."""
    found = toolchain.cutlass_headers()
    if found.wheel:
        return toolchain.cutlass_version()
    return [str(found.root), *(checkout_stamp(folder) for folder in found.include_dirs)]


def checkout_stamp(folder: Path) -> str:
    """sha256 of the path, size and modification time of every file under folder's cute/ and cutlass/:
    updating a checkout in place (a pull, a release unpacked over it) changes the files it rewrites,
    where cutlass/version.h alone stays the same between releases. A stat per header (some 1,500:
    milliseconds), where reading them all would cost every lookup seconds."""
    stamps: list[tuple[str, int, int]] = []
    pending = [folder / tree for tree in _CUTLASS_TREES]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    elif entry.is_file():
                        stat = entry.stat()
                        stamps.append((entry.path, stat.st_size, stat.st_mtime_ns))
        except OSError:  # absent or unreadable: nothing of it is compiled either
            continue
    return "stamp:" + hashlib.sha256(repr(sorted(stamps)).encode()).hexdigest()


def flag_include_folders(flags: Sequence[str]) -> list[Path]:
    """The absolute folders extra_cuda_cflags add to the include search, in nvcc's search order: every
    -I folder, then every -isystem one (searched after all -I folders, whatever the order on the line).
    A relative one is read against the compiler's working folder, torch's build folder on the
    leaderboard: no header of the submission's is found through it."""
    included = _flag_folders(flags, ("-I", "--include-path"), glued="-I")
    system = _flag_folders(flags, ("-isystem", "--system-include"), glued=None)
    return [Path(folder.strip()) for folder in [*included, *system] if os.path.isabs(folder.strip())]


def _flag_folders(flags: Sequence[str], names: Sequence[str], glued: str | None) -> list[str]:
    """The folders an option of `names` gives in flags, in order, spelled as nvcc 13.0 accepts them:
    `NAME DIR` and `NAME=DIR` for each name, and `GLUEDDIR` (-IDIR; -I=DIR is DIR too). -isystemDIR is
    refused by nvcc ("Unknown option"): the build fails, so it names no folder. A value is a
    comma-separated list, as nvcc splits it (-I a,b is two folders); a separate value is taken as it
    is (-I =DIR names the folder "=DIR")."""
    folders: list[str] = []
    for index, flag in enumerate(flags):
        flag = flag.strip()
        joined = next((flag.removeprefix(f"{name}=") for name in names if flag.startswith(f"{name}=")), None)
        if flag in names:
            values = flags[index + 1:index + 2]
        elif joined is not None:
            values = [joined]
        elif glued is not None and flag.startswith(glued):
            values = [flag.removeprefix(glued)]
        else:
            continue
        folders += [folder for value in values for folder in value.split(",")]
    return folders


def supplies_cutlass(folders: Sequence[Path]) -> bool:
    """Whether one of folders holds a cute/ or cutlass/ tree: the submission brings its own CUTLASS."""
    return any((folder / tree).is_dir() for folder in folders for tree in _CUTLASS_TREES)


def _cutlass_checkout(name: str, folders: Sequence[Path]) -> Path | None:
    """The include folder a CUTLASS/CuTe header is found in when it is the submission's own checkout;
    None for the toolchain's (the machine's CUTLASS: machine_cutlass_key is in the key) or none found."""
    for folder in folders:
        if (folder / name).is_file():
            return None if _in_toolchain((folder / name).resolve()) else folder.resolve()
    return None


def is_toolchain_folder(folder: Path) -> bool:
    """Whether folder is in the toolchain (torch, the toolkit, the machine's CUTLASS, ...)."""
    return _in_toolchain(folder.resolve())


def _in_toolchain(header: Path) -> bool:
    return any(header.is_relative_to(root) for root in _toolchain_roots())


@lru_cache(maxsize=1)
def _toolchain_roots() -> tuple[Path, ...]:
    """Folders whose headers are the toolchain's, should an -I name one: torch's package, the CUDA
    toolkit, CUTLASS (every root of its lookup: $CUTLASS_PATH, ..., the wheel), Python's and the system's
    include folders."""
    roots = [Path("/usr/include"), toolchain.DEFAULT_CUDA_HOME, Path(sysconfig.get_paths()["include"])]
    roots += [root for _, root in toolchain.cutlass_candidates(os.environ)]
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(variable):
            roots.append(Path(os.environ[variable]))
    try:
        roots.append(toolchain.cuda_home())
    except UsageError:  # no nvcc: the build says so itself; no toolkit to leave out
        pass
    torch = importlib.util.find_spec("torch")
    if torch is not None and torch.submodule_search_locations:
        roots.append(Path(next(iter(torch.submodule_search_locations))))
    cutlass = toolchain.cutlass_root()
    if cutlass is not None:
        roots.append(cutlass)
    return tuple(root.resolve() for root in roots)
