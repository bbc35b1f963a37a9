"""Kernel names for tables: a mangled symbol as binutils' c++filt demangles it, without its return
type and parameters, and its template arguments without namespaces, shortened. Two instantiations
of one template differ only in their arguments, so a name without them makes two rows look alike."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Sequence

ARGUMENTS_WIDTH = 48  # characters of template arguments before inner ones are folded to <…>
_NAMESPACE = re.compile(r"(?:\(anonymous namespace\)|\b[A-Za-z_]\w*)::")


def _fold(arguments: str, width: int) -> str:
    """The deepest <…> groups folded first, a level at a time, until the text fits `width`; then cut."""
    depth = level = 0
    for char in arguments:
        level += (char == "<") - (char == ">")
        depth = max(depth, level)
    for keep in range(depth, -1, -1):
        folded = _below(arguments, keep)
        if len(folded) <= width:
            return folded
    return folded[: width - 1].rstrip(", ") + "…"


def _below(text: str, depth: int) -> str:
    """`text` with every <...> group that opens below `depth` written as <…>."""
    out: list[str] = []
    level = 0
    for char in text:
        if char == "<":
            level += 1
            if level == depth + 1:
                out.append("<…>")
            if level > depth:
                continue
        elif char == ">":
            level -= 1
            if level >= depth:
                continue
        elif level > depth:
            continue
        out.append(char)
    return "".join(out)


def readable_names(symbols: Sequence[str], width: int = ARGUMENTS_WIDTH) -> list[str]:
    """readable_name of each symbol, where two instantiations that would read alike (CUTLASS's, which
    differ deep inside their arguments) keep unfolded the groups that lead to where they differ, and
    symbols that differ only in their parameters are numbered: a table's rows must not look alike."""
    names = [readable_name(symbol, width) for symbol in symbols]
    alike: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        alike.setdefault(name, []).append(index)
    for indices in alike.values():
        distinct = list(dict.fromkeys(symbols[index] for index in indices))
        if len(distinct) < 2:
            continue
        parts = {symbol: _name_and_arguments(symbol) for symbol in distinct}
        arguments = [part[1] for part in parts.values() if part is not None]
        shown = {symbol: names[indices[0]] if part is None or set(arguments) == {part[1]}
                 else _toward_differences(part[0], part[1], arguments) for symbol, part in parts.items()}
        still_alike: dict[str, list[str]] = {}
        for symbol in distinct:
            still_alike.setdefault(shown[symbol], []).append(symbol)
        for name, group in still_alike.items():  # alike up to the parameters (or no arguments to tell): numbered
            if len(group) > 1:
                shown.update({symbol: f"{name} #{number}" for number, symbol in enumerate(group, 1)})
        for index in indices:
            names[index] = shown[symbols[index]]
    return names


def _name_and_arguments(mangled: str) -> tuple[str, str] | None:
    """(qualified name, template arguments without namespaces) as readable_name reads them; None
    where c++filt cannot read the symbol or it has no arguments."""
    demangled = _demangled(mangled) if mangled.startswith("_Z") else None
    if demangled is None:
        return None
    name = _without_signature(demangled)
    if not name.endswith(">"):
        return None
    opened = _opening(name, len(name) - 1, "<", ">")
    return name[:opened], re.sub(r">\s+(?=>)", ">", _NAMESPACE.sub("", name[opened + 1 : -1])).strip()


def _toward_differences(name: str, arguments: str, others: Sequence[str]) -> str:
    """`name<arguments>` reduced to the path to where `arguments` first differs from each of
    `others`: the groups holding such a place stay open, every other group is folded to <…>, and
    what follows the last such place in a group is written `…`."""
    marks = set()
    for other in others:
        if other != arguments:
            marks.add(next((at for at, (a, b) in enumerate(zip(arguments, other)) if a != b), min(len(arguments), len(other))))
    out: list[str] = []
    opened: list[int] = []  # where each group that is shown opened
    at = 0
    while at < len(arguments):
        char = arguments[at]
        if char == "<" and not _holds_a_mark(arguments, at, marks):
            out.append("<…>")
            at = _closing(arguments, at) + 1
            continue
        if char == "," and not opened and not any(mark > at for mark in marks):
            out.append(", …")
            break
        if char == "," and opened and not any(at < mark <= _closing(arguments, opened[-1]) for mark in marks):
            out.append(", …")
            at = _closing(arguments, opened[-1])
            continue
        if char == "<":
            opened.append(at)
        elif char == ">":
            opened.pop()
        out.append(char)
        at += 1
    return f"{name}<{''.join(out)}>"


def _holds_a_mark(text: str, opened: int, marks: set[int]) -> bool:
    closed = _closing(text, opened)
    return any(opened < mark <= closed for mark in marks)


def _closing(text: str, opened: int) -> int:
    level = 0
    for at in range(opened, len(text)):
        level += (text[at] == "<") - (text[at] == ">")
        if level == 0:
            return at
    return len(text)


def readable_name(mangled: str, width: int = ARGUMENTS_WIDTH) -> str:
    """`_Z11zero_kernelP6__halfx` -> `zero_kernel`;
    `_ZN14nvfp4_sm100_tc26nvfp4_gemm_sm100_tc_kernelINS_10TileConfigILi128ELi6EEEEEv...` ->
    `nvfp4_sm100_tc::nvfp4_gemm_sm100_tc_kernel<TileConfig<128, 6>>`: the qualified name, and the
    template arguments by their own names (no namespaces), inner ones folded to <…> past `width`."""
    if not mangled.startswith("_Z"):
        return mangled
    demangled = _demangled(mangled)
    if demangled is None:
        return _qualified_only(mangled)
    name = _without_signature(demangled)
    if not name.endswith(">"):
        return name
    opened = _opening(name, len(name) - 1, "<", ">")
    arguments = re.sub(r">\s+(?=>)", ">", _NAMESPACE.sub("", name[opened + 1 : -1])).strip()  # C++03's `> >`
    return f"{name[:opened]}<{_fold(arguments, width)}>"


@functools.lru_cache(maxsize=None)
def _demangled(mangled: str) -> str | None:
    """c++filt's reading (`-r`: no recursion limit, which CUTLASS's kernel names exceed); None
    without c++filt or where it cannot read the symbol."""
    tool = shutil.which("c++filt")
    if tool is None:
        return None
    for command in ([tool, "-r", mangled], [tool, mangled]):  # -r: binutils 2.32 and later
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        text = done.stdout.strip()
        if done.returncode == 0:
            return text if text and text != mangled else None
    return None


def _opening(text: str, closing: int, opener: str, closer: str) -> int:
    """Where the bracket closed at `closing` opens (the other kind of bracket nests inside it)."""
    level = 0
    for at in range(closing, -1, -1):
        level += (text[at] == closer) - (text[at] == opener)
        if level == 0:
            return at
    return 0


def _without_signature(demangled: str) -> str:
    """`void ns::k<A<1> >(int, float*)` -> `ns::k<A<1> >`: the parameters and the return type go."""
    name = demangled
    if name.endswith(")"):
        name = name[: _opening(name, len(name) - 1, "(", ")")]
    level = 0
    for at in range(len(name) - 1, -1, -1):  # the return type ends at the last space outside brackets
        level += (name[at] in ">)") - (name[at] in "<(")
        if level == 0 and name[at] == " ":
            return name[at + 1 :]
    return name


_MANGLED_PART = re.compile(r"(\d+)")


def _qualified_only(mangled: str) -> str:
    """The source names up to the first template argument list, where c++filt is missing or cannot
    read the symbol; `<…>` says there were arguments."""
    rest = mangled[2:]
    nested = rest.startswith("N")
    rest = rest[1:] if nested else rest
    parts: list[str] = []
    while rest and rest[0].isdigit():
        length = int(_MANGLED_PART.match(rest).group(1))  # type: ignore[union-attr]
        start = len(str(length))
        parts.append(rest[start : start + length])
        rest = rest[start + length :]
        if not nested:
            break
        while rest[:1] in {"K", "V"}:  # cv-qualifiers between nested names
            rest = rest[1:]
    if not parts:
        return mangled
    return "::".join(parts) + ("<…>" if rest.startswith("I") else "")
