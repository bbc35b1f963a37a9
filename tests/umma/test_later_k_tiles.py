"""`dump --umma --from-log` on the MMAs a kernel prints past its first K tile: each K tile's own
addresses placed as K tile 0's are, and the acc flags read as the MMA reads them."""

from __future__ import annotations

from pathlib import Path

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
