"""The temporary folder the compilers write their intermediate files in: $TMPDIR, where it is set.

nvcc (and the host compiler under it) takes $TMPDIR as it is, with no fallback: one naming a folder that is
gone or cannot be written fails every compile with "Could not open output file '/missing/tmpxft_...'", which
read as the kernel's compile error (exit 1). Python's tempfile passes over such a folder without a word, so
nvfp4ctl's own files never show it; only the compilers do.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from nvfp4ctl.errors import UsageError


def require_usable_tmpdir(cwd: Path | None = None) -> None:
    """UsageError (exit 2) naming TMPDIR where it is set to what is not a folder the compilers can write in,
    read from `cwd` as a compiler started there reads it; nothing where it is unset or empty (the compilers
    then use /tmp)."""
    setting = os.environ.get("TMPDIR", "")
    if not setting:
        return
    folder = os.path.join(cwd or os.getcwd(), setting)
    if not os.path.exists(folder):
        reason = os.strerror(errno.ENOENT)
    elif not os.path.isdir(folder):
        reason = "not a folder"
    elif not os.access(folder, os.W_OK | os.X_OK):
        reason = os.strerror(errno.EACCES)
    else:
        return
    raise UsageError(f"TMPDIR={setting}: {reason}; the compilers write their intermediate files there:"
                     " create it, or point TMPDIR at a writable folder (or unset it for /tmp)")


def require_places_a_compile_writes() -> None:
    """TMPDIR and the cache folder, both the user's settings: where either is unusable, one line (exit 2) before a
    progress line says a compile began, where each compile would read as failing."""
    from nvfp4ctl.build.cache import require_usable_cache

    require_usable_tmpdir()
    require_usable_cache()
