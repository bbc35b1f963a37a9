"""Whether a failed compile failed for a full disk, and which folder filled up: nvfp4ctl's build cache or the
temporary folder nvcc keeps its intermediate files in.

Both must hold: a tool of the build says "No space left on device" in a line of its own (nvcc, cicc, ptxas,
fatbinary, nvlink, the assembler, the host compiler, ninja, the linker, the build child's OSError), and the
folder really is (nearly) full now. The words alone prove nothing: nvcc echoes the user's source under its
error, and a failing `static_assert(..., "No space left on device: tile too big")` is the kernel's compile
error (exit 1), not a disk to free (exit 2). A path in the text proves nothing either (a user's source may sit
under /tmp): which folder is full is statvfs's to say.
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from pathlib import Path

NO_SPACE = os.strerror(errno.ENOSPC)  # "No space left on device", as the compiler's tools print it
NEARLY_FULL_BYTES = 64 * 2**20  # below this a build's objects and intermediate files no longer fit

_TOOL = (r"(?:nvcc|cicc|cudafe\+\+|ptxas|fatbinary|nvlink|ninja|ld(?:\.\w+)?|collect2|as|cc1plus|cc1"
         r"|[\w.+-]*(?:gcc|g\+\+|c\+\+))")
_TOOL_LINE = re.compile(
    rf"^(?:\S*/)?{_TOOL}(?:\s+(?:fatal|error))?\s*:"  # ptxas fatal   : ..., ninja: error: ..., /usr/bin/ld: ...
    r"|^\S+\.s: (?:Fatal )?[Ee]rror:"  # GNU as, naming its input: /tmp/ccX.s: Fatal error: can't close k.o: ...
    r"|^\S.*?: fatal error: (?:error writing to|cannot write|cannot open output)"  # the host compiler's own write
    r"|^(?:\S.*?\(\d+\): )?catastrophic error:"  # EDG (cudafe++) failing to write its output
    r"|^(?:OSError|IOError): \[Errno 28\]"  # the build child's (cpp_extension's) own write
)


def raise_if_out_of_space(returncode: int, log: str, folder: Path) -> None:
    """OSError(ENOSPC) naming the folder that filled up (the staging `folder`, under nvfp4ctl's cache, or the
    temporary folder), where the compiler failed with a tool saying "No space left on device" and statvfs shows
    that folder full. A full disk is the user's to free (the CLI says so, exit 2); anything else stays the
    compile error it is."""
    if returncode == 0:
        return
    said = [line for line in log.splitlines() if NO_SPACE in line and _TOOL_LINE.match(line)]
    if not said:
        return
    full = full_folder(folder, said)
    if full is not None:
        raise OSError(errno.ENOSPC, NO_SPACE, str(full))


def full_folder(folder: Path, said: list[str]) -> Path | None:
    """Of the staging `folder` and the temporary folder, the one statvfs shows (nearly) full; where both are
    (one disk under both), the temporary folder only when the tools' lines name a path under it and none under
    `folder`; None where neither is."""
    temporary = Path(tempfile.gettempdir())
    full = [place for place in (folder, temporary) if nearly_full(place)]
    if len(full) < 2:
        return full[0] if full else None
    names_folder = any(os.path.join(folder, "") in line for line in said)
    names_temporary = any(os.path.join(temporary, "") in line for line in said)
    return temporary if names_temporary and not names_folder else folder


def nearly_full(folder: Path) -> bool:
    """Whether the disk under `folder` (its nearest existing parent where it is gone) has under
    NEARLY_FULL_BYTES free to nvfp4ctl, or no free inode; False where statvfs cannot say."""
    place = Path(os.path.abspath(folder))
    while not place.exists() and place != place.parent:
        place = place.parent
    try:
        disk = os.statvfs(place)
    except OSError:
        return False
    no_inode = disk.f_files > 0 and disk.f_favail == 0  # f_files 0: a filesystem that counts no inodes (btrfs)
    return disk.f_bavail * disk.f_frsize < NEARLY_FULL_BYTES or no_inode
