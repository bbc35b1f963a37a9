"""`log --trend` titles a GEMV series by its label ("4096x7168 l=8"), where its logged key "4096x7168x8" read
as a GEMM's M×N×K; the run log's older lines hold the key, read as the same shape, and --shape still names it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.bench import trend
from nvfp4ctl.bench.history import Timing, result_line
from nvfp4ctl.cli import app
from nvfp4ctl.workspace import memory_path

H100 = "NVIDIA H100 80GB HBM3 (sm_90)"
BATCHED, SINGLE = "4096x7168x8", "7168x16384"


def _gemv_bench(time: str, mean: float) -> runlog.RunEntry:
    shapes = [(BATCHED, Timing(mean, 0.1)), (SINGLE, Timing(mean / 2, 0.1))]
    return runlog.RunEntry(f"2026-11-26T0{time}Z", "nvfp4ctl bench", "submission.py@0123456789ab", "abc1234", H100,
                           "0", result_line(Timing(mean, 0.1), shapes), "nvfp4_gemv")


def _plotted(*args: str) -> list[str]:
    for entry in (_gemv_bench("1:00:00", 20.0), _gemv_bench("1:10:00", 18.0)):
        runlog.append(entry, memory_path())
    result = CliRunner().invoke(app, ["log", "--trend", *args])
    assert result.exit_code == 0, result.output
    return [line.strip().split(":")[0] for line in result.output.splitlines() if line.startswith("  ") and ":" in line]


def test_a_gemv_series_is_titled_by_its_label() -> None:
    titles = _plotted()
    assert "4096x7168 l=8" in titles and SINGLE in titles, titles
    assert BATCHED not in titles


def test_shape_names_the_logged_key_and_the_title_is_the_label() -> None:
    assert [t for t in _plotted("--shape", "4096,7168,8") if t != "geomean"][:1] == ["4096x7168 l=8"]


def test_keys_of_no_known_case_are_shown_as_logged() -> None:
    assert trend.shown_key("nvfp4_gemv", "geomean") == "geomean"
    assert trend.shown_key("nvfp4_gemm", "128x7168x16384") == "128x7168x16384"
    assert trend.shown_key("nvfp4_group_gemm", "g2:m192+320:n3072:k4096") == "g2:m192+320:n3072:k4096"
    assert trend.shown_key("a_problem_of_a_newer_nvfp4ctl", BATCHED) == BATCHED


def _gemv_bench_of(time: str, shapes: list[str]) -> runlog.RunEntry:
    timed = [(key, Timing(10.0, 0.1)) for key in shapes]
    return runlog.RunEntry(f"2026-11-26T0{time}Z", "nvfp4ctl bench", "submission.py@0123456789ab", "abc1234", H100,
                           "0", result_line(Timing(10.0, 0.1), timed), "nvfp4_gemv")


def test_a_gemv_run_left_out_of_the_geomean_is_named_by_its_labels() -> None:
    """The note under the geomean listed a left-out run's shapes by key ("run 1: 4096x7168x8, 7168x16384")."""
    for entry in (_gemv_bench_of("1:00:00", [BATCHED, SINGLE]), _gemv_bench_of("1:10:00", [SINGLE]),
                  _gemv_bench_of("1:20:00", [SINGLE])):
        runlog.append(entry, memory_path())
    found = trend.collect(runlog.read(memory_path()), Path.cwd())[0]
    assert trend.geomean_note(found) == ("1 run left out of the geomean, as it timed other shapes than the 1 that"
                                         f" most runs timed (run 1: 4096x7168 l=8, {SINGLE})")
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", "geomean"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert f"(run 1: 4096x7168 l=8, {SINGLE})" in result.output and BATCHED not in result.output, result.output


@pytest.mark.parametrize("text", ["4096x7168 l=8", " 4096x7168   L=8 ", "4096,7168 l=8", "4096x7168l=8"])
def test_shape_takes_the_label_the_trend_shows(text: str) -> None:
    """`--shape "4096x7168 l=8"`, the series' title as shown, was refused as malformed: only 4096,7168,8 was taken."""
    assert [t for t in _plotted("--shape", text) if not t.startswith("^")] == ["4096x7168 l=8"]


def test_a_label_of_l_1_names_the_key_without_l() -> None:
    assert trend.normalize_shape("7168x16384 l=1") == SINGLE
    assert trend.normalize_shape("4096x7168 l=8") == BATCHED


@pytest.mark.parametrize("text", ["4096x7168 l=0", "4096x7168x8 l=8", "4096 l=8", "l=8", "4096x7168 l=8 l=8"])
def test_a_malformed_label_is_one_line(text: str) -> None:
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", text])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: --shape {text}: expected M,N,K[,L] as positive integers"), result.output
    assert "a GEMV's label as the trend shows it, 256x512 l=2" in result.output, result.output
    assert result.output.count("\n") == 1


def test_a_shape_not_logged_lists_the_logged_ones_by_their_labels() -> None:
    """The list named the GEMV's batched shape by its key (logged: 4096x7168x8, 7168x16384, geomean)."""
    for entry in (_gemv_bench("1:00:00", 20.0), _gemv_bench("1:10:00", 18.0)):
        runlog.append(entry, memory_path())
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", "256x512 l=2"], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: --shape 256x512 l=2: no logged bench timed it; logged: 4096x7168 l=8, {SINGLE},"
                             " geomean\n"), result.output
