"""torch's build locks (`<extensions folder>/<name>/lock`, torch/utils/file_baton.py) that a load killed mid-build
leaves behind.

torch creates the lock before it compiles an extension and removes it once the build ends, an error included;
a build killed meanwhile (the load limit, Ctrl-C, a crash) leaves it, and the next load of the same extension
then waits on it with no word until its limit. nvfp4ctl removes the locks a discarded child created in
nvfp4ctl's own extensions folder (never in one the user set with TORCH_EXTENSIONS_DIR), and names any lock left
where a load ran past its limit."""

from __future__ import annotations

import contextlib
from pathlib import Path

LOCK_NAME = "lock"  # torch's, in each extension's build folder
OWN_FOLDER_VARIABLE = "NVFP4CTL_BUILD_LOCKS_IN"  # set in the child only, where nvfp4ctl chose the folder
MAX_NAMED = 3


def build_locks(folder: Path) -> list[Path]:
    """The build locks in `folder`, newest first."""
    found = []
    for lock in folder.glob(f"*/{LOCK_NAME}"):
        with contextlib.suppress(OSError):  # removed meanwhile
            found.append((lock.stat().st_mtime, lock))
    return [lock for _, lock in sorted(found, reverse=True)]


def remove_locks_since(folder: Path, started_s: float) -> list[Path]:
    """Remove the build locks in `folder` created at or after `started_s` (time.time()): those of a child
    started then, whose builds are killed; older ones belong to another run, or to one nvfp4ctl did not end."""
    removed = []
    for lock in build_locks(folder):
        try:
            if lock.stat().st_mtime >= started_s:
                lock.unlink()
                removed.append(lock)
        except OSError:  # gone meanwhile, or not ours to remove
            continue
    return removed


def held_locks_note(folder: Path | None) -> str:
    """A clause naming the build locks in `folder` (empty where none): a load that waits on one says nothing."""
    locks = build_locks(folder) if folder is not None else []
    if not locks:
        return ""
    named = ", ".join(str(lock) for lock in locks[:MAX_NAMED])
    more = f" and {len(locks) - MAX_NAMED} more" if len(locks) > MAX_NAMED else ""
    one = len(locks) == 1
    return (f"; torch's build lock{'' if one else 's'} {named}{more} {'is' if one else 'are'} there, which a build"
            f" of the same extension waits on: another run may hold {'it' if one else 'them'}; remove"
            f" {'it' if one else 'them'} if none does")
