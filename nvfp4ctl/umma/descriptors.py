"""Blackwell UMMA descriptors: the block-scaled instruction descriptor and the shared-memory matrix
descriptor, encoded and decoded field by field.

Two sources, kept side by side so neither rests on the other:
  * INSTR_FIELDS / SMEM_FIELDS: CUTLASS include/cute/arch/mma_sm100_desc.hpp
    (`UMMA::InstrDescriptorBlockScaled`, `UMMA::SmemDescriptor` bit-field structs); tests/sm100
    checks them against CuTe's own encoder compiled on the host.
  * PTX_INSTR_FIELDS / PTX_SMEM_FIELDS: the PTX ISA, section 9.7.16.4 (tcgen05 "Instruction
    descriptor", Table 44 "Instruction descriptor format for .kind::mxf4 and .kind::mxf4nvf4", and
    9.7.16.4.1 "Shared memory descriptor" layout table).
They differ in form, not in meaning, for every legal block-scaled value: PTX encodes M as M >> 7 in
bits 27-28 (bits 24-26 reserved) where CUTLASS has a 5-bit M >> 4 at 24-28 (the same bits for
M = 128 and 256); PTX's btype is 2 bits (10-11, bit 12 reserved) where CUTLASS has 3; PTX's bits
0-1 are reserved where CUTLASS has a sparse-selector field (always 0 dense); PTX's version is the
3-bit constant 0b001 at 46-48 where CUTLASS has 2 bits at 46-47 (value 1). tests/umma/test_bit_sources.py
decodes every value we ship with both tables and checks they agree.
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


# PTX ISA 9.7.16.4.2, Table 44 (.kind::mxf4 / .kind::mxf4nvf4), field by field.
PTX_INSTR_FIELDS: tuple[BitField, ...] = (
    BitField("reserved0", 0, 2, "reserved (0)"),
    BitField("sparse", 2, 1, "sparsity: dense 0, sparse 1"),
    BitField("reserved3", 3, 1, "reserved (0)"),
    BitField("b_sf_id", 4, 2, "matrix B scale factor data ID (0 or 2)"),
    BitField("reserved6", 6, 1, "reserved (0)"),
    BitField("a_format", 7, 3, "atype: E2M1 = 1"),
    BitField("b_format", 10, 2, "btype: E2M1 = 1"),
    BitField("reserved12", 12, 1, "reserved (0)"),
    BitField("a_negate", 13, 1, "negate A"),
    BitField("b_negate", 14, 1, "negate B"),
    BitField("a_major", 15, 1, "transpose A (0 only for fp4)"),
    BitField("b_major", 16, 1, "transpose B (0 only for fp4)"),
    BitField("n_dim", 17, 6, "N >> 3"),
    BitField("scale_format", 23, 1, "scale type: UE4M3 = 0 (mxf4nvf4), UE8M0 = 1"),
    BitField("reserved24", 24, 3, "reserved (0)"),
    BitField("m_dim7", 27, 2, "M >> 7"),
    BitField("a_sf_id", 29, 2, "matrix A scale factor data ID (0 or 2)"),
    BitField("k_size", 31, 1, "K: dense K=64 = 0, dense K=96 = 1"),
)

# PTX ISA 9.7.16.4.1, shared memory descriptor layout.
PTX_SMEM_FIELDS: tuple[BitField, ...] = (
    BitField("start", 0, 14, "matrix start address, (addr & 0x3FFFF) >> 4"),
    BitField("reserved14", 14, 2, "reserved"),
    BitField("lbo", 16, 14, "leading dimension byte offset >> 4"),
    BitField("reserved30", 30, 2, "reserved"),
    BitField("sbo", 32, 14, "stride dimension byte offset >> 4"),
    BitField("fixed46", 46, 3, "fixed constant 0b001"),
    BitField("base_offset", 49, 3, "matrix base offset"),
    BitField("lbo_mode", 52, 1, "leading dimension stride mode: 0 relative, 1 absolute"),
    BitField("fixed53", 53, 8, "fixed constant 0"),
    BitField("layout", 61, 3, "swizzling mode: 0 none, 1 128B base32B, 2 128B, 4 64B, 6 32B"),
)


def ptx_instr_as_cutlass(word: int) -> dict[str, int]:
    """A 32-bit idesc read with the PTX ISA table, expressed in CUTLASS's field names (for comparison)."""
    f = unpack(PTX_INSTR_FIELDS, word)
    return {
        "sparse_id2": f["reserved0"], "sparse": f["sparse"], "b_sf_id": f["b_sf_id"],
        "a_format": f["a_format"], "b_format": f["b_format"] | (f["reserved12"] << 2),
        "a_negate": f["a_negate"], "b_negate": f["b_negate"], "a_major": f["a_major"], "b_major": f["b_major"],
        "n_dim": f["n_dim"], "scale_format": f["scale_format"], "m_dim": (f["m_dim7"] << 3) | f["reserved24"],
        "a_sf_id": f["a_sf_id"], "k_size": f["k_size"],
    }


def ptx_smem_as_cutlass(word: int) -> dict[str, int]:
    f = unpack(PTX_SMEM_FIELDS, word)
    return {"start": f["start"], "lbo": f["lbo"], "sbo": f["sbo"], "version": f["fixed46"] & 0x3,
            "base_offset": f["base_offset"], "lbo_mode": f["lbo_mode"], "layout": f["layout"]}


def encode_instr(fields: Mapping[str, int]) -> int:
    """The 32-bit block-scaled instruction descriptor (the upper half of the 64-bit MMA operand)."""
    return pack(INSTR_FIELDS, fields)


def decode_instr(word: int) -> dict[str, int]:
    if not 0 <= word < 1 << 32:
        raise ValueError(f"instruction descriptor 0x{word:x} is wider than 32 bits")
    return unpack(INSTR_FIELDS, word)


def instr_mn(fields: Mapping[str, int]) -> tuple[int, int]:
    """The MMA's M and N as decode_instr's fields hold them (M >> 4, N >> 3)."""
    return fields["m_dim"] << 4, fields["n_dim"] << 3


def instr_reserved(word: int) -> int:
    return reserved_bits(INSTR_FIELDS, word, 32)


def encode_smem(fields: Mapping[str, int]) -> int:
    """The 64-bit shared-memory matrix descriptor."""
    return pack(SMEM_FIELDS, fields)


def decode_smem(word: int) -> dict[str, int]:
    if not 0 <= word < 1 << 64:
        raise ValueError(f"shared-memory descriptor 0x{word:x} is wider than 64 bits")
    return unpack(SMEM_FIELDS, word)


def smem_start(word: int) -> int:
    """The shared-memory byte address a descriptor's start field holds (in 16-byte units)."""
    return decode_smem(word)["start"] << 4


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
