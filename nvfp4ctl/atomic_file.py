"""Replacing a file in one step: readers and interrupts see the old file or the new one, never half."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to a unique file beside `path`, then move it over `path` (write_bytes_atomic)."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to a unique file beside `path`, then move it over `path`. A replaced file keeps its
    mode; a new one gets the umask's; a symlink is written through and stays a link. The staging file
    is removed on any failure, and the error propagates (RuntimeError for a symlink loop). A device or
    FIFO (`-o /dev/stdout`, a run log sent to /dev/null) is written to, never replaced by a file."""
    # the device before the link: /dev/stderr is a link to /proc/self/fd/2, which resolves to a name such
    # as "pipe:[7110]" that no folder holds, so only the link itself opens it
    if path.exists() and not path.is_file():
        with path.open("wb") as out:
            out.write(data)
        return
    if path.is_symlink():
        path = path.resolve(strict=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(staging, stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o666 & ~_umask())
        os.replace(staging, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
