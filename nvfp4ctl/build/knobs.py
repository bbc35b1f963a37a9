"""A kernel's tunable compile-time knobs, as its config header declares them (what `tune` varies).

One comment line per knob, directly above the macro's `#ifndef NAME` / `#define NAME default`:

    // nvfp4ctl:knob NAME values=V1,V2,... scope=plan|kernel: what it decides

`values` are the settings worth trying (integers; the default must be one of them); `scope=plan`
knobs only steer the host-side planner (one build can serve every value at run time if the planner
reads a table), `scope=kernel` knobs change device code (one build per value). A build sets a knob
with `-DNAME=value`. kernels/sm90/sm90_config.cuh is the first header written this way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.errors import UsageError

SCOPES = ("plan", "kernel")
_DECLARATION = re.compile(r"^\s*//\s*nvfp4ctl:knob\b")
_KNOB = re.compile(r"^\s*//\s*nvfp4ctl:knob\s+(\w+)\s+values=([-\w,]+)\s+scope=(\w+)\s*:\s*(.*)$")
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(\S+)\s*$")


@dataclass(frozen=True)
class Knob:
    name: str
    default: int
    values: tuple[int, ...]
    scope: str
    doc: str
    line: int  # 1-based line of the declaration

    def flag(self, value: int) -> str:
        return f"-D{self.name}={value}"


def read_knobs(header: Path) -> tuple[Knob, ...]:
    """Every knob declared in `header`, in file order. A malformed declaration is a UsageError."""
    lines = header.read_text().splitlines()
    knobs: list[Knob] = []
    for index, text in enumerate(lines):
        if not _DECLARATION.match(text):  # (a comment quoting the form, `//   // nvfp4ctl:knob`, is no declaration)
            continue
        where = f"{header}:{index + 1}"
        match = _KNOB.match(text)
        if match is None:
            raise UsageError(f"{where}: expected `// nvfp4ctl:knob NAME values=A,B scope=plan|kernel: doc`")
        name, values_text, scope, doc = match.groups()
        if scope not in SCOPES:
            raise UsageError(f"{where}: scope {scope!r} is not one of {', '.join(SCOPES)}")
        values = tuple(_integer(v, where) for v in values_text.split(","))
        default = _default(lines[index + 1 : index + 4], name, where)
        if default not in values:
            raise UsageError(f"{where}: {name}'s default {default} is not among its values {values_text}")
        knobs.append(Knob(name, default, values, scope, doc.strip(), index + 1))
    names = [knob.name for knob in knobs]
    if len(set(names)) != len(names):
        raise UsageError(f"{header}: a knob is declared twice")
    return tuple(knobs)


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
