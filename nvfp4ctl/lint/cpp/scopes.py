"""Where a position sits in C++ code: device function or host, inside a debug-only #if, which
if-conditions guard it. Built once per code fragment from the lexer's code-only view."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property

DEBUG_WORD = re.compile(r"(?i)debug|verbose|trace|dump|dbg|print|logging")
_DEVICE_MARK = re.compile(r"__global__|__device__|\b\w*_DEVICE\b")
_DIRECTIVE_LINE = re.compile(r"^[ \t]*#[^\n]*(?:\\\r?\n[^\n]*)*", re.MULTILINE)
_CONDITIONAL = re.compile(r"#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", re.DOTALL)
_BOUNDARY = re.compile(r"[;{}]")


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
        self._directive_ends = [end for _, end in self.directives]  # sorted too: directives never overlap
        self._guard_starts, self._guarded = self._preprocessor_guards()
        self._innermost_from: list[int] = [0]  # from this offset on ...
        self._innermost_start: list[int] = [-1]  # ... the innermost open block is the one opened here
        self.blocks = self._blocks()
        self._parents = _parents(self.blocks)
        # Per block, whether it or a block around it is device code or has a debug word in its header:
        # asked of every enclosing block per printf, nesting made lint quadratic (8,000 nested { around
        # 8,000 printf calls took 16 s).
        self._device_within: list[bool] = []
        self._debug_header_within: list[bool] = []
        for block, parent in zip(self.blocks, self._parents):
            self._device_within.append(block.device or (parent >= 0 and self._device_within[parent]))
            self._debug_header_within.append(bool(DEBUG_WORD.search(block.header))
                                             or (parent >= 0 and self._debug_header_within[parent]))
        self._boundaries = [m.start() for m in _BOUNDARY.finditer(code)]

    # -- preprocessor ------------------------------------------------------------------------------
    def _preprocessor_guards(self) -> tuple[list[int], list[bool]]:
        starts, guarded = [0], [False]
        stack: list[bool] = []
        debug_groups = 0  # how many of stack are True: any(stack) per directive was quadratic in the nesting
        for start, end in self.directives:
            match = _CONDITIONAL.match(self.code[start:end].lstrip())
            if match is None:
                continue
            kind, condition = match.group(1), match.group(2)
            if kind in ("if", "ifdef", "ifndef"):
                stack.append(bool(DEBUG_WORD.search(condition)))
                debug_groups += stack[-1]
            elif kind in ("elif", "else") and stack:
                debug_groups -= stack[-1]
                stack[-1] = kind == "elif" and bool(DEBUG_WORD.search(condition))
                debug_groups += stack[-1]
            elif kind == "endif" and stack:
                debug_groups -= stack.pop()
            starts.append(end)
            guarded.append(debug_groups > 0)
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
                header = self._without_directives(last_boundary, i)
                device = bool(_DEVICE_MARK.search(header)) or (bool(stack) and stack[-1][2])
                stack.append((i, header.strip(), device))
                self._innermost_from.append(i + 1)
                self._innermost_start.append(i)
            elif ch == "}" and stack:
                start, header, device = stack.pop()
                blocks.append(Block(start, i, header, device))
                self._innermost_from.append(i + 1)
                self._innermost_start.append(stack[-1][0] if stack else -1)
            last_boundary = i + 1
            i += 1
        blocks.extend(Block(start, n, header, device) for start, header, device in stack)
        blocks.sort(key=lambda block: block.start)
        return blocks

    def _without_directives(self, start: int, end: int) -> str:
        """code[start:end] less the directive lines in it. Only the directives that reach into the span
        are visited (found by bisection): walking every directive of the file per block made lint of
        nvcc's generated sources, hundreds of thousands of `# line` markers and blocks, quadratic."""
        pieces, cursor = [], start
        index = bisect.bisect_right(self._directive_ends, start)
        while index < len(self.directives) and self.directives[index][0] < end:
            directive_start, directive_end = self.directives[index]
            pieces.append(self.code[cursor : max(directive_start, start)])
            cursor = min(directive_end, end)
            index += 1
        pieces.append(self.code[cursor:end])
        return "".join(pieces)

    def _innermost(self, offset: int) -> int:
        """Index of the innermost block containing offset (after its "{", up to its "}"), -1 for none:
        looked up where the braces before offset left it, as walking up from the last block opened
        before offset took a step per block closed since (a closed chain of 8,000 blocks per printf)."""
        start = self._innermost_start[bisect.bisect_right(self._innermost_from, offset) - 1]
        return -1 if start < 0 else self._block_index[start]

    @cached_property
    def _block_index(self) -> dict[int, int]:
        return {block.start: index for index, block in enumerate(self.blocks)}

    def enclosing(self, offset: int) -> list[Block]:
        """Blocks containing offset, outermost first."""
        index = self._innermost(offset)
        chain = []
        while index >= 0:
            chain.append(self.blocks[index])
            index = self._parents[index]
        return chain[::-1]

    def innermost(self, offset: int) -> Block | None:
        index = self._innermost(offset)
        return self.blocks[index] if index >= 0 else None

    def in_device_code(self, offset: int) -> bool:
        """Is a block containing offset device code?"""
        index = self._innermost(offset)
        return index >= 0 and self._device_within[index]

    def under_debug_header(self, offset: int) -> bool:
        """Does the header of a block containing offset hold a debug word (DEBUG_WORD)?"""
        index = self._innermost(offset)
        return index >= 0 and self._debug_header_within[index]

    def statement_start(self, offset: int) -> int:
        """Offset just past the last ; { or } before offset (0 where there is none)."""
        index = bisect.bisect_left(self._boundaries, offset) - 1
        return self._boundaries[index] + 1 if index >= 0 else 0

    def statement_prefix_start(self, offset: int) -> int:
        """Where statement_prefix(offset) begins."""
        boundary = self.statement_start(offset) - 1
        index = bisect.bisect_right(self.directives, (offset, len(self.code) + 1)) - 1
        if index >= 0:
            start, end = self.directives[index]
            boundary = max(boundary, start - 1 if start <= offset < end else end - 1)
        return boundary + 1

    def statement_prefix(self, offset: int) -> str:
        """Code from the previous ; { or } up to offset (catches `if (debug) printf(...)`), never
        reaching back over a directive line: `#define PRINT_ROW ...` above is not a guard."""
        return self.code[self.statement_prefix_start(offset) : offset]


def _parents(blocks: list[Block]) -> list[int]:
    """Index of each block's innermost enclosing block (-1 for none); `blocks` sorted by start."""
    parents: list[int] = []
    open_blocks: list[int] = []
    for index, block in enumerate(blocks):
        while open_blocks and blocks[open_blocks[-1]].end < block.start:
            open_blocks.pop()
        parents.append(open_blocks[-1] if open_blocks else -1)
        open_blocks.append(index)
    return parents

