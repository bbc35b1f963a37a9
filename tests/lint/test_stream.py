"""NV101 must agree with the server's `"stream" in code.lower()` on every text, and locate each hit."""

from __future__ import annotations

import random

import pytest

from nvfp4ctl.lint import LintConfig, lint_text
from nvfp4ctl.lint.source import SourceFile
from nvfp4ctl.lint.stream import find_offsets

SNIPPET = "snippet.py"  # a fragment of a submission: whether it has custom_kernel (NV002) is not the test

# Characters that make lowering interesting: case, 'İ' (lowers to two characters), Kelvin sign,
# long s ('ſ' lowers to itself, so "ſtream" is not a hit), final sigma, newlines of every kind.
ALPHABET = list("streamSTREAMxX _") + ["İ", "K", "ſ", "Σ", "\n", "\r\n", "\r", "\t", "é", "ß"]
WORD_PIECES = ["stream", "STREAM", "Stream", "str", "eam", "sTrEaM", "İstream", "streamİ", "upstream_ptr"]


def random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 40)):
        parts.append(rng.choice(WORD_PIECES) if rng.random() < 0.15 else rng.choice(ALPHABET))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(40))
def test_has_a_finding_exactly_when_the_server_rejects(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(250):
        text = random_text(rng)
        offsets = find_offsets(text)
        assert bool(offsets) == ("stream" in text.lower()), repr(text)
        assert len(offsets) == text.lower().count("stream"), repr(text)
        for offset in offsets:
            assert text[offset:].lower().startswith("stream"), (repr(text), offset)


def test_every_occurrence_is_reported_with_line_and_column() -> None:
    text = 'import x  # upstream\nS = "STREAM"; t = "streamstream"\r\nok\rcudaStream_t q;\n'
    found = [(d.line, d.col) for d in lint_text(text, SNIPPET) if d.code == "NV101"]
    assert found == [(1, 15), (2, 6), (2, 20), (2, 26), (4, 5)]


def test_positions_map_back_through_characters_that_lower_to_two() -> None:
    # 'İ'.lower() is two characters: positions in text.lower() are shifted after each of them.
    text = "İİİ x = 1\nİ # İ then Stream and STREAM\n"
    assert text.lower().count("stream") == 2
    diagnostics = [d for d in lint_text(text, "notes.txt") if d.code == "NV101"]
    source = SourceFile(diagnostics[0].path, text)
    assert [(d.line, d.col) for d in diagnostics] == [(2, 12), (2, 23)]
    for d in diagnostics:
        offset = source.offset(d.line, d.col - 1)
        assert text[offset : offset + 6].lower() == "stream"


def test_cannot_be_waived() -> None:
    text = "x = 'stream'  # nvfp4ctl: ignore[NV101]\n"
    assert [d.code for d in lint_text(text, SNIPPET)] == ["NV101"]


def test_runs_on_any_file_type_and_even_in_undecodable_parts(tmp_path) -> None:
    from nvfp4ctl.lint import lint_paths

    path = tmp_path / "notes.bin"
    path.write_bytes(b"\xff\xfe upStream \x80")
    report = lint_paths([path], LintConfig())
    assert [(d.line, d.col, d.code) for d in report.diagnostics] == [(1, 1, "NV004"), (1, 6, "NV101")]
