"""Questions the C++ rules ask about a name across a whole fragment (where is this static compared,
is it returned, does a condition test it, where is this macro expanded), each answered from a table
built in one pass on first use. Searching the fragment once per finding made lint quadratic on big
files: nvcc's generated sources hold thousands of statics, macros and shape-like branches in 1-28 MB.

Every answer is the one a search of the whole code with the name's own pattern gives."""

from __future__ import annotations

import bisect
import re
from collections import deque
from collections.abc import Callable
from functools import cached_property

from nvfp4ctl.lint.cpp.brackets import BracketPairs

_COMPARED_LEFT = re.compile(r"\b([A-Za-z_]\w*)\s*==")
_COMPARED_RIGHT = re.compile(r"==\s*([A-Za-z_]\w*)\b")
# The lookahead keeps `return` itself unconsumed, so `return return_value` sees both words.
_RETURNED = re.compile(r"\breturn\s+(?=([A-Za-z_]\w*))")
_IDENTIFIER = re.compile(r"(?<!\w)[A-Za-z_]\w*")
_TOKEN = re.compile(r"\w+|\W+")
_WORD_START = re.compile(r"\w")
IF_OPENING = re.compile(r"\bif\s*(?:constexpr\s*)?\(")  # an if up to its (
_CONDITION = re.compile(r"\b(?:if|while|switch)\s*(?:constexpr\s*)?\(")
_TERNARY_BREAK = re.compile(r"[;{}?]")
# What follows a name a ternary chooses by, up to the `?` that ends its stretch of _before_ternaries.
_TERNARY_AFTER = re.compile(r"\s*(?:==|!=|<=|>=|<|>|\)?\s*\?)")


class CodeLookups:
    def __init__(self, code: str) -> None:
        self.code = code

    # -- brackets ------------------------------------------------------------------------------------
    @cached_property
    def parens(self) -> BracketPairs:
        return BracketPairs(self.code, "(", ")")

    @cached_property
    def braces(self) -> BracketPairs:
        return BracketPairs(self.code, "{", "}")

    def if_holding(self, offset: int) -> int | None:
        """The offset of the innermost `if (` whose condition, from after its ( through its ), holds
        offset: the conditions nest as their brackets do, so it is looked up where the conditions
        opened and closed before offset left it."""
        froms, innermost = self._if_steps
        return innermost[bisect.bisect_right(froms, offset) - 1]

    @cached_property
    def _if_steps(self) -> tuple[list[int], list[int | None]]:
        froms: list[int] = [0]  # from this offset on ...
        innermost: list[int | None] = [None]  # ... the innermost condition holding it is this if's
        open_ifs: list[tuple[int, int]] = []  # (if offset, its close), innermost last

        def close_before(offset: int) -> None:
            while open_ifs and open_ifs[-1][1] < offset:
                froms.append(open_ifs.pop()[1] + 1)
                innermost.append(open_ifs[-1][0] if open_ifs else None)

        for match in IF_OPENING.finditer(self.code):
            close_before(match.end())
            open_ifs.append((match.start(), self.parens.closing(match.end() - 1)))
            froms.append(match.end())
            innermost.append(match.start())
        close_before(len(self.code) + 1)
        return froms, innermost

    @cached_property
    def semicolons(self) -> list[int]:
        """The offset of every `;`, in order."""
        return [match.start() for match in re.finditer(";", self.code)]

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
    def branched_on(self, names: set[str]) -> set[str]:
        """Those of `names` that pick a code path: the condition of an if/while/switch names one (as
        `\\bname\\b` finds it; dotted names too), or a `?` follows one or a comparison of it in the same
        expression, `tile == 64 ? a : b`, `special ? a : b` (not `tile = cond ? 128 : 64`), as
        `\\bname\\b\\s*(?:(?:==|!=|<=|>=|<|>)[^;{}?]*)?\\)?\\s*\\?` finds it. One pass over each text for
        all the names: a search of the whole fragment per name made many names quadratic."""
        if not names:
            return set()
        ternaries = self._before_ternaries
        return (_names_standing(names, self._conditions, lambda end: True)
                | _names_standing(names, ternaries, lambda end: _TERNARY_AFTER.match(ternaries, end) is not None))

    @cached_property
    def _conditions(self) -> str:
        """The text of each condition that no other condition holds, one a line: no name a branch picks
        holds a line break, so no match spans two. A condition inside another is a stretch of that one's
        text (brackets nest), and a name found in it is found there too, the ( and ) around both being
        no word: joining every condition made nested ones quadratic in size."""
        code, parens = self.code, self.parens
        outermost, reach = [], -1
        for match in _CONDITION.finditer(code):
            if match.end() > reach:
                reach = parens.closing(match.end() - 1)
                outermost.append(code[match.end() : reach])
        return "\n".join(outermost)

    @cached_property
    def _before_ternaries(self) -> str:
        """The code before each `?` back to the ; { } or ? before it, one stretch a line: a match of the
        ternary pattern lies inside one stretch (its gap holds none of ; { } ?), and a line break
        between stretches joins nothing the pattern could match across, as the stretch ends in `?`.
        So `[^;{}?]*` after a comparison always reaches the `?` that ends its stretch (_TERNARY_AFTER)."""
        code = self.code
        stretches = []
        start = 0
        for match in _TERNARY_BREAK.finditer(code):
            if match.group() == "?":
                stretches.append(code[start : match.end()])
            start = match.end()
        return "\n".join(stretches)


def _names_standing(names: set[str], text: str, ends_well: Callable[[int], bool]) -> set[str]:
    """Those of `names` (each starting with a letter or _) that stand in text as `\\bname\\b` finds
    them, ending where ends_well(end) holds. Such a match is a run of the text's tokens (maximal runs
    of word characters and of others) equal to the name's tokens: the \\b before it ends a run, and
    the one after it ends a word, or other characters that a word follows. The runs of all the names
    are looked for in one pass (Aho-Corasick over tokens)."""
    goto: list[dict[str, int]] = [{}]  # the trie of the names' tokens
    ending: list[str | None] = [None]  # the name ending at each node
    for name in names:
        node = 0
        for token in _TOKEN.findall(name):
            if token not in goto[node]:
                goto[node][token] = len(goto)
                goto.append({})
                ending.append(None)
            node = goto[node][token]
        ending[node] = name
    fallback = [0] * len(goto)  # the node of the longest proper suffix of the node's tokens
    named = [-1] * len(goto)  # the node itself or its nearest fallback that a name ends at
    queue = deque(goto[0].values())
    for child in queue:
        named[child] = child if ending[child] is not None else -1
    while queue:
        node = queue.popleft()
        for token, child in goto[node].items():
            suffix = fallback[node]
            while suffix and token not in goto[suffix]:
                suffix = fallback[suffix]
            fallback[child] = goto[suffix].get(token, 0)
            named[child] = child if ending[child] is not None else named[fallback[child]]
            queue.append(child)
    tokens = list(_TOKEN.finditer(text))
    if tokens and _WORD_START.match(tokens[-1].group()) is None:
        tokens.pop()  # a name ending in other characters needs a word after them
    found: set[str] = set()
    seen = [False] * len(goto)  # a node seen has its fallbacks seen too
    node = 0
    for match in tokens:
        token = match.group()
        while node and token not in goto[node]:
            node = fallback[node]
        node = goto[node].get(token, 0)
        at = named[node]
        if at >= 0 and not seen[at] and ends_well(match.end()):
            while at >= 0 and not seen[at]:
                seen[at] = True
                found.add(ending[at])
                at = named[fallback[at]]
    return found
