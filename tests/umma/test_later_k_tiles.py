"""`dump --umma --from-log` on the MMAs a kernel prints past its first K tile: each K tile's own
addresses placed as K tile 0's are, and the acc flags read as the MMA reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app

IDESC = 0x08200480  # kind::mxf4nvf4, E2M1 x E2M1, K-major, N=128, UE4M3, M=128
SMEM_HI = 0x40004040  # SWIZZLE_128B, version 1, SBO 1024 B
LBO = 1 << 16


def _desc(address: int) -> int:
    return (SMEM_HI << 32) | LBO | (address >> 4)


def _log(tmp_path: Path, k_tiles: dict[int, dict[str, int]] | None = None, acc: dict[int, int] | None = None) -> Path:
    """Two K tiles of 4 K steps, 128x128x64, 128B swizzle: A at 0x400, B at 0x4400, scales at 128 and
    144; `k_tiles` moves a K tile's K step 0 (keys a, b, sfa, sfb), `acc` sets an MMA's flag."""
    lines = ["nvfp4ctl:umma config mma=128,128,64 swizzle=128B block_k=256"]
    for index in range(8):
        k_tile, step = divmod(index, 4)
        at = {"a": 0x400, "b": 0x4400, "sfa": 128, "sfb": 144} | (k_tiles or {}).get(k_tile, {})
        flag = (acc or {}).get(index, int(index > 0))
        lines.append(f"nvfp4ctl:umma k={index} idesc=0x{IDESC:08x} desc_a=0x{_desc(at['a'] + 32 * step):016x}"
                     f" desc_b=0x{_desc(at['b'] + 32 * step):016x} tmem_d=0x00000000"
                     f" tmem_sfa=0x{at['sfa'] + 4 * step:08x} tmem_sfb=0x{at['sfb'] + 4 * step:08x} acc={flag}")
    log = tmp_path / "b200.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def _dump(log: Path):
    return CliRunner().invoke(app, ["dump", "--umma", "--from-log", str(log), "--shape", "128,128,512"])


def test_a_non_zero_acc_past_the_first_mma_accumulates_as_the_simulation_reads_it(tmp_path: Path) -> None:
    """acc=2 is a true predicate: it was called "overwrites D" while the simulation accumulated."""
    result = _dump(_log(tmp_path, acc={3: 2}))
    assert result.exit_code == 0, result.output
    assert "acc=2" not in result.output
    assert "model D equals the exact reference" in result.output


def test_a_non_zero_acc_on_the_first_mma_adds_to_what_d_held(tmp_path: Path) -> None:
    result = _dump(_log(tmp_path, acc={0: 2}))
    assert result.exit_code == 1, result.output
    assert "MMA 0 (K tile 0, K step 0): acc=2 adds to what D held before" in result.output


def test_a_stage_ring_moving_a_later_k_tile_passes(tmp_path: Path) -> None:
    result = _dump(_log(tmp_path, {1: {"a": 0x8400, "b": 0xC400, "sfa": 160, "sfb": 176}}))
    assert result.exit_code == 0, result.output
    assert "model D equals the exact reference" in result.output
    assert "K tile 1: issued at K tile 0's addresses (the model has one stage)" in result.output


@pytest.mark.parametrize(("moved", "problem"), [
    ({"a": 0x410}, "K tile 1: desc_a[0].start 0x410 is not 128-byte aligned, so no TMA box can start there"),
    ({"a": 0x4400}, "K tile 1: A's and B's tiles overlap in shared memory: desc_a's 0x4400..0x83ff"),
    ({"sfa": 0}, "K tile 1: tmem_sfa: columns 0..15 overlap D's 0..127"),
    ({"sfa": 144}, "K tile 1: A's and B's scales overlap in TMEM: tmem_sfa's columns 144..159"),
    ({"sfa": 510}, "K tile 1: tmem_sfa: columns 510..525 run past TMEM's 512"),
])
def test_a_later_k_tiles_own_addresses_are_placed_as_k_tile_0s(tmp_path: Path, moved: dict[str, int],
                                                              problem: str) -> None:
    """Each used to pass: the stage ring's K step 0 went unchecked and the simulation moved it onto K tile 0's."""
    result = _dump(_log(tmp_path, {1: moved}))
    assert result.exit_code == 1, result.output
    assert problem in result.output
    assert "0 mismatches" not in result.output


def test_an_unaligned_later_k_tile_start_gets_no_overlap_advice_from_it(tmp_path: Path) -> None:
    result = _dump(_log(tmp_path, {1: {"a": 0x410}}))
    assert "A's and B's tiles overlap" not in result.output


@pytest.mark.parametrize(("k", "checked"), [(256, 24), (512, 48)])
def test_the_summary_counts_every_descriptor_checked(tmp_path: Path, k: int, checked: int) -> None:
    """K tile 0: idesc and D of 4 K steps, 4 desc_a, 4 desc_b and the scales of 4 K steps (24); each
    later MMA's six words (24 more): the summary said 12 descriptors for either K, then 18 and 42."""
    result = CliRunner().invoke(app, ["dump", "--umma", "--from-log", str(_log(tmp_path)), "--shape", f"128,128,{k}"])
    assert result.exit_code == 0, result.output
    assert f"umma values: {checked} descriptors checked against the config, 0 mismatches" in result.output


def _without(log: Path, drop: set[int], cut: int | None = None) -> Path:
    """The log without the MMA lines of `drop`; `cut` ends MMA `cut`'s line inside its desc_a, as an
    output truncated mid-line leaves it."""
    kept = []
    for line in log.read_text().splitlines():
        index = int(line.split("k=")[1].split()[0]) if " k=" in line else None
        if index in drop:
            continue
        kept.append(line[:line.index("desc_a=") + 12] if index is not None and index == cut else line)
    log.write_text("\n".join(kept) + "\n")
    return log


@pytest.mark.parametrize(("drop", "shape", "missing"), [
    ({3}, "128,128,512", "(7 printed, K=512 needs 8): K tile 0, K step 3 (MMA 3) missing"),
    ({7}, "128,128,512", "(7 printed, K=512 needs 8): K tile 1, K step 3 (MMA 7) missing"),
    (set(), "128,128,768", "(8 printed, K=768 needs 12): K tile 2 (MMAs 8..11) missing"),
    ({7}, "128,128,768", "(7 printed, K=768 needs 12): K tile 1, K step 3 (MMA 7); K tile 2 (MMAs 8..11) missing"),
])
def test_fewer_mmas_than_k_needs_is_a_mismatch_naming_the_k_steps(tmp_path: Path, drop: set[int], shape: str,
                                                                missing: str) -> None:
    """A kernel that skips K steps computes a wrong C: it was a note and exit 0."""
    result = CliRunner().invoke(app, ["dump", "--umma", "--from-log", str(_without(_log(tmp_path), drop)),
                                      "--shape", shape])
    assert result.exit_code == 1, result.output
    assert f"fewer MMAs than K needs {missing}, so C leaves out their share of K" in result.output
    assert "0 mismatches" not in result.output


def test_fewer_mmas_behind_a_line_cut_short_stay_a_note(tmp_path: Path) -> None:
    """A log that stops inside an MMA line cannot tell skipped MMAs from unprinted ones."""
    result = _dump(_without(_log(tmp_path), set(), cut=7))
    assert "fewer MMAs than K needs" not in result.output
    assert "MMA 7 not printed (8 for this K), but the log has a line it cannot read among them" in result.output
    assert result.exit_code == 0, result.output


def _with(log: Path, sbo: dict[int, int] | None = None, sfa_lane: dict[int, int] | None = None) -> Path:
    """The log with desc_a's SBO field (16-byte units) or tmem_sfa's lane set on the MMAs named."""
    lines = []
    for line in log.read_text().splitlines():
        index = int(line.split("k=")[1].split()[0]) if " k=" in line else None
        if index in (sbo or {}):
            word = int(line.split("desc_a=")[1].split()[0], 16)
            word = (word & ~(0x3FFF << 32)) | (sbo[index] << 32)  # type: ignore[index]
            line = line.replace(line.split("desc_a=")[1].split()[0], f"0x{word:016x}")
        if index in (sfa_lane or {}):
            addr = int(line.split("tmem_sfa=")[1].split()[0], 16)
            line = line.replace(f"tmem_sfa=0x{addr:08x}", f"tmem_sfa=0x{(sfa_lane[index] << 16) | addr:08x}")  # type: ignore[index]
        lines.append(line)
    log.write_text("\n".join(lines) + "\n")
    return log


def test_a_later_k_tile_repeating_k_tile_0s_wrong_field_is_blamed_too(tmp_path: Path) -> None:
    """SBO 512 B (32) on all 8 MMAs: K tile 1 passed, held to K tile 0's mistake."""
    result = _dump(_with(_log(tmp_path), sbo={index: 32 for index in range(8)}))
    assert result.exit_code == 1, result.output
    assert "K tile 1: desc_a.sbo = 512 B, expected 1024 B (MMAs 4..7)" in result.output


def test_a_later_k_tile_that_is_right_is_not_blamed_for_k_tile_0s_mistake(tmp_path: Path) -> None:
    """SBO wrong in K tile 0 alone: K tile 1, which is right, was named (desc_a.sbo = 1024 B, K tile 0's is 512 B)."""
    result = _dump(_with(_log(tmp_path), sbo={index: 32 for index in range(4)}))
    assert result.exit_code == 1, result.output
    assert "K tile 1: desc_a" not in result.output
    assert "MISMATCH" in result.output  # the field check names K tile 0's


def test_a_later_k_tiles_scales_are_held_to_lane_0_as_k_tile_0s(tmp_path: Path) -> None:
    repeated = _dump(_with(_log(tmp_path), sfa_lane={index: 32 for index in range(8)}))
    assert repeated.exit_code == 1, repeated.output
    assert "K tile 1: tmem_sfa.lane = 32, expected 0 (MMAs 4..7)" in repeated.output
    right = _dump(_with(_log(tmp_path), sfa_lane={index: 32 for index in range(4)}))
    assert "K tile 1: tmem_sfa" not in right.output
