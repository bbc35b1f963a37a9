"""The build cache: one folder per content key, landed whole by a directory rename.

key = sha256 of the bytes of the kernel, the local headers it includes and the torch binding, the
code flags, any extra `-D` defines (a tune candidate's knobs), the compiler's environment variables
(flags.CODE_CHANGING_ENV, where set), the nvcc banner, torch's version, the Python ABI, the arch, the build mode and (when
used) the CUTLASS wheel version. A lookup reads files only and imports nothing heavy, so an
unchanged rebuild never starts ninja. Builders of one key serialize on a file lock; readers need
no lock because an entry appears complete or not at all.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from nvfp4ctl.atomic_file import under_umask
from nvfp4ctl.build import flags, toolchain
from nvfp4ctl.build.sources import BuildInputs
from nvfp4ctl.build.submission_headers import machine_cutlass_key
from nvfp4ctl.console import get_console
from nvfp4ctl.errors import ToolTimeout, UsageError
from nvfp4ctl.lock_holder import alive as _alive
from nvfp4ctl.lock_holder import holder_said as _holder_said
from nvfp4ctl.lock_holder import holder_of, holding, started_by
from nvfp4ctl.project import cache_root
from nvfp4ctl.words import seconds_text

CACHE_FORMAT = 2  # bump when an entry's layout changes
LOCK_TIMEOUT_S = 3600.0  # a CUTLASS build on 2 cores takes minutes; a second builder waits for it
# A staging folder untouched this long is past any compile's limit (compile.BUILD_TIMEOUT_S, 30 min): a maker
# of the same name whose pid this process cannot see (another pid namespace) is not writing to it any more.
ABANDONED_AFTER_S = 3600.0
# A lock held this long is another process's build of the same key, not a passing check: said once, as the
# progress line alone looks like this build compiling
WAIT_SAID_AFTER_S = 2.0


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
        "cutlass": machine_cutlass_key() if inputs.needs_cutlass else None,
        "sass_tools": toolchain.sass_tools() is not None,  # an unchecked report is redone once they exist
    }
    if defines:  # only when given, so the keys of plain builds stay what they were
        material["defines"] = list(defines)
    if environment := flags.code_changing_env():  # likewise only when set
        material["environment"] = environment
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def entry_dir(source: Path, arch: str, key: str) -> Path:
    return cache_root() / f"{source.stem}-{arch}-{key[:16]}"


def require_usable_cache() -> None:
    """The cache's locks folder made now, as a compile's first step (locked) makes it, and found writable: the
    OSError of a cache folder that cannot be made or written (a link to a missing folder above NVFP4CTL_CACHE)
    is the CLI's one line, said before a progress line says a compile began."""
    locks = _locks_folder()
    if not os.access(locks, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(locks))


def _locks_folder() -> Path:
    locks = cache_root() / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    return locks


@contextmanager
def locked(entry: Path, building: str | None = None) -> Iterator[None]:
    """The lock of `entry`'s key, held while it is built. Where another process holds it past
    WAIT_SAID_AFTER_S, one line says so, naming what is built (`building`: "k.cu (sm_90a)"; else the entry)."""
    root = cache_root()
    locks = _locks_folder()
    # the umask's mode, not filelock's 644: in a group's shared cache (umask 002) the next member opens it too
    lock = FileLock(str(locks / f"{entry.name}.lock"), timeout=LOCK_TIMEOUT_S, mode=under_umask(0o666))
    holder = locks / f"{entry.name}.holder"
    building = building or entry.name
    try:
        lock.acquire(timeout=WAIT_SAID_AFTER_S)
    except Timeout:
        get_console().note(_waiting_words(holder, building, root))
        try:
            lock.acquire(timeout=LOCK_TIMEOUT_S - WAIT_SAID_AFTER_S)
        except Timeout:
            raise ToolTimeout(f"waited {seconds_text(LOCK_TIMEOUT_S)} for the cache lock {lock.lock_file} to build"
                              f" {building}; it is held by {_holder_said(holder)}; run it again once"
                              " that build ends") from None
    try:
        with holding(holder, f"building {building}", building=building):
            yield
    finally:
        lock.release()


def _waiting_words(holder: Path, building: str, root: Path) -> str:
    """The line a build waiting on the lock says: "another nvfp4ctl" unless the holder is this process (another
    of its threads) or one it started (tune's compile workers), which is no other nvfp4ctl to wait out."""
    found = holder_of(holder)
    if found is not None and found.here and found.pid == os.getpid():
        return f"waiting for this nvfp4ctl's own build of {building} in another of its threads, in {root}"
    if found is not None and found.here and started_by(found.pid, os.getpid()):
        return f"waiting for this nvfp4ctl's own worker (pid {found.pid}) building {building} in {root}"
    return f"waiting for another nvfp4ctl building {building} in {root}"


_swept: set[Path] = set()  # the scratch folders this process has swept: once is enough


@contextmanager
def staging(entry: Path) -> Iterator[Path]:
    """A temporary folder beside the entry (same filesystem, so the rename is atomic); removed
    unless `land` moved it into place. Its name says which process made it (_maker): one killed
    before the finally runs leaves it to remove_staging_of (tune's compile workers on Ctrl-C) or, killed
    where nothing of nvfp4ctl's could act, to the first staging() of a later process here."""
    scratch = cache_root() / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    if scratch not in _swept:
        _swept.add(scratch)
        remove_abandoned_staging(scratch)
    folder = Path(tempfile.mkdtemp(prefix=f"{entry.name}{_maker(os.getpid())}", dir=scratch))
    # mkdtemp makes it private; the entry it becomes is an ordinary folder, as mkdir would make it (under a
    # shared cache's umask 002 the group may clear or replace it)
    folder.chmod(under_umask(0o777))
    try:
        yield folder
    except Exception:
        raise_if_removed(folder)
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class CacheFolderRemoved(UsageError):
    """The staging folder vanished under the compiler (the cache emptied by hand, `rm -rf ~/.cache/nvfp4ctl`
    while a build ran): the compiler's "cannot create ..." says nothing of the kernel."""


def raise_if_removed(folder: Path) -> None:
    """CacheFolderRemoved where the staging `folder` is gone; a failure in a folder still there is the
    failure it is."""
    if os.path.lexists(folder):
        return
    root = cache_root()
    removed = root if not os.path.lexists(root) else folder
    what = "the cache folder" if removed == root else "the build's folder in the cache"
    raise CacheFolderRemoved(f"{what} {removed} was removed during the build; run it again")


def remove_staging_of(pids: Iterable[int]) -> None:
    """Removes the staging folders that processes `pids` of this machine made and left, once they have
    ended: a process killed by a signal never runs staging()'s finally."""
    scratch = cache_root() / "tmp"
    for pid in pids:
        for folder in scratch.glob(f"*{glob.escape(_maker(pid))}*"):
            shutil.rmtree(folder, ignore_errors=True)


def remove_abandoned_staging(scratch: Path, now: float | None = None) -> list[Path]:
    """Removes (and returns) the staging folders in `scratch` that a process of this machine made and left
    when it was killed where no cleanup runs (kill -9, the OOM killer, a closed terminal's SIGHUP): its pid
    has ended and nothing in the folder changed for ABANDONED_AFTER_S. Another machine's folders and a
    live pid's stay: a pid reused since keeps its folder until that process ends too. A folder that could
    not be removed (another user's files in it) is not returned."""
    now = time.time() if now is None else now
    made_here = re.compile(  # _maker's words, this machine's name in them
        re.escape(f".{socket.gethostname()}.pid") + r"(\d+)-[a-z0-9_]+$")
    removed = []
    for folder in _listed(scratch):
        match = made_here.search(folder.name)
        if match is None or _alive(int(match.group(1))):
            continue
        last_change = _last_change(folder)
        if last_change is not None and now - last_change > ABANDONED_AFTER_S:
            shutil.rmtree(folder, ignore_errors=True)
            if not os.path.lexists(folder):
                removed.append(folder)
    return removed


def _listed(scratch: Path) -> list[Path]:
    try:
        return [path for path in scratch.iterdir() if path.is_dir() and not path.is_symlink()]
    except OSError:  # no tmp/ yet, or unreadable: nothing to sweep
        return []


def _last_change(folder: Path) -> float | None:
    """The newest modification time of `folder` and what it holds; None where it cannot be read."""
    try:
        newest = folder.lstat().st_mtime
        for root, dirs, files in os.walk(folder):
            for name in (*dirs, *files):
                newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime)
    except OSError:  # removed meanwhile (its maker finishing, another sweeper): leave it be
        return None
    return newest


def _maker(pid: int) -> str:
    """What a staging folder's name holds of the process that made it: the machine too, as a cache on a
    shared filesystem may hold another machine's folders, with pids of their own."""
    return f".{socket.gethostname()}.pid{pid}-"


def land(folder: Path, entry: Path) -> None:
    """Moves `folder` into place as `entry`. PermissionError naming `entry` where an entry already there
    cannot be removed (another user's, in a shared cache whose folders the group may not write): the
    rename would fail with "Directory not empty", which names no cause."""
    if entry.exists():  # left by a run that did not hold the lock (older format, manual copy)
        shutil.rmtree(entry, ignore_errors=True)
        if os.path.lexists(entry):
            raise PermissionError(errno.EACCES, "an entry already there cannot be replaced", str(entry))
    os.rename(folder, entry)
