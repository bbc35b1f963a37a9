"""A digest of a built module's host code: two builds with the same one (and the same SASS and device image
data) run the same program, so their timings can differ only by noise.

The digest covers every section the loader maps with content (machine code, constants, data, relocations,
exception tables), read from the ELF file itself, less what differs between two builds of one program:
nvcc's `__nv_module_id` (derived from the compile options, so every `-D` gives another), the linker's build
id (a hash of the whole file), the symbol tables (the module's name is in them; relocations name their
symbol instead of numbering it, as the numbering follows a hash of the names), and the embedded device
code (`.nv_fatbin`, compared through its SASS and build.device_data instead). The module's name, the one
string of the module that names its build, is blanked where it appears. A knob the host code reads changes the machine code or
the constants; one nothing reads leaves the digest as it was (checked with nvcc 13.0 and g++: an unread
`-D` gives the same digest, a split count the host code reads another)."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from nvfp4ctl.build.elf_sections import SHF_ALLOC, SHT_NOBITS, Section, file_sections

_SYMBOL_SIZE = 24  # Elf64_Sym
_RELOCATION_SIZE = 24  # Elf64_Rela
_LEFT_OUT = frozenset({"__nv_module_id", ".note.gnu.build-id", ".nv_fatbin", ".dynsym", ".dynstr", ".gnu.hash",
                       ".hash", ".gnu.version", ".gnu.version_r", ".gnu.version_d"})


def host_digest(library: Path | None, module_name: str | None = None) -> str:
    """sha256 of `library`'s host code as above; "" where there is no library or it is no 64-bit
    little-endian ELF file (nothing claimed then)."""
    return host_digest_of(file_sections(library), module_name)


def host_digest_of(found: list[Section] | None, module_name: str | None = None) -> str:
    """host_digest of a library whose sections were already read (elf_sections.file_sections); "" for None."""
    if found is None:
        return ""
    sections = _mapped(found)
    digest = hashlib.sha256()
    symbols = _symbol_names(dict(sections))
    for name, content in sections:
        if name in _LEFT_OUT:
            continue
        if name.startswith(".rela") and symbols is not None:
            content = _by_symbol_name(content, symbols)
        if module_name:
            content = content.replace(module_name.encode(), b"\0" * len(module_name.encode()))
        digest.update(name.encode() + b"\0" + len(content).to_bytes(8, "little") + content)
    return digest.hexdigest()


def _symbol_names(sections: dict[str, bytes]) -> list[bytes] | None:
    """The dynamic symbols' names, by index; None where the library has no dynamic symbol table."""
    table, names = sections.get(".dynsym"), sections.get(".dynstr")
    if table is None or names is None:
        return None
    found = []
    for at in range(0, len(table) - _SYMBOL_SIZE + 1, _SYMBOL_SIZE):
        start, = struct.unpack_from("<I", table, at)
        end = names.find(b"\0", start)
        found.append(names[start:end if end >= 0 else len(names)])
    return found


def _by_symbol_name(relocations: bytes, symbols: list[bytes]) -> bytes:
    """Relocation entries with each symbol named rather than numbered: the linker orders the dynamic
    symbols by a hash of their names, the module's own among them, so two builds of one program number
    the same symbols differently."""
    named = bytearray()
    for at in range(0, len(relocations) - _RELOCATION_SIZE + 1, _RELOCATION_SIZE):
        offset, info, addend = struct.unpack_from("<QQq", relocations, at)
        index, kind = info >> 32, info & 0xFFFFFFFF
        symbol = symbols[index] if index < len(symbols) else b"?"
        named += struct.pack("<QIq", offset, kind, addend) + symbol + b"\0"
    return bytes(named)


def _mapped(found: list[Section]) -> list[tuple[str, bytes]]:
    """(name, content) of each mapped section with content, in file order."""
    return [(s.name, s.content) for s in found if s.flags & SHF_ALLOC and s.kind != SHT_NOBITS]
