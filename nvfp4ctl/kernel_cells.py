"""A kernel's resources as table cells, one spelling for every table that shows them (build's kernels,
build submission.py's units, tune's candidates): bytes with their unit, spills red where there are any.
Outside the build package, whose machinery `nvfp4ctl build --help` must not import."""

from __future__ import annotations

from rich.text import Text


_UNITS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def byte_size(count: int) -> str:
    """"0 B", "768 B", "1.5 KiB", "300.0 MiB", "2.0 GiB": bytes below 1 KiB, else the largest unit that
    leaves at least 1 (an exported file of 300 MiB read 307200.0 KiB)."""
    for size, unit in _UNITS:
        # past KiB, a count the unit below would round up to 1024.0 reads as 1.0 of this one
        if count >= size or (size > 1024 and round(count / size, 1) >= 1):
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


# a cache hit on an entry that another process built while this one waited for the cache lock: no compile of
# this run's, and the row's time is the wait (`compiling k.cu`, then `waiting for another nvfp4ctl ...`)
BUILT_MEANWHILE = "hit (built by another nvfp4ctl meanwhile)"


def cache_cell(hit: bool, built_meanwhile: bool) -> str:
    """A build's cache cell: `built`, `hit`, or a hit another nvfp4ctl built while this one waited."""
    if built_meanwhile:
        return BUILT_MEANWHILE
    return "hit" if hit else "built"


def time_cell(seconds: float, built_meanwhile: bool) -> str:
    """A build's time cell: this run's seconds, which for a build another nvfp4ctl made meanwhile are the
    wait for it, said so (they are no compile time of the kernel's)."""
    return f"{seconds:.1f} s" + (" (waited)" if built_meanwhile else "")


def spills_text(count: int) -> Text:
    """A spills cell: bytes with their unit, as the stack and smem cells beside it; red when any."""
    return Text(byte_size(count), style="bold red" if count else "")
