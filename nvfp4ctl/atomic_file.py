"""Replacing a file in one step: readers and interrupts see the old file or the new one, never half."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from nvfp4ctl.errors import UsageError


class ReadOnlyTarget(UsageError):
    """The file to replace is one its owner made read-only (chmod a-w): it is left as it is. A usage
    error (exit 2) where a caller lets it through; callers say what was not written and what to do."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} is read-only")
        self.path = path


def made_read_only(path: Path) -> bool:
    """Whether `path` is a file its owner may not write (chmod a-w). Judged by the mode bits, not by a
    failed open or os.access: replacing a file needs only its folder's permission, so the write would
    succeed (and for root every open does) and override the owner's choice."""
    try:
        status = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(status.st_mode) and not status.st_mode & stat.S_IWUSR


def write_text_atomic(path: Path, text: str, *, keep_read_only: bool = False) -> None:
    """Write `text` (UTF-8) to a unique file beside `path`, then move it over `path` (write_bytes_atomic)."""
    write_bytes_atomic(path, text.encode("utf-8"), keep_read_only=keep_read_only)


def write_bytes_atomic(path: Path, data: bytes, *, keep_read_only: bool = False,
                       before_replace: Callable[[], None] | None = None) -> None:
    """Write `data` to a unique file beside `path`, then move it over `path`. A replaced file keeps its
    mode; a new one gets the umask's; a symlink is written through and stays a link. The staging file
    is removed on any failure, and the error propagates (RuntimeError for a symlink loop). A device or
    FIFO (`-o /dev/stdout`, a run log sent to /dev/null) is written to, never replaced by a file.
    With `keep_read_only` (files the user owns: an export, a kernel's dispatch table) a read-only
    target (made_read_only) raises ReadOnlyTarget before anything is written; without it (nvfp4ctl's
    own caches) it is replaced, keeping its mode. `before_replace` runs once the new copy is written, right
    before it is moved over `path`: what it raises leaves `path` as it was (the run log's check that the
    file is still the one it read)."""
    # the device before the link: /dev/stderr is a link to /proc/self/fd/2, which resolves to a name such
    # as "pipe:[7110]" that no folder holds, so only the link itself opens it
    if path.exists() and not path.is_file():
        _write_to_device(path, data)
        return
    named = path
    if path.is_symlink():
        path = path.resolve(strict=False)
    if keep_read_only and made_read_only(path):
        raise ReadOnlyTarget(named)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(staging, stat.S_IMODE(path.stat().st_mode) if path.exists() else under_umask(0o666))
        if before_replace is not None:
            before_replace()
        os.replace(staging, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise


# how long a FIFO's reader may take to open its end (one started beside the command, `cat fifo &`)
FIFO_READER_WAIT_S = 2.0

# why a Unix socket takes no bytes and gives none, as the writer, the run log and the task reader say it
SOCKET_REASON = "a socket, which cannot be opened as a file"


def _write_to_device(path: Path, data: bytes) -> None:
    """`data` written to a device or a FIFO. A FIFO that no process opens to read within FIFO_READER_WAIT_S is
    an OSError (ENXIO, "a FIFO that no process reads"): a plain open would wait for a reader for ever. A Unix
    socket is one at once (ENXIO, "a socket, ..."): its open fails as a FIFO's with no reader does, and no
    wait would change that."""
    if stat.S_ISSOCK(os.stat(path).st_mode):
        raise OSError(errno.ENXIO, SOCKET_REASON, str(path))
    deadline = time.monotonic() + FIFO_READER_WAIT_S
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO at once for a FIFO with no reader
            break
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
            if time.monotonic() >= deadline:
                raise OSError(errno.ENXIO, "a FIFO that no process reads", str(path)) from None
            time.sleep(0.01)
    os.set_blocking(fd, True)  # a reader that is slow to empty the pipe is waited for, as a plain open would
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def under_umask(mode: int) -> int:
    """`mode` less the process's umask: what a new file or folder of nvfp4ctl's gets, as open() and mkdir()
    would give it (a shared cache's umask 002 leaves the group's write bit), where a call that makes it
    private (mkstemp, mkdtemp) or takes a fixed mode does not."""
    return mode & ~current_umask()


def _read_umask_by_setting_it() -> int:
    # os.umask can only read the mask by replacing it; done once, at import, before nvfp4ctl starts threads
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK_AT_IMPORT = _read_umask_by_setting_it()


def current_umask() -> int:
    """The process's umask, read without changing it: setting it for a moment (os.umask's only way to read it)
    would give a file another thread makes in that moment (tune's GPU threads, the progress heartbeat) mode
    666 or 777. Linux says it in /proc/self/status; elsewhere the mask read at import stands."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return _UMASK_AT_IMPORT
