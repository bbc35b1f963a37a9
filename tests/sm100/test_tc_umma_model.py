"""The tcgen05 kernel's data path through the exact UMMA model, on real GPU MODE inputs.

Everything the kernel decides comes from its own source through the plan printer
(tests/sm100/tc_plan.py): per stage load the TMA box coordinates and scale offsets, the stage
buffer each load lands in (128-byte swizzle, the kernel's TMA box), the scale descriptors of its
tcgen05.cp, the per-K-step smem descriptors, the instruction descriptor, TMEM columns, and the
split-K plan (which CTAs hold which K ranges of a tile, which owner adds which partials in which
order). The test replays that plan in the model (nvfp4ctl.umma.model: TMA into a shared-memory
image, tcgen05.cp into a TMEM image, each tcgen05.mma from the descriptors), adds the partials in
the kernel's order in fp32, rounds to fp16 and compares bit for bit with the exact reference for a
few tiles of every shape (all dispatch entries and the general config). CPU only.
"""

from __future__ import annotations

import pytest
import torch

from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
from nvfp4ctl.problems.nvfp4_gemm.reference import dequantize, round_to_fp16
from tc_plan import Segment, TcPlan, load_plan
from tc_shapes import ALL_SHAPES

model = pytest.importorskip("nvfp4ctl.umma.model", reason="the UMMA data-path model (issue 14) is not on this branch")
smem = pytest.importorskip("nvfp4ctl.umma.smem")
tmem_model = pytest.importorskip("nvfp4ctl.umma.tmem")

pytestmark = pytest.mark.usefixtures("tc_printer")
SEED = 1111


def storage_bytes(tensor: torch.Tensor) -> torch.Tensor:
    """A dense tensor's bytes in memory order (the permuted scale tensors' storage = to_blocked)."""
    order = sorted(range(tensor.dim()), key=lambda d: (-tensor.stride(d), -tensor.size(d)))
    return tensor.permute(order).contiguous().view(torch.uint8).reshape(-1)


class Operands:
    """The GPU MODE tuple as the kernel addresses it: batch-stacked K-major rows and raw scale bytes."""

    def __init__(self, data: tuple[torch.Tensor, ...]) -> None:
        a, b = data[0], data[1]
        self.a = a.view(torch.uint8).permute(2, 0, 1).reshape(-1, a.shape[1])
        self.b = b.view(torch.uint8).permute(2, 0, 1).reshape(-1, b.shape[1])
        self.sfa = storage_bytes(data[4].view(torch.uint8))
        self.sfb = storage_bytes(data[5].view(torch.uint8))


def run_segment(plan: TcPlan, ops: Operands, segment: Segment) -> torch.Tensor:
    """fp32 (BLOCK_N, BLOCK_M) accumulator of one segment, as the kernel's MMA warp builds it."""
    cfg, tma = plan.config, plan.tma
    layout = smem.TMA_SWIZZLE[tma["a"]["swizzle"]]
    image, tm = smem.new_image(), tmem_model.Tmem()
    acc = plan.accumulators[0]
    for index, load in enumerate(segment.loads):
        stage = plan.stages[load.stage]
        box_a = ops.a[load.a_row:load.a_row + tma["a"]["rows"], load.x:load.x + tma["a"]["inner_bytes"]]
        box_b = ops.b[load.b_row:load.b_row + tma["b"]["rows"], load.x:load.x + tma["b"]["inner_bytes"]]
        smem.tma_store_box(image, stage["a_tile"], box_a, layout)
        smem.tma_store_box(image, stage["b_tile"], box_b, layout)
        stage_base = stage["b_tile"] - tma["b"]["dst_offset"]
        for name, offset, source in (("sfa", load.sfa_offset, ops.sfa), ("sfb", load.sfb_offset, ops.sfb)):
            dst = stage_base + tma[name]["dst_offset"]
            image[dst:dst + tma[name]["bytes"]] = source[offset:offset + tma[name]["bytes"]]  # bulk copy: no swizzle
        issues = []
        for j, step in enumerate(stage["k_steps"]):
            # tcgen05.cp of the MMA's A scales (B rows) and B scales (A rows), then the MMA
            tmem_model.tcgen05_cp(tm, image, step["tmem_sfa"], step["sfb_cp_desc"], "32x128b.warpx4")
            tmem_model.tcgen05_cp(tm, image, step["sfa_cp_tmem"], step["sfa_cp_desc"], "32x128b.warpx4")
            issues.append(model.MmaIssue(idesc=plan.idesc, desc_a=step["desc_a"], desc_b=step["desc_b"], tmem_d=acc,
                                         tmem_sfa=step["tmem_sfa"], tmem_sfb=step["tmem_sfb_by_m_sub"][segment.m_sub],
                                         accumulate=index > 0 or j > 0))
        model.run(image, issues, tm)
        assert load.stage < cfg["kStages"]
    return model.read_d(tm, acc, cfg["UMMA_M"], cfg["UMMA_N"])


def owner_of(plan: TcPlan, tile: int) -> tuple[int, Segment]:
    for cta in range(plan.ctas):
        for segment in plan.segments(cta):
            if segment.tile == tile and segment.owner:
                return cta, segment
    raise AssertionError(f"tile {tile} has no owner")


def partial_of(plan: TcPlan, cta: int, tile: int) -> Segment:
    [segment] = [s for s in plan.segments(cta) if s.tile == tile and not s.owner]
    return segment


def kernel_tile(plan: TcPlan, ops: Operands, tile: int) -> tuple[torch.Tensor, Segment]:
    """fp16 (BLOCK_N, BLOCK_M) = C^T of one tile as the epilogue writes it: the partials of CTAs
    first_contributor .. owner-1 summed in that order from 0 in fp32, then added to the owner's
    own accumulator (Exchange::sum_sources and epilogue_role)."""
    cta, owner = owner_of(plan, tile)
    values = run_segment(plan, ops, owner)
    if owner.reduce:
        pre = torch.zeros_like(values)
        for source in range(owner.first_contributor, cta):
            pre = pre + run_segment(plan, ops, partial_of(plan, source, tile))
        values = values + pre
    return values.to(torch.float16), owner


def reference_tile(data: tuple[torch.Tensor, ...], owner: Segment, block_m: int, block_n: int) -> torch.Tensor:
    rows_a = slice(owner.m_block * block_m, (owner.m_block + 1) * block_m)
    rows_b = slice(owner.n_block * block_n, (owner.n_block + 1) * block_n)
    a = dequantize(data[0][rows_a, :, owner.batch], data[2][rows_a, :, owner.batch])
    b = dequantize(data[1][rows_b, :, owner.batch], data[3][rows_b, :, owner.batch])
    return round_to_fp16(b @ a.T)  # C^T tile: n rows, m columns


def tiles_to_check(plan: TcPlan) -> list[int]:
    """The first and last tile, plus one whose owner adds partials (if any)."""
    tiles = {0, plan.tiles - 1}
    for cta in range(plan.ctas):
        reducing = [s.tile for s in plan.segments(cta) if s.reduce]
        if reducing:
            tiles.add(reducing[0])
            break
    return sorted(tiles)


@pytest.mark.parametrize("shape", ALL_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_kernel_plan_matches_the_reference(shape: tuple[int, int, int, int]) -> None:
    m, n, k, l = shape
    plan = load_plan(m, n, k, l, loads=True)
    data = generate_input(m, n, k, l, SEED, device="cpu")
    ops = Operands(data)
    cfg = plan.config
    for tile in tiles_to_check(plan):
        got, owner = kernel_tile(plan, ops, tile)
        want = reference_tile(data, owner, cfg["BLOCK_M"], cfg["BLOCK_N"])
        mismatch = (got.view(torch.int16) != want.view(torch.int16)).nonzero()
        assert mismatch.numel() == 0, (
            f"{m=}, {n=}, {k=}, {l=}: tile {tile} (batch {owner.batch}, m block {owner.m_block}, n block "
            f"{owner.n_block}) differs at C^T{tuple(mismatch[0].tolist())}: got {got[tuple(mismatch[0])]}, "
            f"want {want[tuple(mismatch[0])]} ({mismatch.shape[0]} of {got.numel()})"
        )


def test_a_broken_descriptor_is_caught() -> None:
    """The comparison has teeth: advancing K by 16 bytes instead of 32 per MMA step breaks the tile."""
    plan = load_plan(128, 256, 512, 1, loads=True)
    data = generate_input(128, 256, 512, 1, SEED, device="cpu")
    raw = dict(plan.raw)
    raw["stages"] = [dict(s, k_steps=[dict(step, desc_a=step["desc_a"] - j, desc_b=step["desc_b"] - j)
                                      for j, step in enumerate(s["k_steps"])]) for s in plan.stages]
    broken = TcPlan(raw)
    got, owner = kernel_tile(broken, Operands(data), 0)
    want = reference_tile(data, owner, plan.config["BLOCK_M"], plan.config["BLOCK_N"])
    assert not torch.equal(got, want)
