"""Counted nouns in messages: "1 run", "2 runs", never "1 runs" or "run(s)"."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """"1 file" / "3 files"; `many` for a plural that is not word + "s" ("entries", "benches")."""
    return f"{count} {word if count == 1 else many or word + 's'}"
