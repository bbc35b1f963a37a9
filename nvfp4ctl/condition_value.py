"""The value of an `#if` condition where the macros it reads are known, None where one is not.

A scan reads a file without the build's defines: a macro it was not told about may be defined by a
header it does not read or by a flag, so any condition that depends on one is unknown (None), and the
group it opens may be read. Known macros (the target arch's `__CUDA_ARCH__` in a device pass) decide
a condition outright, as do literals (`#if 0`); `&&` and `||` are decided by one known side where it
settles them (`0 && FOO` is 0 whatever FOO is)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[uUlL]*|([A-Za-z_]\w*)|(\|\||&&|==|!=|<=|>=|[!<>()+\-*/%]))")
_NEVER = re.compile(r"(?!)")


@dataclass(frozen=True)
class Macros:
    """Macros whose state a scan knows: `values` are defined, with their integer value; a name `undefined`
    matches is certainly not defined. Any other name is unknown."""
    values: Mapping[str, int] = field(default_factory=dict)
    undefined: re.Pattern[str] = _NEVER


NO_MACROS = Macros()


class _Unreadable(Exception):
    """A condition this reader does not parse (a char literal, ?:, a function-like macro): unknown."""


def condition_value(condition: str, macros: Macros = NO_MACROS) -> int | None:
    """The integer an `#if`/`#elif` condition evaluates to, or None where it depends on an unknown macro
    or is beyond this reader."""
    try:
        tokens = _tokens(re.sub(r"\\\r?\n", " ", condition))
        reader = _Reader(tokens, macros)
        value = reader.either()
        if reader.position != len(tokens):
            return None
        return value
    except _Unreadable:
        return None


def defined_value(name: str, macros: Macros) -> int | None:
    """1 where `name` is known to be defined, 0 known not to be, None unknown (`#ifdef NAME`)."""
    if name in macros.values:
        return 1
    return 0 if macros.undefined.fullmatch(name) else None


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    position, text = 0, text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise _Unreadable
        tokens.append(match.group(1) or match.group(2) or match.group(3))
        position = match.end()
    return tokens


def _integer(digits: str) -> int:
    return int(digits, 8) if re.fullmatch(r"0\d+", digits) else int(digits, 0)


class _Reader:
    """Recursive descent over C's precedence, each level a method; values are int or None (unknown)."""

    def __init__(self, tokens: list[str], macros: Macros) -> None:
        self.tokens, self.macros, self.position = tokens, macros, 0

    def _peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> str:
        token = self._peek()
        if token is None or (expected is not None and token != expected):
            raise _Unreadable
        self.position += 1
        return token

    def either(self) -> int | None:
        value = self.both()
        while self._peek() == "||":
            self._take()
            other = self.both()
            if value or other:  # one certainly true side settles it
                value = 1
            else:
                value = None if value is None or other is None else 0
        return value

    def both(self) -> int | None:
        value = self._binary(0)
        while self._peek() == "&&":
            self._take()
            other = self._binary(0)
            if value == 0 or other == 0:  # one certainly false side settles it
                value = 0
            else:
                value = None if value is None or other is None else 1
        return value

    _LEVELS = (("==", "!="), ("<", ">", "<=", ">="), ("+", "-"), ("*", "/", "%"))

    def _binary(self, level: int) -> int | None:
        if level == len(self._LEVELS):
            return self._unary()
        value = self._binary(level + 1)
        while self._peek() in self._LEVELS[level]:
            operator = self._take()
            other = self._binary(level + 1)
            value = None if value is None or other is None else _applied(operator, value, other)
        return value

    def _unary(self) -> int | None:
        token = self._take()
        if token in ("!", "-", "+"):
            value = self._unary()
            if value is None:
                return None
            return int(not value) if token == "!" else -value if token == "-" else value
        if token == "(":
            value = self.either()
            self._take(")")
            return value
        if token[0].isdigit():
            return _integer(token)
        if token == "defined":
            parenthesised = self._peek() == "("
            if parenthesised:
                self._take()
            name = self._take()
            if parenthesised:
                self._take(")")
            return defined_value(name, self.macros)
        if token in ("true", "false"):
            return int(token == "true")
        if self._peek() == "(":
            raise _Unreadable  # a function-like macro (__CUDA_ARCH_HAS_FEATURE__(SM100_ALL)): not expanded here
        if token in self.macros.values:
            return self.macros.values[token]
        return 0 if self.macros.undefined.fullmatch(token) else None


def _applied(operator: str, left: int, right: int) -> int | None:
    if operator in ("/", "%") and right == 0:
        return None  # the compiler's error to report
    return {"==": lambda: int(left == right), "!=": lambda: int(left != right), "<": lambda: int(left < right),
            ">": lambda: int(left > right), "<=": lambda: int(left <= right), ">=": lambda: int(left >= right),
            "+": lambda: left + right, "-": lambda: left - right, "*": lambda: left * right,
            "/": lambda: int(left / right), "%": lambda: left - right * int(left / right)}[operator]()
