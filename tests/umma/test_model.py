"""The UMMA model on real inputs: for every dispatch config of kernels/sm100 and for every K-major
swizzle, TMA placement -> descriptors -> scales -> model D equals the exact reference; seeded
descriptor bugs give a wrong D and the field that explains it. CPU only, small shapes."""

from __future__ import annotations

import pytest
import torch

from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm, round_to_fp16
from nvfp4ctl.umma import descriptors as d
from nvfp4ctl.umma import diagnose, model, plan, smem, tmem
from nvfp4ctl.umma.configs import default_kernel, expected_smem, parse_configs

SEED = 1111


@pytest.fixture(scope="module")
def data() -> tuple[torch.Tensor, ...]:
    return generate_input(256, 256, 512, 2, SEED, device="cpu")


@pytest.fixture(scope="module")
def full_scales() -> tuple[torch.Tensor, ...]:
    return generate_input(128, 128, 256, 1, SEED, device="cpu", scales="full")


@pytest.mark.parametrize("config", parse_configs(default_kernel()), ids=lambda c: c.name)
def test_kernel_configs_model_equals_reference(config, data) -> None:
    """Our CUTLASS kernel's tiles: the descriptors the plan builds are the ones CuTe builds (configs.py is
    cross-checked with CuTe in tests/sm100), and the model's D on a tile away from the origin, batch 1,
    two K tiles, is the reference bit for bit."""
    tile = plan.TileConfig(block_n=config.block_n, block_k=config.block_k, swizzle="128B")
    for step in range(tile.k_steps):
        assert plan.smem_desc(tile, 0, config.block_m, step) == d.encode_smem(expected_smem(config, step))
    m0, n0 = 128, 256 - config.block_n
    d_model = plan.run_tile(tile, plan.tile_inputs(data, tile, m0, n0, batch=1))
    reference = reference_gemm(*data[:4])[m0:m0 + 128, n0:n0 + config.block_n, 1]
    assert torch.equal(round_to_fp16(d_model.double()), reference)


@pytest.mark.parametrize("swizzle", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize("block_n", [64, 192, 256])
def test_every_swizzle_and_n(swizzle: str, block_n: int, data) -> None:
    tile = plan.TileConfig(block_n=block_n, swizzle=swizzle, a_addr=0x400)
    assert diagnose.simulate(tile, plan.tile_inputs(data, tile, 0, 0)).ok


def test_full_range_scales(full_scales) -> None:
    """Subnormal, large and zero e4m3 scales go through the same path exactly."""
    tile = plan.TileConfig(block_n=128)
    assert diagnose.simulate(tile, plan.tile_inputs(full_scales, tile, 0, 0)).ok


def test_tcgen05_cp_places_scales_like_place_scales() -> None:
    """The 512-byte scale atom copied by tcgen05.cp.32x128b.warpx4 lands where place_scales puts it."""
    scales = torch.randint(0, 256, (128, 4), dtype=torch.uint8)
    atom = torch.zeros(512, dtype=torch.uint8)
    for row in range(128):  # the Sm1xxBlkScaledConfig atom: (row % 32) * 16 + (row // 32) * 4 + kb
        atom[(row % 32) * 16 + (row // 32) * 4:(row % 32) * 16 + (row // 32) * 4 + 4] = scales[row]
    image = smem.new_image(4096)
    image[1024:1536] = atom
    desc = d.encode_smem({"start": 1024 >> 4, "lbo": 1, "sbo": 128 >> 4, "version": 1})
    copied, placed = tmem.Tmem(), tmem.Tmem()
    tmem.tcgen05_cp(copied, image, tmem.tmem_address(0, 100), desc)
    tmem.place_scales(placed, tmem.tmem_address(0, 100), scales)
    assert torch.equal(copied.data, placed.data)
    read = tmem.scale_bytes(copied, tmem.tmem_address(0, 100), 128, 4, 0, own_lanes=True)
    assert torch.equal(read, scales)


def test_tma_box_then_descriptor_reads_the_tile_back() -> None:
    """Bytes TMA stores with a swizzle are the bytes the descriptor reads, for every K step."""
    rows, tile_bytes = 128, 128
    tile = torch.randint(0, 256, (rows, tile_bytes), dtype=torch.uint8)
    for swizzle in ("none", "32B", "64B", "128B"):
        config = plan.TileConfig(block_n=128, swizzle=swizzle)
        image = smem.new_image(64 * 1024)
        for dst, box in plan.tma_boxes(config, tile, 0x2000):
            smem.tma_store_box(image, dst, box, config.layout)
        for step in range(4):
            got = smem.gather(image, smem.operand_addresses(plan.smem_desc(config, 0x2000, rows, step), rows))
            assert torch.equal(got, tile[:, step * 32:(step + 1) * 32]), (swizzle, step)


def test_model_refuses_what_it_does_not_model() -> None:
    issue = plan.issues(plan.TileConfig(block_n=128), 1)[0]
    mn_major = d.decode_instr(issue.idesc) | {"a_major": 1}
    with pytest.raises(smem.ModelError) as error:
        model.shape_of(model.MmaIssue(**{**issue.__dict__, "idesc": d.encode_instr(mn_major)}))
    assert error.value.field == "a_major"


def _swap_lbo_sbo(issue: model.MmaIssue) -> model.MmaIssue:
    fields = d.decode_smem(issue.desc_a)
    return diagnose.set_field(diagnose.set_field(issue, "desc_a", "lbo", fields["sbo"]), "desc_a", "sbo", fields["lbo"])


def _with(issue: model.MmaIssue, name: str, key: str, change) -> model.MmaIssue:
    return diagnose.set_field(issue, name, key, change(diagnose.issue_fields(issue, name)[key]))


def _advance(issue: model.MmaIssue, step: int, advance: int) -> model.MmaIssue:
    return diagnose.set_field(issue, "desc_a", "start", (step * advance) >> 4)


SEEDED = {
    # swizzled (the default 128B): the hardware reads no LBO, so the SBO alone is named
    "lbo_sbo_swapped": (lambda issues: [_swap_lbo_sbo(i) for i in issues], "desc_a.sbo = 16 B, expected 1024 B"),
    "wrong_n": (lambda issues: [_with(i, "idesc", "n_dim", lambda v: v // 2) for i in issues], "idesc.n_dim (N>>3)"),
    "wrong_scale_id": (lambda issues: [_with(i, "idesc", "b_sf_id", lambda v: 2) for i in issues], "wrong scale id"),
    "missed_k_advance": (lambda issues: [diagnose.set_field(i, "desc_a", "start", d.decode_smem(issues[0].desc_a)["start"])
                                         for i in issues],
                         "missed K-step advance: the start stays 0x0 in every K step, expected 0x0, 0x20, 0x40, 0x60"),
    # an advance that is there but wrong is no "missed" one: the per-step values are shown
    "advance_16B": (lambda issues: [_advance(i, s % 4, 16) for s, i in enumerate(issues)],
                    "desc_a.start: wrong K-step advance: +0x10 per step, expected +0x20 — starts 0x0, 0x10, 0x20, 0x30,"
                    " expected 0x0, 0x20, 0x40, 0x60 (MMAs 1,2,3,5,6,7)"),
    "advance_64B": (lambda issues: [_advance(i, s % 4, 64) for s, i in enumerate(issues)],
                    "wrong K-step advance: +0x40 per step, expected +0x20"),
    "swizzle_mismatch": (lambda issues: [_with(i, "desc_b", "layout", lambda v: smem.SWIZZLE_64B) for i in issues],
                         "swizzle mismatch"),
    "scale_column": (lambda issues: [_with(i, "tmem_sfa", "column", lambda v: v + 4) for i in issues], "tmem_sfa.column"),
}


@pytest.mark.parametrize("bug", sorted(SEEDED))
def test_seeded_descriptor_bugs_are_named(bug: str, data) -> None:
    tile = plan.TileConfig(block_n=128)
    inputs = plan.tile_inputs(data, tile, 0, 0)
    mutate, named = SEEDED[bug]
    result = diagnose.simulate(tile, inputs, mutate(plan.issues(tile, 2)))
    assert not result.ok, "the seeded bug must change D"
    assert any(named in line for line in result.explanations), result.explanations


def test_a_swap_of_lbo_and_sbo_is_named_where_lbo_is_read(data) -> None:
    tile = plan.TileConfig(block_n=128, swizzle="none")
    result = diagnose.simulate(tile, plan.tile_inputs(data, tile, 0, 0), [_swap_lbo_sbo(i) for i in plan.issues(tile, 2)])
    assert any("LBO and SBO swapped" in line for line in result.explanations), result.explanations


def test_a_swizzled_operands_lbo_is_no_difference(data) -> None:
    """The hardware never reads it (smem.reads_lbo): D is right whatever it holds, and nothing is listed."""
    tile = plan.TileConfig(block_n=128)
    issues = [_with(i, "desc_a", "lbo", lambda v: 64) for i in plan.issues(tile, 2)]
    assert diagnose.compare_issues(issues, plan.issues(tile, 2)) == []
    assert diagnose.simulate(tile, plan.tile_inputs(data, tile, 0, 0), issues).ok


@pytest.mark.parametrize("swizzle, sbo", [("128B", 1024), ("64B", 512), ("32B", 256)])
def test_a_swizzled_swap_is_hinted_beside_the_sbo_and_lbo_stays_no_difference(data, swizzle: str, sbo: int) -> None:
    """The SBO alone is the difference; the LBO holding the SBO expected is the hint of a swap, for each
    swizzle's own SBO (8 rows of the atom's width)."""
    tile = plan.TileConfig(block_n=128, swizzle=swizzle)
    result = diagnose.simulate(tile, plan.tile_inputs(data, tile, 0, 0), [_swap_lbo_sbo(i) for i in plan.issues(tile, 2)])
    assert {(diff.descriptor, diff.field) for diff in result.diffs} == {("desc_a", "sbo")}
    assert result.explanations == [
        f"desc_a.sbo = 16 B, expected {sbo} B (MMAs 0,1,2,3,4,5,6,7); LBO and SBO look swapped: lbo = {sbo} B is the"
        f" SBO expected (LBO is ignored for SWIZZLE_{swizzle}, SBO must be {sbo} B)"], result.explanations


def test_error_map_marks_the_wrong_columns() -> None:
    bad = torch.zeros(16, 32, dtype=torch.bool)
    bad[:, 16:] = True
    bad[0, 0] = True
    assert diagnose.error_map(bad) == ["x.##", "..##"]
