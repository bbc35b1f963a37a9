"""`nvfp4ctl log --target A --target B`: each named target's runs, and, in a trend of several targets, which was
fastest at each shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.bench import fastest, trend
from nvfp4ctl.bench.history import Timing, result_line
from nvfp4ctl.cli import app
from nvfp4ctl.workspace import memory_path

B200, H100 = "NVIDIA B200 (sm_100)", "NVIDIA H100 80GB HBM3 (sm_90)"
BIG, SMALL = "128x7168x16384", "128x7168x2048"
WIDE = {"COLUMNS": "300"}  # no cell folded: the assertions read whole lines


def bench(time: str, target: str, big: float | None, small: float, gpu: str = B200,
          command: str = "nvfp4ctl bench") -> runlog.RunEntry:
    shapes = [(key, Timing(mean, 0.01)) for key, mean in ((BIG, big), (SMALL, small)) if mean is not None]
    geomean = (big * small) ** 0.5 if big is not None else small
    return runlog.RunEntry(f"2026-11-26T{time}Z", command, f"{target}@0123456789ab", "2dc615a", gpu, "0",
                           result_line(Timing(geomean, 0.01), shapes))


# sub_v2.py is the faster at the big shape, sub_v5.py at the small one and in the geomean
VARIANTS = [bench("01:00:00", "sub_v2.py", 50.0, 20.0), bench("01:10:00", "sub_v2.py", 48.0, 19.0),
            bench("01:20:00", "sub_v5.py", 52.0, 15.0), bench("01:30:00", "sub_v5.py", 53.0, 16.0)]


@pytest.fixture
def variants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("sub_v2.py", "sub_v5.py", "sub_v7.py"):
        (tmp_path / name).write_text(name)
    memory = memory_path()
    for entry in VARIANTS:
        runlog.append(entry, memory)
    runlog.append(runlog.RunEntry("2026-11-26T01:40:00Z", "nvfp4ctl check", "sub_v7.py@0123456789ab", "2dc615a", B200,
                                  "0", "10/10 pass"), memory)
    return memory


def trend_of(*args: str) -> str:
    result = CliRunner().invoke(app, ["log", "--trend", *args], env=WIDE)
    assert result.exit_code == 0, result.output
    return result.output


def test_two_targets_are_both_shown_in_the_order_given(variants: Path) -> None:
    """The second --target replaced the first: only sub_v5.py's trend, exit 0."""
    output = trend_of("--target", "sub_v2.py", "--target", "sub_v5.py")
    assert output.index(f"sub_v2.py on {B200}: 2 benches") < output.index(f"sub_v5.py on {B200}: 2 benches")
    reversed_order = trend_of("--target", "sub_v5.py", "--target", "sub_v2.py")
    assert reversed_order.index("sub_v5.py on") < reversed_order.index("sub_v2.py on")


def test_a_trend_of_several_targets_ends_with_each_ones_best_per_shape_the_fastest_marked(variants: Path) -> None:
    output = trend_of("--target", "sub_v2.py", "--target", "sub_v5.py")
    table = output[output.index(f"best logged mean per shape, µs on {B200}"):]
    assert output.rstrip().endswith(table.rstrip())  # the last thing shown
    rows = {cells[0]: cells[1:] for line in table.splitlines()
            if len(cells := [cell.strip() for cell in line.strip("│┃").split("│")]) == 3}
    assert rows[BIG] == ["48.00 (run 2) fastest", "52.00 (run 1)"]
    assert rows[SMALL] == ["19.00 (run 2)", "15.00 (run 1) fastest"]
    assert rows["geomean"] == [f"{(48.0 * 19.0) ** 0.5:.2f} (run 2)", f"{(52.0 * 15.0) ** 0.5:.2f} (run 1) fastest"]
    only_small = trend_of("--target", "sub_v5.py", "--target", "sub_v2.py", "--shape", "128,7168,2048")
    assert "15.00 (run 1) fastest │ 19.00 (run 2) │" in only_small and "geomean │" not in only_small


def test_one_target_shows_no_table(variants: Path) -> None:
    output = trend_of("--target", "sub_v2.py")
    assert "best logged mean" not in output and "fastest" not in output
    assert output == trend_of("--target", "sub_v2.py", "--target", "./sub_v2.py")  # one file, named twice


def test_a_trend_of_every_target_shows_no_table(variants: Path) -> None:
    """With no --target the trend ended with the table whenever the log held two targets, ranking copies of one
    kernel at other paths, or files long replaced, against each other: the table is for targets named to compare."""
    output = trend_of()
    assert f"sub_v2.py on {B200}: 2 benches" in output and f"sub_v5.py on {B200}: 2 benches" in output
    assert "best logged mean" not in output and "fastest" not in output and "no table" not in output


def test_a_named_target_never_benched_is_said_beside_the_others(variants: Path) -> None:
    output = trend_of("--target", "sub_v7.py", "--target", "sub_v2.py")
    assert f"sub_v2.py on {B200}: 2 benches" in output and "best logged mean" not in output
    assert "no successful bench of sub_v7.py in the run log" in output


def test_a_target_no_run_had_is_exit_2_before_anything_is_drawn(variants: Path) -> None:
    for args in (["--trend", "--target", "sub_v2.py", "--target", "nosuch.py"], ["--target", "sub_v2.py", "--target", "nosuch.py"]):
        result = CliRunner().invoke(app, ["log", *args])
        assert (result.exit_code, result.output) == (
            2, "error: --target nosuch.py: no logged run had it; logged: sub_v2.py, sub_v5.py, sub_v7.py\n")


def test_targets_timed_on_different_gpus_are_not_compared(variants: Path) -> None:
    runlog.append(bench("02:00:00", "sub_v7.py", 40.0, 10.0, gpu=H100), memory_path())
    output = trend_of("--target", "sub_v2.py", "--target", "sub_v7.py")
    assert "best logged mean" not in output
    assert "no table of the fastest: no two of these targets were benched on one GPU with the same timing settings" in output


def test_the_listing_shows_the_runs_of_every_target_named(variants: Path) -> None:
    """`log --target A --target B` listed B's runs alone."""
    result = CliRunner().invoke(app, ["log", "--target", "sub_v5.py", "--target", "sub_v7.py"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "3 most recent runs of sub_v5.py, sub_v7.py" in result.output
    assert result.output.count("sub_v5.py@01234567") == 2 and result.output.count("sub_v7.py@01234567") == 1
    assert "sub_v2.py@" not in result.output


def test_geomeans_over_different_shapes_are_not_compared(tmp_path: Path) -> None:
    both = [bench("01:00:00", "a.py", 50.0, 20.0), bench("01:10:00", "b.py", None, 15.0)]
    found = trend.collect(both, tmp_path)
    geomean = fastest.standings(found, with_geomean=True)[0].rows[-1]
    assert geomean.key == trend.GEOMEAN and not geomean.compared
    assert not any(best.fastest for best in geomean.bests if best is not None)
