"""What a kernel lets tune vary: the knobs declared in its source and local headers, its dispatch
table file, and a candidate's configuration (one value per knob) with the `-D` flags that build it.

Knob declarations are read by nvfp4ctl.build.knobs (one form, one parser). The dispatch file is
the local header holding the `// nvfp4ctl:dispatch begin` marker line, or the one a line
`// nvfp4ctl:dispatch file=NAME` in the kernel or a local header names (beside that header).
"""

from __future__ import annotations

import heapq
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.build.compiler_errors import display_path
from nvfp4ctl.build.knobs import FORM, Knob, read_knobs
from nvfp4ctl.build.read_once import reading_once, source_text
from nvfp4ctl.build.sources import header_search, include_target, local_headers
from nvfp4ctl.cpp_lexer import blank
from nvfp4ctl.errors import UsageError
from nvfp4ctl.preamble import past_byte_order_mark
from nvfp4ctl.preprocessor import includes, live_code

# Every candidate build defines this: the kernel's planner then ignores its per-shape table, so the
# `-D` values alone decide (the shipped build, without it, reads the table).
TUNE_DEFINE = "NVFP4CTL_TUNE=1"
_DISPATCH = re.compile(r"^\s*//\s*nvfp4ctl:dispatch\s+file=(\S+)\s*$", re.MULTILINE)
_DISPATCH_MARKER = re.compile(r"^\s*//\s*nvfp4ctl:dispatch begin\s*$", re.MULTILINE)
_TUNE_MACRO = re.compile(rf"\b{TUNE_DEFINE.split('=')[0]}\b")
_MACRO_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(define|undef|ifdef|ifndef|elifdef|elifndef)[ \t]+(\w+)", re.MULTILINE)
_DEFINED = re.compile(r"\bdefined\b[ \t]*\(?[ \t]*(\w+)")
_ENDIF = re.compile(r"^[ \t]*#[ \t]*endif[ \t]*$")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# A #define line and its continuations: a name in a macro's body is read where the macro is used, not there
_DEFINE_LINES = re.compile(r"^[ \t]*#[ \t]*define\b[^\n]*(?:(?<=\\)\n[^\n]*)*", re.MULTILINE)
_DEFINED_NAME = re.compile(r"#[ \t]*define[ \t]+(\w+)(\([^)]*\))?")
NOT_READ = "its sources were not read"  # KernelKnobs made without discover()


@dataclass(frozen=True)
class KernelKnobs:
    source: Path
    knobs: tuple[Knob, ...]
    dispatch: Path | None  # the per-shape table file, None when the kernel names none
    declared_in: Mapping[str, Path] | None = None  # knob name -> the file declaring it
    # Why the shipped build (no -D) may not be the start's (every declared default as -D, NVFP4CTL_TUNE
    # defined); None where it is the same build, which a kernel without a dispatch table then builds
    # and times once (a kernel with a table: the shipped build reads the table, the start does not).
    shipped_differs: str | None = NOT_READ
    enumerators: tuple[str, ...] = ()  # the kernel's `enum class PlanKnob`: the names its table's entries use

    @property
    def shipped_is_start(self) -> bool:
        """The shipped build is the start's build: one build, one row ("kernel's defaults = start")."""
        return self.dispatch is None and self.shipped_differs is None

    @property
    def prefix(self) -> str:
        """The knob names' common prefix up to an underscore ("NVFP4_SM90_"): the table omits it."""
        common = os.path.commonprefix([knob.name for knob in self.knobs]) if len(self.knobs) > 1 else ""
        return common[: common.rfind("_") + 1]

    def short(self, name: str) -> str:
        return name.removeprefix(self.prefix)

    def entry_name(self, name: str) -> str:
        """The name a new dispatch entry gives knob `name`: the kernel's enumerator for it, else the short name."""
        from nvfp4ctl.tune.entry_names import knobs_named

        return next((enumerator for enumerator, knob in knobs_named(self.enumerators, self.knobs).items()
                     if knob.name == name and enumerator != name), self.short(name))

    def by_name(self, name: str) -> Knob:
        """The knob `name` stands for: its full name, that name without the prefix all knobs share, or its entry
        name (entry_name: SPLIT for TINY_SPLIT beside MY_SWIZZLE), the name tune's labels and tables give it."""
        from nvfp4ctl.tune.entry_names import knobs_named

        for knob in self.knobs:
            if knob.name == name or self.short(knob.name) == name:
                return knob
        if (named := knobs_named(self.enumerators, self.knobs).get(name)) is not None:
            return named
        raise UsageError(f"{self.source.name}: no knob named {name}")

    def of_scope(self, scope: str) -> tuple[Knob, ...]:
        return tuple(knob for knob in self.knobs if knob.scope == scope)

    def defaults(self) -> Config:
        return Config.of({knob.name: knob.default for knob in self.knobs}, self)


@dataclass(frozen=True)
class Config:
    """One value per knob, in declaration order (hashable: it names a build)."""

    items: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, values: Mapping[str, int], knobs: KernelKnobs) -> Config:
        return cls(tuple((knob.name, int(values.get(knob.name, knob.default))) for knob in knobs.knobs))

    def __getitem__(self, name: str) -> int:
        return dict(self.items)[name]

    def with_value(self, name: str, value: int) -> Config:
        return Config(tuple((n, value if n == name else v) for n, v in self.items))

    def merged(self, values: Mapping[str, int]) -> Config:
        return Config(tuple((n, int(values.get(n, v))) for n, v in self.items))

    def defines(self) -> tuple[str, ...]:
        return (TUNE_DEFINE, *(f"{name}={value}" for name, value in self.items))

    @property
    def id(self) -> str:
        return ",".join(f"{name}={value}" for name, value in self.items)

    def diff(self, base: Config, knobs: KernelKnobs) -> str:
        """"STAGES_PER_CTA_A=7 SPAN=0" against `base`, each knob named as the table's entries name it
        (KernelKnobs.entry_name); "start" when equal."""
        ours = dict(self.items)
        changed = [f"{knobs.entry_name(n)}={ours[n]}" for n, v in base.items if ours.get(n) != v]
        return " ".join(changed) or "start"


def discover(source: Path) -> KernelKnobs:
    """Knobs of the kernel file and every local header it includes, and its dispatch file. Each file is read
    once (read_once.reading_once): for its knobs, its dispatch lines, the shipped build's test and its PlanKnob."""
    with reading_once():
        return _discovered(source)


def _discovered(source: Path) -> KernelKnobs:
    files = [source, *local_headers(source)]
    knobs: list[Knob] = []
    declared_in: dict[str, Path] = {}
    first_of: dict[str, Knob] = {}
    named: Path | None = None
    marked: Path | None = None
    for path in files:
        found = read_knobs(path)
        for knob in found:
            if knob.name in first_of:
                raise UsageError(f"{display_path(path)}:{knob.line}: {knob.name} is already declared at"
                                 f" {display_path(declared_in[knob.name])}:{first_of[knob.name].line}")
            declared_in[knob.name], first_of[knob.name] = path, knob
        knobs.extend(found)
        text = past_byte_order_mark(source_text(path))
        match = _DISPATCH.search(text)
        if match and named is None:
            named = (path.parent / match.group(1)).resolve()
        if marked is None and _DISPATCH_MARKER.search(text):
            marked = path.resolve()
    dispatch = named or marked
    if not knobs:
        raise UsageError(f"{source}: declares no knobs (`{FORM}` above `#ifndef NAME`); nothing to tune")
    differs = "it reads its dispatch table" if dispatch else shipped_differs(files, tuple(knobs), declared_in)
    from nvfp4ctl.tune.entry_names import plan_enumerators

    enumerators = plan_enumerators([dispatch, *files] if dispatch else files)
    return KernelKnobs(source=source, knobs=tuple(knobs), dispatch=dispatch, declared_in=declared_in,
                       shipped_differs=differs, enumerators=enumerators)


def shipped_differs(files: list[Path], knobs: tuple[Knob, ...], declared_in: Mapping[str, Path]) -> str | None:
    """Why a build without -D may differ from one with every declared default as -D, or None: it is the
    same where each default is a plain `#ifndef NAME` / `#define NAME VALUE` / `#endif` (read_knobs takes
    the first `#define` within two lines, which an `#if` there may not pick), no other directive defines,
    undefines or tests NAME (before its block it is set by -D only), no code names NAME before the compiler
    has read its block, and nothing reads NVFP4CTL_TUNE."""
    for knob in knobs:
        lines = live_code(source_text(declared_in[knob.name])).splitlines()[knob.line:knob.line + 3]
        plain = (len(lines) == 3 and lines[1].split()[-1:] == [str(knob.default)]
                 and re.fullmatch(rf"\s*#\s*define\s+{knob.name}\s+\S+\s*", lines[1]) is not None
                 and _ENDIF.match(lines[2]) is not None)
        if not plain:
            return (f"{display_path(declared_in[knob.name])}:{knob.line + 1}: {knob.name}'s default is not a plain"
                    f" `#ifndef`/`#define {knob.name} {knob.default}`/`#endif`")
    names = {knob.name: knob for knob in knobs}
    for path in files:
        code = live_code(source_text(path))
        if tune := _TUNE_MACRO.search(code):
            return (f"{display_path(path)}:{_line(code, tune.start())} reads {TUNE_DEFINE.split('=')[0]},"
                    " which the start's build defines")
        for found in [*_MACRO_DIRECTIVE.finditer(code), *_DEFINED.finditer(code)]:
            name, line = found.group(found.lastindex or 0), _line(code, found.start())
            knob = names.get(name)
            if knob is not None and not (declared_in[name] == path and line in (knob.line + 1, knob.line + 2)):
                return f"{display_path(path)}:{line} names {name} outside its `#ifndef` default, which -D{name} changes"
    return _named_before_default(files, knobs, declared_in)


def _named_before_default(files: list[Path], knobs: tuple[Knob, ...], declared_in: Mapping[str, Path]) -> str | None:
    """The first place where code names a knob before the compiler has read its `#ifndef` default (in the
    kernel above the include of its config, say): the build without -D sees an undefined name there, the
    start's build its value. The files are walked in the order the compiler reads them, each header at its
    first include (every local header has `#pragma once` or a guard), each file once: linear in their size."""
    codes = {path: live_code(source_text(path)) for path in files}
    reads = _knob_readers(codes.values(), {knob.name for knob in knobs})
    block_lines: dict[Path, dict[int, str]] = {}  # the 1-based line of each knob's `#ifndef`
    for knob in knobs:
        block_lines.setdefault(declared_in[knob.name], {})[knob.line + 1] = knob.name
    search = list(header_search(files[0]))
    visited = {files[0]}
    walk = [(files[0], _events(files[0], codes, reads, block_lines.get(files[0], {}), search))]
    defined: set[str] = set()
    while walk:
        path, events = walk[-1]
        event = next(events, None)
        if event is None:
            walk.pop()
            continue
        offset, kind, value, named = event
        if kind == "default":
            defined.add(value)
        elif kind == "include":
            header = Path(value)
            if header in codes and header not in visited:
                visited.add(header)
                walk.append((header, _events(header, codes, reads, block_lines.get(header, {}), search)))
        elif value not in defined:
            knob = next(k for k in knobs if k.name == value)
            through = f" (through {named})" if named != value else ""
            return (f"{display_path(path)}:{_line(codes[path], offset)} names {value}{through} before"
                    f" {display_path(declared_in[value])}:{knob.line + 1} defines its default,"
                    f" so the build without -D{value} sees it undefined")
    return None


def _knob_readers(codes: Iterable[str], knobs: set[str]) -> dict[str, frozenset[str]]:
    """Each name whose use reads knobs → those knobs: each knob itself, and every macro whose body names
    one or names such a macro (followed through any number of macros, as the preprocessor expands them;
    `(A_KNOB + B_KNOB)` reads both). Every #define of the files counts wherever it is: one defined after a
    use makes the two builds differ at most where they are the same, never the other way round. Linear
    in the macros' bodies times the knobs a name reads (a handful)."""
    read_by: dict[str, set[str]] = {}  # a name → the macros whose bodies name it
    for code in codes:
        for define in _DEFINE_LINES.finditer(blank(code).code):
            head = _DEFINED_NAME.search(define.group())
            if head is None:
                continue
            for name in _IDENTIFIER.findall(define.group()[head.end():]):
                read_by.setdefault(name, set()).add(head.group(1))
    reads: dict[str, set[str]] = {knob: {knob} for knob in knobs}
    waiting = sorted(knobs)
    while waiting:  # a name is taken up again only when its set of knobs grows: at most once per knob
        name = waiting.pop()
        for macro in sorted(read_by.get(name, ())):
            known = reads.setdefault(macro, set())
            if not reads[name] <= known:
                known |= reads[name]
                waiting.append(macro)
    return {name: frozenset(found) for name, found in reads.items()}


def _events(path: Path, codes: Mapping[Path, str], reads: Mapping[str, frozenset[str]], block_lines: Mapping[int, str],
            search: list[Path]) -> Iterator[tuple[int, str, str, str]]:
    """(offset, kind, value, name) in file order: "use" of a knob (value), by its name or a macro that reads
    it (name), not in a comment, a literal or a macro's body (read where the macro is used); "include" of a
    header (its resolved path); "default" where a knob's `#ifndef` line starts."""
    code = codes[path]
    plain = _DEFINE_LINES.sub(lambda define: re.sub(r"[^\n]", " ", define.group()), blank(code).code)
    uses = ((m.start(), "use", knob, m.group()) for m in _IDENTIFIER.finditer(plain) if m.group() in reads
            for knob in sorted(reads[m.group()]))
    headers = ((i.start, "include", str(header), "") for i in includes(code)
               if (header := include_target(i, path, search)) is not None)
    return heapq.merge(_line_starts(code, block_lines), headers, uses)


def _line_starts(code: str, block_lines: Mapping[int, str]) -> Iterator[tuple[int, str, str, str]]:
    line, offset = 1, 0
    for wanted in sorted(block_lines):
        while line < wanted:
            found = code.find("\n", offset)
            if found == -1:
                return
            offset, line = found + 1, line + 1
        yield offset, "default", block_lines[wanted], block_lines[wanted]


def tunable(knobs: Iterable[Knob]) -> tuple[Knob, ...]:
    """Knobs with a choice (a knob with one declared value is documented, not searched)."""
    return tuple(knob for knob in knobs if len(set(knob.values)) > 1)


def _line(code: str, offset: int) -> int:
    return code.count("\n", 0, offset) + 1
