"""Which knob a dispatch entry's name (`PlanKnob::NAME`) stands for, by a rule that adding a knob leaves alone.

The name is the kernel's own: an enumerator of its `PlanKnob` enum, which the table's entries compile
against. A name is the knob's full macro name, or its end after an underscore (`SPLIT` for `TINY_SPLIT`,
`SHARED_A` for `NVFP4_SM90_SHARED_A`). The rule, in order:
1. A name that is a knob's full name claims that knob, before any end is matched (`MY_SPLIT` in the enum
   keeps `SPLIT` from meaning `MY_SPLIT`).
2. The other names are matched longest first, each end taking a knob no full name claimed and no longer
   end took (`ODD_SPLIT` takes `..._ODD_SPLIT`, so `SPLIT` is left `..._SPLIT`). An end that only claimed
   knobs have may name one a full name claimed (`SPLIT` beside `TINY_SPLIT`: one knob spelt two ways).
3. Of the knobs ending alike, the name stands for the one whose prefix more knobs share (the kernel's
   family: `SPAN` is `NVFP4_SM90_SPAN`, not a newcomer's `MY_SPAN`), then a plan knob before a kernel one
   (an entry sets plan knobs only), then the shorter knob name, then the first declared.
No prefix common to every knob is assumed: declaring a knob with another prefix (`MY_SWIZZLE` beside
`NVFP4_SM90_*`, or `MINE_SPLIT` beside `TINY_SPLIT`) changes no name the table holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from nvfp4ctl.build.knobs import Knob
from nvfp4ctl.build.read_once import source_text
from nvfp4ctl.cpp_lexer import blank

_ENUM = re.compile(r"\benum\s+(?:class\s+|struct\s+)?PlanKnob\b[^{;]*\{([^}]*)\}")
_ENUMERATOR = re.compile(r"^\s*([A-Za-z_]\w*)")


def plan_enumerators(files: Iterable[Path]) -> tuple[str, ...]:
    """The enumerators of the first `enum class PlanKnob { ... }` in `files` (comments aside); () for none."""
    for path in files:
        try:
            code = blank(source_text(path)).code  # read once within read_once.reading_once (discover)
        except OSError:  # the table's reader says what is wrong with the file
            continue
        if found := _ENUM.search(code):
            return tuple(m.group(1) for part in found.group(1).split(",") if (m := _ENUMERATOR.match(part)))
    return ()


def knobs_named(names: Iterable[str], knobs: tuple[Knob, ...]) -> dict[str, Knob]:
    """Each name of `names` that stands for a knob -> that knob (see the module's docstring)."""
    found: dict[str, Knob] = {}
    unique = set(names)
    for name in unique:  # a full name claims its knob before any end is matched
        if (exact := next((knob for knob in knobs if knob.name == name), None)) is not None:
            found[name] = exact
    taken = {knob.name for knob in found.values()}
    for name in sorted(unique - found.keys(), key=lambda n: (-len(n), n)):
        ends = [k for k in knobs if k.name not in taken and k.name.endswith("_" + name)]
        # else the knob a full name claimed, spelt short (TINY_SPLIT and SPLIT, one knob two ways)
        ends = ends or [k for k in knobs if k.name in unique and k.name.endswith("_" + name)]
        if not ends:
            continue
        # min() keeps the first declared of equals: a knob declared later never takes an earlier one's name
        best = min(ends, key=lambda k: (-_kin(k.name[: -len(name)], knobs), k.scope != "plan", len(k.name)))
        found[name] = best
        taken.add(best.name)
    return found


def _kin(prefix: str, knobs: tuple[Knob, ...]) -> int:
    """How many knobs' names start with `prefix`: of two knobs ending alike (TINY_SPLIT, MINE_SPLIT) the name
    stands for the one of the larger family, the kernel's own prefix rather than a newcomer's."""
    return sum(knob.name.startswith(prefix) for knob in knobs)
