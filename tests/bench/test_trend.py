"""`nvfp4ctl log --trend`: bench times per target and GPU from the run log, plotted with commits marked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import commit_stamp, runlog
from nvfp4ctl.bench import history, trend
from nvfp4ctl.bench.history import Timing, result_line
from nvfp4ctl.cli import app
from nvfp4ctl.workspace import memory_path

H100 = "NVIDIA H100 80GB HBM3 (sm_90)"
BIG, SMALL = "128x7168x16384", "128x7168x2048"


def bench(time: str, big: float | None, small: float | None, commit: str = "abc1234", gpu: str = H100,
          target: str = "kernels/sm90/k.cu@0123456789ab", exit_code: str = "0", command: str = "nvfp4ctl bench") -> runlog.RunEntry:
    shapes = [(key, Timing(value, 0.01)) for key, value in ((BIG, big), (SMALL, small)) if value is not None]
    geomean = 1.0
    for _, timing in shapes:
        geomean *= timing.mean
    geomean **= 1 / len(shapes)
    return runlog.RunEntry(f"2026-11-26T0{time}Z", command, target, commit, gpu, exit_code,
                           result_line(Timing(geomean, 0.01), shapes))


LOG = [
    bench("1:00:00", 60.0, 18.0, commit="aaaaaaa"),
    bench("1:10:00", 58.0, 17.0, commit="aaaaaaa+dirty"),
    bench("1:20:00", None, 16.5, commit="aaaaaaa+dirty", command="nvfp4ctl bench --only 3"),
    bench("1:30:00", 54.0, 16.0, commit="bbbbbbb"),
    bench("1:40:00", 53.0, 15.9, commit="bbbbbbb", exit_code="1"),  # failed: not a data point
    bench("1:50:00", 70.0, 30.0, gpu="NVIDIA H200 (sm_90)"),
    runlog.RunEntry("2026-11-26T02:00:00Z", "nvfp4ctl check", "kernels/sm90/k.cu@0123456789ab", "bbbbbbb", H100, "0",
                    "10/10 pass"),
]


def test_runs_group_by_target_and_gpu_most_recent_first(tmp_path: Path) -> None:
    found = trend.collect(LOG, tmp_path)
    assert [(t.target, t.gpu, len(t.runs)) for t in found] == [
        ("kernels/sm90/k.cu", "NVIDIA H200 (sm_90)", 1), ("kernels/sm90/k.cu", H100, 4)]


def test_an_absolute_path_of_older_lines_joins_the_relative_one(tmp_path: Path) -> None:
    older = bench("0:50:00", 61.0, 18.5, target=f"{tmp_path}/kernels/sm90/k.cu@0123456789ab")
    found = trend.collect([older, *LOG], tmp_path)
    assert [(t.target, len(t.runs)) for t in found] == [("kernels/sm90/k.cu", 1), ("kernels/sm90/k.cu", 5)]


def test_series_leave_gaps_and_the_geomean_only_counts_full_runs(tmp_path: Path) -> None:
    h100 = trend.collect(LOG, tmp_path)[1]
    assert h100.keys() == [BIG, SMALL, "geomean"]
    assert h100.series(BIG) == [60.0, 58.0, None, 54.0]
    assert h100.series(SMALL) == [18.0, 17.0, 16.5, 16.0]
    assert h100.series("geomean")[2] is None and all(v is not None for i, v in enumerate(h100.series("geomean")) if i != 2)


def test_the_first_run_on_each_commit_is_marked(tmp_path: Path) -> None:
    h100 = trend.collect(LOG, tmp_path)[1]
    assert h100.changes() == [True, False, False, True]  # "+dirty" on aaaaaaa is still aaaaaaa
    assert trend.commit_legend(h100) == ["^ run 1: aaaaaaa (2026-11-26 01:00:00)",
                                         "^ run 4: bbbbbbb (2026-11-26 01:30:00)"]


def test_a_changed_trees_mark_is_the_one_the_run_log_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """trend stripped its own "+dirty" to find a run's commit, where the run log writes commit_stamp.DIRTY."""
    monkeypatch.setattr(commit_stamp, "DIRTY", "+changed")
    h100 = trend.collect(LOG, tmp_path)[1]
    h100.runs = [replace(run, commit=run.commit.replace("+dirty", "+changed")) for run in h100.runs]
    assert h100.changes() == [True, False, False, True]
    assert trend.commit_legend(h100)[0] == "^ run 1: aaaaaaa (2026-11-26 01:00:00)"


def test_target_and_last_filters(tmp_path: Path) -> None:
    assert trend.collect(LOG, tmp_path, target=tmp_path / "other.cu") == []
    found = trend.collect(LOG, tmp_path, target=tmp_path / "kernels" / "sm90" / "k.cu", last=2)
    assert [len(t.runs) for t in found] == [1, 2]
    assert found[1].series(SMALL) == [16.5, 16.0]


def test_plot_puts_the_max_on_top_the_min_at_the_bottom_and_marks_commits() -> None:
    lines = trend.plot([60.0, 58.0, None, 54.0], [True, False, False, True], height=4)
    assert lines == [
        "60 ┤ ●",
        "58 ┤   ●",
        "   │",
        "54 ┤       ●",
        "   └─────────",
        "     ^     ^",
    ]


def test_plot_marks_the_runs_timed_by_another_nvfp4ctl_a_row_under_the_commits() -> None:
    lines = trend.plot([60.0, 58.0, None, 54.0], [True, False, False, True], height=4,
                       tool_changes=[False, True, False, False])
    assert lines[-2:] == ["     ^     ^", "       *"]
    assert trend.plot([60.0, 54.0], [True, False], height=4, tool_changes=[False, False])[-1] == "     ^"


def test_log_trend_marks_where_the_nvfp4ctl_that_timed_the_runs_changed(tmp_path: Path) -> None:
    """The trend drew a step after a new install as if the kernel had made it: only the commits were marked."""
    memory = memory_path()
    tools = ["", "0.1.0 (abc1234)", "0.1.0 (abc1234)", "0.1.0 (def5678)"]
    for entry, tool in zip(LOG[:4], tools):
        runlog.append(replace(entry, tool=tool), memory)
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", "128,7168,2048"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    axis = next(index for index, line in enumerate(lines) if "└─" in line)
    assert [line.strip() for line in lines[axis + 1:axis + 3]] == ["^     ^", "*   *"], result.output
    assert lines[axis + 2].index("*") == lines[axis + 1].index("^") + 2  # under run 2, one column pair on
    legend = result.output[result.output.index("  ^ run 1"):].splitlines()
    assert legend == ["  ^ run 1: aaaaaaa (2026-11-26 01:00:00)", "  ^ run 4: bbbbbbb (2026-11-26 01:30:00)",
                      "  * run 2: timed by nvfp4ctl 0.1.0 (abc1234), the run before by an nvfp4ctl that logged no"
                      " version (2026-11-26 01:10:00)",
                      "  * run 4: timed by nvfp4ctl 0.1.0 (def5678), the run before by nvfp4ctl 0.1.0 (abc1234)"
                      " (2026-11-26 01:30:00)"], result.output
    assert trend.collect(LOG[:4], tmp_path)[0].tool_changes() == [False] * 4  # lines that name no tool: no mark


def test_plot_of_a_flat_series_and_of_nothing() -> None:
    assert trend.plot([5.0, 5.0], [True, False], height=3)[:3] == ["5 ┤ ● ●", "  │", "  │"]
    assert trend.plot([None], [True]) == []


def test_summary_and_shape_names() -> None:
    assert trend.summary([60.0, None, 54.0]) == "60.00 -> 54.00 µs (-10.0 %) over 2 runs, best 54.00"
    assert trend.summary([None]) == "no run timed this shape"
    assert trend.normalize_shape("128,7168,2048") == SMALL
    assert trend.normalize_shape("128x7168x2048x1") == SMALL
    assert trend.normalize_shape("GeoMean") == "geomean"


@pytest.fixture
def logged() -> Path:
    memory = memory_path()  # the test's own temporary MEMORY.md (tests/conftest.py)
    for entry in LOG:
        runlog.append(entry, memory)
    return memory


def test_log_trend_end_to_end(logged: Path) -> None:
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", "128,7168,2048"])
    assert result.exit_code == 0, result.output
    assert f"kernels/sm90/k.cu on {H100}: 4 benches, 2026-11-26 01:00 to 2026-11-26 01:30" in result.output
    assert f"{SMALL}: 18.00 -> 16.00 µs (-11.1 %) over 4 runs, best 16.00" in result.output
    assert BIG not in result.output
    assert "^ run 4: bbbbbbb" in result.output


def test_the_best_run_is_named_by_its_number_time_and_content_hash(logged: Path) -> None:
    """"best 16.00" said which time but not which run: the try could not be found again."""
    h100 = trend.collect(LOG, Path.cwd())[1]
    assert trend.summary(h100.series(SMALL), runs=h100.runs).endswith(
        "best 16.00 (run 4, 2026-11-26 01:30:00, @01234567)")
    assert trend.summary([2.0, 1.0, 1.0], runs=[replace(h100.runs[0], digest=""), *h100.runs[:2]]).endswith(
        "best 1.00 (run 2, 2026-11-26 01:00:00, @01234567)")  # a tie: the first run of the best
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", "128,7168,2048"])
    assert "over 4 runs, best 16.00 (run 4, 2026-11-26 01:30:00, @01234567)" in result.output, result.output


def test_log_trend_under_quiet_keeps_what_each_plot_is_of(logged: Path) -> None:
    """-q hid the target and shape lines but printed the plots: curves with no name."""
    quiet = CliRunner().invoke(app, ["-q", "log", "--trend", "--shape", "128,7168,2048"])
    assert quiet.exit_code == 0, quiet.output
    assert quiet.output == CliRunner().invoke(app, ["log", "--trend", "--shape", "128,7168,2048"]).output
    assert f"kernels/sm90/k.cu on {H100}: 4 benches" in quiet.output


def test_log_trend_with_no_bench_says_so_under_quiet_too() -> None:
    result = CliRunner().invoke(app, ["log", "--trend", "-q"])
    assert result.exit_code == 0 and "no successful bench" in result.output


def test_the_geomean_of_a_target_timed_at_one_shape_is_plotted_when_asked() -> None:
    """Its benches timed one shape: `--shape geomean` said "no logged bench timed it" (exit 2), though
    every line logs a geomean, that shape's time. Unasked, it stays one plot, not two of the same."""
    for time, small in (("1:00:00", 18.0), ("1:10:00", 17.0)):
        runlog.append(bench(time, None, small, target="submission.py@0123456789ab"), memory_path())
    asked = CliRunner().invoke(app, ["log", "--trend", "--target", "submission.py", "--shape", "geomean"])
    assert asked.exit_code == 0, asked.output
    assert "geomean: 18.00 -> 17.00 µs (-5.6 %) over 2 runs, best 17.00" in asked.output
    assert SMALL not in asked.output
    unasked = CliRunner().invoke(app, ["log", "--trend", "--target", "submission.py"])
    assert unasked.exit_code == 0 and f"{SMALL}: 18.00" in unasked.output and "geomean" not in unasked.output


def test_log_trend_usage_errors(logged: Path) -> None:
    unknown = CliRunner().invoke(app, ["log", "--trend", "--shape", "1,2,3"])
    assert unknown.exit_code == 2 and "--shape 1,2,3: no logged bench timed it" in unknown.output
    misplaced = CliRunner().invoke(app, ["log", "--shape", "1,2,3"])
    assert misplaced.exit_code == 2 and "--shape goes with --trend" in misplaced.output


def test_log_trend_with_no_bench_says_so() -> None:
    result = CliRunner().invoke(app, ["log", "--trend"])
    assert result.exit_code == 0
    assert "no successful bench" in result.output


def test_log_trend_of_another_projects_log_names_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NVFP4CTL_MEMORY pointing into another project: its relative targets are that project's files."""
    other, here = tmp_path / "other", tmp_path / "here"
    for folder in (other, here):
        (folder / "kernels" / "sm90").mkdir(parents=True)
        (folder / "task.yml").write_text("")
    (other / "kernels" / "sm90" / "k.cu").write_text("")
    memory = other / "MEMORY.md"
    for entry in LOG:
        runlog.append(entry, memory)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(here)
    result = CliRunner().invoke(app, ["log", "--trend", "--target", str(other / "kernels" / "sm90" / "k.cu")])
    assert result.exit_code == 0, result.output
    assert f"kernels/sm90/k.cu on {H100}: 4 benches" in result.output
    # Paths are logged relative to the checkout that ran the bench: a log shared by checkouts reads
    # the same from each, so this checkout's kernels/sm90/k.cu has those runs too.
    shared = CliRunner().invoke(app, ["log", "--trend", "--target", "kernels/sm90/k.cu"])
    assert f"kernels/sm90/k.cu on {H100}: 4 benches" in shared.output
    missing = CliRunner().invoke(app, ["log", "--trend", "--target", str(other / "kernels" / "other.cu")])
    assert missing.exit_code == 2
    assert missing.output == f"error: --target {other / 'kernels' / 'other.cu'}: no logged run had it; logged: kernels/sm90/k.cu\n"


def test_log_trend_of_a_target_never_logged_is_a_usage_error_listing_the_logged_ones(logged: Path) -> None:
    runlog.append(runlog.RunEntry("2026-11-26T03:00:00Z", "nvfp4ctl check", "submission.py@0123456789ab", "bbbbbbb",
                                  H100, "1", "9/10 pass"), logged)
    typo = CliRunner().invoke(app, ["log", "--trend", "--target", "nosuch.cu"])
    assert typo.exit_code == 2
    assert typo.output == "error: --target nosuch.cu: no logged run had it; logged: kernels/sm90/k.cu, submission.py\n"
    # logged, but never benched successfully: nothing wrong with the name, a bench is what is missing
    unbenched = CliRunner().invoke(app, ["log", "--trend", "--target", "submission.py"])
    assert unbenched.exit_code == 0
    assert "no successful bench of submission.py" in unbenched.output and "run nvfp4ctl bench" in unbenched.output


def test_log_trend_of_benches_that_all_failed_gives_how_many_and_the_last_ones_cause() -> None:
    """A target whose benches ran and failed got "no successful bench ... yet: run nvfp4ctl bench", as if none
    had run: the run log held why they failed. The last is the latest logged (file order is no time order)."""
    cause = "error: bench 128x256x256: custom_kernel raised RuntimeError: shape mismatch in my tiling"
    for time, target, code, result in (
            ("1:10:00", "sub_broken.py", "1", cause),
            ("1:00:00", "sub_broken.py", "4", "error: bench 128x256x256: custom_kernel raised KeyError: 3"),
            ("1:05:00", "sub_broken.py", "4", "0/1 pass, 1 raised (test 1: KeyError: 3)"),  # a check: no bench
            ("1:20:00", "other.py", "3", "error: possible deadlock: bench 128x256x256 ran past 180 s")):
        command = "nvfp4ctl check" if result.startswith("0/1") else "nvfp4ctl bench"
        runlog.append(runlog.RunEntry(f"2026-11-26T0{time}Z", command, f"{target}@0123456789ab", "bbbbbbb", H100, code,
                                      result), memory_path())
    of_it = CliRunner().invoke(app, ["log", "--trend", "--target", "sub_broken.py"])
    assert of_it.exit_code == 0, of_it.output
    assert " ".join(of_it.output.split()) == (
        f"no successful bench of sub_broken.py in the run log ({memory_path()}) yet: 2 benches of it logged, none"
        f" successful; the last (2026-11-26 01:10, exit 1): {cause}")
    every = CliRunner().invoke(app, ["log", "--trend"])
    assert every.exit_code == 0, every.output
    assert " ".join(every.output.split()) == (
        f"no successful bench in the run log ({memory_path()}) yet: 3 benches logged, none successful; the last"
        " (other.py@01234567, 2026-11-26 01:20, exit 3): error: possible deadlock: bench 128x256x256 ran past 180 s")


def test_a_bench_logged_with_q_before_its_name_is_a_data_point(tmp_path: Path) -> None:
    quiet = bench("2:10:00", 52.0, 15.5, commit="bbbbbbb", command="nvfp4ctl -q bench")
    h100 = [t for t in trend.collect([*LOG, quiet], tmp_path) if t.gpu == H100][0]
    assert len(h100.runs) == 5 and h100.series(BIG)[-1] == 52.0


@pytest.mark.parametrize("with_benches", [False, True], ids=["no-benches", "benches"])
@pytest.mark.parametrize("text", ["x,y", "0,7168,2048", "128,7168,2048,1,1", "128;7168", "geo", ""])
def test_log_trend_checks_the_shape_syntax_first(with_benches: bool, text: str) -> None:
    """With no bench logged yet, `--shape x,y` exited 0 saying so, never looking at the shape."""
    if with_benches:
        for entry in LOG:
            runlog.append(entry, memory_path())
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", text])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: --shape {text}: expected M,N,K[,L] as positive integers")
    assert result.output.count("\n") == 1


@pytest.mark.parametrize("text, key", [("128,7168,2048", SMALL), ("128 x 7168 x 2048 x 1", SMALL),
                                       ("128,7168,2048,4", "128x7168x2048x4"), ("7168,16384", "7168x16384"),
                                       ("G8:m80+176:n4096:k7168", "g8:m80+176:n4096:k7168"), ("GeoMean", "geomean"),
                                       # the grouped GEMM's --shape as bench takes it, which log refused
                                       ("192,3072,4096;320,3072,4096", "g2:m192+320:n3072:k4096"),
                                       ("40,7168,2048; 76,7168,2048", "g2:m40+76:n7168:k2048")])
def test_every_logged_kind_of_shape_key_is_accepted(text: str, key: str) -> None:
    assert trend.normalize_shape(text) == key


@pytest.mark.parametrize("result", [
    f"geomean 0.000±0.000 us; {BIG} 0.000±0.000 | {SMALL} 0.000±0.000 us",
    f"geomean 20.000±0.010 us; {BIG} 0.000±0.010 | {SMALL} 16.000±0.010 us",
    f"geomean 1.2.3±0.010 us; {BIG} 50.000±0.010 | {SMALL} 16.000±0.010 us",
    f"geomean nan±0.010 us; {BIG} nan±0.010 | {SMALL} 16.000±0.010 us",
], ids=["zero", "zero-shape", "not-a-number", "nan"])
def test_a_hand_edited_time_of_zero_or_no_number_drops_the_line(result: str) -> None:
    """A logged geomean of 0 was a data point ("best 0.00"; a bench compared with it divides by 0) and
    "1.2.3" stopped log --trend with a traceback, where nan or inf drop the line."""
    assert history.parse_result_line(result) is None
    for entry in [*LOG[:2], runlog.RunEntry("2026-11-26T01:15:00Z", "nvfp4ctl bench", LOG[0].target, "aaaaaaa", H100,
                                            "0", result)]:
        runlog.append(entry, memory_path())
    shown = CliRunner().invoke(app, ["log", "--trend"])
    assert shown.exit_code == 0, shown.output
    assert f"kernels/sm90/k.cu on {H100}: 2 benches" in shown.output and "best 0.00" not in shown.output


def test_one_path_benched_for_two_problems_makes_two_trends_each_named(tmp_path: Path) -> None:
    """Folders sharing one log name their submission.py alike; the GEMM's and the dual GEMM's times of
    "128x128x256" were one series of one trend."""
    def run(time: str, mean: float, problem: str) -> runlog.RunEntry:
        shapes = [("128x128x256", Timing(mean, 1.0))]
        return runlog.RunEntry(f"2026-11-26T0{time}Z", "nvfp4ctl bench", "submission.py@0123456789ab", "abc1234", H100,
                               "0", result_line(Timing(mean, 1.0), shapes), problem)

    entries = [run("1:00:00", 900.0, "nvfp4_gemm"), run("1:10:00", 1600.0, "nvfp4_dual_gemm")]
    found = trend.collect(entries, tmp_path)
    assert [(t.problem, t.series("128x128x256")) for t in found] == [("nvfp4_dual_gemm", [1600.0]),
                                                                      ("nvfp4_gemm", [900.0])]
    memory = memory_path()
    for entry in entries:
        runlog.append(entry, memory)
    result = CliRunner().invoke(app, ["log", "--trend"])
    assert result.exit_code == 0, result.output
    assert f"submission.py (nvfp4_dual_gemm) on {H100}: 1 bench" in result.output
    assert f"submission.py (nvfp4_gemm) on {H100}: 1 bench" in result.output


@pytest.mark.parametrize("text", ["192,3072;320,3072,4096", "40,7168,2048;76,7168,2048;", "40,7168,2048;;76,7168,2048"])
def test_a_malformed_grouped_shape_is_one_line(text: str) -> None:
    # an empty group is refused as bench refuses it, not dropped
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", text])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: --shape {text}: expected M,N,K[,L] as positive integers"
                                     " (GEMV M,K[,L]; a grouped GEMM's M1,N1,K1;M2,N2,K2 or logged key")
    assert result.output.count("\n") == 1


def test_two_folders_sharing_a_run_log_make_two_trends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gemm_a/ and gemm_b/ share one run log (NVFP4CTL_MEMORY): their submission.py files are two
    kernels, whose times made one trend while each line named its file "submission.py"."""
    memory = tmp_path / "MEMORY.md"
    for folder, big in (("gemm_a", 60.0), ("gemm_b", 40.0)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "submission.py").write_text(folder)
        runlog.append(bench("1:00:00", big, 18.0, target=f"./{folder}/submission.py@0123456789ab [current folder]"),
                      memory)
    found = trend.collect(runlog.read(memory), tmp_path / "gemm_b", log_folder=tmp_path)
    assert sorted((t.target, len(t.runs)) for t in found) == [(str(tmp_path / "gemm_a" / "submission.py"), 1),
                                                             ("submission.py", 1)]
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path / "gemm_b")
    result = CliRunner().invoke(app, ["log", "--trend", "--target", "submission.py"])
    assert result.exit_code == 0, result.output
    assert f"submission.py on {H100}: 1 bench" in result.output and "60" not in result.output


def test_a_log_of_older_and_newer_lines_read_from_a_subfolder_is_one_trend_per_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's MEMORY.md holds a line from before paths started at the log's folder
    (kernels/sm90/k.cu, relative to the run's folder: the project's) and one after (./kernels/sm90/k.cu).
    Read from proj/kernels, the older line was read against the working folder: two trends of one file."""
    project = tmp_path / "proj"
    (project / "kernels" / "sm90").mkdir(parents=True)
    (project / "task.yml").write_text("")
    (project / "kernels" / "sm90" / "k.cu").write_text("k")
    memory = project / "MEMORY.md"
    runlog.append(bench("1:00:00", 60.0, 18.0, target="kernels/sm90/k.cu@0123456789ab"), memory)
    runlog.append(bench("2:00:00", 50.0, 18.0, target="./kernels/sm90/k.cu@0123456789ab"), memory)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(project / "kernels")
    for options in ([], ["--target", "sm90/k.cu"]):
        result = CliRunner().invoke(app, ["log", "--trend", *options])
        assert result.exit_code == 0, result.output
        assert f"on {H100}: 2 benches" in result.output and "1 bench," not in result.output, result.output


def test_cpu_runs_get_no_change_and_stay_apart_from_the_gpus() -> None:
    """Two CPU benches of the same code differ by tens of percent: their trend gives no percentage and
    says why, and a CPU run of the same file never joins the GPU's series."""
    memory = memory_path()
    for entry in [*LOG[:2], bench("3:00:00", 9000.0, 3000.0, gpu=runlog.CPU_DEVICE_LABEL),
                  bench("3:10:00", 5000.0, 2000.0, gpu=runlog.CPU_DEVICE_LABEL)]:
        runlog.append(entry, memory)
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", "128,7168,2048"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert f"kernels/sm90/k.cu on {runlog.CPU_DEVICE_LABEL}: 2 benches" in output
    assert f"kernels/sm90/k.cu on {H100}: 2 benches" in output
    assert f"{SMALL}: 3000.00 -> 2000.00 µs over 2 runs, best 2000.00" in output
    assert f"{SMALL}: 18.00 -> 17.00 µs (-5.6 %) over 2 runs" in output
    assert "CPU times (NVFP4CTL_DEVICE=cpu)" in output and output.count("%)") == 1


def test_log_trend_says_which_bench_lines_it_could_not_read() -> None:
    """A bench line with `geomean 2x.1` or a cell lost was left out of the plots without a word."""
    memory = memory_path()
    for entry in LOG[:2]:
        runlog.append(entry, memory)
    runlog.append(runlog.RunEntry("2026-11-26T01:15:00Z", "nvfp4ctl bench", LOG[0].target, "aaaaaaa", H100, "0",
                                  f"geomean 2x.1 us; {BIG} 50.000±0.010 | {SMALL} 16.000±0.010 us"), memory)
    lines = memory.read_text().splitlines()
    broken = len(lines)
    memory.write_text("\n".join(lines) + "\n" + " · ".join(LOG[0].to_line().split(" · ")[:3]) + "\n")
    shown = CliRunner().invoke(app, ["log", "--trend"])
    assert shown.exit_code == 0, shown.output
    assert f"kernels/sm90/k.cu on {H100}: 2 benches" in shown.output
    note = (f"2 lines of the run log could not be read as runs and are left out: lines {broken}, {broken + 1}"
            f" of {memory}")
    assert shown.output.count("could not be read") == 1 and note in shown.output, shown.output
    assert shown.output.index("^ run 1") < shown.output.index(note)


def test_log_trend_of_one_target_or_shape_names_only_its_own_broken_bench_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`log --trend --target a.cu` named the broken bench lines of every target, b.cu's too, and --shape
    those that timed other shapes: lines of runs it was never to show."""
    monkeypatch.chdir(tmp_path)
    memory = memory_path()
    for name in ("a.cu", "b.cu"):
        (tmp_path / name).write_text("")
        runlog.append(bench("1:00:00", 60.0, 18.0, target=f"{name}@0123456789ab"), memory)
    broken = [runlog.RunEntry("2026-11-26T01:15:00Z", "nvfp4ctl bench", f"{name}@0123456789ab", "aaaaaaa", H100, "0",
                              f"geomean 2x.1 us; {shape} 50.000±0.010 us")
              for name, shape in (("a.cu", BIG), ("a.cu", SMALL), ("b.cu", BIG))]
    for entry in broken:
        runlog.append(entry, memory)
    last = len(memory.read_text().splitlines())
    a_big, a_small, b_big = last - 2, last - 1, last

    def named(*args: str) -> str:
        shown = CliRunner().invoke(app, ["log", "--trend", *args], env={"COLUMNS": "300"})
        assert shown.exit_code == 0, shown.output
        return " ".join(shown.output.split())

    assert f"lines {a_big}, {a_small}, {b_big} of" in named()
    assert f"lines {a_big}, {a_small} of" in named("--target", "a.cu")
    assert f"line {b_big} of" in named("--target", str(tmp_path / "b.cu"))
    assert f"lines {a_big}, {b_big} of" in named("--shape", "128,7168,16384")
    assert f"line {a_small} of" in named("--target", "a.cu", "--shape", "128,7168,2048")
    assert f"lines {a_big}, {a_small}, {b_big} of" in named("--shape", "geomean")


def test_a_long_log_splits_only_the_command_lines_that_quote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`log --trend` ran shlex.split on every entry, twice (grouping, then the unreadable benches): about 4 s
    of 5.5 on a log of 35,000 runs, even with -n 3. A command line with no quote or backslash splits at its
    whitespace as shlex would; one that quotes is split by shlex, once."""
    import shlex

    splits: list[str] = []
    real_split = shlex.split

    def counting(text: str, *args: object, **kwargs: object) -> list[str]:
        splits.append(text)
        return real_split(text, *args, **kwargs)

    monkeypatch.setattr(shlex, "split", counting)
    plain = [bench(f"1:{i // 60:02d}:{i % 60:02d}", 60.0 - i / 1000, 18.0, command=f"nvfp4ctl -q bench --only {i}")
             for i in range(3000)]
    quoted = bench("2:00:00", 50.0, 15.0, command=f"nvfp4ctl bench --note 'tile {tmp_path.name}' k.cu")
    entries = [*LOG, *plain, quoted]
    found = trend.collect(entries, tmp_path, last=3)
    trend.unreadable_benches(entries, list(range(len(entries))), tmp_path)
    h100 = [t for t in found if t.gpu == H100][0]
    assert h100.series(BIG) == pytest.approx([57.002, 57.001, 50.0])  # plain and quoted lines still read as benches
    assert splits == [quoted.command]


def test_a_note_after_the_problem_makes_no_trend_of_its_own(tmp_path: Path) -> None:
    """` (2-stage pipeline)` after the problem cell split the runs into two trends, one per "problem"."""
    lines = [replace(bench(time, 60.0, small, target="submission.py@0123456789ab"), problem="nvfp4_dual_gemm").to_line()
             for time, small in (("1:00:00", 18.0), ("1:10:00", 17.0), ("1:20:00", 16.0))]
    lines[1] = lines[1].rstrip("\n") + " (2-stage pipeline)\n"
    entries = [runlog.RunEntry.from_line(line) for line in lines]
    found = trend.collect([entry for entry in entries if entry is not None], tmp_path)
    assert [(t.problem, len(t.runs)) for t in found] == [("nvfp4_dual_gemm", 3)]


def test_one_ad_hoc_shape_leaves_the_geomean_of_the_other_runs_and_says_it_left_it_out(tmp_path: Path) -> None:
    """One `bench --shape 256,512,256` in the history emptied the geomean ("no run timed this shape"): it counted
    only the runs that timed every shape the file was ever timed at."""
    adhoc = runlog.RunEntry("2026-11-26T01:15:00Z", "nvfp4ctl bench --shape 256,512,256", "kernels/sm90/k.cu@0123456789ab",
                            "aaaaaaa", H100, "0", result_line(Timing(5.0, 0.01), [("256x512x256", Timing(5.0, 0.01))]))
    memory = memory_path()
    for entry in [*LOG[:2], adhoc, *LOG[2:4]]:
        runlog.append(entry, memory)
    h100 = trend.collect(runlog.read(memory), tmp_path)[0]
    assert h100.geomean_shapes() == {BIG, SMALL} and h100.geomean_left_out() == [2, 3]
    geomeans = h100.series("geomean")
    assert geomeans[2] is None and geomeans[3] is None and None not in (geomeans[0], geomeans[1], geomeans[4])
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", "geomean"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "geomean: 32.86 -> 29.39 µs (-10.6 %) over 3 runs" in result.output, result.output
    assert ("2 runs left out of the geomean, as they timed other shapes than the 2 that most runs timed"
            f" (run 3: 256x512x256; run 4: {SMALL})") in result.output


def test_a_tie_between_two_sets_compares_the_latest_runs_set(tmp_path: Path) -> None:
    found = trend.collect([bench("1:00:00", 60.0, 18.0), bench("1:10:00", None, 17.0)], tmp_path)[0]
    assert found.geomean_shapes() == {SMALL} and found.series("geomean") == [None, 17.0]
    assert trend.geomean_note(found) == (f"1 run left out of the geomean, as it timed other shapes than the 1 that"
                                         f" most runs timed (run 1: {BIG}, {SMALL})")


def test_benches_of_other_timing_settings_make_a_trend_of_their_own() -> None:
    """A quick `--max-repeats 3` bench was plotted among the full ones, its geomean as one of theirs."""
    memory = memory_path()
    for entry in [*LOG[:2], bench("1:15:00", 40.0, 12.0, command="nvfp4ctl bench --max-repeats=3"), LOG[3]]:
        runlog.append(entry, memory)
    found = trend.collect(runlog.read(memory), Path.cwd())
    assert [(t.settings, len(t.runs)) for t in found] == [("", 3), ("--max-repeats 3", 1)]
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", "geomean"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert f"kernels/sm90/k.cu on {H100} with --max-repeats 3: 1 bench" in result.output
    assert f"kernels/sm90/k.cu on {H100}: 3 benches" in result.output


def test_a_log_merged_out_of_time_order_trends_by_time() -> None:
    """A shared log merged by hand, its lines out of time order: the span read "01:30 to 01:00" and first -> last,
    the plot and the commit marks went in file order. Each trend's runs go by the time logged."""
    memory = memory_path()
    merged = [LOG[3], LOG[0], LOG[5], LOG[2], LOG[1]]  # 01:30, 01:00, the H200's 01:50, 01:20, 01:10
    for entry in merged:
        runlog.append(entry, memory)
    h100 = trend.collect(merged, Path.cwd())[1]
    assert [run.time for run in h100.runs] == [LOG[i].time for i in (0, 1, 2, 3)]
    assert h100.changes() == [True, False, False, True]
    result = CliRunner().invoke(app, ["log", "--trend", "--shape", "128,7168,2048"])
    assert result.exit_code == 0, result.output
    assert f"kernels/sm90/k.cu on {H100}: 4 benches, 2026-11-26 01:00 to 2026-11-26 01:30" in result.output
    assert f"{SMALL}: 18.00 -> 16.00 µs (-11.1 %) over 4 runs, best 16.00" in result.output


def test_the_group_run_last_by_time_comes_first_and_last_keeps_the_latest_runs(tmp_path: Path) -> None:
    merged = [LOG[5], LOG[3], LOG[0]]  # the H200's 01:50 first in the file, the H100's 01:30 and 01:00 after it
    found = trend.collect(merged, tmp_path, last=1)
    assert [(t.gpu, [run.time for run in t.runs]) for t in found] == [
        ("NVIDIA H200 (sm_90)", [LOG[5].time]), (H100, [LOG[3].time])]
