"""The `nvfp4ctl:umma` line format: parsing (CPU), and `check --dump` end to end on CPU with a target
that prints the lines from Python; the GPU test proves the plumbing with a real sm_90a kernel's printf."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
from nvfp4ctl.umma import diagnose, dumplines, plan
from nvfp4ctl.umma.user_values import simulation_plan

TARGETS = Path(__file__).parent / "targets"


def _lines(issues: list, noise: bool = True) -> list[str]:
    out = ["some other output", "nvfp4ctl:umma config mma=128,128,64 swizzle=128B block_k=256"] if noise else []
    for k, issue in enumerate(issues):
        out.append(f"[child] nvfp4ctl:umma k={k} idesc=0x{issue.idesc:08x} desc_a=0x{issue.desc_a:016x}"
                   f" desc_b=0x{issue.desc_b:016x} tmem_d=0x{issue.tmem_d:08x} tmem_sfa=0x{issue.tmem_sfa:08x}"
                   f" tmem_sfb=0x{issue.tmem_sfb:08x} acc={int(issue.accumulate)}")
    return out


def test_parse_round_trips_the_plan() -> None:
    tile = plan.TileConfig(block_n=128, a_addr=0x400)
    issues = plan.issues(tile, 2)
    dump = dumplines.parse(_lines(issues) + _lines(issues, noise=False) + ["nvfp4ctl:umma k=x idesc=0x1"])
    assert len(dump.records) == 16 and len(dump.rejected) == 1
    first = dumplines.first_tile(dump)
    assert len(first) == 8
    config, source = dumplines.infer_config(dump, first)
    assert (config.m, config.n, config.swizzle, config.block_k) == (128, 128, "128B", 256) and "config line" in source
    values = dumplines.user_values(first, config.k_steps)
    assert values.desc_a == tuple(issue.desc_a for issue in issues[:4])
    sim_tile, sim_issues, notes = simulation_plan(config, values, 2)
    assert sim_issues == issues and not notes
    data = generate_input(128, 128, 512, 1, 7, device="cpu")
    assert diagnose.simulate(sim_tile, plan.tile_inputs(data, sim_tile, 0, 0), sim_issues).ok


def test_config_is_inferred_without_a_config_line() -> None:
    issues = plan.issues(plan.TileConfig(block_n=64, swizzle="64B"), 1)
    dump = dumplines.parse(_lines(issues, noise=False))
    config, source = dumplines.infer_config(dump, dumplines.first_tile(dump))
    assert (config.n, config.swizzle) == (64, "64B") and "inferred" in source


@pytest.fixture
def on_cpu(monkeypatch):
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)


def test_check_dump_runs_the_printed_lines_through_the_model(on_cpu) -> None:
    result = CliRunner().invoke(app, ["check", "--submission", str(TARGETS / "prints_umma_lines.py"),
                                      "--shape", "128,128,512", "--no-probe", "--dump"])
    assert result.exit_code == 0, result.output
    assert "dump: 8 MMAs of the first output tile" in result.output
    assert "model D equals the exact reference" in result.output


def test_check_dump_names_a_missed_k_advance(on_cpu, monkeypatch) -> None:
    monkeypatch.setenv("UMMA_LINES_BUG", "k_advance")
    result = CliRunner().invoke(app, ["check", "--submission", str(TARGETS / "prints_umma_lines.py"),
                                      "--shape", "128,128,512", "--no-probe", "--dump"])
    assert result.exit_code == 1, result.output
    assert "1/1 pass" in result.output  # the answer is right; the printed descriptors are not
    assert "desc_a.start: missed K-step advance" in result.output


@pytest.mark.gpu
def test_check_dump_collects_lines_from_an_sm90a_kernel_printf() -> None:
    """A real device printf (sm_90a kernel via load_inline) carries the lines through the child's output."""
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the plumbing kernel is built for sm_90a (H100)")
    result = CliRunner().invoke(app, ["check", "--submission", str(TARGETS / "sm90a_prints_umma_lines.py"),
                                      "--shape", "128,128,512", "--no-probe", "--dump"])
    assert result.exit_code == 0, result.output
    assert "dump: 8 MMAs of the first output tile" in result.output
    assert "model D equals the exact reference" in result.output


def test_dump_from_log_reads_saved_lines(tmp_path: Path) -> None:
    log = tmp_path / "b200.log"
    log.write_text("\n".join(_lines(plan.issues(plan.TileConfig(block_n=128, a_addr=0x400), 2))) + "\n")
    result = CliRunner().invoke(app, ["dump", "--umma", "--from-log", str(log), "--shape", "128,128,512"])
    assert result.exit_code == 0, result.output
    assert "model D equals the exact reference" in result.output


def _check_dump(monkeypatch, bug: str):
    monkeypatch.setenv("UMMA_LINES_BUG", bug)
    return CliRunner().invoke(app, ["check", "--submission", str(TARGETS / "prints_umma_lines.py"),
                                    "--shape", "128,128,512", "--no-probe", "--dump"])


def test_check_dump_names_an_accumulator_cleared_in_a_later_k_tile(on_cpu, monkeypatch) -> None:
    """acc=0 at K tile 1's first MMA throws K tile 0's sum away; the model used to set acc itself."""
    result = _check_dump(monkeypatch, "acc_reset")
    assert result.exit_code == 1, result.output
    assert "MMA 4 (K tile 1, K step 0): acc=0 overwrites D, so K tile 0's sum is thrown away" in result.output
    assert "D equals the reference" not in result.output


def test_check_dump_checks_a_later_k_tiles_idesc(on_cpu, monkeypatch) -> None:
    result = _check_dump(monkeypatch, "kt1_idesc")
    assert result.exit_code == 1, result.output
    assert "K tile 1: idesc.n_dim = 8, K tile 0's is 16 (MMAs 4..7)" in result.output
    assert "0 mismatches" not in result.output


def test_check_dump_checks_a_later_k_tiles_advance(on_cpu, monkeypatch) -> None:
    result = _check_dump(monkeypatch, "kt1_desc")
    assert result.exit_code == 1, result.output
    assert "K tile 1: desc_a.start advances +0x0, +0x10, +0x20, +0x30 from its K step 0, K tile 0's" \
           " +0x0, +0x20, +0x40, +0x60 (MMAs 4..7)" in result.output
    assert "0 mismatches" not in result.output


def test_check_dump_says_it_checked_the_later_k_tiles(on_cpu, monkeypatch) -> None:
    result = _check_dump(monkeypatch, "")
    assert result.exit_code == 0, result.output
    assert "K tile 1 (MMAs 4..7) checked against K tile 0's pattern" in result.output


def test_a_saved_check_dump_output_reads_back_with_from_log(on_cpu, monkeypatch, tmp_path: Path) -> None:
    """`check --dump > log` then `dump --umma --from-log log`: the lines used to reach the output only under -v."""
    monkeypatch.setenv("UMMA_LINES_BUG", "kt1_idesc")
    for quiet in ([], ["-q"]):
        result = CliRunner().invoke(app, [*quiet, "check", "--submission", str(TARGETS / "prints_umma_lines.py"),
                                          "--shape", "128,128,512", "--no-probe", "--dump"])
        assert result.exit_code == 1, result.output
        log = tmp_path / "b200.log"
        log.write_text(result.output)
        again = CliRunner().invoke(app, ["dump", "--umma", "--from-log", str(log), "--shape", "128,128,512"])
        assert again.exit_code == 1, again.output
        assert "dump: 8 MMAs of the first output tile" in again.output
        assert "K tile 1: idesc.n_dim = 8, K tile 0's is 16 (MMAs 4..7)" in again.output


def test_a_quiet_check_dump_of_two_shapes_reads_back_as_one_run(on_cpu, monkeypatch, tmp_path: Path) -> None:
    """`-q check --dump` of two shapes whose launches each print a config line of their own: -q hid the
    run's markers, and the second launch's config line was taken for a second run (exit 2)."""
    monkeypatch.setenv("UMMA_LINES_LAUNCH_K", "1")
    result = CliRunner().invoke(app, ["-q", "check", "--submission", str(TARGETS / "prints_umma_lines.py"),
                                      "--shape", "128,128,512", "--shape", "128,128,1024", "--no-probe", "--dump"])
    assert result.exit_code == 0, result.output
    assert "dump: the kernel's 26 nvfp4ctl:umma lines" in result.output
    log = tmp_path / "b200.log"
    log.write_text(result.output)
    again = CliRunner().invoke(app, ["dump", "--umma", "--from-log", str(log), "--shape", "128,128,512"])
    assert again.exit_code == 0, again.output
    assert "dump: 8 MMAs of the first output tile" in again.output


def test_lines_without_a_runs_markers_are_read_as_one_run() -> None:
    """Without check's line or the lines header, a config line after MMAs cannot be told from a later
    test case's launch: the first output tile is read with the config line printed before it."""
    first = _lines(plan.issues(plan.TileConfig(block_n=128, a_addr=0x400), 2))
    later = [_config_line(256), *_lines(plan.issues(plan.TileConfig(block_n=256, a_addr=0x400), 1), noise=False)]
    dump = dumplines.parse(first + later)
    assert dump.second_run is None
    tile = dumplines.first_tile(dump)
    assert len(tile) == 8 and dumplines.infer_config(dump, tile)[0].n == 128


def _config_line(n: int) -> str:
    return f"nvfp4ctl:umma config mma=128,{n},64 swizzle=128B block_k=256"


def test_one_runs_later_launch_with_another_config_leaves_the_first_tile_its_own() -> None:
    """Within one run (its check line above), a later test case's launch may state another config: the
    first output tile keeps the config line printed before it, not the last one in the output."""
    issues = plan.issues(plan.TileConfig(block_n=128, a_addr=0x400), 1)
    text = ["check · nvfp4_gemm · target x", *_lines(issues), _config_line(256), *_lines(issues, noise=False)]
    dump = dumplines.parse(text)
    assert dump.second_run is None
    tile = dumplines.first_tile(dump)
    assert dumplines.tile_config(dump, tile)["mma"] == "128,128,64"
    assert dumplines.infer_config(dump, tile)[0].n == 128


def test_a_saved_check_dump_output_appended_twice_is_refused(on_cpu, monkeypatch, tmp_path: Path) -> None:
    """`check --dump >> log` twice: the second run opens with check's own first line."""
    result = _check_dump(monkeypatch, "")
    assert result.exit_code == 0, result.output
    log = tmp_path / "b200.log"
    log.write_text(result.output + result.output)
    second = result.output.count("\n") + 1
    again = CliRunner().invoke(app, ["dump", "--umma", "--from-log", str(log), "--shape", "128,128,512"])
    assert again.exit_code == 2, again.output
    assert f"a second starts at line {second} (check · " in again.output
