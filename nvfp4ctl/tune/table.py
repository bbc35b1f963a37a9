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

The format is agreed with the kernel side in the notes (kernels/sm90/sm90_dispatch.cuh).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.knobs import KernelKnobs

Shape = tuple[int, int, int, int]  # m, n, k, l

PLAN_BEGIN, PLAN_END = "// nvfp4ctl:dispatch begin", "// nvfp4ctl:dispatch end"
KERNEL_BEGIN, KERNEL_END = "// nvfp4ctl:kernel-knobs begin", "// nvfp4ctl:kernel-knobs end"
DEFAULT_ENUM = "PlanKnob"
_ENTRY = re.compile(r"^\s*\{\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*(?:(\w+)::)?(\w+)\s*,\s*(-?\w+)\s*\}\s*,?\s*(//.*)?$")
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(-?\w+)\s*$")
_ENUM_USE = re.compile(r"\b(\w+)::\w+")


@dataclass
class DispatchTable:
    plan: dict[Shape, dict[str, int]] = field(default_factory=dict)  # full knob names
    kernel: dict[str, int] = field(default_factory=dict)
    has_kernel_block: bool = False
    enum: str = DEFAULT_ENUM


def _block(lines: list[str], begin: str, end: str, path: Path) -> tuple[int, int] | None:
    starts = [i for i, line in enumerate(lines) if line.strip() == begin]
    ends = [i for i, line in enumerate(lines) if line.strip() == end]
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise UsageError(f"{path}: expected one `{begin}` line followed by one `{end}` line")
    return starts[0], ends[0]


def read_table(path: Path, knobs: KernelKnobs) -> DispatchTable:
    lines = path.read_text().splitlines()
    table = DispatchTable()
    plan = _block(lines, PLAN_BEGIN, PLAN_END, path)
    if plan is None:
        raise UsageError(f"{path}: no `{PLAN_BEGIN}` / `{PLAN_END}` lines to hold the per-shape entries")
    enum_use = _ENUM_USE.search("\n".join(lines[plan[1] + 1:]))  # the end sentinel names the enum
    table.enum = enum_use.group(1) if enum_use else DEFAULT_ENUM
    for number in range(plan[0] + 1, plan[1]):
        text = lines[number]
        if not text.strip() or text.strip().startswith("//"):
            continue
        match = _ENTRY.match(text)
        if match is None:
            raise UsageError(f"{path}:{number + 1}: expected `{{M, N, K, L, {table.enum}::NAME, VALUE}},`")
        m, n, k, l, enum, name, value = match.groups()[:7]
        table.enum = enum or table.enum
        knob = knobs.by_name(name)
        table.plan.setdefault((int(m), int(n), int(k), int(l)), {})[knob.name] = int(value, 0)
    kernel = _block(lines, KERNEL_BEGIN, KERNEL_END, path)
    if kernel is not None:
        table.has_kernel_block = True
        for text in lines[kernel[0] + 1:kernel[1]]:
            match = _DEFINE.match(text)
            if match:
                table.kernel[knobs.by_name(match.group(1)).name] = int(match.group(2), 0)
    return table


def render_plan(table: DispatchTable, knobs: KernelKnobs, indent: str) -> list[str]:
    order = {knob.name: index for index, knob in enumerate(knobs.knobs)}
    lines = []
    for shape in sorted(table.plan):
        for name, value in sorted(table.plan[shape].items(), key=lambda item: order.get(item[0], 1 << 30)):
            m, n, k, l = shape
            lines.append(f"{indent}{{{m}, {n}, {k}, {l}, {table.enum}::{knobs.short(name)}, {value}}},")
    return lines


def render_kernel(table: DispatchTable, knobs: KernelKnobs) -> list[str]:
    lines = []
    for knob in knobs.knobs:
        if knob.name in table.kernel and table.kernel[knob.name] != knob.default:
            lines += [f"#ifndef {knob.name}", f"#define {knob.name} {table.kernel[knob.name]}", "#endif"]
    return lines


def write_table(path: Path, table: DispatchTable, knobs: KernelKnobs) -> None:
    """Replace the plan entries and (where the file has the block) the kernel set (atomically: temp file + rename); the rest stays as it was."""
    text = path.read_text()
    lines = text.splitlines()
    plan = _block(lines, PLAN_BEGIN, PLAN_END, path)
    if plan is None:
        raise UsageError(f"{path}: no `{PLAN_BEGIN}` / `{PLAN_END}` lines to hold the per-shape entries")
    indent = lines[plan[0]][: len(lines[plan[0]]) - len(lines[plan[0]].lstrip())]
    lines[plan[0] + 1:plan[1]] = render_plan(table, knobs, indent)
    kernel = _block(lines, KERNEL_BEGIN, KERNEL_END, path)
    if kernel is not None:  # without the block the caller writes the kernel set as defaults
        lines[kernel[0] + 1:kernel[1]] = render_kernel(table, knobs)
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text("\n".join(lines) + ("\n" if text.endswith("\n") else ""))
    scratch.replace(path)


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
