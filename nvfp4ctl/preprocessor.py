"""What of a C++/CUDA file the preprocessor certainly reads, for the scans of its `#include` lines:
comments and the groups of an `#if 0` (or the `#else` of an `#if 1`) are not, so an include there
is neither followed nor inlined nor refused. A directive is one outside string literals: an `#if 0` line
inside a raw string (PTX in asm(R"(...)")) is the string's text. Every other conditional group counts, whatever its
macro: without the build's defines a scan cannot tell, and following too much is the safe side. A scan told some
macros (`Macros`: the target arch's `__CUDA_ARCH__` in its device pass) skips the groups they rule out too.

`live_code()` is a copy of the same length (newlines kept), so an offset or line in it is one in
the file; string and char literals stay as they are (an include's name is one)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from nvfp4ctl.condition_value import NO_MACROS, Macros, condition_value, defined_value
from nvfp4ctl.cpp_lexer import Lexed, blank, spaces
from nvfp4ctl.preamble import BYTE_ORDER_MARK

_LOGICAL_LINE = re.compile(r"(?:\\\r?\n|[^\n])*\n?")  # a physical line and those its backslashes join
_CONDITIONAL = re.compile(r"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)", re.DOTALL)
_INCLUDE = re.compile(r'^[ \t]*(#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)[^\n]*)', re.MULTILINE)
_CUTLASS_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"](?:cute|cutlass)/", re.MULTILINE)


@dataclass(frozen=True)
class Include:
    name: str  # as written between the quotes (or the angle brackets)
    start: int  # offset of the `#`
    end: int  # just past the directive (a comment after it is not part of it)
    line: int  # 1-based
    angled: bool = False  # `#include <name>`: the compiler looks in its include folders only, not beside the file

    @property
    def spelt(self) -> str:
        """The name as the directive writes it: `"name"` or `<name>`."""
        return f"<{self.name}>" if self.angled else f'"{self.name}"'


def live_code(text: str, macros: Macros = NO_MACROS) -> str:
    """`text` with comments and the groups the preprocessor certainly skips blanked; `macros`: those whose
    state is known, so that the groups they rule out are certainly skipped too."""
    if text.startswith(BYTE_ORDER_MARK):  # nvcc skips it: the first line's directive is one (offsets kept)
        text = " " + text[1:]
    lexed = blank(text)
    return _without_skipped_groups(_without_comments(text, lexed), lexed.code, macros)


def quoted_includes(code: str) -> list[Include]:
    """The `#include "..."` directives of live_code() text, in file order (the offsets are the file's)."""
    return [include for include in includes(code) if not include.angled]


def includes(code: str) -> list[Include]:
    """The `#include "..."` and `#include <...>` directives of live_code() text, in file order (the offsets are
    the file's)."""
    found = []
    line, counted = 1, 0  # lines counted on from the previous include, not from the top per include
    for match in _INCLUDE.finditer(code):
        start = match.start(1)
        line += code.count("\n", counted, start)
        counted = start
        angled = match.group(2) is None
        found.append(Include(name=match.group(3) if angled else match.group(2), start=start,
                             end=start + len(match.group(1).rstrip()), line=line, angled=angled))
    return found


def includes_cutlass(code: str) -> bool:
    """Whether live_code() text includes a CUTLASS or CuTe header."""
    return _CUTLASS_INCLUDE.search(code) is not None


def _without_comments(text: str, lexed: Lexed) -> str:
    pieces: list[str] = []
    kept = 0
    for start, end in lexed.comments:
        pieces += [text[kept:start], spaces(text[start:end])]
        kept = end
    pieces.append(text[kept:])
    return "".join(pieces)


@dataclass
class _Conditional:
    reading: bool  # the current group may be read
    decided: bool  # an earlier group was certainly taken: the rest are certainly skipped
    inside_read: bool = True  # the group this conditional sits in may be read (every one around it may)


def _reading(stack: list[_Conditional]) -> bool:
    """May the current line be read: every conditional around it in a group that may be. Read from the
    innermost alone (only it changes while it is open): asking each of them per line made a file
    of thousands of nested #if quadratic."""
    return not stack or (stack[-1].reading and stack[-1].inside_read)


def _without_skipped_groups(code: str, lexed_code: str, macros: Macros) -> str:
    """`code` (comments blanked) with the skipped groups blanked; `lexed_code` is the same text with string
    literals blanked too (cpp_lexer.blank), where a directive is looked for: one inside a string is none."""
    pieces: list[str] = []
    stack: list[_Conditional] = []
    for line in _LOGICAL_LINE.finditer(code):
        text = line.group()
        directive = _CONDITIONAL.match(lexed_code, line.start(), line.end())
        if directive is not None:
            _step(stack, directive.group(1), directive.group(2), _reading(stack), macros)
        keep = directive is not None or _reading(stack)
        pieces.append(text if keep else spaces(text))
    return "".join(pieces)


def _step(stack: list[_Conditional], kind: str, condition: str, reading: bool, macros: Macros = NO_MACROS) -> None:
    """One conditional directive; `reading`: whether the group it sits in may be read (inside a
    skipped group only the nesting counts, as in the preprocessor)."""
    if kind in ("if", "ifdef", "ifndef"):
        value = _value(kind, condition, macros) if reading else None
        stack.append(_Conditional(reading=value != 0, decided=bool(value), inside_read=reading))
        return
    if not stack:
        return  # an #else or #endif without its #if: the compiler's error to report
    frame = stack[-1]
    if kind == "endif":
        stack.pop()
    elif frame.decided:
        frame.reading = False
    elif kind == "else":
        frame.reading, frame.decided = True, True
    else:  # elif, elifdef, elifndef
        value = _value(kind.replace("el", "", 1), condition, macros)
        frame.reading, frame.decided = value != 0, bool(value)


def _value(kind: str, condition: str, macros: Macros) -> int | None:
    """Whether an if/ifdef/ifndef condition holds (1, 0), None where it cannot be told."""
    if kind == "if":
        return condition_value(condition, macros)
    name = condition.split()[0] if condition.split() else ""
    defined = defined_value(name, macros)
    if defined is None or kind == "ifdef":
        return defined
    return 1 - defined
