"""Counted nouns and seconds in messages: "1 run", "2 runs", never "1 runs" or "run(s)"; "1000000000 s",
never "1e+09 s"."""

from __future__ import annotations

from collections.abc import Sequence

# Beyond this many seconds (some 30 million years) digits stop being readable; the exponent says it better
_POSITIONAL_UP_TO_S = 1e15


def seconds_text(value: float) -> str:
    """Seconds with their unit, without an exponent, to 6 significant digits as :g, whole seconds from a
    million: 180 -> "180 s", 2.5 -> "2.5 s", 1e9 -> "1000000000 s" (f"{value:g}" wrote "1e+09"),
    1e-5 -> "0.00001 s"; NaN, Inf and the absurdly large as :g writes them. Every timeout a header or a
    message names is written by it."""
    if not abs(value) < _POSITIONAL_UP_TO_S:
        return f"{value:g} s"
    if abs(value) >= 1e6:
        return f"{value:.0f} s"
    from decimal import Decimal  # here: `nvfp4ctl --help` imports this module, and no decimal

    return f"{format(Decimal(f'{value:.6g}').normalize(), 'f')} s"


def plural(count: int, word: str, many: str | None = None) -> str:
    """"1 file" / "3 files"; `many` for a plural that is not word + "s" ("entries", "benches")."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def first_few(items: list[str], shown: int = 3) -> str:
    """"a; b; c" / "a; b; c; +2 more": every finding named in a summary line, or the first `shown` of
    them and how many more, so one line (and the run log) does not stop at the first."""
    listed = "; ".join(items[:shown])
    return listed if len(items) <= shown else f"{listed}; +{len(items) - shown} more"


def and_listed(names: Sequence[str]) -> str:
    """"a" / "a and b" / "a, b and c": names in a sentence."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
