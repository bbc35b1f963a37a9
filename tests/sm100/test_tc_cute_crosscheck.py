"""The tcgen05 kernel's instruction and shared-memory descriptors equal what CuTe itself encodes for
the same MMA (kind::mxf4nvf4 block16, e2m1 K-major operands, UE4M3 scales, 128-byte swizzle): the
CUTLASS kernel's host proof (tests/sm100/host/sm100_host_proof.cu, CuTe compiled on the host) prints
CuTe's values for its 128x64 and 128x128 configs, the same M x N as the tcgen05 kernel's Tile64 and
Tile128. An independent encoder agreeing field by field with the hand-written one."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.umma import descriptors as d
from tc_plan import load_plan

CUTLASS_KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "sm100" / "nvfp4_gemm_sm100.cu"
# a shape per tcgen05 config: Tile64 (the 128x4096x7168 dispatch entry) and Tile128 (general rule)
SHAPES = {(128, 64): (128, 4096, 7168), (128, 128): (256, 512, 1024)}
LAYOUT_FIELDS = ("lbo", "sbo", "version", "base_offset", "lbo_mode", "layout")


@pytest.fixture(scope="module")
def cute_facts():
    from nvfp4ctl.umma.host_proof import cute_umma_facts, toolchain_missing

    if why := toolchain_missing():
        pytest.skip(f"needs nvcc and the nvidia-cutlass headers: {why}")
    return {fact.tile[:2]: fact for fact in cute_umma_facts(CUTLASS_KERNEL).values()}


@pytest.mark.usefixtures("tc_printer")
@pytest.mark.parametrize("mn", sorted(SHAPES), ids=lambda mn: f"{mn[0]}x{mn[1]}")
def test_descriptors_equal_cutes(cute_facts, mn: tuple[int, int]) -> None:
    assert mn in cute_facts, f"the CUTLASS kernel has no {mn} config to compare with"
    cute = cute_facts[mn]
    plan = load_plan(*SHAPES[mn], 1)
    assert (plan.config["UMMA_M"], plan.config["UMMA_N"]) == mn
    assert d.decode_instr(plan.idesc) == d.decode_instr(cute.idesc), "instruction descriptor"
    ours = d.decode_smem(plan.stages[0]["k_steps"][0]["desc_a"])
    ours_k1 = d.decode_smem(plan.stages[0]["k_steps"][1]["desc_a"])
    theirs, theirs_k1 = d.decode_smem(cute.smem_a), d.decode_smem(cute.smem_a_k1)
    for field in LAYOUT_FIELDS:
        assert ours[field] == theirs[field], f"smem descriptor field {field}: ours {ours[field]}, CuTe {theirs[field]}"
        assert d.decode_smem(plan.stages[0]["k_steps"][0]["desc_b"])[field] == d.decode_smem(cute.smem_b)[field], field
    assert ours_k1["start"] - ours["start"] == theirs_k1["start"] - theirs["start"], "K-step start advance"
