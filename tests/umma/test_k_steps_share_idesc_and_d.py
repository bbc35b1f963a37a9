"""`dump --umma --from-log` on K steps of K tile 0 whose idesc or tmem_d differ from K step 0's: one
output tile's MMAs share both, so such a K step is the kernel's mismatch, later K tiles are held to
K step 0's values, and the simulation issues each MMA with its own."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.umma import dumplines

IDESC = 0x08200480  # kind::mxf4nvf4, E2M1 x E2M1, K-major, N=128, UE4M3, M=128
IDESC_N64 = 0x08100480  # the same with N=64
SMEM_HI = 0x40004040  # SWIZZLE_128B, version 1, SBO 1024 B
LBO = 1 << 16


def _desc(address: int) -> int:
    return (SMEM_HI << 32) | LBO | (address >> 4)


def _lines(changed: dict[int, dict[str, int]] | None = None) -> list[str]:
    """Two K tiles of 4 K steps, 128x128x64, 128B swizzle: A at 0x400, B at 0x4400, D at column 0, scales
    at 128 and 144; `changed` sets an MMA's idesc or tmem_d."""
    lines = ["nvfp4ctl:umma config mma=128,128,64 swizzle=128B block_k=256"]
    for index in range(8):
        step = index % 4
        own = {"idesc": IDESC, "tmem_d": 0} | (changed or {}).get(index, {})
        lines.append(f"nvfp4ctl:umma k={index} idesc=0x{own['idesc']:08x} desc_a=0x{_desc(0x400 + 32 * step):016x}"
                     f" desc_b=0x{_desc(0x4400 + 32 * step):016x} tmem_d=0x{own['tmem_d']:08x}"
                     f" tmem_sfa=0x{128 + 4 * step:08x} tmem_sfb=0x{144 + 4 * step:08x} acc={int(index > 0)}")
    return lines


def _dump(tmp_path: Path, changed: dict[int, dict[str, int]] | None = None, k: int = 512):
    log = tmp_path / "b200.log"
    log.write_text("\n".join(_lines(changed)) + "\n")
    return CliRunner().invoke(app, ["dump", "--umma", "--from-log", str(log), "--shape", f"128,128,{k}"])


def test_k_tile_0s_k_steps_are_blamed_not_k_tile_1(tmp_path: Path) -> None:
    """N=64 at k=2 and tmem_d=0x40 at k=3: K tile 1 was blamed (idesc.n_dim = 16, K tile 0's is 8 (MMA 6))
    while the simulation found D equal to the reference."""
    result = _dump(tmp_path, {2: {"idesc": IDESC_N64}, 3: {"tmem_d": 0x40}})
    assert result.exit_code == 1, result.output
    assert ("MMA 2 (K tile 0, K step 2): idesc.n_dim = 8 (N=64), K step 0's is 16 (N=128): an N=64 MMA reads"
            " B's rows 0..63 and writes TMEM columns 0..63 (D is columns 0..127)") in result.output
    assert ("MMA 3 (K tile 0, K step 3): tmem_d = 0x00000040, K step 0's is 0x00000000: this MMA accumulates"
            " into columns 64..191 (D is columns 0..127; one output tile accumulates into one D)") in result.output
    assert "K tile 1: idesc" not in result.output
    assert "K tile 1: tmem_d" not in result.output
    assert "D equals the reference" not in result.output


def test_a_k_step_with_another_n_makes_the_simulation_fail(tmp_path: Path) -> None:
    result = _dump(tmp_path, {2: {"idesc": IDESC_N64}})
    assert result.exit_code == 1, result.output
    assert "D equals the reference" not in result.output
    assert "simulate: " in result.output and " wrong" in result.output


def test_a_k_step_accumulating_elsewhere_makes_the_simulation_fail(tmp_path: Path) -> None:
    result = _dump(tmp_path, {1: {"tmem_d": 0x100}}, k=256)
    assert result.exit_code == 1, result.output
    assert "MMA 1 (K tile 0, K step 1): tmem_d = 0x00000100, K step 0's is 0x00000000" in result.output
    assert "D equals the reference" not in result.output


def test_k_steps_differing_alike_are_named_together(tmp_path: Path) -> None:
    result = _dump(tmp_path, {1: {"tmem_d": 0x200000}, 2: {"tmem_d": 0x200000}}, k=256)
    assert result.exit_code == 1, result.output
    assert ("MMAs 1..2 (K tile 0, K steps 1..2): tmem_d = 0x00200000, K step 0's is 0x00000000: these MMAs"
            " accumulate into lanes 32..159, columns 0..127 (D is lanes 0..127, columns 0..127;") in result.output


def test_later_k_tiles_are_held_to_k_step_0s_values(tmp_path: Path) -> None:
    """K tile 1's K step 2 was compared with K tile 0's K step 2: the same wrong N there passed."""
    result = _dump(tmp_path, {2: {"idesc": IDESC_N64}, 6: {"idesc": IDESC_N64}})
    assert result.exit_code == 1, result.output
    assert "MMA 2 (K tile 0, K step 2): idesc.n_dim = 8 (N=64)" in result.output
    assert "K tile 1: idesc.n_dim = 8, K tile 0's is 16 (MMA 6)" in result.output


def test_the_simulation_issues_each_k_steps_own_idesc_and_d() -> None:
    from nvfp4ctl.umma.user_values import simulation_plan

    dump = dumplines.parse(_lines({2: {"idesc": IDESC_N64}, 3: {"tmem_d": 0x40}}))
    tile = dumplines.first_tile(dump)
    config, _ = dumplines.infer_config(dump, tile)
    _, issues, _ = simulation_plan(config, dumplines.user_values(tile, config.k_steps), 2)
    assert [issue.idesc for issue in issues[:4]] == [IDESC, IDESC, IDESC_N64, IDESC]
    assert [issue.tmem_d for issue in issues[:4]] == [0, 0, 0, 0x40]

