"""A file where a path needs a folder (`-o notes.txt/x.py`, `init s.py/x`): one refusal, said the same by every
command that writes there."""

from __future__ import annotations

import os
from pathlib import Path

from nvfp4ctl.errors import UsageError


def refuse_a_file_above(path: Path, shown: str) -> None:
    """UsageError where the nearest of `path`'s folders that is there is no folder: `notes.txt: not a folder, so
    -o notes.txt/x.py cannot be written: nothing was written` (`shown`: the path as the command line gave it),
    where the write's own reason named neither the file in the way nor why ("File exists (notes.txt)", "Not a
    directory"). A path through a link to a folder is a folder's."""
    there = next((parent for parent in path.parents if os.path.exists(parent)), None)  # no OSError raised
    if there is not None and not os.path.isdir(there):
        raise UsageError(f"{there}: not a folder, so {shown} cannot be written: nothing was written")
