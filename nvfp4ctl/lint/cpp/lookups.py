"""Questions the C++ rules ask about a name across a whole fragment (where is this static compared,
is it returned, does a condition test it, where is this macro expanded), each answered from a table
built in one pass on first use. Searching the fragment once per finding made lint quadratic on big
files: nvcc's generated sources hold thousands of statics, macros and shape-like branches in 1-28 MB.

Every answer is the one a search of the whole code with the name's own pattern gives."""

from __future__ import annotations

import re
from functools import cached_property

from nvfp4ctl.lint.cpp.scopes import matching

_COMPARED_LEFT = re.compile(r"\b([A-Za-z_]\w*)\s*==")
_COMPARED_RIGHT = re.compile(r"==\s*([A-Za-z_]\w*)\b")
# The lookahead keeps `return` itself unconsumed, so `return return_value` sees both words.
_RETURNED = re.compile(r"\breturn\s+(?=([A-Za-z_]\w*))")
_IDENTIFIER = re.compile(r"(?<!\w)[A-Za-z_]\w*")
_WORD = re.compile(r"\w+")
_CONDITION = re.compile(r"\b(?:if|while|switch)\s*(?:constexpr\s*)?\(")
_TERNARY_BREAK = re.compile(r"[;{}?]")


class CodeLookups:
    def __init__(self, code: str) -> None:
        self.code = code
        self._tested: dict[str, bool] = {}
        self._ternary: dict[str, bool] = {}

    # -- comparisons and returns (the static rules) --------------------------------------------------
    def comparisons(self, name: str) -> list[tuple[int, str]]:
        """(offset, text) of each `name ==` or `== name`, as re.finditer(rf"\\bname\\s*==|==\\s*name\\b")
        finds them: in order, none overlapping the one before."""
        candidates = sorted(self._compared.get(name, ()))
        found: list[tuple[int, str]] = []
        reached = 0
        for start, end in candidates:
            if start >= reached:
                found.append((start, self.code[start:end]))
                reached = end
        return found

    @cached_property
    def _compared(self) -> dict[str, list[tuple[int, int]]]:
        spans: dict[str, list[tuple[int, int]]] = {}
        for pattern in (_COMPARED_LEFT, _COMPARED_RIGHT):
            for match in pattern.finditer(self.code):
                spans.setdefault(match.group(1), []).append(match.span())
        return spans

    def is_returned(self, name: str) -> bool:
        """Is there a `return name` (a whole word)?"""
        return name in self._returned

    @cached_property
    def _returned(self) -> frozenset[str]:
        return frozenset(match.group(1) for match in _RETURNED.finditer(self.code))

    # -- macro expansions ----------------------------------------------------------------------------
    def word_offsets(self, names: set[str]) -> dict[str, list[int]]:
        """Where each of `names` (identifiers) stands as a whole word, in order: one pass for them all."""
        found: dict[str, list[int]] = {name: [] for name in names}
        if names:
            for match in _IDENTIFIER.finditer(self.code):
                if match.group() in found:
                    found[match.group()].append(match.start())
        return found

    # -- the names a config branch picks (NV702) -----------------------------------------------------
    def tested_in_condition(self, name: str) -> bool:
        """Does the condition of any if/while/switch name `name` (a whole word; dotted names too)?"""
        if name not in self._tested:
            if _WORD.fullmatch(name):
                self._tested[name] = name in self._condition_words
            else:
                self._tested[name] = re.search(rf"\b{re.escape(name)}\b", self._conditions) is not None
        return self._tested[name]

    @cached_property
    def _conditions(self) -> str:
        # one condition a line: no name a branch picks holds a line break, so no match spans two
        code = self.code
        return "\n".join(code[match.end() : matching(code, match.end() - 1)] for match in _CONDITION.finditer(code))

    @cached_property
    def _condition_words(self) -> frozenset[str]:
        return frozenset(_WORD.findall(self._conditions))

    def chooses_by_ternary(self, name: str) -> bool:
        """Does a `?` follow `name` (or a comparison of it) in the same expression: `tile == 64 ? a : b`,
        `special ? a : b` (not `tile = cond ? 128 : 64`)?"""
        if name not in self._ternary:
            word = re.escape(name)
            pattern = rf"\b{word}\b\s*(?:(?:==|!=|<=|>=|<|>)[^;{{}}?]*)?\)?\s*\?"
            self._ternary[name] = re.search(pattern, self._before_ternaries) is not None
        return self._ternary[name]

    @cached_property
    def _before_ternaries(self) -> str:
        """The code before each `?` back to the ; { } or ? before it, one stretch a line: a match of the
        ternary pattern lies inside one stretch (its gap holds none of ; { } ?), and a line break
        between stretches joins nothing the pattern could match across, as the stretch ends in `?`."""
        code = self.code
        stretches = []
        start = 0
        for match in _TERNARY_BREAK.finditer(code):
            if match.group() == "?":
                stretches.append(code[start : match.end()])
            start = match.end()
        return "\n".join(stretches)
