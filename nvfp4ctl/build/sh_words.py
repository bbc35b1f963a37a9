"""How /bin/sh reads the arguments of one command line, for the line torch's ninja file gives nvcc:
the words it splits the line into, each character marked quoted or not, and what it does to a word
beyond removing its quotes. Only what POSIX sh does to words of such a line is modelled: blanks split,
quotes and backslashes quote, an unquoted `#` that starts a word starts a comment, an unquoted `~` that
starts a word is a home folder, and unquoted `*`, `?` and `[` make a pattern the shell matches against
file names. Expansions ($, backquotes) and operators are left to the caller to refuse.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

_BLANKS = " \t"
_DOUBLE_QUOTE_ESCAPES = '$`"\\\n'  # inside "...", a backslash quotes only these (and is dropped before them)
GLOB_CHARACTERS = "*?["


@dataclass(frozen=True)
class Word:
    text: str  # the word as the command gets it, quotes removed
    quoted: tuple[bool, ...]  # per character of text: quoted (or backslash-escaped), so never special

    def unquoted(self, index: int) -> bool:
        return not self.quoted[index]

    @property
    def is_pattern(self) -> bool:
        """Whether the shell matches the word against file names: an unquoted *, ? or [ in it."""
        return any(char in GLOB_CHARACTERS and not quoted for char, quoted in zip(self.text, self.quoted))


def split(line: str, operators: str) -> tuple[list[Word], str | None]:
    """(the words of line, what sh ends the command at: an unquoted operator character of `operators`
    or a comment's '#', else None). ValueError for an unclosed quote."""
    words: list[Word] = []
    text: list[str] = []
    quoted: list[bool] = []
    started = False  # a word has begun (an empty pair of quotes is a word too)
    index = 0

    def finish() -> None:
        nonlocal started
        if started:
            words.append(Word("".join(text), tuple(quoted)))
        text.clear()
        quoted.clear()
        started = False

    while index < len(line):
        char = line[index]
        if char in _BLANKS:
            finish()
        elif char in operators:
            finish()
            return words, char
        elif char == "#" and not started:
            return words, "#"
        elif char == "\\":
            if index + 1 < len(line):
                text.append(line[index + 1])
                quoted.append(True)
            index += 1  # a backslash that ends the line quotes nothing: dropped, as sh drops it
            started = True
        elif char == "'":
            end = line.find("'", index + 1)
            if end < 0:
                raise ValueError("unclosed quote")
            text.extend(line[index + 1:end])
            quoted.extend([True] * (end - index - 1))
            index = end
            started = True
        elif char == '"':
            index += 1
            while index < len(line) and line[index] != '"':
                if line[index] == "\\" and index + 1 < len(line) and line[index + 1] in _DOUBLE_QUOTE_ESCAPES:
                    index += 1
                text.append(line[index])
                quoted.append(True)
                index += 1
            if index >= len(line):
                raise ValueError("unclosed quote")
            started = True
        else:
            text.append(char)
            quoted.append(False)
            started = True
        index += 1
    finish()
    return words, None


def pattern_matches(word: Word, names: Collection[str]) -> list[str]:
    """The names among `names` (the entries of the folder the command runs in, none of them a folder)
    that sh's pathname expansion of `word` yields, sorted. ValueError where the pattern reaches a folder
    other than that one (it starts with / or goes through ..), whose entries are not known here."""
    if not word.is_pattern:
        return []
    components = _components(word)
    if word.text.startswith("/"):
        raise ValueError("absolute")
    for component in components[:-1]:
        if component.text == ".":
            continue
        if component.text == "..":
            raise ValueError("parent")
        return []  # a folder inside the command's folder: the folder has none, so nothing matches
    last = components[-1]
    expression = _expression(last)
    return sorted(name for name in names
                  if expression.fullmatch(name) and (not name.startswith(".") or last.text.startswith(".")))


def _components(word: Word) -> list[Word]:
    components: list[Word] = []
    start = 0
    for index, char in enumerate(word.text + "/"):
        if char == "/":
            components.append(Word(word.text[start:index], word.quoted[start:index]))
            start = index + 1
    return components


def _expression(component: Word) -> re.Pattern[str]:
    """A regular expression for one pattern component, as sh reads it: unquoted * and ? are wildcards,
    an unquoted [ opens a bracket expression where a ] closes it (else it is a [), quoted characters are
    themselves."""
    parts: list[str] = []
    text = component.text
    index = 0
    while index < len(text):
        char = text[index]
        if component.quoted[index] or char not in GLOB_CHARACTERS:
            parts.append(re.escape(char))
        elif char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        else:
            close = _bracket_end(text, index)
            if close is None:
                parts.append(re.escape(char))
            else:
                parts.append(_bracket(text[index + 1:close]))
                index = close
        index += 1
    return re.compile("".join(parts), re.DOTALL)


def _bracket(inside: str) -> str:
    """A bracket expression's regular expression; one that regular expressions do not read alike (a
    character class such as [:digit:], a reversed range) is taken to match any character: a pattern
    that may match is refused, so only one that cannot is let through."""
    negated = inside[:1] in ("!", "^")
    members = inside[1:] if negated else inside
    expression = "[" + ("^" if negated else "") + members.replace("\\", "\\\\").replace("[", "\\[") + "]"
    if any(opening in members for opening in ("[:", "[=", "[.")):
        return "."
    try:
        re.compile(expression)
    except re.error:
        return "."
    return expression


def _bracket_end(text: str, start: int) -> int | None:
    """The index of the ] that closes the bracket expression opened at start, else None."""
    index = start + 1
    if index < len(text) and text[index] in "!^":
        index += 1
    if index < len(text) and text[index] == "]":  # a ] first in the list is one of its members
        index += 1
    close = text.find("]", index)
    return close if close >= 0 else None
