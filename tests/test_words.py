"""Counted nouns: "1 run", "2 runs", never "1 runs" or "run(s)"; seconds without an exponent."""

from __future__ import annotations

from nvfp4ctl.words import first_few, plural, seconds_text


def test_one_is_singular_every_other_count_plural() -> None:
    assert [plural(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"


def test_a_few_findings_are_all_named_and_more_are_counted() -> None:
    assert first_few(["a", "b", "c"]) == "a; b; c"
    assert first_few(["a", "b", "c", "d", "e"]) == "a; b; c; +2 more"
    assert first_few(["a", "b"], shown=1) == "a; +1 more"


def test_seconds_are_written_without_an_exponent() -> None:
    """`--timeout 1e9` read `timeout 1e+09 s` in the check and bench headers."""
    assert [seconds_text(s) for s in (180.0, 2.5, 0.25, 1e9, 1234567.8, 1e-5, 0.1 + 0.2)] == [
        "180 s", "2.5 s", "0.25 s", "1000000000 s", "1234568 s", "0.00001 s", "0.3 s"]
    assert seconds_text(float("inf")) == "inf s" and seconds_text(1e300) == "1e+300 s"


def test_no_message_writes_seconds_with_an_exponent() -> None:
    """`f"{limit:g} s"` wrote a 1e9 s --timeout as "1e+09 s" in the worker's deadlock line, the host proof's timeout,
    tune's budget and bench's settle, after the headers had moved to seconds_text: every such figure goes through it."""
    import re
    from pathlib import Path

    import nvfp4ctl

    pattern = re.compile(r":g\}\s?s\b")
    found = [f"{path.name}:{number}" for path in sorted(Path(nvfp4ctl.__file__).parent.rglob("*.py"))
             if path.name != "words.py"
             for number, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, found
