"""Kernel names for tables: the qualified name of a mangled (Itanium ABI) symbol and its template
arguments, shortened. Two instantiations of one template differ only in their arguments, so a name
without them makes two rows look alike.

Only what kernel names use is read here (nested names, substitutions, template arguments, literals,
packs, builtin, pointer and cv-qualified types); anything else leaves the arguments as `<…>`."""

from __future__ import annotations

import re

ARGUMENTS_WIDTH = 48  # characters of template arguments before inner ones are folded to <…>

_BUILTIN = {
    "v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
    "t": "unsigned short", "i": "int", "j": "unsigned", "l": "long", "m": "unsigned long", "x": "long long",
    "y": "unsigned long long", "n": "__int128", "o": "unsigned __int128", "f": "float", "d": "double",
    "e": "long double", "g": "__float128", "w": "wchar_t", "z": "...",
}
_BUILTIN_D = {"Dh": "half", "Dn": "nullptr_t", "Ds": "char16_t", "Di": "char32_t", "Du": "char8_t"}
_STD_ABBREVIATIONS = {"St": "std", "Sa": "allocator", "Sb": "basic_string", "Ss": "string", "Si": "istream",
                      "So": "ostream", "Sd": "iostream"}


class _Unreadable(Exception):
    """A construct this reader does not follow."""


class _Reader:
    def __init__(self, mangled: str) -> None:
        self.text = mangled
        self.at = 0
        self.substitutions: list[tuple[str, ...]] = []  # candidates, as qualified parts
        self.function_arguments: list[str] = []  # what T_, T0_, ... stand for

    def peek(self, count: int = 1) -> str:
        return self.text[self.at : self.at + count]

    def take(self, prefix: str) -> bool:
        if self.text.startswith(prefix, self.at):
            self.at += len(prefix)
            return True
        return False

    def expect(self, prefix: str) -> None:
        if not self.take(prefix):
            raise _Unreadable(f"expected {prefix!r} at {self.at}")

    def number(self) -> int:
        digits = re.match(r"\d+", self.text[self.at :])
        if digits is None:
            raise _Unreadable(f"expected a number at {self.at}")
        self.at += len(digits.group())
        return int(digits.group())

    def source_name(self) -> str:
        length = self.number()
        name = self.text[self.at : self.at + length]
        if len(name) != length:
            raise _Unreadable("name runs past the end")
        self.at += length
        return "(anonymous namespace)" if name.startswith("_GLOBAL__N") else name

    def substitution(self) -> tuple[str, ...]:
        for code, name in _STD_ABBREVIATIONS.items():
            if self.take(code):
                return (name,) if code == "St" else ("std", name)
        self.expect("S")
        seq = re.match(r"[0-9A-Z]*_", self.text[self.at :])
        if seq is None:
            raise _Unreadable(f"bad substitution at {self.at}")
        self.at += len(seq.group())
        index = int(seq.group()[:-1], 36) + 1 if len(seq.group()) > 1 else 0
        if index >= len(self.substitutions):
            raise _Unreadable(f"substitution {index} not seen yet")
        return self.substitutions[index]

    def template_param(self) -> str:
        self.expect("T")
        index = self.number() + 1 if self.peek() != "_" else 0
        self.expect("_")
        return self.function_arguments[index] if index < len(self.function_arguments) else "T"

    def name(self, function: bool) -> tuple[tuple[str, ...], list[str]]:
        """A (possibly nested) name: its qualified parts and the template arguments of its last part.
        The whole name of a function is not a substitution candidate; a type's is."""
        if self.take("N"):
            while self.peek() in ("r", "V", "K", "R", "O"):
                self.at += 1
            parts: tuple[str, ...] = ()
            arguments: list[str] = []
            while not self.take("E"):
                if not self.peek():
                    raise _Unreadable("nested name runs past the end")
                arguments = []
                if self.peek() == "S" and not parts:
                    parts = self.substitution()
                    continue
                if self.peek() == "I":
                    arguments = self.template_args()
                    parts = (*parts[:-1], f"{parts[-1]}<{', '.join(arguments)}>")
                elif self.peek() == "T":
                    parts = (self.template_param(),)
                elif self.peek().isdigit():
                    parts = (*parts, self.source_name())
                else:
                    raise _Unreadable(f"unknown name part at {self.at}")
                if not (function and self.peek() == "E"):
                    self.substitutions.append(parts)
            return parts, arguments
        fresh = True  # a name read here, not a substitution of one read before
        if self.peek() == "S":
            parts = self.substitution()
            fresh = parts == ("std",)
            if fresh:  # St6vector: std::vector
                parts = ("std", self.source_name())
        elif self.peek().isdigit():
            parts = (self.source_name(),)
        else:
            raise _Unreadable(f"unknown name at {self.at}")
        arguments = []
        if self.peek() == "I":
            if fresh:
                self.substitutions.append(parts)  # the template's own name
            arguments = self.template_args()
            parts = (*parts[:-1], f"{parts[-1]}<{', '.join(arguments)}>")
            fresh = True
        if fresh and not function:
            self.substitutions.append(parts)
        return parts, arguments

    def template_args(self) -> list[str]:
        self.expect("I")
        return self.arguments_until_end()

    def arguments_until_end(self) -> list[str]:
        """Template arguments up to the E that closes their list (or pack)."""
        arguments: list[str] = []
        while not self.take("E"):
            if not self.peek():
                raise _Unreadable("template arguments run past the end")
            arguments.extend(self.template_arg())
        return arguments

    def template_arg(self) -> list[str]:
        if self.take("J"):  # a pack: its elements read as arguments of the template
            return self.arguments_until_end()
        if self.take("L"):
            if self.peek(2) == "_Z":
                raise _Unreadable("an entity as a template argument")
            kind = self.type()
            value = re.match(r"n?[0-9a-f]*", self.text[self.at :])
            self.at += len(value.group()) if value else 0
            self.expect("E")
            digits = value.group().replace("n", "-", 1) if value else ""
            if kind == "bool":
                return ["true" if digits == "1" else "false"]
            return [digits or kind]
        if self.peek() == "X":
            raise _Unreadable("an expression as a template argument")
        return [self.type()]

    def type(self) -> str:
        code = self.peek()
        if code in _BUILTIN:
            self.at += 1
            return _BUILTIN[code]
        if self.peek(2) in _BUILTIN_D:
            text = _BUILTIN_D[self.peek(2)]
            self.at += 2
            return text
        if self.take("DF"):  # _Float16 and friends: DF16_
            bits = self.number()
            self.expect("_")
            return f"_Float{bits}"
        if code in ("K", "V", "r", "P", "R", "O"):
            self.at += 1
            inner = self.type()
            text = {"K": f"const {inner}", "V": f"volatile {inner}", "r": inner, "P": f"{inner}*",
                    "R": f"{inner}&", "O": f"{inner}&&"}[code]
            self.substitutions.append((text,))
            return text
        if code == "T":
            text = self.template_param()
            self.substitutions.append((text,))
            return text
        if code in ("S", "N") or code.isdigit():
            parts, _ = self.name(function=False)
            return parts[-1]
        if self.take("A"):
            size = self.number()
            self.expect("_")
            text = f"{self.type()}[{size}]"
            self.substitutions.append((text,))
            return text
        raise _Unreadable(f"unknown type {code!r} at {self.at}")


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


def readable_name(mangled: str, width: int = ARGUMENTS_WIDTH) -> str:
    """`_Z11zero_kernelP6__halfx` -> `zero_kernel`;
    `_ZN14nvfp4_sm100_tc26nvfp4_gemm_sm100_tc_kernelINS_10TileConfigILi128ELi6EEEEEv...` ->
    `nvfp4_sm100_tc::nvfp4_gemm_sm100_tc_kernel<TileConfig<128, 6>>`: the qualified name, and the
    template arguments by their own names (no namespaces), inner ones folded to <…> past `width`."""
    if not mangled.startswith("_Z"):
        return mangled
    reader = _Reader(mangled)
    reader.at = 2
    try:
        parts, arguments = reader.name(function=True)
    except (_Unreadable, IndexError, ValueError):
        return _qualified_only(mangled)
    qualified = "::".join(parts[:-1] + (parts[-1].split("<", 1)[0],))
    if not arguments:
        return qualified
    return f"{qualified}<{_fold(', '.join(arguments), width)}>"


_MANGLED_PART = re.compile(r"(\d+)")


def _qualified_only(mangled: str) -> str:
    """The source names up to the first template argument list, for a symbol the reader cannot
    follow; `<…>` says there were arguments."""
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
