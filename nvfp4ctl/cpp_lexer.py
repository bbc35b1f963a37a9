"""Split C++/CUDA text into code, comments and literals, for lint's rules and the include scans.

`blank()` returns a copy of the same length where comment text and the inside of string/char
literals are spaces (newlines kept, quotes kept), so every offset still points at the original.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_INTERESTING = re.compile(r"[/\"']")
_RAW_STRING_START = re.compile(r'R"([^()\\ \t\n]{0,16})\(')


@dataclass(frozen=True)
class Lexed:
    code: str  # same length as the input; comments and literal contents blanked
    comments: tuple[tuple[int, int], ...]  # (start, end) offsets of every comment


def spaces(segment: str) -> str:
    """`segment` blanked: each character a space, line breaks kept (offsets and line numbers hold)."""
    return "".join(ch if ch in "\r\n" else " " for ch in segment)


def blank(text: str) -> Lexed:
    out: list[str] = []
    comments: list[tuple[int, int]] = []
    i, n = 0, len(text)
    plain_start = 0
    numbers = _NumberStarts(text)

    def flush(upto: int) -> None:
        out.append(text[plain_start:upto])

    while i < n:
        jump = _INTERESTING.search(text, i)
        if jump is None:
            break
        i = jump.start()
        ch = text[i]
        if ch == "/" and i + 1 < n and text[i + 1] == "/":
            flush(i)
            end = i + 2
            while end < n and text[end] not in "\r\n":
                # a backslash at the end of a // line continues the comment
                if text[end] == "\\" and end + 1 < n and text[end + 1] in "\r\n":
                    end += 2 if text[end + 1 : end + 3] != "\r\n" else 3
                    continue
                end += 1
            comments.append((i, end))
            out.append(spaces(text[i:end]))
            i = plain_start = end
        elif ch == "/" and i + 1 < n and text[i + 1] == "*":
            flush(i)
            close = text.find("*/", i + 2)
            end = n if close == -1 else close + 2
            comments.append((i, end))
            out.append(spaces(text[i:end]))
            i = plain_start = end
        elif ch == '"':
            raw = _RAW_STRING_START.match(text, i - 1) if i and text[i - 1] == "R" else None
            if raw is not None:
                close = text.find(")" + raw.group(1) + '"', i + 1)
                end = n if close == -1 else close + len(raw.group(1)) + 2
            else:
                end = _literal_end(text, i, '"')
            flush(i + 1)
            out.append(spaces(text[i + 1 : end - 1]) + (text[end - 1] if end - 1 > i else ""))
            i = plain_start = end
        elif ch == "'" and not _is_digit_separator(text, i, numbers):
            end = _literal_end(text, i, "'")
            flush(i + 1)
            out.append(spaces(text[i + 1 : end - 1]) + (text[end - 1] if end - 1 > i else ""))
            i = plain_start = end
        else:
            i += 1
    flush(n)
    code = "".join(out)
    return Lexed(code, tuple(comments))


def _literal_end(text: str, start: int, quote: str) -> int:
    """Offset just past the closing quote; an unterminated literal ends at the line end."""
    i, n = start + 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            return i + 1
        if ch in "\r\n":
            return i
        i += 1
    return n


def _is_digit_separator(text: str, i: int, numbers: _NumberStarts) -> bool:
    """1'000'000 (C++14): a quote between two digits of a number is not a char literal."""
    if i == 0 or i + 1 >= len(text):
        return False
    if not (text[i - 1].isalnum() and text[i + 1].isalnum()):
        return False
    return text[numbers.run_start(i)].isdigit()


class _NumberStarts:
    """Where the run of letters, digits and ' . _ before a quote begins. A walk back stops where the
    previous one started: the run it found goes on through that quote, so walking each quote of a
    long 1'000'000'... back to the number's first digit, quadratic in its length, is not needed."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._start = 0  # the run before `_walked` (every character in between is in it) begins here
        self._walked = 0

    def run_start(self, quote: int) -> int:
        text = self._text
        j = quote - 1
        while j >= self._walked and (text[j].isalnum() or text[j] in "'._"):
            j -= 1
        self._start = self._start if j < self._walked else j + 1
        self._walked = quote
        return self._start
