"""How a path is shown: relative to the working directory when it lies below it."""

from __future__ import annotations

import os
from pathlib import Path


def display_path(path: Path, cwd: Path | None = None) -> str:
    """A link is shown under its own name, the one the user typed or the folder walk found, never
    its target's: resolving only the folders above it still matches a working directory reached
    through a link (/tmp -> /private/tmp)."""
    base = cwd or Path.cwd()
    absolute = Path(os.path.abspath(path))  # lexical: '..' folded, the file itself not followed
    for candidate in (absolute, absolute.parent.resolve() / absolute.name):
        for root in (base.absolute(), base.resolve()):
            try:
                return str(candidate.relative_to(root))
            except ValueError:
                continue
    return str(path)
