"""How a path is shown: relative to the working directory when it lies below it."""

from __future__ import annotations

from pathlib import Path


def display_path(path: Path, cwd: Path | None = None) -> str:
    base = (cwd or Path.cwd()).resolve()
    try:
        return str(path.resolve().relative_to(base))
    except ValueError:
        return str(path)
