"""The kernel's dispatch table file: read the current entries, write the winners back.

Two machine-edited blocks, everything else in the file kept byte for byte:

    // nvfp4ctl:kernel-knobs begin          scope=kernel winners, one global set (device code):
    #ifndef NVFP4_SM90_STAGES_PER_CTA_A     only knobs whose winner differs from the declared
    #define NVFP4_SM90_STAGES_PER_CTA_A 7   default; `-D` still wins. Without this block the
    #endif                                  winners become the knobs' declared defaults instead
    // nvfp4ctl:kernel-knobs end            (`write_defaults`: the `#define` under each declaration)

    // nvfp4ctl:dispatch begin              scope=plan winners, one line per (shape, knob):
    {128, 7168, 16384, 1, PlanKnob::SPAN, 1},   name without the knobs' common prefix
    // nvfp4ctl:dispatch end

The per-shape entries are read and written by nvfp4ctl.build.knobs (read_dispatch, write_dispatch);
this module adds the kernel block and the declared defaults (kernels/sm90/sm90_dispatch.cuh).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.build.knobs import DispatchEntry, Knob, read_dispatch, write_dispatch
from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.knobs import KernelKnobs

Shape = tuple[int, int, int, int]  # m, n, k, l

KERNEL_BEGIN, KERNEL_END = "// nvfp4ctl:kernel-knobs begin", "// nvfp4ctl:kernel-knobs end"
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(-?\w+)\s*$")


@dataclass
class DispatchTable:
    plan: dict[Shape, dict[str, int]] = field(default_factory=dict)  # full knob names
    kernel: dict[str, int] = field(default_factory=dict)
    has_kernel_block: bool = False


def _kernel_block(lines: list[str], path: Path) -> tuple[int, int] | None:
    starts = [i for i, line in enumerate(lines) if line.strip() == KERNEL_BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == KERNEL_END]
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise UsageError(f"{path}: expected one `{KERNEL_BEGIN}` line followed by one `{KERNEL_END}` line")
    return starts[0], ends[0]


def read_table(path: Path, knobs: KernelKnobs) -> DispatchTable:
    """The per-shape entries (nvfp4ctl.build.knobs.read_dispatch) and the kernel block, full names.
    Each entry is checked here, at the start of a tune (a compile-only one too): a bad entry found
    only when the winners are written would cost the whole tune."""
    table = DispatchTable()
    for entry in read_dispatch(path):
        knob = _checked(knobs, entry.knob, entry.value, "plan", f"{path}:{entry.source_line}")
        table.plan.setdefault((entry.m, entry.n, entry.k, entry.l), {})[knob.name] = entry.value
    lines = path.read_text().splitlines()
    block = _kernel_block(lines, path)
    if block is not None:
        table.has_kernel_block = True
        for number in range(block[0] + 1, block[1]):
            match = _DEFINE.match(lines[number])
            if match:
                value = _integer(match.group(2), f"{path}:{number + 1}")
                table.kernel[_checked(knobs, match.group(1), value, "kernel", f"{path}:{number + 1}").name] = value
    return table


def _checked(knobs: KernelKnobs, name: str, value: int, scope: str, where: str) -> Knob:
    """The knob an entry sets, if it is declared, of the block's scope, and set to a declared value."""
    try:
        knob = knobs.by_name(name)
    except UsageError:
        raise UsageError(f"{where}: {name}: {knobs.source.name} declares no such knob") from None
    if knob.scope != scope:
        block = "per-shape dispatch entries" if scope == "plan" else "the kernel-knobs block"
        raise UsageError(f"{where}: {knobs.short(knob.name)} is a scope={knob.scope} knob:"
                         f" {block} take scope={scope} knobs only")
    if value not in knob.values:
        declared = ",".join(str(v) for v in knob.values)
        raise UsageError(f"{where}: {knobs.short(knob.name)}={value} is not among its declared values {declared}")
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
            lines += [f"#ifndef {knob.name}", f"#define {knob.name} {table.kernel[knob.name]}", "#endif"]
    return lines


def write_table(path: Path, table: DispatchTable, knobs: KernelKnobs) -> None:
    """Replace the per-shape entries (nvfp4ctl.build.knobs.write_dispatch checks each is a plan knob
    at a declared value) and, where the file has the block, the kernel set; the rest stays as it was."""
    entries = [DispatchEntry(*shape, knobs.short(name), value)
               for shape, values in table.plan.items() for name, value in values.items()]
    write_dispatch(path, entries, knobs.knobs, knobs.prefix)
    lines = path.read_text().splitlines()
    block = _kernel_block(lines, path)
    if block is not None:  # without the block the caller writes the kernel set as defaults
        lines[block[0] + 1:block[1]] = render_kernel(table, knobs)
        path.write_text("\n".join(lines) + "\n")


def write_defaults(knobs: KernelKnobs, values: dict[str, int]) -> list[Path]:
    """Set each knob's declared default (`#define NAME value` in its `#ifndef NAME` block under the
    declaration) to `values[NAME]`; returns the files changed."""
    changed: dict[Path, list[str]] = {}
    for knob in knobs.knobs:
        if knob.name not in values or values[knob.name] == knob.default:
            continue
        path = (knobs.declared_in or {}).get(knob.name)
        if path is None:
            raise UsageError(f"{knob.name}: the file declaring it is unknown")
        lines = changed.setdefault(path, path.read_text().splitlines())
        for number in range(knob.line, min(knob.line + 3, len(lines))):  # knob.line is 1-based: the next lines
            match = _DEFINE.match(lines[number])
            if match and match.group(1) == knob.name:
                lines[number] = re.sub(rf"(#\s*define\s+{knob.name}\s+)\S+", rf"\g<1>{values[knob.name]}", lines[number])
                break
        else:
            raise UsageError(f"{path}:{knob.line}: no `#define {knob.name} <default>` under its declaration")
    for path, lines in changed.items():
        scratch = path.with_name(path.name + ".tmp")
        scratch.write_text("\n".join(lines) + "\n")
        scratch.replace(path)
    return list(changed)
