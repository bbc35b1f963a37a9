"""The kernel's dispatch table file: read the current entries, write the winners back.

Two machine-edited blocks, everything else in the file kept byte for byte:

    // nvfp4ctl:kernel-knobs begin          scope=kernel winners, one global set (device code):
    #ifndef NVFP4_SM90_STAGES_PER_CTA_A     only knobs whose winner differs from the declared
    #define NVFP4_SM90_STAGES_PER_CTA_A 7   default; `-D` still wins. Without this block the
    #endif                                  winners become the knobs' declared defaults instead
    // nvfp4ctl:kernel-knobs end            (`render_defaults`: the `#define` under each declaration)

    // nvfp4ctl:dispatch begin              scope=plan winners, one line per (shape, knob):
    {128, 7168, 16384, 1, PlanKnob::SPAN, 1},   the kernel's name for the knob (tune.entry_names)
    // nvfp4ctl:dispatch end

The per-shape entries are read and rendered by nvfp4ctl.build.knobs (dispatch_entries, render_dispatch);
this module adds the kernel block and the declared defaults (kernels/sm90/sm90_dispatch.cuh), and
writes every file a tune changes in one go (write_table).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.atomic_file import made_read_only, write_text_atomic
from nvfp4ctl.build.knobs import DispatchEntry, Knob, dispatch_entries, render_dispatch, table_text
from nvfp4ctl.errors import ToolTimeout, UsageError
from nvfp4ctl.line_end import line_end
from nvfp4ctl.lock_holder import holder_said, holding
from nvfp4ctl.preamble import leading_byte_order_mark, past_byte_order_mark
from nvfp4ctl.tune.entry_names import knobs_named
from nvfp4ctl.tune.knobs import KernelKnobs
from nvfp4ctl.words import seconds_text

Shape = tuple[int, int, int, int]  # m, n, k, l

KERNEL_BEGIN, KERNEL_END = "// nvfp4ctl:kernel-knobs begin", "// nvfp4ctl:kernel-knobs end"
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(-?\w+)\s*$")
# The kernel-knobs block's lines, each may end with a comment (kept when the block is written again)
_TAIL = r"(\s*(?://.*|/\*(?:(?!\*/).)*\*/\s*)?)$"
_BLOCK_IFNDEF = re.compile(r"^\s*#\s*ifndef\s+(\w+)" + _TAIL)
_BLOCK_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(-?\w+)" + _TAIL)
_BLOCK_ENDIF = re.compile(r"^\s*#\s*endif" + _TAIL)
_TRIPLES = "each knob in the block is an `#ifndef NAME`, `#define NAME VALUE`, `#endif` triple, set once"
BLOCK_FORM = "`#ifndef NAME` / `#define NAME VALUE` / `#endif` lines (each may end with a // or /* */ comment)"


@dataclass
class DispatchTable:
    plan: dict[Shape, dict[str, int]] = field(default_factory=dict)  # full knob names
    kernel: dict[str, int] = field(default_factory=dict)
    has_kernel_block: bool = False
    # (shape, full knob name) -> the name its entry was read with (PlanKnob::NAME), which it keeps when written
    entry_names: dict[tuple[Shape, str], str] = field(default_factory=dict)
    # full knob name -> the comments ending its `#ifndef`, `#define` and `#endif` lines in the block, written back
    kernel_comments: dict[str, tuple[str, str, str]] = field(default_factory=dict)


def _kernel_block(lines: list[str], path: Path) -> tuple[int, int] | None:
    starts = [i for i, line in enumerate(lines) if line.strip() == KERNEL_BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == KERNEL_END]
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise UsageError(f"{path}: expected one `{KERNEL_BEGIN}` line followed by one `{KERNEL_END}` line")
    return starts[0], ends[0]


def read_table(path: Path, knobs: KernelKnobs) -> DispatchTable:
    """The per-shape entries (nvfp4ctl.build.knobs.dispatch_entries) and the kernel block, full names.
    Each entry is checked here, at the start of a tune (a compile-only one too): a bad entry found
    only when the winners are written would cost the whole tune."""
    table = DispatchTable()
    first_line: dict[tuple[Shape, str], int] = {}
    lines = past_byte_order_mark(table_text(path)).splitlines()  # a marker on the first line is still one
    entries = dispatch_entries(path, lines)
    named = knobs_named([*knobs.enumerators, *(entry.knob for entry in entries)], knobs.knobs)
    for entry in entries:
        meant = named[entry.knob].name if entry.knob in named else entry.knob
        knob = _checked(knobs, meant, entry.value, "plan", f"{path}:{entry.source_line}")
        shape = (entry.m, entry.n, entry.k, entry.l)
        table.entry_names[shape, knob.name] = entry.knob
        values = table.plan.setdefault(shape, {})
        if knob.name in values and values[knob.name] != entry.value:  # which was meant is the author's to say
            raise UsageError(f"{path}:{entry.source_line}: {knobs.entry_name(knob.name)}={entry.value} for"
                             f" {'x'.join(map(str, shape))}, where {path}:{first_line[shape, knob.name]} sets it to"
                             f" {values[knob.name]}: keep one entry per shape and plan knob")
        first_line.setdefault((shape, knob.name), entry.source_line)
        values[knob.name] = entry.value
    block = _kernel_block(lines, path)
    if block is not None:
        table.has_kernel_block = True
        _read_kernel_block(lines, block, path, knobs, table)
    return table


def _read_kernel_block(lines: list[str], block: tuple[int, int], path: Path, knobs: KernelKnobs,
                       table: DispatchTable) -> None:
    """The kernel set between the block's markers into `table`. A line the block cannot read is refused
    with its line, never passed over: its knob would be read as unset (the search starting from the
    default) and the block written without it (the kernel reverted). So is a block that is not whole
    `#ifndef A` / `#define A` / `#endif` triples, one per knob: behind the guards the compiler takes a
    knob's first `#define`, and a reader taking another would write the block back changed."""
    first_set: dict[str, int] = {}  # full knob name -> the line of its `#define`
    open_at, open_name, defined = 0, "", False  # the triple being read: its #ifndef's line, knob, #define read
    comment_of_ifndef = ""
    for number in range(block[0] + 1, block[1]):
        text, where = lines[number], f"{path}:{number + 1}"
        if not text.strip():
            continue
        ifndef, define, endif = _BLOCK_IFNDEF.match(text), _BLOCK_DEFINE.match(text), _BLOCK_ENDIF.match(text)
        if not (ifndef or define or endif):
            raise UsageError(f"{where}: {text.strip()!r}: the kernel-knobs block holds {BLOCK_FORM} only"
                             f" (a comment line goes above `{KERNEL_BEGIN}`)")
        line = (f"#ifndef {ifndef.group(1)}" if ifndef else f"#define {define.group(1)} {define.group(2)}"
                if define else "#endif")
        if open_name:
            due = _due(open_name, defined)
            expected = endif is not None if defined else define is not None and define.group(1) == open_name
            if not expected:
                raise UsageError(f"{where}: `{line}` where `{due}` comes next, for `#ifndef {open_name}` at"
                                 f" {path}:{open_at}: {_TRIPLES}")
        elif not ifndef:
            known = f"`#define {define.group(1)}` with no `#ifndef {define.group(1)}` above it" if define else \
                "`#endif` with no `#ifndef` / `#define` above it to end"
            raise UsageError(f"{where}: {known}: {_TRIPLES}")
        if ifndef:
            open_at, open_name, defined, comment_of_ifndef = number + 1, ifndef.group(1), False, ifndef.group(2)
        elif define:
            value = _integer(define.group(2), where)
            name = _checked(knobs, define.group(1), value, "kernel", where).name
            if name in first_set:
                raise UsageError(f"{where}: {name} is set again in the kernel-knobs block, where"
                                 f" {path}:{first_set[name]} sets it (the compiler takes the first, behind its"
                                 " #ifndef): keep one")
            first_set[name], defined = number + 1, True
            table.kernel[name] = value
            table.kernel_comments[name] = (comment_of_ifndef, define.group(3), "")
        elif endif:
            ifndef_comment, define_comment, _ = table.kernel_comments[open_name]
            table.kernel_comments[open_name] = (ifndef_comment, define_comment, endif.group(1))
            open_name = ""
    if open_name:
        raise UsageError(f"{path}:{block[1] + 1}: the kernel-knobs block ends where `{_due(open_name, defined)}`"
                         f" comes next, for `#ifndef {open_name}` at {path}:{open_at}: {_TRIPLES}")


def _due(open_name: str, defined: bool) -> str:
    """The line the triple of `#ifndef open_name` needs next, its `#define` read or not."""
    return "#endif" if defined else f"#define {open_name} VALUE"


def _checked(knobs: KernelKnobs, name: str, value: int, scope: str, where: str) -> Knob:
    """The knob an entry sets, if it is declared, of the block's scope, and set to a declared value."""
    try:
        knob = knobs.by_name(name)
    except UsageError:
        raise UsageError(f"{where}: {name}: {knobs.source.name} declares no such knob") from None
    if knob.scope != scope:
        block = "per-shape dispatch entries" if scope == "plan" else "the kernel-knobs block"
        raise UsageError(f"{where}: {knobs.entry_name(knob.name)} is a scope={knob.scope} knob:"
                         f" {block} take scope={scope} knobs only")
    if value not in knob.values:
        declared = ",".join(str(v) for v in knob.values)
        raise UsageError(f"{where}: {knobs.entry_name(knob.name)}={value} is not among its declared values {declared}")
    return knob


def _integer(text: str, where: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise UsageError(f"{where}: {text!r} is not an integer") from None


def render_kernel(table: DispatchTable, knobs: KernelKnobs) -> list[str]:
    lines = []
    for knob in knobs.knobs:
        if knob.name in table.kernel and table.kernel[knob.name] != knob.default:
            ifndef, define, endif = table.kernel_comments.get(knob.name, ("", "", ""))
            lines += [f"#ifndef {knob.name}{ifndef}", f"#define {knob.name} {table.kernel[knob.name]}{define}",
                      f"#endif{endif}"]
    return lines


def render_table(path: Path, text: str, table: DispatchTable, knobs: KernelKnobs) -> str:
    """`text` (the table file) with the per-shape entries (checked by nvfp4ctl.build.knobs.render_dispatch:
    each a plan knob at a declared value) and, where the file has the block, the kernel set replaced."""
    declared = {knob.name: knob for knob in knobs.knobs}
    entries: list[DispatchEntry] = []
    named: dict[str, Knob] = {}  # each entry's name -> its knob: an entry keeps the name it was read with
    for shape, values in table.plan.items():
        for name, value in values.items():
            entries.append(DispatchEntry(*shape, table.entry_names.get((shape, name)) or knobs.entry_name(name), value))
            if name in declared:
                named[entries[-1].knob] = declared[name]
    lines = past_byte_order_mark(render_dispatch(path, text, entries, named)).splitlines()
    block = _kernel_block(lines, path)
    if block is not None:  # without the block the kernel set goes in as the declared defaults
        lines[block[0] + 1:block[1]] = render_kernel(table, knobs)
    ending = line_end(text)  # the file's own: a CRLF table stays CRLF
    return leading_byte_order_mark(text) + ending.join(lines) + ending


def render_defaults(knobs: KernelKnobs, values: dict[str, int], texts: dict[Path, str]) -> dict[Path, str]:
    """Each knob's declared default (`#define NAME value` in its `#ifndef NAME` block under the
    declaration) set to `values[NAME]`: the new text of each file changed, starting from `texts`
    where it holds the file already (the table file may declare knobs too)."""
    changed: dict[Path, list[str]] = {}
    endings: dict[Path, str] = {}  # each file's own line end: a CRLF header stays CRLF
    for knob in knobs.knobs:
        if knob.name not in values or values[knob.name] == knob.default:
            continue
        path = (knobs.declared_in or {}).get(knob.name)
        if path is None:
            raise UsageError(f"{knob.name}: the file declaring it is unknown")
        if path not in changed:
            text = texts[path] if path in texts else table_text(path)
            changed[path], endings[path] = text.splitlines(), line_end(text)
        lines = changed[path]
        for number in range(knob.line, min(knob.line + 3, len(lines))):  # knob.line is 1-based: the next lines
            match = _DEFINE.match(lines[number])
            if match and match.group(1) == knob.name:
                lines[number] = re.sub(rf"(#\s*define\s+{knob.name}\s+)\S+", rf"\g<1>{values[knob.name]}", lines[number])
                break
        else:
            raise UsageError(f"{path}:{knob.line}: no `#define {knob.name} <default>` under its declaration")
    return {path: endings[path].join(lines) + endings[path] for path, lines in changed.items()}


def write_table(path: Path, table: DispatchTable, knobs: KernelKnobs) -> list[Path]:
    """The table into its file and, without a kernel block, the kernel set as the declared defaults;
    returns the files written. Every new text is made (and checked) before the first file is
    replaced, and each file is replaced in one step (a new copy moved over it): a rejected entry, a
    missing `#define` or an interrupt leaves no file half-written and no table half-updated. A file
    made read-only (since the tune began: writable_problem refuses one up front) is a UsageError, and
    no file is written."""
    texts = {path: render_table(path, table_text(path), table, knobs)}
    if not table.has_kernel_block:
        texts.update(render_defaults(knobs, table.kernel, texts))
    for changed in texts:
        if made_read_only(changed):
            raise UsageError(_read_only(changed, "the winners were not written"))
    for changed, text in texts.items():
        write_text_atomic(changed, text, keep_read_only=True)
    return list(texts)


def _read_only(path: Path, outcome: str) -> str:
    return f"{path} is read-only: {outcome} (chmod u+w it; --no-write only reports the winners)"


LOCK_TIMEOUT_S = 60.0  # another tune holds it only while it reads and writes the files


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """The table's read-modify-write, one tune at a time: two tunes of one kernel each write their
    winners into the table as it is then, so neither drops the other's entries. A wait that runs out is
    a timeout (ToolTimeout, exit 3), naming the holder where it wrote itself beside the lock."""
    from filelock import FileLock, Timeout

    from nvfp4ctl.runlog import lock_path

    lock = lock_path(path, "dispatch")
    holder = lock.with_suffix(".holder")
    try:
        with FileLock(str(lock), timeout=LOCK_TIMEOUT_S), holding(holder, f"writing tune's winners into {path.name}"):
            yield
    except Timeout:
        raise ToolTimeout(f"waited {seconds_text(LOCK_TIMEOUT_S)} for the lock {lock} to write the winners into {path};"
                          f" it is held by {holder_said(holder)}; the winners were not written: run the tune again"
                          " once that one ends (it reuses this run's results)") from None


def files_written(knobs: KernelKnobs, table: DispatchTable, only: frozenset[str] | None) -> list[Path]:
    """The files a tune writes its winners into: the dispatch table and, where it has no kernel block, the
    files declaring the kernel-scope knobs searched (their defaults take the kernel set)."""
    files = [knobs.dispatch] if knobs.dispatch is not None else []
    if not table.has_kernel_block:
        kernel = [k for k in knobs.of_scope("kernel") if len(set(k.values)) > 1 and (only is None or k.name in only)]
        files += [(knobs.declared_in or {})[k.name] for k in kernel if k.name in (knobs.declared_in or {})]
    return list(dict.fromkeys(files))


def writable_problem(knobs: KernelKnobs, table: DispatchTable, only: frozenset[str] | None) -> str | None:
    """Why the winners could not be written (a read-only table, a config header or their folder, which
    must take the new copy, or a file not UTF-8, which the writing reads as text), checked before the tune starts
    rather than found after it; None if fine."""
    for path in files_written(knobs, table, only):
        try:
            table_text(path)
        except UsageError as error:
            return str(error)
        target = path.resolve()  # a link is written through (atomic_file)
        # the mode bits as well: root may write any file, and the new copy would replace a chmod a-w one
        if made_read_only(target) or not os.access(target, os.W_OK):
            return _read_only(path, "tune writes its winners there")
        if not os.access(target.parent, os.W_OK | os.X_OK):
            return (f"{target.parent} is read-only: tune replaces {target.name} there with a new copy"
                    " (--no-write only reports the winners)")
    return None
