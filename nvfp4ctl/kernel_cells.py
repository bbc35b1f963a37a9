"""A kernel's resources as table cells, one spelling for every table that shows them (build's kernels,
build submission.py's units, tune's candidates): bytes with their unit, spills red where there are any.
Outside the build package, whose machinery `nvfp4ctl build --help` must not import."""

from __future__ import annotations

from rich.text import Text


def byte_size(count: int) -> str:
    """"0 B", "768 B", "1.5 KiB": bytes below 1 KiB, KiB from there."""
    return f"{count / 1024:.1f} KiB" if count >= 1024 else f"{count} B"


def spills_text(count: int) -> Text:
    """A spills cell: bytes with their unit, as the stack and smem cells beside it; red when any."""
    return Text(byte_size(count), style="bold red" if count else "")
