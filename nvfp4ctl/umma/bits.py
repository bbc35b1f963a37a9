"""Named bit fields packed into one integer: the building block of every UMMA descriptor codec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class BitField:
    name: str
    lo: int  # first bit
    width: int
    meaning: str  # one line for tables: what the field encodes

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def span(self) -> str:
        return f"[{self.lo}]" if self.width == 1 else f"[{self.lo},{self.lo + self.width})"


def pack(fields: tuple[BitField, ...], values: Mapping[str, int]) -> int:
    """Place each named value into its bits; a value that does not fit is a programming error."""
    unknown = set(values) - {field.name for field in fields}
    if unknown:
        raise ValueError(f"unknown descriptor fields: {sorted(unknown)}")
    word = 0
    for field in fields:
        value = int(values.get(field.name, 0))
        if not 0 <= value <= field.mask:
            raise ValueError(f"{field.name}={value} does not fit in {field.width} bits")
        word |= value << field.lo
    return word


def unpack(fields: tuple[BitField, ...], word: int) -> dict[str, int]:
    return {field.name: (word >> field.lo) & field.mask for field in fields}


def reserved_bits(fields: tuple[BitField, ...], word: int, total_bits: int) -> int:
    """The bits of `word` that no field covers (must be zero in a well-formed descriptor)."""
    covered = 0
    for field in fields:
        covered |= field.mask << field.lo
    return word & ~covered & ((1 << total_bits) - 1)
