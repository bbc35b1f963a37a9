"""Where a position sits in C++ code: device function or host, inside a debug-only #if, which
if-conditions guard it. Built once per code fragment from the lexer's code-only view."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

DEBUG_WORD = re.compile(r"(?i)debug|verbose|trace|dump|dbg|print|logging")
_DEVICE_MARK = re.compile(r"__global__|__device__|\b\w*_DEVICE\b")
_DIRECTIVE_LINE = re.compile(r"^[ \t]*#[^\n]*(?:\\\r?\n[^\n]*)*", re.MULTILINE)
_CONDITIONAL = re.compile(r"#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", re.DOTALL)


@dataclass(frozen=True)
class Block:
    start: int  # offset of "{"
    end: int  # offset of the matching "}" (or the end of the text)
    header: str  # code since the previous ; { or } up to the "{"
    device: bool


class Scopes:
    def __init__(self, code: str) -> None:
        self.code = code
        self.directives = [(m.start(), m.end()) for m in _DIRECTIVE_LINE.finditer(code)]
        self._guard_starts, self._guarded = self._preprocessor_guards()
        self.blocks = self._blocks()

    # -- preprocessor ------------------------------------------------------------------------------
    def _preprocessor_guards(self) -> tuple[list[int], list[bool]]:
        starts, guarded = [0], [False]
        stack: list[bool] = []
        for start, end in self.directives:
            match = _CONDITIONAL.match(self.code[start:end].lstrip())
            if match is None:
                continue
            kind, condition = match.group(1), match.group(2)
            if kind in ("if", "ifdef", "ifndef"):
                stack.append(bool(DEBUG_WORD.search(condition)))
            elif kind in ("elif", "else") and stack:
                stack[-1] = kind == "elif" and bool(DEBUG_WORD.search(condition))
            elif kind == "endif" and stack:
                stack.pop()
            starts.append(end)
            guarded.append(any(stack))
        return starts, guarded

    def debug_guarded(self, offset: int) -> bool:
        return self._guarded[bisect.bisect_right(self._guard_starts, offset) - 1]

    def in_directive(self, offset: int) -> tuple[int, int] | None:
        index = bisect.bisect_right(self.directives, (offset, len(self.code) + 1)) - 1
        if index >= 0 and self.directives[index][0] <= offset < self.directives[index][1]:
            return self.directives[index]
        return None

    # -- braces ------------------------------------------------------------------------------------
    def _blocks(self) -> list[Block]:
        code = self.code
        skip = dict(self.directives)
        blocks: list[Block] = []
        stack: list[tuple[int, str, bool]] = []
        last_boundary = 0
        i, n = 0, len(code)
        brace = re.compile(r"[{};]")
        while i < n:
            match = brace.search(code, i)
            if match is None:
                break
            i = match.start()
            directive = self.in_directive(i)
            if directive is not None:
                i = directive[1]
                continue
            ch = code[i]
            if ch == "{":
                header = _strip_directives(code[last_boundary:i], last_boundary, skip)
                device = bool(_DEVICE_MARK.search(header)) or (bool(stack) and stack[-1][2])
                stack.append((i, header.strip(), device))
            elif ch == "}" and stack:
                start, header, device = stack.pop()
                blocks.append(Block(start, i, header, device))
            last_boundary = i + 1
            i += 1
        blocks.extend(Block(start, n, header, device) for start, header, device in stack)
        blocks.sort(key=lambda block: block.start)
        return blocks

    def enclosing(self, offset: int) -> list[Block]:
        """Blocks containing offset, outermost first."""
        return [b for b in self.blocks if b.start < offset <= b.end]

    def in_device_code(self, offset: int) -> bool:
        return any(block.device for block in self.enclosing(offset))

    def statement_prefix(self, offset: int) -> str:
        """Code from the previous ; { or } up to offset (catches `if (debug) printf(...)`), never
        reaching back over a directive line: `#define PRINT_ROW ...` above is not a guard."""
        boundary = max(self.code.rfind(ch, 0, offset) for ch in ";{}")
        index = bisect.bisect_right(self.directives, (offset, len(self.code) + 1)) - 1
        if index >= 0:
            start, end = self.directives[index]
            boundary = max(boundary, start - 1 if start <= offset < end else end - 1)
        return self.code[boundary + 1 : offset]


def _strip_directives(segment: str, base: int, skip: dict[int, int]) -> str:
    if not skip:
        return segment
    parts, cursor = [], base
    for start, end in skip.items():
        if end <= base or start >= base + len(segment):
            continue
        parts.append(segment[cursor - base : max(start, base) - base])
        cursor = min(end, base + len(segment))
    parts.append(segment[cursor - base :])
    return "".join(parts)


def matching(code: str, open_index: int, opener: str = "(", closer: str = ")") -> int:
    """Index of the bracket closing the one at open_index (len(code) if unbalanced)."""
    depth = 0
    for index in range(open_index, len(code)):
        ch = code[index]
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return index
    return len(code)
