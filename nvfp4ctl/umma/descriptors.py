"""Blackwell UMMA descriptors: the block-scaled instruction descriptor and the shared-memory matrix
descriptor, encoded and decoded field by field.

Bit positions follow CUTLASS include/cute/arch/mma_sm100_desc.hpp (`InstrDescriptorBlockScaled`,
`SmemDescriptor`) and the PTX ISA's tcgen05 tables; tests/sm100 checks them against CuTe's own
encoder compiled on the host.
"""

from __future__ import annotations

from collections.abc import Mapping

from nvfp4ctl.umma.bits import BitField, pack, reserved_bits, unpack

# tcgen05.mma kind::mxf4nvf4: both operands e2m1 (format code 1); scales ue4m3 (0) or ue8m0 (1).
MXF4_E2M1 = 1
SCALE_UE4M3, SCALE_UE8M0 = 0, 1
MAJOR_K, MAJOR_MN = 0, 1
SMEM_DESC_VERSION_SM100 = 1
LAYOUTS = {0: "SWIZZLE_NONE", 1: "SWIZZLE_128B_BASE32B", 2: "SWIZZLE_128B", 4: "SWIZZLE_64B", 6: "SWIZZLE_32B"}
SWIZZLE_128B = 2

INSTR_FIELDS: tuple[BitField, ...] = (
    BitField("sparse_id2", 0, 2, "sparse meta id"),
    BitField("sparse", 2, 1, "dense"),
    BitField("b_sf_id", 4, 2, "B scale byte"),
    BitField("a_format", 7, 3, "A format"),
    BitField("b_format", 10, 3, "B format"),
    BitField("a_negate", 13, 1, "negate A"),
    BitField("b_negate", 14, 1, "negate B"),
    BitField("a_major", 15, 1, "A major"),
    BitField("b_major", 16, 1, "B major"),
    BitField("n_dim", 17, 6, "N >> 3"),
    BitField("scale_format", 23, 1, "scale format"),
    BitField("m_dim", 24, 5, "M >> 4"),
    BitField("a_sf_id", 29, 2, "A scale byte"),
    BitField("k_size", 31, 1, "MMA K"),
)

SMEM_FIELDS: tuple[BitField, ...] = (
    BitField("start", 0, 14, "start >> 4"),
    BitField("lbo", 16, 14, "LBO >> 4"),
    BitField("sbo", 32, 14, "SBO >> 4"),
    BitField("version", 46, 2, "version"),
    BitField("base_offset", 49, 3, "base offset"),
    BitField("lbo_mode", 52, 1, "LBO mode"),
    BitField("layout", 61, 3, "swizzle"),
)


def encode_instr(fields: Mapping[str, int]) -> int:
    """The 32-bit block-scaled instruction descriptor (the upper half of the 64-bit MMA operand)."""
    return pack(INSTR_FIELDS, fields)


def decode_instr(word: int) -> dict[str, int]:
    if not 0 <= word < 1 << 32:
        raise ValueError(f"instruction descriptor 0x{word:x} is wider than 32 bits")
    return unpack(INSTR_FIELDS, word)


def instr_reserved(word: int) -> int:
    return reserved_bits(INSTR_FIELDS, word, 32)


def encode_smem(fields: Mapping[str, int]) -> int:
    """The 64-bit shared-memory matrix descriptor."""
    return pack(SMEM_FIELDS, fields)


def decode_smem(word: int) -> dict[str, int]:
    if not 0 <= word < 1 << 64:
        raise ValueError(f"shared-memory descriptor 0x{word:x} is wider than 64 bits")
    return unpack(SMEM_FIELDS, word)


def smem_reserved(word: int) -> int:
    return reserved_bits(SMEM_FIELDS, word, 64)


def describe_instr(fields: Mapping[str, int]) -> dict[str, str]:
    """Human values for the fields whose raw code hides the meaning (M, N, formats)."""
    return {
        "a_format": "E2M1" if fields["a_format"] == MXF4_E2M1 else f"code {fields['a_format']}",
        "b_format": "E2M1" if fields["b_format"] == MXF4_E2M1 else f"code {fields['b_format']}",
        "a_major": "K" if fields["a_major"] == MAJOR_K else "MN",
        "b_major": "K" if fields["b_major"] == MAJOR_K else "MN",
        "n_dim": f"N={fields['n_dim'] << 3}",
        "m_dim": f"M={fields['m_dim'] << 4}",
        "scale_format": "UE4M3" if fields["scale_format"] == SCALE_UE4M3 else "UE8M0",
        "k_size": "K64" if fields["k_size"] == 0 else "K96",
    }


def describe_smem(fields: Mapping[str, int]) -> dict[str, str]:
    return {
        "start": f"{fields['start'] << 4} B",
        "lbo": f"{fields['lbo'] << 4} B",
        "sbo": f"{fields['sbo'] << 4} B",
        "layout": LAYOUTS.get(fields["layout"], f"invalid ({fields['layout']})"),
    }
