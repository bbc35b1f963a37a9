"""A kernel's tunable compile-time knobs, as its config header declares them (what `tune` varies).

One comment line per knob, directly above the macro's `#ifndef NAME` / `#define NAME default`:

    // nvfp4ctl:knob NAME values=V1,V2,... scope=plan|kernel: what it decides

`values` are the settings worth trying (distinct integers; the default must be one of them); `scope=plan`
knobs only steer the host-side planner (one build can serve every value at run time if the planner
reads a table), `scope=kernel` knobs change device code (one build per value). A build sets a knob
with `-DNAME=value`. kernels/sm90/sm90_config.cuh is the first header written this way.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.atomic_file import write_text_atomic
from nvfp4ctl.build.compiler_errors import display_path
from nvfp4ctl.build.read_once import source_text
from nvfp4ctl.errors import UsageError
from nvfp4ctl.line_end import line_end
from nvfp4ctl.not_text import utf8_text
from nvfp4ctl.preamble import leading_byte_order_mark, past_byte_order_mark

SCOPES = ("plan", "kernel")
FORM = "// nvfp4ctl:knob NAME values=A,B scope=plan|kernel: doc"
_DECLARATION = re.compile(r"^\s*//\s*nvfp4ctl:knob\b")
_KNOB = re.compile(r"^\s*//\s*nvfp4ctl:knob\s+(\w+)\s+values=([-\w,]+)\s+scope=(\w+)\s*:\s*(.*)$")
_SPACED_VALUES = re.compile(r"\bvalues=(\S*(?:,\s+|\s+,)[^=]*?)\s+scope=")
_QUOTED_VALUES = re.compile(r"\bvalues=((['\"])[^'\"]*\2)")
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(\S+)\s*$")
# Any `// nvfp4ctl:` mark on a comment line of its own, its word and whether a space comes before it
_MARK = re.compile(r"^\s*//\s*nvfp4ctl:([ \t]*)([\w-]+)")
# The marks nvfp4ctl reads in kernel sources besides `knob` (build.sources.source_marks, tune's dispatch
# table, dump's umma lines): none is a knob declaration mistyped, however alike
OTHER_MARKS = ("kernel-knobs", "dispatch", "umma", "arch", "no-tensor-op", "never-run-on", "ignore")


@dataclass(frozen=True)
class Knob:
    name: str
    default: int
    values: tuple[int, ...]
    scope: str
    doc: str
    line: int  # 1-based line of the declaration


def read_knobs(header: Path) -> tuple[Knob, ...]:
    """Every knob declared in `header`, in file order. A malformed declaration is a UsageError."""
    # as the build reads it: a latin-1 comment is no knob (read once within read_once.reading_once: tune's discover)
    lines = past_byte_order_mark(source_text(header)).splitlines()
    knobs: list[Knob] = []
    first_line: dict[str, int] = {}
    for index, text in enumerate(lines):
        if not _DECLARATION.match(text):  # (a comment quoting the form, `//   // nvfp4ctl:knob`, is no declaration)
            if (mistyped := _mistyped_declaration(text)) is not None:  # its knob would be dropped without a word
                raise UsageError(f"{display_path(header)}:{index + 1}: {mistyped}; write `{FORM}`")
            continue
        where = f"{display_path(header)}:{index + 1}"
        match = _KNOB.match(text)
        if match is None:
            # the form's own regex would only say "expected ...": name the mistake and the list to write
            if quoted := _QUOTED_VALUES.search(text):
                values = quoted.group(1)
                bare = "".join(values[1:-1].split())
                raise UsageError(f"{where}: values={values}: no quotes around the value list (values={bare})")
            if spaced := _SPACED_VALUES.search(text):
                values = spaced.group(1)
                joined = "".join(values.split())
                raise UsageError(f"{where}: values={values}: no spaces in the value list (values={joined})")
            raise UsageError(f"{where}: {_missing_part(text)}expected `{FORM}`")
        name, values_text, scope, doc = match.groups()
        if scope not in SCOPES:
            raise UsageError(f"{where}: scope {scope!r} is not one of {', '.join(SCOPES)}")
        values = tuple(_integer(v, where) for v in values_text.split(","))
        repeated = next((v for i, v in enumerate(values) if v in values[:i]), None)
        if repeated is not None:  # a slip in the list, not a second try of the value: say so, as for a twice-declared knob
            raise UsageError(f"{where}: values={values_text}: {repeated} is listed twice")
        default = _default(lines[index + 1 : index + 4], name, where)
        if default not in values:
            raise UsageError(f"{where}: {name}'s default {default} is not among its values {values_text}")
        if name in first_line:
            raise UsageError(f"{where}: {name} is declared twice (first at line {first_line[name]})")
        first_line[name] = index + 1
        knobs.append(Knob(name, default, values, scope, doc.strip(), index + 1))
    return tuple(knobs)


_VALUE_OR_RANGE = r"-?\d+(?:\.\.-?\d+)?"
# a values= list with a range anywhere in it: values=2..4, values=2..4,8, values=1,2..4
_RANGE_VALUES = re.compile(rf"\bvalues=((?:{_VALUE_OR_RANGE},)*-?\d+\.\.-?\d+(?:,{_VALUE_OR_RANGE})*)\b")
_SCOPE_WITHOUT_DOC = re.compile(r"\bscope=\w+\s*$")


def _missing_part(text: str) -> str:
    """What a declaration the form does not match lacks, where one part can be named (`values=2..3`, no `: doc`),
    as the start of the message; "" otherwise."""
    if ranged := _RANGE_VALUES.search(text):
        return f"values={ranged.group(1)}: list every value (values={_expanded(ranged.group(1))}); "
    for part in ("values=", "scope="):
        if part not in text:
            return f"no {part} in the declaration; "
    if _SCOPE_WITHOUT_DOC.search(text):
        return "no `: doc` after the scope (say what the knob does); "
    return ""


def _expanded(listed: str) -> str:
    """2..4,8 -> 2,3,4,8: every range of the list written out; "A,B,..." where one is too long to write."""
    values: list[str] = []
    for part in listed.split(","):
        low, _, high = part.partition("..")
        if not high:
            values.append(low)
        elif 0 <= int(high) - int(low) < 16:
            values.extend(str(v) for v in range(int(low), int(high) + 1))
        else:
            return "A,B,..."
    return ",".join(values)


def _mistyped_declaration(text: str) -> str | None:
    """What is wrong with a comment line meant as a knob declaration but not one (`nvfp4ctl:knbo`,
    `nvfp4ctl: knob`, `nvfp4ctl:knobs`); None for any other line, and for the other marks nvfp4ctl reads."""
    mark = _MARK.match(text)
    if mark is None:
        return None
    space, word = mark.groups()  # `nvfp4ctl:knob` itself is a declaration (_DECLARATION), read elsewhere
    if word == "knob":
        return f"`nvfp4ctl:{space}knob` is no knob declaration: remove the space after the colon"
    if word not in OTHER_MARKS and difflib.SequenceMatcher(None, word.lower(), "knob").ratio() >= 0.75:
        return f"`nvfp4ctl:{space}{word}` is no knob declaration"  # knbo, kno, knobs, Knob
    return None


def _default(following: list[str], name: str, where: str) -> int:
    """The `#define NAME value` of the `#ifndef NAME` block right after the declaration."""
    if not following or not re.match(rf"^\s*#\s*ifndef\s+{name}\s*$", following[0]):
        raise UsageError(f"{where}: {name}'s declaration must sit directly above `#ifndef {name}`")
    for text in following[1:]:
        match = _DEFINE.match(text)
        if match and match.group(1) == name:
            return _integer(match.group(2), where)
    raise UsageError(f"{where}: no `#define {name} <default>` after `#ifndef {name}`")


def _integer(text: str, where: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise UsageError(f"{where}: {text!r} is not an integer") from None


# ---- The dispatch table: plan knobs set per problem shape (kernels/sm90/sm90_dispatch.cuh) ----
# Entries sit one per line between the two marker lines, exactly `{M, N, K, L, PlanKnob::NAME, VALUE},`
# with NAME the kernel's name for the knob (nvfp4ctl.tune.entry_names). Everything outside the markers is kept as is.
DISPATCH_BEGIN = "// nvfp4ctl:dispatch begin"
DISPATCH_END = "// nvfp4ctl:dispatch end"
_ENTRY = re.compile(r"^\s*\{\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*PlanKnob::(\w+),\s*(-?\d+)\s*\},\s*$")


@dataclass(frozen=True)
class DispatchEntry:
    m: int
    n: int
    k: int
    l: int
    knob: str  # the kernel's name for the knob, e.g. SHARED_A_MIN_K_TILES (tune.entry_names)
    value: int
    source_line: int = field(default=0, compare=False)  # 1-based line read from (0: not read), for error messages

    def line(self) -> str:
        return f"{{{self.m}, {self.n}, {self.k}, {self.l}, PlanKnob::{self.knob}, {self.value}}},"


def _marked(lines: list[str], path: Path) -> tuple[int, int]:
    starts = [i for i, text in enumerate(lines) if text.strip() == DISPATCH_BEGIN]
    ends = [i for i, text in enumerate(lines) if text.strip() == DISPATCH_END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise UsageError(f"{path}: expected one `{DISPATCH_BEGIN}` line before one `{DISPATCH_END}` line")
    return starts[0], ends[0]


def table_text(path: Path) -> str:
    """A dispatch table's or a knob-declaring file's text, which a tune reads and writes back: another
    encoding than UTF-8 is one UsageError (a byte rewritten as U+FFFD would change the file)."""
    return utf8_text(path, "tune reads its entries as text and writes the winners into it: save it as UTF-8")


def read_dispatch(path: Path) -> tuple[DispatchEntry, ...]:
    lines = past_byte_order_mark(table_text(path)).splitlines()  # a marker on the first line is still one
    return dispatch_entries(path, lines)


def dispatch_entries(path: Path, lines: list[str]) -> tuple[DispatchEntry, ...]:
    """The entries between the markers of `lines`, the table file `path` already read (read_dispatch)."""
    begin, end = _marked(lines, path)
    entries = []
    for index in range(begin + 1, end):
        match = _ENTRY.match(lines[index])
        if match is None:
            raise UsageError(f"{path}:{index + 1}: expected `{{M, N, K, L, PlanKnob::NAME, VALUE}},`")
        m, n, k, l, knob, value = match.groups()
        entries.append(DispatchEntry(int(m), int(n), int(k), int(l), knob, int(value), index + 1))
    return tuple(entries)


def write_dispatch(path: Path, entries: list[DispatchEntry], named: Mapping[str, Knob]) -> None:
    """Replace the table's entries; each must set a scope=plan knob to one of its declared values. A table
    made read-only is left as it is (atomic_file.ReadOnlyTarget, a UsageError)."""
    write_text_atomic(path, render_dispatch(path, table_text(path), entries, named), keep_read_only=True)


def render_dispatch(path: Path, text: str, entries: list[DispatchEntry], named: Mapping[str, Knob]) -> str:
    """`text` (the table file `path`) with its entries replaced by `entries`, checked as write_dispatch's;
    `named`: the knob each entry's name stands for (nvfp4ctl.tune.entry_names)."""
    plan = {name: knob for name, knob in named.items() if knob.scope == "plan"}
    for entry in entries:
        knob = plan.get(entry.knob)
        if knob is None:
            raise UsageError(f"{entry.knob}: not a plan knob of this kernel ({', '.join(sorted(plan))})")
        if entry.value not in knob.values:
            raise UsageError(f"{entry.knob}={entry.value}: not among its declared values {knob.values}")
    lines = past_byte_order_mark(text).splitlines()
    begin, end = _marked(lines, path)
    indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
    ordered = sorted(entries, key=lambda e: (e.m, e.n, e.k, e.l, e.knob))
    body = [indent + entry.line() for entry in ordered]
    ending = line_end(text)  # the file's own: a CRLF table stays CRLF
    return leading_byte_order_mark(text) + ending.join([*lines[: begin + 1], *body, *lines[end:]]) + ending
