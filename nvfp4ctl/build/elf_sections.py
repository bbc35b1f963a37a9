"""The sections of a 64-bit little-endian ELF file (a shared library, an object, a cubin), read from the
file's own headers: what host_code and device_data digest."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

SHF_ALLOC = 0x2
SHT_NOBITS = 8


@dataclass(frozen=True)
class Section:
    name: str
    kind: int  # sh_type
    flags: int  # sh_flags
    size: int  # sh_size: for a NOBITS section (.bss, .nv.shared.*) what it takes in memory
    content: bytes  # b"" for a NOBITS section, which has no bytes in the file


def elf_sections(data: bytes) -> list[Section] | None:
    """Every section in file order; None for anything but a 64-bit little-endian ELF file, or one cut short."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    try:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        headers = [struct.unpack_from("<IIQQQQ", data, shoff + index * shentsize) for index in range(shnum)]
        names_at, names_size = headers[shstrndx][4], headers[shstrndx][5]
        names = data[names_at:names_at + names_size]
        found = []
        for name_at, kind, flags, _, offset, size in headers:
            name = names[name_at:names.index(b"\0", name_at)].decode(errors="replace")
            found.append(Section(name, kind, flags, size, b"" if kind == SHT_NOBITS else data[offset:offset + size]))
    except (struct.error, IndexError, ValueError, OverflowError):  # offsets past the file's end
        return None
    return found


def file_sections(path: Path | None) -> list[Section] | None:
    """elf_sections of the file at `path`; None where there is no path or it cannot be read as well."""
    if path is None:
        return None
    try:
        return elf_sections(path.read_bytes())
    except OSError:
        return None
