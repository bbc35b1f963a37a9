from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4ctl import runlog
from nvfp4ctl.bench.history import Delta, Timing, compare, find_previous, parse_result_line, result_line
from nvfp4ctl.bench.settings import TimingSettings, same_settings, settings_of
from nvfp4ctl.runlog import RunEntry

SHAPES = [("128x7168x16384", Timing(98.1, 0.05)), ("128x4096x7168", Timing(30.2, 0.02)),
          ("128x7168x2048", Timing(17.0, 0.01))]
GPU = "NVIDIA H100 80GB HBM3 (sm_90)"


def _entry(target: str, result: str, command: str = "nvfp4ctl bench", exit_code: str = "0", gpu: str = GPU) -> RunEntry:
    return RunEntry("2026-11-25T21:00:00Z", command, target, "abc1234", gpu, exit_code, result)


def test_result_line_round_trips_through_the_run_log() -> None:
    line = result_line(Timing(36.8, 0.02), SHAPES + [("256x512x1024x2", Timing(5.0, 0.001))])
    assert line.startswith("geomean 36.800±0.020 us; 128x7168x16384 98.100±0.050 | ")
    entry = RunEntry.from_line(_entry("k.cu@123", line).to_line())
    assert entry is not None
    logged = parse_result_line(entry.result)
    assert logged is not None
    assert logged.geomean == Timing(36.8, 0.02)
    assert logged.shapes["128x4096x7168"] == Timing(30.2, 0.02)
    assert logged.shapes["256x512x1024x2"] == Timing(5.0, 0.001)


@pytest.mark.parametrize("text", ["10/10 pass", "error: boom", "geomean 1.0 us; nonsense us", ""])
def test_other_results_do_not_parse(text: str) -> None:
    assert parse_result_line(text) is None


def test_find_previous_takes_the_latest_good_bench_of_the_same_path_and_gpu(tmp_path: Path) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text("x")
    other = tmp_path / "other.cu"
    good_old = _entry(f"{kernel}@aaa", result_line(Timing(40.0, 0.1), SHAPES))
    good_new = _entry(f"{kernel}@bbb", result_line(Timing(39.0, 0.1), SHAPES))
    entries = [
        good_old,
        good_new,
        _entry(f"{kernel}@ccc", "error: bench 128x7168x16384: wrong", exit_code="1"),
        _entry(f"{other}@ddd", result_line(Timing(1.0, 0.1), SHAPES)),
        _entry(f"{kernel}@eee", result_line(Timing(2.0, 0.1), SHAPES), gpu="NVIDIA B200 (sm_100)"),
        _entry(f"{kernel}@fff", "10/10 pass", command="nvfp4ctl check"),
    ]
    keys = [key for key, _ in SHAPES]
    found = find_previous(entries[::-1], kernel, GPU, keys)
    assert found is not None and found[0] is good_new
    assert find_previous(entries[::-1], tmp_path / "none.cu", GPU, keys) is None
    assert find_previous(entries[::-1], kernel, GPU, ["256x256x256"]) is None  # no shape in common


def test_relative_log_paths_start_at_the_project_root_not_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    project = tmp_path / "project"
    kernel = project / "kernels" / "k.cu"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("x")
    relative = _entry("kernels/k.cu@aaa", result_line(Timing(40.0, 0.1), SHAPES))
    absolute = _entry(f"{kernel}@bbb", result_line(Timing(39.0, 0.1), SHAPES))  # lines logged before paths were relative
    keys = [key for key, _ in SHAPES]
    monkeypatch.chdir(tmp_path)  # somewhere else: the root, not the cwd, anchors relative paths
    found = find_previous([relative], kernel, GPU, keys, root=project)
    assert found is not None and found[0] is relative
    assert find_previous([relative], kernel, GPU, keys) is None  # resolved against the cwd: another file
    found_old = find_previous([absolute], kernel, GPU, keys, root=project)
    assert found_old is not None and found_old[0] is absolute


def test_verdicts_use_the_combined_noise_with_a_run_to_run_floor() -> None:
    # a shape's floor is 3 %, the geomean's 2 %: what two processes of the same code differ by
    assert Delta("s", Timing(100.0, 0.01), Timing(102.9, 0.01)).verdict == "same"
    assert Delta("s", Timing(100.0, 0.01), Timing(96.0, 0.01)).verdict == "faster"
    assert Delta("s", Timing(100.0, 0.01), Timing(104.0, 0.01)).verdict == "slower"
    assert Delta("geomean", Timing(100.0, 0.01), Timing(101.3, 0.01)).verdict == "same"  # 2026-11-28's pair
    assert Delta("geomean", Timing(100.0, 0.01), Timing(97.5, 0.01)).verdict == "faster"
    noisy = Delta("s", Timing(100.0, 2.0), Timing(104.0, 2.0))  # 2 × hypot(2, 2) = 5.66, above the floor
    assert noisy.noise == pytest.approx(5.657, abs=1e-3) and noisy.verdict == "same"
    assert Delta("s", Timing(50.0, 0.1), Timing(40.0, 0.1)).pct == pytest.approx(-20.0)


def test_compare_adds_the_geomean_only_when_every_shape_matches(tmp_path: Path) -> None:
    previous_line = result_line(Timing(36.8, 0.02), SHAPES)
    entry = _entry(f"{tmp_path / 'k.cu'}@abc", previous_line)
    logged = parse_result_line(previous_line)
    assert logged is not None
    full = compare((entry, logged), Timing(30.0, 0.02), SHAPES, digest="abc")
    assert [d.name for d in full.deltas][-1] == "geomean" and full.same_code
    one = compare((entry, logged), Timing(30.0, 0.02), SHAPES[1:2], digest="zzz")
    assert [d.name for d in one.deltas] == ["128x4096x7168"] and not one.same_code


def test_a_full_bench_is_compared_with_the_last_full_bench_not_an_only_run() -> None:
    def bench(time: str, command: str, result: str) -> RunEntry:
        return RunEntry(time, command, "k.cu@abc", "c1", "GPU", "0", result)

    full = bench("t1", "nvfp4ctl bench", "geomean 2.000±0.001 us; 1x1x1 1.000±0.001 | 2x2x2 4.000±0.001 us")
    only = bench("t2", "nvfp4ctl bench --only 2", "geomean 4.100±0.001 us; 2x2x2 4.100±0.001 us")
    found = find_previous([only, full], Path("k.cu"), "GPU", ["1x1x1", "2x2x2"])
    assert found is not None and found[0] is full
    found_only = find_previous([only, full], Path("k.cu"), "GPU", ["2x2x2"])
    assert found_only is not None and found_only[0] is only


@pytest.mark.parametrize("problem", ["nvfp4_gemm", "nvfp4_dual_gemm", "nvfp4_gemv", "nvfp4_group_gemm"])
def test_every_problems_bench_line_parses_back(problem: str) -> None:
    """The comparison with the previous bench and `log --trend` read the run-log line back: the GEMV's
    keys ("7168x16384", no L) and the grouped GEMM's ("g8:m80+176+...:n4096:k7168") must parse too."""
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.task import load_task

    spec = get_problem(problem)
    keys = [spec.key(case) for case in load_task(spec.task_file).benchmarks]
    shapes = [(key, Timing(10.0 + i, 0.01)) for i, key in enumerate(keys)]
    entry = RunEntry.from_line(_entry("k.cu@123", result_line(Timing(11.0, 0.01), shapes)).to_line())
    assert entry is not None
    logged = parse_result_line(entry.result)
    assert logged is not None, entry.result
    assert logged.shapes == dict(shapes)


@pytest.mark.parametrize("command", ["nvfp4ctl -q bench", "nvfp4ctl -v bench --only 1", "nvfp4ctl --quiet bench"])
def test_a_bench_run_with_global_options_before_its_name_is_a_bench(tmp_path: Path, command: str) -> None:
    """`-q`/`-v` go before or after the command's name (README); the log records argv as typed."""
    kernel = tmp_path / "k.cu"
    kernel.write_text("x")
    entry = _entry(f"{kernel}@aaa", result_line(Timing(40.0, 0.1), SHAPES), command=command)
    found = find_previous([entry], kernel, GPU, [key for key, _ in SHAPES])
    assert found is not None and found[0] is entry


def test_a_check_is_not_a_bench_whatever_its_options(tmp_path: Path) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text("x")
    entry = _entry(f"{kernel}@aaa", result_line(Timing(40.0, 0.1), SHAPES), command="nvfp4ctl -v check --shape bench")
    assert find_previous([entry], kernel, GPU, [key for key, _ in SHAPES]) is None


@pytest.mark.parametrize("full_match", [True, False])
def test_the_previous_bench_is_looked_up_from_the_end_of_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  full_match: bool) -> None:
    """bench read and parsed the whole run log (tens of MB after years of runs) to find its previous
    bench: it parses from the end (runlog.newest_first) back to that bench, and finds the same one; only
    where no bench timed every shape does it go on to the heading, then taking the latest that timed some.
    (The file is read whole once, for where the log's section ends: at C speed, the parsing is the cost.)"""
    from types import SimpleNamespace

    from nvfp4ctl.commands.bench import compare_with_log

    kernel = tmp_path / "k.cu"
    kernel.write_text("x")
    keys = [key for key, _ in SHAPES]
    oldest = _entry(f"{kernel}@aaa", result_line(Timing(40.0, 0.1), SHAPES[1:]))
    previous = _entry(f"{kernel}@bbb", result_line(Timing(39.0, 0.1), SHAPES if full_match else SHAPES[:1]))
    check = _entry(f"{kernel}@ccc", "10/10 pass", command="nvfp4ctl check")
    memory = tmp_path / "MEMORY.md"
    memory.write_text("# notes\n\n" + runlog.HEADING + "\n\n" + oldest.to_line() + check.to_line() * 20_000
                      + previous.to_line() + check.to_line() * 3)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    parsed: list[str] = []
    parse = RunEntry.from_line.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(RunEntry, "from_line", classmethod(lambda cls, line: parsed.append(line) or parse(cls, line)))
    report = SimpleNamespace(gpu=GPU, shapes=[SimpleNamespace(key=key) for key in keys], geomean_us=38.0,
                             geomean_err_us=0.1, timings=lambda: SHAPES)
    comparison = compare_with_log(report, kernel)  # type: ignore[arg-type]
    assert comparison is not None and comparison.entry == previous
    if full_match:
        assert len(parsed) < 20_000 / 10, len(parsed)
    whole_log = find_previous(reversed(runlog.read(memory)), kernel, GPU, keys, tmp_path)
    assert whole_log is not None and whole_log[0] == previous


def _at(entry: RunEntry, time: str) -> RunEntry:
    return replace(entry, time=time)


def test_the_previous_bench_of_a_log_merged_by_hand_is_the_latest_by_the_time_logged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log merged by hand holds a later bench above an earlier one: bench compared with the line nearest the
    log's end, the earlier run, where log --trend already ordered runs by time."""
    from types import SimpleNamespace

    from nvfp4ctl.commands.bench import compare_with_log

    kernel = tmp_path / "k.cu"
    kernel.write_text("x")
    later = _at(_entry(f"{kernel}@bbb", result_line(Timing(39.0, 0.1), SHAPES)), "2026-11-26T02:00:00Z")
    earlier = _at(_entry(f"{kernel}@aaa", result_line(Timing(40.0, 0.1), SHAPES)), "2026-11-26T01:00:00Z")
    check = _at(_entry(f"{kernel}@ccc", "10/10 pass", command="nvfp4ctl check"), "2026-11-26T03:00:00Z")
    memory = tmp_path / "MEMORY.md"
    memory.write_text(runlog.HEADING + "\n\n" + later.to_line() + check.to_line() * 3 + earlier.to_line())
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    report = SimpleNamespace(gpu=GPU, shapes=[SimpleNamespace(key=key) for key, _ in SHAPES], geomean_us=38.0,
                             geomean_err_us=0.1, timings=lambda: SHAPES)
    comparison = compare_with_log(report, kernel)  # type: ignore[arg-type]
    assert comparison is not None and comparison.entry == later
    keys = [key for key, _ in SHAPES]
    found = find_previous(reversed(runlog.read(memory)), kernel, GPU, keys, tmp_path)
    assert found is not None and found[0] == later


def test_of_two_benches_logged_in_one_second_the_later_line_is_the_previous_bench(tmp_path: Path) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text("x")
    keys = [key for key, _ in SHAPES]
    first = _entry(f"{kernel}@aaa", result_line(Timing(40.0, 0.1), SHAPES))
    second = _entry(f"{kernel}@bbb", result_line(Timing(39.0, 0.1), SHAPES))
    found = find_previous([second, first], kernel, GPU, keys, tmp_path)  # newest first: `second` is the later line
    assert found is not None and found[0] is second


def test_an_only_run_and_a_quick_bench_are_judged_by_the_time_logged_too(tmp_path: Path) -> None:
    """Where no bench timed every shape the latest partial one counts, and the benches passed over for their
    settings are those later than it: both by the time logged, not by the line's place."""
    kernel = tmp_path / "k.cu"
    kernel.write_text("x")
    keys = [key for key, _ in SHAPES]
    late_only = _at(_entry(f"{kernel}@bbb", result_line(Timing(98.0, 0.1), SHAPES[:1])), "2026-11-26T03:00:00Z")
    early_only = _at(_entry(f"{kernel}@aaa", result_line(Timing(99.0, 0.1), SHAPES[:1])), "2026-11-26T01:00:00Z")
    quick_before = _at(_entry(f"{kernel}@ccc", result_line(Timing(45.0, 0.9), SHAPES), command="nvfp4ctl bench"
                              " --max-repeats 3"), "2026-11-26T02:00:00Z")
    quick_after = replace(quick_before, time="2026-11-26T04:00:00Z", target=f"{kernel}@ddd")
    passed_over: list[RunEntry] = []
    newest_first = [early_only, quick_before, quick_after, late_only]  # file order: late_only on top, merged in
    found = find_previous(newest_first, kernel, GPU, keys, tmp_path, settings=TimingSettings(),
                          other_settings=passed_over)
    assert found is not None and found[0] is late_only
    assert passed_over == [quick_after]


def test_find_previous_skips_a_bench_of_another_problem_at_the_same_path(tmp_path: Path) -> None:
    """A log shared by two folders names each one's submission.py alike, and the GEMM's and the dual
    GEMM's shape keys are alike: the dual GEMM's bench was compared with the GEMM's times."""
    submission = tmp_path / "submission.py"
    submission.write_text("x")
    shapes = [("128x128x256", Timing(900.0, 30.0))]
    gemm = RunEntry("2026-11-25T21:00:00Z", "nvfp4ctl bench", "submission.py@aaa", "abc1234", GPU, "0",
                    result_line(Timing(900.0, 30.0), shapes), "nvfp4_gemm")
    older = RunEntry("2026-11-25T20:00:00Z", "nvfp4ctl bench", "submission.py@bbb", "abc1234", GPU, "0",
                     result_line(Timing(700.0, 30.0), shapes))  # before the log named problems: the GEMM's
    assert find_previous([gemm], submission, GPU, ["128x128x256"], tmp_path, "nvfp4_dual_gemm") is None
    assert find_previous([gemm, older], submission, GPU, ["128x128x256"], tmp_path, "nvfp4_dual_gemm") is None
    found = find_previous([gemm], submission, GPU, ["128x128x256"], tmp_path, "nvfp4_gemm")
    assert found is not None and found[0] is gemm
    found_older = find_previous([older], submission, GPU, ["128x128x256"], tmp_path, "nvfp4_gemm")
    assert found_older is not None and found_older[0] is older


def test_two_folders_sharing_a_run_log_have_two_targets_and_its_older_lines_match_as_before(tmp_path: Path) -> None:
    """One log (NVFP4CTL_MEMORY) for gemm_a/ and gemm_b/, same problem: gemm_b's first bench was compared
    with gemm_a's submission.py, another kernel, as both were logged "submission.py". A line now names
    its file from the log's folder; an older line (the line read back from its text, as written before)
    still matches the submission.py of whichever folder reads it."""
    first, second = tmp_path / "gemm_a" / "submission.py", tmp_path / "gemm_b" / "submission.py"
    for submission in (first, second):
        submission.parent.mkdir()
        submission.write_text(submission.parent.name)
    keys = [key for key, _ in SHAPES]
    def line(time: str, target: str, geomean: float) -> RunEntry | None:
        return RunEntry.from_line(f"- 2026-11-25T{time}Z · `nvfp4ctl bench` · {target} [current folder] · abc1234"
                                  f" · {GPU} · 0 · {result_line(Timing(geomean, 0.1), SHAPES)} · nvfp4_gemm\n")

    newer = line("21:00:00", "./gemm_a/submission.py@aaa", 40.0)
    older = line("20:00:00", "submission.py@bbb", 50.0)
    assert newer is not None and older is not None
    found = find_previous([newer], first, GPU, keys, first.parent, "nvfp4_gemm", tmp_path)
    assert found is not None and found[0] is newer
    assert find_previous([newer], second, GPU, keys, second.parent, "nvfp4_gemm", tmp_path) is None
    for submission in (first, second):  # as before: the folder that wrote it is not on the line
        found = find_previous([older], submission, GPU, keys, submission.parent, "nvfp4_gemm", tmp_path)
        assert found is not None and found[0] is older


def test_the_comparison_names_the_previous_benchs_nvfp4ctl_where_another_one_timed_it() -> None:
    from nvfp4ctl.bench.render import comparison_title

    line = result_line(Timing(40.0, 0.1), SHAPES)
    for tool, said in [("0.1.0 (abc1234)", "previous run by nvfp4ctl 0.1.0 (abc1234), this one by 0.1.0 (def5678)"),
                       ("", "previous run by an nvfp4ctl that logged no version, this one by 0.1.0 (def5678)")]:
        entry = RunEntry.from_line(replace(_entry("k.cu@abc", line), tool=tool).to_line())
        assert entry is not None
        comparison = compare((entry, parse_result_line(line)), Timing(30.0, 0.02), SHAPES, "abc", "0.1.0 (def5678)")
        assert comparison.by_another_tool and comparison_title(comparison).endswith(f"same code; {said})")
    same = compare((replace(_entry("k.cu@abc", line), tool="0.1.0 (def5678)"), parse_result_line(line)),
                   Timing(30.0, 0.02), SHAPES, "abc", "0.1.0 (def5678)")
    assert not same.by_another_tool and comparison_title(same).endswith("same code)")


def test_a_bench_with_a_note_after_its_problem_is_the_previous_bench_of_that_problem(tmp_path: Path) -> None:
    """` (2-stage pipeline)` typed after the problem made it another problem's: bench passed the run over."""
    kernel = tmp_path / "submission.py"
    kernel.write_text("x")
    noted = replace(_entry(f"{kernel}@aaa", result_line(Timing(19.8, 0.02), SHAPES)), problem="nvfp4_dual_gemm")
    read = RunEntry.from_line(noted.to_line().rstrip("\n") + " (2-stage pipeline)\n")
    assert read is not None
    found = find_previous([read], kernel, GPU, [key for key, _ in SHAPES], tmp_path, "nvfp4_dual_gemm")
    assert found is not None and found[0] is read


@pytest.mark.parametrize(("command", "settings"), [
    ("nvfp4ctl bench", TimingSettings()),
    ("nvfp4ctl -q bench --max-repeats 3", TimingSettings(max_repeats=3)),
    ("nvfp4ctl bench --max-repeats=3 --settle 0 --mode Leaderboard --max-noise 1",
     TimingSettings("leaderboard", 3, 0.0, 1.0)),
    ("nvfp4ctl bench --submission 'my --settle 0.py' --only 1", TimingSettings()),  # a value, not an option
])
def test_a_benchs_timing_settings_are_read_from_its_command_cell(command: str, settings: TimingSettings) -> None:
    assert settings_of(command) == settings


def test_a_typed_default_is_the_default_and_the_options_name_what_differs() -> None:
    assert same_settings(settings_of("nvfp4ctl bench --max-repeats 200 --settle 1"), TimingSettings(), "nvfp4_gemm")
    assert not same_settings(TimingSettings(max_repeats=3), TimingSettings(), "nvfp4_gemm")
    assert TimingSettings(max_repeats=3).described("nvfp4_gemm") == "--max-repeats 3"
    assert TimingSettings("leaderboard", 1000).described("nvfp4_gemm") == "--mode leaderboard"
    assert TimingSettings().described("nvfp4_gemm") == "the default settings"


def test_the_previous_bench_is_one_of_the_same_timing_settings_and_a_later_quick_one_is_named(tmp_path: Path) -> None:
    """A quick `--max-repeats 3` bench was the previous bench a full one was judged by."""
    kernel = tmp_path / "k.cu"
    kernel.write_text("x")
    keys = [key for key, _ in SHAPES]
    full = _entry(f"{kernel}@aaa", result_line(Timing(40.0, 0.1), SHAPES))
    quick = _entry(f"{kernel}@bbb", result_line(Timing(45.0, 0.9), SHAPES), command="nvfp4ctl bench --max-repeats 3")
    passed_over: list[RunEntry] = []
    found = find_previous([quick, full], kernel, GPU, keys, tmp_path, settings=TimingSettings(),
                          other_settings=passed_over)
    assert found is not None and found[0] is full and passed_over == [quick]
    passed_over.clear()
    assert find_previous([quick], kernel, GPU, keys, tmp_path, settings=TimingSettings(),
                         other_settings=passed_over) is None and passed_over == [quick]
    passed_over.clear()
    found = find_previous([full, quick], kernel, GPU, keys, tmp_path, settings=TimingSettings(),
                          other_settings=passed_over)  # the quick one is older than the one compared: not named
    assert found is not None and found[0] is full and passed_over == []
    found = find_previous([quick, full], kernel, GPU, keys, tmp_path, settings=TimingSettings(max_repeats=3))
    assert found is not None and found[0] is quick


def test_bench_says_the_previous_bench_used_other_settings_and_is_not_compared(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from nvfp4ctl.commands.bench import _not_compared_dict, _not_compared_line, compare_with_log

    kernel = tmp_path / "k.cu"
    kernel.write_text("x")
    quick = _entry(f"{kernel}@bbb", result_line(Timing(45.0, 0.9), SHAPES), command="nvfp4ctl bench --max-repeats 3")
    memory = tmp_path / "MEMORY.md"
    memory.write_text(runlog.HEADING + "\n\n" + quick.to_line())
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    report = SimpleNamespace(gpu=GPU, shapes=[SimpleNamespace(key=key) for key, _ in SHAPES], geomean_us=38.0,
                             geomean_err_us=0.1, timings=lambda: SHAPES)
    passed_over: list[RunEntry] = []
    assert compare_with_log(report, kernel, "nvfp4_gemm", TimingSettings(), passed_over) is None  # type: ignore[arg-type]
    assert passed_over == [quick]
    assert _not_compared_line(quick, TimingSettings(), "nvfp4_gemm") == (
        "the previous bench of this target on this GPU (2026-11-25T21:00:00Z) used --max-repeats 3, this one the"
        " default settings: not compared")
    assert _not_compared_dict(quick, "nvfp4_gemm") == {"time": "2026-11-25T21:00:00Z", "commit": "abc1234",
                                                       "settings": ["--max-repeats 3"]}


@pytest.mark.parametrize("columns", [40, 10])
def test_a_narrow_terminal_gets_the_comparisons_values_whole(columns: int, monkeypatch, capsys) -> None:
    """bench's tables print only on a GPU; their rows go through the console's one rule: at a width that
    would fold a shape or a time inside it, one record per row, every value whole."""
    from types import SimpleNamespace

    from table_words import has_a_table, missing_words, printed_at

    from nvfp4ctl.bench import render
    from nvfp4ctl.console import get_console

    deltas = [Delta(key, timing, Timing(timing.mean * 0.9, timing.err)) for key, timing in SHAPES]
    comparison = SimpleNamespace(deltas=deltas)  # the table reads its deltas alone

    def show() -> None:
        get_console().table(*render.comparison_table(comparison), title="vs the previous bench of this target")

    wide, narrow = (printed_at(width, show, monkeypatch, capsys) for width in (400, columns))
    assert has_a_table(wide) and not has_a_table(narrow)
    assert missing_words(narrow, wide) == []
    assert printed_at(120, show, monkeypatch, capsys) == wide  # a width that holds it: the table as it was


def test_the_previous_bench_of_a_file_whose_name_is_not_utf8_is_found(tmp_path: Path) -> None:
    """The run log writes such a byte `\\xff` (Python holds it as the surrogate \\udcff): the file's own path,
    compared unescaped, never matched its logged one, so each bench had no previous one."""
    kernel = tmp_path / "k\udcff.cu"
    kernel.write_text("x")
    cell = runlog.describe_target(kernel, log_folder=tmp_path, digest="aaa")
    logged = RunEntry.from_line(_entry(cell, result_line(Timing(40.0, 0.1), SHAPES)).to_line())
    assert logged is not None and logged.target == "./k\\xff.cu@aaa"
    found = find_previous([logged], kernel, GPU, [key for key, _ in SHAPES], log_folder=tmp_path)
    assert found is not None and found[0] == logged


def test_the_previous_bench_of_a_file_whose_name_holds_esc_is_found_in_new_and_old_lines(tmp_path: Path) -> None:
    """The run log writes ESC and U+202E escaped (`\\x1b`, `\\u202e`), so the file's own path is compared so; a
    line logged before that holds them raw, and is found too."""
    kernel = tmp_path / "k\x1b[31m\u202e.cu"
    kernel.write_text("x")
    cell = runlog.describe_target(kernel, log_folder=tmp_path, digest="aaa")
    logged = RunEntry.from_line(_entry(cell, result_line(Timing(40.0, 0.1), SHAPES)).to_line())
    assert logged is not None and logged.target == "./k\\x1b[31m\\u202e.cu@aaa"
    keys = [key for key, _ in SHAPES]
    found = find_previous([logged], kernel, GPU, keys, log_folder=tmp_path)
    assert found is not None and found[0] == logged
    older = replace(logged, target="./k\x1b[31m\u202e.cu@aaa")  # as RunEntry.from_line reads an older line
    found = find_previous([older], kernel, GPU, keys, log_folder=tmp_path)
    assert found is not None and found[0] == older
