"""The C++/CUDA rules, run on a code-only view so comments and string contents never match.

A fragment is a whole .cu/.cpp file or C++ embedded in a Python string; `base` is the fragment's
offset in the file, so every finding points at the file's own line and column.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from nvfp4ctl.lint.config import LintConfig
from nvfp4ctl.cpp_lexer import blank
from nvfp4ctl.lint.cpp.lookups import IF_OPENING, CodeLookups
from nvfp4ctl.lint.cpp.scopes import DEBUG_WORD, Scopes
from nvfp4ctl.lint.diagnostic import Finding
from nvfp4ctl.lint.shapes import describe, pinned_shape

_GRAPH_API = re.compile(r"\b(?:cudaGraph\w*|cuGraph\w*|cudaStreamBeginCapture\w*|cudaStreamEndCapture\w*)\b")
_PRINTF = re.compile(r"(?<![\w:])(?:std::)?printf\s*\(|\bcute::print(?:_tensor)?\s*\(")
_TRAP = re.compile(r"__trap\s*\(|\btrap\b|\bassert\s*\(|\bCUTE_RUNTIME_ASSERT\b|\babort\s*\(")
# Calls that do not compile in device code: a macro using one only ever expands in host code.
_HOST_ONLY = re.compile(r"\b(?:exit|fprintf|fputs|fflush)\s*\(|\bstd::(?:cerr|cout|clog)\b|\bthrow\b|\bTORCH_CHECK\b")
_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)")
_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b\s*(?:volatile\b|__volatile__)?\s*(?:goto\s*)?\(")
# A static declaration is `static`, qualifiers, a type and the declared name before = ; [ or {
# (_static_declarations). The type may run over words, spaces, : < > and , and ends in spaces, * or &.
_STATIC_WORD = re.compile(r"\bstatic\s+")
_QUALIFIER = re.compile(r"(?:const|volatile|thread_local|inline)\s+")
_TYPE_START = re.compile(r"[A-Za-z_]")
_TYPE_CHARACTERS = re.compile(r"[\w:<>,\s]*")
_DECLARATOR = re.compile(r"[\s\*&]+(?P<name>[A-Za-z_]\w*)\s*[=;\[{]")
# Where a run of spaces, * and & begins that a declared name and = ; [ or { follow: each run tried once.
_DECLARATOR_START = re.compile(r"(?<![\s\*&])(?=[\s\*&]+[A-Za-z_]\w*\s*[=;\[{])")
_POINTER_TYPE = re.compile(r"\*|\b(?:u?intptr_t)\b")
_INTEGER_TYPE = re.compile(r"\b(?:u?int64_t|size_t|long|uint64_t|int64)\b")
_POINTER_NAME = re.compile(r"(?i)last|prev|ptr|addr|cached")
_TENSOR_TYPE = re.compile(r"\bTensor\b")
_WORKSPACE_NAME = re.compile(r"(?i)work|ws\b|scratch|buf|pool|handle|desc")
_IF = IF_OPENING
# Matched over a statement in place (pos, endpos): no ^, and $ is the statement's end.
_CONFIG_ASSIGNMENT = re.compile(r"\s*([A-Za-z_][\w.]*(?:->\w+)*)\s*=\s*-?\d+(?:\.\d*)?[uUlLfF]*\s*$")
_BLANKS = re.compile(r"\s*")
_BRACE_OR_SEMICOLON = re.compile(r"[{};]")
_ELSE = re.compile(r"\s*else\b\s*")
_EQ_LITERAL = re.compile(r"(?<![%*/+\-]\s)(?<![%*/+\-])\b(\d+)\s*==\s*[A-Za-z_(]|[\w\)\]]\s*==\s*(\d+)\b(?!\s*[%*/+\-])")


@dataclass(frozen=True)
class Fragment:
    text: str  # C++ source as written in the file
    base: int  # offset of text[0] in the file


def check(fragment: Fragment, config: LintConfig, kernel_source: str | None = None) -> list[Finding]:
    """The fragment's findings; `kernel_source`: the name of the whole .cu file it is, which NV003
    judges (a header may hold nothing yet, and load_inline strings are the Python file's business)."""
    code = blank(fragment.text).code
    if kernel_source is not None and not code.strip():
        return [_empty_kernel_source(kernel_source)]
    scopes, lookups = Scopes(code), CodeLookups(code)
    findings: list[Finding] = []
    findings += _graphs(code)
    findings += _statics(code, scopes, lookups)
    findings += _printf(fragment.text, code, scopes, lookups)
    findings += _shape_branches(code, config, lookups)
    findings += _asm(code)
    return [Finding(f.offset + fragment.base, f.code, f.message, f.width) for f in findings]


def _empty_kernel_source(name: str) -> Finding:
    """NV003 for a .cu file with no code (0 bytes, whitespace or only comments): a kernel source
    that defines nothing, whose build fails on the C ABI it lacks."""
    return Finding(0, "NV003", f"{name} has no code (it is empty, or only comments): a kernel source defines"
                               " the kernel and the C ABI functions the binding calls")


def _graphs(code: str) -> list[Finding]:
    return [
        Finding(m.start(), "NV201", f"CUDA graph API {m.group()}: graphs are forbidden", len(m.group()))
        for m in _GRAPH_API.finditer(code)
    ]


def _asm(code: str) -> list[Finding]:
    return [
        Finding(m.start(), "NV901", "handwritten PTX (inline asm); profile cutlass-only wants CUTLASS/CuTe calls",
                len(m.group().rstrip("( ")))
        for m in _ASM.finditer(code)
    ]


def _printf(text: str, code: str, scopes: Scopes, lookups: CodeLookups) -> list[Finding]:
    findings: list[Finding] = []
    calls = list(_PRINTF.finditer(code))
    if not calls:
        return findings
    expansions = _MacroExpansions(calls, text, code, scopes, lookups)
    traps_after = _TrapsAfter(text, code)
    for index, match in enumerate(calls):
        at = match.start()
        directive = scopes.in_directive(at)
        if directive is not None:
            # inside a macro: fine when the macro is a debug macro, ends in a trap or is host-only
            body = text[directive[0] : directive[1]]
            if DEBUG_WORD.search(body.split("(")[0]) or _TRAP.search(body) or expansions.host_only(directive, body):
                continue
        elif not scopes.in_device_code(at):
            continue  # host-side error messages are not the rule's business
        if scopes.debug_guarded(at):
            continue
        if scopes.under_debug_header(at):
            continue
        # The statement before the call, searched in place. An earlier call in it holds "print", a
        # debug word, so only the first call of a statement is searched: each searching from the
        # statement's start made a long statement of many calls quadratic.
        prefix_start = scopes.statement_prefix_start(at)
        if (index > 0 and calls[index - 1].start() >= prefix_start) or DEBUG_WORD.search(code, prefix_start, at):
            continue
        innermost = scopes.innermost(at)
        in_branch = innermost is not None and bool(re.match(r"(?:\}\s*)?(?:if|else)\b", innermost.header))
        if traps_after.follow(at, count=None if in_branch else 2):
            continue  # a failure report right before the trap is the accepted use
        name = match.group().rstrip("( ")
        findings.append(Finding(at, "NV802", f"{name} in device code without a debug flag; wrap it in "
                                             "#ifdef <NAME>_DEBUG or print only before __trap()", len(name)))
    return findings


class _MacroExpansions:
    """Where the macros that hold a printf are expanded, found in one pass over the code for them all,
    and each macro judged once however many printf calls it holds."""

    def __init__(self, calls: list[re.Match[str]], text: str, code: str, scopes: Scopes,
                 lookups: CodeLookups) -> None:
        self._code, self._scopes = code, scopes
        names = set()
        for call in calls:
            directive = scopes.in_directive(call.start())
            define = _DEFINE.match(text[directive[0] : directive[1]].lstrip()) if directive else None
            if define is not None:
                names.add(define.group(1))
        self._uses = lookups.word_offsets(names)
        self._judged: dict[tuple[int, int], bool] = {}

    def host_only(self, directive: tuple[int, int], body: str) -> bool:
        if directive not in self._judged:
            self._judged[directive] = self._host_macro(directive, body)
        return self._judged[directive]

    def _host_macro(self, directive: tuple[int, int], body: str) -> bool:
        """Is a #define (`body`, the original text of `directive`) host-only: it calls what device code
        cannot (exit, fprintf, std::cerr, throw), or it is expanded in this code only outside device
        functions (a CUDA_CHECK after each launch)? A macro expanded nowhere here, or inside another
        macro, may still reach device code."""
        match = _DEFINE.match(body.lstrip())
        if match is None:
            return False
        if _HOST_ONLY.search(body):
            return True
        code, scopes = self._code, self._scopes
        expansions = []
        for use in self._uses.get(match.group(1), ()):
            around = scopes.in_directive(use)
            if around is None:
                expansions.append(use)
            elif around != directive and _DEFINE.match(code[around[0] : around[1]].lstrip()):
                return False  # used by another macro: where that one expands is not followed
        return bool(expansions) and not any(scopes.in_device_code(at) for at in expansions)


class _TrapsAfter:
    """Does a trap call (_TRAP) follow a position within `count` statements at its brace depth (None:
    to the end of its block)? That is a search of the original text over those statements with every
    nested {block} left out but its `}`; no match of _TRAP holds a brace or a `;`, so it is a match in
    the text at the position's own level, before the statement or block ends. Levels, their `;` and
    their trap calls are found in one pass: reading the statements after each printf made a block of
    many printf calls quadratic in its length."""

    def __init__(self, text: str, code: str) -> None:
        self._level_starts: list[int] = [0]  # a level (the code between a { and its }) holds from here
        self._levels: list[int] = [0]
        self._ends: list[int] = []  # per level: where it ends (its }, or the end of the code)
        self._semicolons: list[list[int]] = []
        self._traps: list[list[int]] = []
        open_levels = [self._new_level(len(code))]
        for match in _BRACE_OR_SEMICOLON.finditer(code):
            at, ch = match.start(), match.group()
            if ch == ";":
                self._semicolons[open_levels[-1]].append(at)
                continue
            if ch == "{":
                open_levels.append(self._new_level(len(code)))
            else:
                self._ends[open_levels.pop()] = at
                if not open_levels:  # a } that closes nothing ends the statements before it all the same
                    open_levels.append(self._new_level(len(code)))
            self._level_starts.append(at + 1)
            self._levels.append(open_levels[-1])
        for match in _TRAP.finditer(text):
            self._traps[self._level(match.start())].append(match.start())

    def _new_level(self, end: int) -> int:
        self._ends.append(end)
        self._semicolons.append([])
        self._traps.append([])
        return len(self._ends) - 1

    def _level(self, offset: int) -> int:
        return self._levels[bisect.bisect_right(self._level_starts, offset) - 1]

    def follow(self, offset: int, count: int | None) -> bool:
        """`count`: None, or 1 or more statements (the one at offset counts)."""
        level = self._level(offset)
        end = self._ends[level]
        if count is not None:
            semicolons = self._semicolons[level]
            last = bisect.bisect_left(semicolons, offset) + count - 1
            if last < len(semicolons):
                end = min(end, semicolons[last])
        traps = self._traps[level]
        index = bisect.bisect_left(traps, offset)
        return index < len(traps) and traps[index] < end


def _statics(code: str, scopes: Scopes, lookups: CodeLookups) -> list[Finding]:
    findings: list[Finding] = []
    reported_ifs: set[int] = set()
    compared_names: set[str] = set()  # a name's comparisons, walked once, report nothing a second time
    for static in _static_declarations(code):
        quals, type_text, name = static.quals, static.type_text, static.name
        if "constexpr" in type_text or "constexpr" in quals or type_text.strip() in ("", "struct", "class"):
            continue
        pointer_like = bool(_POINTER_TYPE.search(type_text)) or (
            bool(_INTEGER_TYPE.search(type_text)) and bool(_POINTER_NAME.search(name)))
        if _TENSOR_TYPE.search(type_text) and not _WORKSPACE_NAME.search(name):
            if lookups.is_returned(name):
                findings.append(Finding(static.name_start, "NV302",
                                        f"static tensor {name} is returned: it outlives the call and may hold an old result",
                                        len(name)))
            continue
        if not pointer_like or name in compared_names:
            continue
        compared_names.add(name)
        for compared_at, compared in lookups.comparisons(name):
            if_start = _enclosing_if(code, compared_at, scopes, lookups)
            if if_start is None or if_start in reported_ifs:
                continue
            reported_ifs.add(if_start)
            if _controls_return(code, if_start, lookups):
                findings.append(Finding(compared_at, "NV301",
                                        f"static {name} remembers an earlier input and the call returns early when "
                                        "it matches: that skips the work being timed", len(compared)))
            else:
                findings.append(Finding(compared_at, "NV302",
                                        f"static {name} compares this call's input with an earlier one; make sure "
                                        "no work is skipped", len(compared)))
    return findings


@dataclass(frozen=True)
class _StaticDeclaration:
    quals: str  # the qualifiers after `static` (const, volatile, thread_local, inline), spaces kept
    type_text: str  # from the type's first word to the name, the spaces, * and & before it included
    name: str
    name_start: int


def _static_declarations(code: str) -> Iterator[_StaticDeclaration]:
    """Each static declaration, in order and none overlapping the one before, as the backtracking
    pattern `\\bstatic\\s+(?P<quals>(?:(?:const|volatile|thread_local|inline)\\s+)*)(?P<type>[A-Za-z_]
    [\\w:<>,\\s]*?[\\s\\*&]+)(?P<name>[A-Za-z_]\\w*)\\s*[=;\\[{]` finds them. That pattern took
    time quadratic in a run of type characters for each static before it (`static int` and a page of
    spaces; `static a static a ...`); here each static walks its qualifiers once and looks its
    declarator up among those found in one pass over the code.

    The type after k qualifiers is the shortest one that ends in a declarator (_DECLARATOR_START: a
    run of spaces, * and & then a name and = ; [ or {) before the type characters end; the pattern
    tries the most qualifiers first, then one fewer (their words become the type's), down to none."""
    declarators = [match.start() for match in _DECLARATOR_START.finditer(code)]
    search_from = 0
    type_end = -1  # where the last run of type characters walked ends: a later static inside it shares it
    while (static := _STATIC_WORD.search(code, search_from)) is not None:
        qualifier_ends = [static.end()]
        while (qualifier := _QUALIFIER.match(code, qualifier_ends[-1])) is not None:
            qualifier_ends.append(qualifier.end())
        declaration = None
        if _TYPE_START.match(code, static.end()):
            if static.end() + 1 > type_end:  # the same end after any number of qualifiers
                type_end = _TYPE_CHARACTERS.match(code, static.end() + 1).end()
            for type_start in reversed(qualifier_ends):
                if not _TYPE_START.match(code, type_start):
                    continue
                index = bisect.bisect_left(declarators, type_start + 1)
                if index < len(declarators) and declarators[index] <= type_end:
                    declarator = _DECLARATOR.match(code, declarators[index])
                    assert declarator is not None
                    name_start = declarator.start("name")
                    declaration = _StaticDeclaration(code[static.end() : type_start], code[type_start:name_start],
                                                     declarator.group("name"), name_start)
                    search_from = declarator.end()
                    break
        if declaration is None:
            search_from = static.start() + 1
        else:
            yield declaration


def _enclosing_if(code: str, offset: int, scopes: Scopes, lookups: CodeLookups) -> int | None:
    """Offset of the `if (` whose condition contains offset, if any (same statement): the innermost,
    looked up, where each if of the statement before offset was asked (many ifs and comparisons in
    one statement were quadratic)."""
    candidate = lookups.if_holding(offset)
    return candidate if candidate is not None and candidate >= scopes.statement_start(offset) else None


def _controls_return(code: str, if_start: int, lookups: CodeLookups) -> bool:
    open_paren = code.index("(", if_start)
    close = lookups.parens.closing(open_paren)
    start = _BLANKS.match(code, close + 1).end()  # not code[close + 1:].lstrip(): a copy of the rest per if
    if code.startswith("{", start):
        body = code[start : lookups.braces.closing(start) + 1]
    else:
        end = code.find(";", start)
        body = code[start : end if end != -1 else len(code)]
    return bool(re.search(r"\breturn\b", body))


def _shape_branches(code: str, config: LintConfig, lookups: CodeLookups) -> list[Finding]:
    """A branch on a benchmark shape, unless it only picks a tuned config: it sets names to numbers
    (`if (m == 128 && n == 4096) { tile_n = 256; stages = 4; }`, else branches included). A return, a
    call or any other statement is another code path, and so is a picked number that a condition or
    a ternary picks a path by. The names of all the branches are looked up in one pass."""
    literals = _ComparedLiterals(code, config.benchmark_shapes)
    chains = _ConfigChains(code, lookups)
    branches = []
    for match in _IF.finditer(code):
        close = lookups.parens.closing(match.end() - 1)
        compared = literals.within(match.end(), close)
        shape = pinned_shape(compared, config.benchmark_shapes)
        if shape is not None:
            branches.append((match.start(), describe(shape, compared, config.shape_dims), chains.link(match.start())))
    picking = [if_start for if_start, _, link in branches if link.sets_names]
    picks_a_path = chains.picking_any(lookups.branched_on(chains.names_from(picking)))
    return [Finding(if_start, "NV702", f"branches on the benchmark shape {shown}: every shape must take "
                                       "the same code path (tuned tile configs are fine)", 2)
            for if_start, shown, link in branches if not link.sets_names or picks_a_path[if_start]]


class _ComparedLiterals:
    """The integers that code compares with == (_EQ_LITERAL), those a benchmark shape holds, found in
    one pass: reading each if's condition made nested conditions quadratic. The literals of a
    condition are the matches that start in it: no match reaches over its ( or its ) (a match ends
    in a letter, _ or ( or in digits, and starts in a word character, ) or ])."""

    def __init__(self, code: str, shapes: tuple[tuple[int, ...], ...]) -> None:
        self._at: dict[int, list[int]] = {dim: [] for shape in shapes for dim in shape}
        for match in _EQ_LITERAL.finditer(code):
            digits = (match.group(1) or match.group(2)).lstrip("0")
            # no shape has a dimension of 30 digits, and int() refuses 4,300 (ValueError)
            if len(digits) <= 30 and int(digits or "0") in self._at:
                self._at[int(digits or "0")].append(match.start())

    def within(self, start: int, end: int) -> list[int]:
        """The literals of code[start:end] that a shape holds, each as often as a shape may (3 at most):
        pinned_shape needs no more."""
        values = []
        for dim, offsets in self._at.items():
            values += [dim] * min(3, bisect.bisect_left(offsets, end) - bisect.bisect_left(offsets, start))
        return values
@dataclass(frozen=True)
class _ConfigLink:
    """An if of an else chain, as a config branch: what its own branch sets, the if its else starts."""

    names: frozenset[str]  # the names its own branch sets to numbers
    rest: int | None  # the offset of the if its else starts
    tail: frozenset[str]  # the names a last plain else sets
    picks: bool  # all it and the rest of its chain do is set names to numbers
    sets_names: bool  # ... and they set some


class _ConfigChains:
    """The names an if and its else chain set, when all they do is set names to numbers, each if read
    once. Read from each shape branch of a chain again, recursing per else if, a chain of many
    branches was quadratic, and one of 1,000 stopped lint with a RecursionError."""

    def __init__(self, code: str, lookups: CodeLookups) -> None:
        self._code, self._lookups = code, lookups
        self.links: dict[int, _ConfigLink] = {}  # by the if's offset; each after the one its else starts

    def link(self, if_start: int) -> _ConfigLink:
        code, lookups = self._code, self._lookups
        path: list[tuple[int, frozenset[str] | None, int | None, frozenset[str] | None]] = []
        at = if_start
        while at not in self.links:
            body_start, body_end, after = _statement(code, lookups.parens.closing(code.index("(", at)) + 1, lookups)
            names = _config_assignments(code, body_start, body_end, lookups)
            rest = _ELSE.match(code, after) if names is not None else None
            if rest is not None and _IF.match(code, rest.end()):
                path.append((at, names, rest.end(), None))
                at = rest.end()
                continue
            tail = _config_assignments(code, *_statement(code, rest.end(), lookups)[:2], lookups) if rest else frozenset()
            path.append((at, names, None, tail))
            break
        for at, names, rest, tail in reversed(path):
            if names is None:
                link = _ConfigLink(frozenset(), None, frozenset(), False, False)
            elif rest is not None:
                after_else = self.links[rest]
                link = _ConfigLink(names, rest, frozenset(), after_else.picks,
                                   after_else.picks and (bool(names) or after_else.sets_names))
            else:
                link = _ConfigLink(names, None, tail or frozenset(), tail is not None, bool(tail is not None and (names or tail)))
            self.links[at] = link
        return self.links[if_start]

    def names_from(self, if_starts: list[int]) -> set[str]:
        """The names the chains from these ifs set, each link read once."""
        names: set[str] = set()
        seen: set[int] = set()
        for at in if_starts:
            next_at: int | None = at
            while next_at is not None and next_at not in seen:
                seen.add(next_at)
                link = self.links[next_at]
                names |= link.names | link.tail
                next_at = link.rest
        return names

    def picking_any(self, names: set[str]) -> dict[int, bool]:
        """Per if: does its chain set one of names?"""
        found: dict[int, bool] = {}
        for at, link in self.links.items():  # the link an else starts comes first
            found[at] = (not names.isdisjoint(link.names) or not names.isdisjoint(link.tail)
                         or (link.rest is not None and found[link.rest]))
        return found


def _statement(code: str, start: int, lookups: CodeLookups) -> tuple[int, int, int]:
    """Where the body of the statement or {block} starting at start (after blanks) begins and ends,
    and the offset after it: a block's body is inside its braces, a statement's runs through its ;."""
    at = _BLANKS.match(code, start).end()
    if code.startswith("{", at):
        end = lookups.braces.closing(at) + 1
        return at + 1, end - 1, end
    semicolons = lookups.semicolons
    index = bisect.bisect_left(semicolons, at)
    end = len(code) if index == len(semicolons) else semicolons[index] + 1
    return at, end, end


def _config_assignments(code: str, start: int, end: int, lookups: CodeLookups) -> frozenset[str] | None:
    """The names code[start:end] sets, when each of its statements (split at ;) sets a name to a
    number, read in place: copied and split, nested branches copied their bodies again."""
    picked: set[str] = set()
    semicolons = lookups.semicolons
    index = bisect.bisect_left(semicolons, start)
    while True:
        stop = semicolons[index] if index < len(semicolons) and semicolons[index] < end else end
        if _BLANKS.match(code, start, stop).end() < stop:
            match = _CONFIG_ASSIGNMENT.match(code, start, stop)
            if match is None:
                return None
            picked.add(match.group(1))
        if stop == end:
            return frozenset(picked)
        start, index = stop + 1, index + 1
