"""NV101: the server's own test, `"stream" in code.lower()`, with every occurrence located.

Matches are searched in text.lower() exactly as the server does; positions are mapped back to the
original characters, because a few characters lower to more than one ('İ' -> 'i̇').
"""

from __future__ import annotations

import re

from nvfp4ctl.lint.diagnostic import Finding
from nvfp4ctl.lint.rules import STREAM_CODE

WORD = "stream"
_IDENTIFIER = re.compile(r"\w+")
_WORD_CHARACTER = re.compile(r"\w")


def lowered_with_origin(text: str) -> tuple[str, list[int] | None]:
    """text.lower() and, when lowering changed the length, the original index of every lowered char."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered, None  # lowering never shrinks a character, so equal length means 1:1
    origin: list[int] = []
    for index, char in enumerate(text):
        origin.extend([index] * len(char.lower()))
    return lowered, origin


def find_offsets(text: str) -> list[int]:
    """Original-text offsets where an occurrence of the word starts (in text.lower())."""
    lowered, origin = lowered_with_origin(text)
    offsets = []
    start = lowered.find(WORD)
    while start != -1:
        offsets.append(start if origin is None else origin[start])
        start = lowered.find(WORD, start + len(WORD))
    return offsets


def first_line(text: str) -> tuple[int, int] | None:
    """(1-based line of the first occurrence, number of occurrences), None when there is none."""
    offsets = find_offsets(text)
    return (text.count("\n", 0, offsets[0]) + 1, len(offsets)) if offsets else None


def _enclosing_word(text: str, offset: int, previous: tuple[int, int]) -> tuple[int, int]:
    """(start, end) of the word (a run of \\w) the occurrence at offset is in, else of the occurrence
    itself. `previous`: the span this gave the occurrence before (offsets come in order), which a
    word holding many occurrences reuses and a new word's walk back never passes: walking back to the
    line start for each occurrence made a file of many occurrences quadratic."""
    if offset < previous[1]:
        return previous
    if not _WORD_CHARACTER.match(text, offset):
        return offset, offset + len(WORD)
    start = offset
    while start > 0 and _WORD_CHARACTER.match(text, start - 1):
        start -= 1
    return start, _IDENTIFIER.match(text, offset).end()


def check(text: str) -> list[Finding]:
    findings = []
    span = (0, 0)
    for offset in find_offsets(text):
        span = _enclosing_word(text, offset, span)
        word = text[span[0] : span[1]]
        where = f' (in "{word}")' if word.lower() != WORD else ""
        findings.append(Finding(
            offset, STREAM_CODE,
            f'the word "stream"{where}: the server rejects any file where "stream" in code.lower()',
            width=len(WORD),
        ))
    return findings
