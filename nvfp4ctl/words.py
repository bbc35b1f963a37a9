"""Counted nouns in messages: "1 run", "2 runs", never "1 runs" or "run(s)"."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """"1 file" / "3 files"; `many` for a plural that is not word + "s" ("entries", "benches")."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def first_few(items: list[str], shown: int = 3) -> str:
    """"a; b; c" / "a; b; c; +2 more": every finding named in a summary line, or the first `shown` of
    them and how many more, so one line (and the run log) does not stop at the first."""
    listed = "; ".join(items[:shown])
    return listed if len(items) <= shown else f"{listed}; +{len(items) - shown} more"
