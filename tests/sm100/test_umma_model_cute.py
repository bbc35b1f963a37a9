"""The UMMA model's address arithmetic against CuTe's own layouts (NVIDIA-tested), evaluated on the
host by tests/umma/host/umma_layout_proof.cu: for each K-major swizzle (none, 32B, 64B, 128B), A with
M=128 and B with N=64/128/192/256, and every MMA K step of a 256-deep K tile, the shared byte the
model derives from CuTe's descriptor for (row, k byte) is the byte CuTe's layout puts it at; and
every scale's TMEM cell in CuTe's tmem_sf_frg layout is the one the model reads."""

from __future__ import annotations

import pytest
import torch

from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma import smem
from nvfp4ctl.umma.host_proof import toolchain_missing


@pytest.fixture(scope="module")
def cute():
    if why := toolchain_missing():
        pytest.skip(f"needs nvcc and the nvidia-cutlass headers: {why}")
    import cute_layouts

    return cute_layouts


def test_smem_byte_map_equals_cute(cute) -> None:
    layouts = cute.cute_smem_layouts()
    seen = {(layout.swizzle, layout.operand, layout.n) for layout in layouts}
    assert seen == {(s, "A", 128) for s in ("none", "32B", "64B", "128B")} | {
        (s, "B", n) for s in ("none", "32B", "64B", "128B") for n in (64, 128, 192, 256)}
    for layout in layouts:
        assert sorted(layout.descs) == [0, 1, 2, 3]
        for step, desc in layout.descs.items():
            assert d.encode_smem(d.decode_smem(desc)) == desc  # the codec round-trips CuTe's encoding
            assert d.ptx_smem_as_cutlass(desc) == d.decode_smem(desc)  # and the PTX ISA table reads it alike
            assert smem.SWIZZLE_NAMES[desc >> 61] == layout.swizzle
            derived = smem.operand_addresses(desc, layout.rows)
            assert torch.equal(derived, torch.tensor(layout.bytes[step])), (layout.swizzle, layout.operand, layout.n, step)


def test_scale_tmem_map_equals_cute(cute) -> None:
    facts = cute.cute_sf_layouts()
    assert set(facts) == {("A", 128), ("B", 64), ("B", 128), ("B", 256)}
    for (operand, rows), cells in facts.items():
        per_step = 4 * -(-rows // 128) if rows >= 128 else rows // 32  # CuTe packs N=64 into 2 columns
        for (step, row), per_kb in cells.items():
            for kb, (lane, column, byte) in enumerate(per_kb):
                # the model reads row's scale at lane row % 32 (+32q replicas), column + row // 32, byte kb
                assert (lane % 32, column, byte) == (row % 32, step * per_step + row // 32, kb), (operand, rows, step, row)
