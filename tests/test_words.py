"""Counted nouns: "1 run", "2 runs", never "1 runs" or "run(s)"."""

from __future__ import annotations

from nvfp4ctl.words import first_few, plural


def test_one_is_singular_every_other_count_plural() -> None:
    assert [plural(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"


def test_a_few_findings_are_all_named_and_more_are_counted() -> None:
    assert first_few(["a", "b", "c"]) == "a; b; c"
    assert first_few(["a", "b", "c", "d", "e"]) == "a; b; c; +2 more"
    assert first_few(["a", "b"], shown=1) == "a; +1 more"
