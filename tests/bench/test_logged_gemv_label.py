"""A GEMV bench's run-log result names a batched shape by its label ("256x512 l=2"), as bench's tables and
`log --trend` do, where it named it by the key "256x512x2" that reads as a GEMM's M×N×K; the other problems'
results are written as before, byte for byte. Lines already logged with the key and the new ones are one shape
to every reader: bench's previous run, `log --trend` (its --shape and --target) and the unreadable-line note."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.bench import trend
from nvfp4ctl.bench.history import Timing, compare, find_previous, parse_result_line, result_line
from nvfp4ctl.bench.results import BenchReport, ShapeResult
from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem
from nvfp4ctl.workspace import memory_path

GPU = "NVIDIA H100 80GB HBM3 (sm_90)"
GEMV = "nvfp4_gemv"
BATCHED_KEY, BATCHED_LABEL, SINGLE = "256x512x2", "256x512 l=2", "256x512"
OLD_CELL = f"geomean 20.000±0.100 us; {BATCHED_KEY} 40.000±0.100 | {SINGLE} 10.000±0.100 us"
NEW_CELL = f"geomean 18.000±0.100 us; {BATCHED_LABEL} 36.000±0.100 | {SINGLE} 9.000±0.100 us"


def _report(problem_name: str, shapes: list[str]) -> BenchReport:
    problem = get_problem(problem_name)
    reply = {"samples_ns": [10_000.0, 12_000.0, 11_000.0], "reason": "converged", "issue_ns": [1_000.0]}
    results = tuple(ShapeResult.from_job(problem.parse_shape(text, 1111), reply, None, problem) for text in shapes)
    return BenchReport("submission.py", GPU, "benchmark", results, None, 1.0)


def test_a_gemv_result_names_a_batched_shape_by_its_label() -> None:
    line = _report(GEMV, ["256,512,2", "256,512"]).result_line()
    assert f"; {BATCHED_LABEL} 11.000±" in line and f"| {SINGLE} 11.000±" in line, line
    assert BATCHED_KEY not in line


@pytest.mark.parametrize(("problem", "shapes"), [
    ("nvfp4_gemm", ["128,7168,16384", "256,512,256,2"]),
    ("nvfp4_dual_gemm", ["256,4096,7168", "256,512,256,2"]),
    ("nvfp4_group_gemm", ["192,3072,4096;320,3072,4096"]),
])
def test_the_other_problems_results_are_written_as_before(problem: str, shapes: list[str]) -> None:
    report = _report(problem, shapes)
    by_key = [(s.key, Timing(s.stats.mean, s.stats.err)) for s in report.shapes]
    assert report.result_line() == result_line(Timing(report.geomean_us, report.geomean_err_us), by_key)


@pytest.mark.parametrize("cell", [OLD_CELL, NEW_CELL])
def test_an_old_and_a_new_gemv_cell_read_as_the_same_keys(cell: str) -> None:
    logged = parse_result_line(cell, GEMV)
    assert logged is not None and list(logged.shapes) == [BATCHED_KEY, SINGLE]
    entry = runlog.RunEntry.from_line(_bench("01:00:00", cell).to_line())
    assert entry is not None and entry.result == cell  # the label's space splits no cell


def test_a_label_reads_as_its_key_and_nothing_else_changes() -> None:
    gemv = get_problem(GEMV)
    for text in ("4096,7168,8", "7168,16384", "7168,2048,4", "128,256,1"):
        case = gemv.parse_shape(text, 0)
        assert gemv.key_of_label(gemv.label(case)) == gemv.key(case)
    assert gemv.key_of_label("4096x7168 l=1") == "4096x7168"
    for text in ("geomean", "4096x7168x8", "g2:m192+320:n3072:k4096", "4096x7168 l=8 extra"):
        assert gemv.key_of_label(text) == text
    assert get_problem("nvfp4_gemm").key_of_label("4096x7168 l=8") == "4096x7168 l=8"


def _bench(time: str, cell: str, problem: str = GEMV) -> runlog.RunEntry:
    return runlog.RunEntry(f"2026-11-26T{time}Z", "nvfp4ctl bench", "submission.py@0123456789ab", "abc1234", GPU,
                           "0", cell, problem)


@pytest.mark.parametrize(("previous", "before"), [(OLD_CELL, 40.0), (NEW_CELL, 36.0)])
def test_bench_compares_with_a_previous_gemv_run_of_either_cell(tmp_path: Path, previous: str, before: float) -> None:
    report = _report(GEMV, ["256,512,2", "256,512"])
    keys = [s.key for s in report.shapes]
    found = find_previous([_bench("01:00:00", previous)], tmp_path / "submission.py", GPU, keys, root=tmp_path,
                          problem=GEMV)
    assert found is not None
    comparison = compare(found, Timing(report.geomean_us, report.geomean_err_us), report.timings(), "other")
    assert [d.name for d in comparison.deltas] == [BATCHED_KEY, SINGLE, "geomean"]
    assert comparison.deltas[0].before.mean == before


def _trend(*args: str) -> str:
    for entry in (_bench("01:00:00", OLD_CELL), _bench("01:10:00", NEW_CELL)):
        runlog.append(entry, memory_path())
    result = CliRunner().invoke(app, ["log", "--trend", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("args", [[], ["--shape", "256,512,2"], ["--target", "submission.py"]])
def test_log_trend_plots_old_and_new_gemv_cells_as_one_series(args: list[str]) -> None:
    output = _trend(*args)
    assert "2 benches" in output, output
    assert f"  {BATCHED_LABEL}: 40.00 -> 36.00 µs (-10.0 %) over 2 runs" in output, output
    assert BATCHED_KEY not in output


def test_an_unreadable_gemv_line_is_named_for_the_shape_it_holds() -> None:
    broken = _bench("01:20:00", f"geomean 2x.1 us; {BATCHED_LABEL} 36.000±0.100 us")
    lines = trend.unreadable_benches([broken], [7], Path.cwd(), shapes=[BATCHED_KEY])
    assert lines == [7]
    assert trend.unreadable_benches([broken], [7], Path.cwd(), shapes=["128x128x256"]) == []
