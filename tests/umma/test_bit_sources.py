"""The descriptor bit tables from CUTLASS's header and from the PTX ISA agree on every value we ship
(and on every legal block-scaled value), so neither source is checked only against itself."""

from __future__ import annotations

import itertools

import pytest

from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma import plan
from nvfp4ctl.umma.configs import default_kernel, expected_instr, expected_smem, parse_configs
from nvfp4ctl.umma.bits import unpack

# CuTe's own encodings for our kernel's configs (tests/sm100 re-derives them from CuTe each run)
# and for the four K-major swizzles (tests/umma/host/umma_layout_proof.cu, K step 0 and 1).
CUTE_WORDS_IDESC = (0x08100480, 0x08200480)
CUTE_WORDS_SMEM = (0x4000404000010000, 0x4000404000010002, 0x0000400800800000, 0x0000400800800100,
                   0xC000401000010000, 0xC000401000010100, 0x8000402000010000)


def _shipped_idescs() -> list[int]:
    words = [d.encode_instr(expected_instr(config)) for config in parse_configs(default_kernel())]
    return words + list(CUTE_WORDS_IDESC) + [plan.idesc(plan.TileConfig(block_n=n)) for n in (64, 128, 192, 256)]


def _shipped_smem() -> list[int]:
    words = [d.encode_smem(expected_smem(config, s)) for config in parse_configs(default_kernel()) for s in range(4)]
    for swizzle, n, step in itertools.product(("none", "32B", "64B", "128B"), (64, 128, 256), range(4)):
        config = plan.TileConfig(block_n=n, swizzle=swizzle)
        words.append(plan.smem_desc(config, config.b_start, n, step))
    return words + list(CUTE_WORDS_SMEM)


@pytest.mark.parametrize("word", _shipped_idescs(), ids=hex)
def test_idesc_tables_agree(word: int) -> None:
    assert d.ptx_instr_as_cutlass(word) == d.decode_instr(word)
    ptx = unpack(d.PTX_INSTR_FIELDS, word)
    assert ptx["reserved0"] == ptx["reserved3"] == ptx["reserved6"] == ptx["reserved12"] == ptx["reserved24"] == 0


@pytest.mark.parametrize("word", _shipped_smem(), ids=hex)
def test_smem_tables_agree(word: int) -> None:
    assert d.ptx_smem_as_cutlass(word) == d.decode_smem(word)
    ptx = unpack(d.PTX_SMEM_FIELDS, word)
    assert ptx["fixed46"] == 0b001 and ptx["fixed53"] == 0 and ptx["reserved14"] == ptx["reserved30"] == 0


def test_every_legal_mxf4nvf4_idesc_agrees() -> None:
    for m, n, a_sf, b_sf, scale in itertools.product((128, 256), range(8, 257, 8), (0, 2), (0, 2), (0, 1)):
        word = d.encode_instr({"a_format": 1, "b_format": 1, "n_dim": n >> 3, "m_dim": m >> 4, "a_sf_id": a_sf,
                               "b_sf_id": b_sf, "scale_format": scale})
        assert d.ptx_instr_as_cutlass(word) == d.decode_instr(word), hex(word)


def test_ptx_tables_cover_every_bit() -> None:
    for fields, width in ((d.PTX_INSTR_FIELDS, 32), (d.PTX_SMEM_FIELDS, 64)):
        covered = 0
        for field in fields:
            assert covered & (field.mask << field.lo) == 0, field.name
            covered |= field.mask << field.lo
        assert covered == (1 << width) - 1


@pytest.mark.parametrize("word", _shipped_idescs(), ids=hex)
def test_idesc_round_trips(word: int) -> None:
    assert d.encode_instr(d.decode_instr(word)) == word


@pytest.mark.parametrize("word", _shipped_smem(), ids=hex)
def test_smem_round_trips(word: int) -> None:
    assert d.encode_smem(d.decode_smem(word)) == word
