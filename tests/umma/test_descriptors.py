"""Round trips of the UMMA descriptor codecs and the field tables against CUTLASS's bit positions."""

from __future__ import annotations

import random

import pytest

from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma.bits import BitField, pack, unpack

# Raw values CuTe's encoders produced on the host for the kernel's configs (tests/sm100 re-derives
# them from CuTe on every run; here they pin the codec without a compiler).
CUTE_IDESC_128x64 = 0x08100480
CUTE_IDESC_128x128 = 0x08200480
CUTE_SMEM_K_SW128 = 0x4000404000010000


def _random_fields(fields: tuple[BitField, ...], rng: random.Random) -> dict[str, int]:
    return {field.name: rng.randrange(1 << field.width) for field in fields}


@pytest.mark.parametrize("seed", range(20))
def test_instr_round_trip(seed: int) -> None:
    fields = _random_fields(d.INSTR_FIELDS, random.Random(seed))
    word = d.encode_instr(fields)
    assert word < 1 << 32
    assert d.decode_instr(word) == fields
    assert d.instr_reserved(word) == 0


@pytest.mark.parametrize("seed", range(20))
def test_smem_round_trip(seed: int) -> None:
    fields = _random_fields(d.SMEM_FIELDS, random.Random(seed))
    word = d.encode_smem(fields)
    assert d.decode_smem(word) == fields
    assert d.smem_reserved(word) == 0


def test_field_tables_do_not_overlap() -> None:
    for fields, width in ((d.INSTR_FIELDS, 32), (d.SMEM_FIELDS, 64)):
        taken = 0
        for field in fields:
            mask = field.mask << field.lo
            assert taken & mask == 0, f"{field.name} overlaps another field"
            assert field.lo + field.width <= width
            taken |= mask


def test_instr_bits_match_cutlass_positions() -> None:
    # mma_sm100_desc.hpp InstrDescriptorBlockScaled: b_sf_id [4,6), a_format [7,10), b_format [10,13),
    # majors 15/16, N>>3 [17,23), scale format 23, M>>4 [24,29), a_sf_id [29,31), k size 31.
    spans = {field.name: (field.lo, field.width) for field in d.INSTR_FIELDS}
    assert spans["b_sf_id"] == (4, 2) and spans["a_format"] == (7, 3) and spans["b_format"] == (10, 3)
    assert spans["a_major"] == (15, 1) and spans["b_major"] == (16, 1) and spans["n_dim"] == (17, 6)
    assert spans["scale_format"] == (23, 1) and spans["m_dim"] == (24, 5) and spans["a_sf_id"] == (29, 2)
    assert spans["k_size"] == (31, 1)


def test_decodes_cute_instruction_descriptors() -> None:
    for word, n in ((CUTE_IDESC_128x64, 64), (CUTE_IDESC_128x128, 128)):
        fields = d.decode_instr(word)
        assert (fields["m_dim"] << 4, fields["n_dim"] << 3) == (128, n)
        assert fields["a_format"] == fields["b_format"] == d.MXF4_E2M1
        assert fields["scale_format"] == d.SCALE_UE4M3 and fields["a_major"] == fields["b_major"] == d.MAJOR_K
        assert d.describe_instr(fields)["n_dim"] == f"N={n}"


def test_decodes_cute_smem_descriptor() -> None:
    fields = d.decode_smem(CUTE_SMEM_K_SW128)
    assert fields == {"start": 0, "lbo": 1, "sbo": 64, "version": 1, "base_offset": 0, "lbo_mode": 0, "layout": 2}
    assert d.describe_smem(fields)["layout"] == "SWIZZLE_128B"


def test_out_of_range_values_are_rejected() -> None:
    with pytest.raises(ValueError, match="n_dim=64 does not fit"):
        d.encode_instr({"n_dim": 64})
    with pytest.raises(ValueError, match="unknown descriptor fields"):
        d.encode_smem({"swizzle": 2})
    with pytest.raises(ValueError, match="wider than 32 bits"):
        d.decode_instr(1 << 32)


def test_reserved_bits_are_reported() -> None:
    assert d.instr_reserved(1 << 3) == 1 << 3  # bit 3 is reserved in the block-scaled descriptor
    assert d.smem_reserved(1 << 48) == 1 << 48


def test_pack_unpack_generic() -> None:
    fields = (BitField("x", 0, 3, ""), BitField("y", 5, 2, ""))
    assert unpack(fields, pack(fields, {"x": 5, "y": 3})) == {"x": 5, "y": 3}
