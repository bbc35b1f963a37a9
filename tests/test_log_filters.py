"""Plain `nvfp4ctl log` narrowed: --target (one file's runs) and --runs (check and bench lines that got past
the command line), each with -n counting the runs it keeps."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.cli import app

# (command, target, exit code, result): a dual GEMM day, usage errors among the runs
RUNS = [
    ("nvfp4ctl check --only 2 --shape 1", "-", "2", "error: --shape 1: expected M,N,K[,L]"),
    ("nvfp4ctl check", "./submission.py@0123456789ab [beside task.yml]", "1", "9/10 pass, 1 fail (test 3)"),
    ("nvfp4ctl lint", "./submission.py@0123456789ab", "0", "0 errors, 0 warnings (1 file checked)"),
    ("nvfp4ctl bench", "./other.py@0123456789ab", "0", "geomean 1.000±0.010 us; 128x128x256 1.000±0.010 us"),
    ("nvfp4ctl bench --only 9", "./submission.py@0123456789ab", "2", "--only 9: task.yml has 3 benchmarks (1-3)"),
    ("nvfp4ctl check", "./submission.py@fedcba987654 [beside task.yml]", "0", "10/10 pass"),
]


@pytest.fixture
def logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    memory = tmp_path / "MEMORY.md"
    memory.write_text("# notes\n\n## Run log\n\n" + "".join(
        runlog.RunEntry(f"2026-11-28T10:00:0{index}Z", command, target, "8b80b04", "NVIDIA H200 (sm_90)", code,
                        result, "nvfp4_dual_gemm").to_line()
        for index, (command, target, code, result) in enumerate(RUNS)), encoding="utf-8")
    (tmp_path / "submission.py").write_text("")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(tmp_path)
    return memory


def _results(output: str) -> list[str]:
    return [result for _, _, _, result in RUNS if result in output]


def _listed_and_trend(memory: Path, folder: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> tuple[Result, Result]:
    """`log --target TARGET` and `log --trend --target TARGET` of the run log `memory`, run in `folder`."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(folder)
    return (CliRunner().invoke(app, ["log", "--target", target]),
            CliRunner().invoke(app, ["log", "--trend", "--target", target]))


def test_target_lists_the_runs_of_that_file_only(logged: Path) -> None:
    """`log --target submission.py` said "--target and --shape go with --trend" (exit 2)."""
    result = CliRunner().invoke(app, ["log", "--target", "submission.py"])
    assert result.exit_code == 0, result.output
    assert _results(result.output) == [RUNS[1][3], RUNS[2][3], RUNS[4][3], RUNS[5][3]]
    assert f"4 most recent runs of submission.py ({logged})" in result.output


def test_runs_leaves_out_other_commands_and_usage_errors(logged: Path) -> None:
    result = CliRunner().invoke(app, ["log", "--runs"])
    assert result.exit_code == 0, result.output
    assert _results(result.output) == [RUNS[1][3], RUNS[3][3], RUNS[5][3]]
    assert "3 most recent check or bench runs" in result.output


def test_n_counts_the_runs_kept(logged: Path) -> None:
    """One run's title read "1 most recent check and bench run": a run is a check or a bench."""
    result = CliRunner().invoke(app, ["log", "--runs", "--target", "submission.py", "-n", "1"])
    assert result.exit_code == 0, result.output
    assert _results(result.output) == [RUNS[5][3]]
    assert "1 most recent check or bench run of submission.py" in result.output


def test_the_default_listing_is_as_it_was(logged: Path) -> None:
    result = CliRunner().invoke(app, ["log"])
    assert result.exit_code == 0, result.output
    assert _results(result.output) == [run[3] for run in RUNS]
    assert f"6 most recent runs ({logged})" in result.output


def test_a_target_no_run_had_is_one_line_naming_the_logged_ones(logged: Path) -> None:
    result = CliRunner().invoke(app, ["log", "--target", "nosuch.py"])
    assert (result.exit_code, result.output) == (2, "error: --target nosuch.py: no logged run had it; logged:"
                                                     " other.py, submission.py\n")


def test_runs_with_no_such_run_says_so(logged: Path) -> None:
    result = CliRunner().invoke(app, ["log", "--runs", "--target", "other.py", "-n", "5"])
    assert result.exit_code == 0 and _results(result.output) == [RUNS[3][3]], result.output
    logged.write_text("## Run log\n\n" + runlog.RunEntry("2026-11-28T10:00:00Z", *RUNS[0][:2], "8b80b04", "no GPU",
                                                          *RUNS[0][2:]).to_line(), encoding="utf-8")
    empty = CliRunner().invoke(app, ["log", "--runs"])
    assert empty.exit_code == 0 and f"no check or bench runs logged yet in {logged}" in empty.output


@pytest.mark.parametrize("args, line", [
    (["log", "--shape", "128,128,256"], "error: --shape goes with --trend\n"),
    (["log", "--trend", "--runs"], "error: --runs goes with the listing, not --trend (a trend is of successful"
                                   " benches only)\n"),
])
def test_what_goes_with_the_trend_alone_is_refused_elsewhere(logged: Path, args: list[str], line: str) -> None:
    result = CliRunner().invoke(app, args)
    assert (result.exit_code, result.output) == (2, line)


@pytest.fixture
def folder_targets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace whose gemm/MEMORY.md logged a build of two other problems' kernels (its target the folder
    above both, absolute) and one of two kernels of gemm/kernels/ (its target `kernels`, from gemm/)."""
    gemm = tmp_path / "ws" / "gemm"
    (gemm / "kernels").mkdir(parents=True)
    memory = gemm / "MEMORY.md"
    builds = [("nvfp4ctl build ../dual/kernels/k2.cu ../gemv/kernels/g.cu", str(tmp_path / "ws"), "2 kernels built"),
              ("nvfp4ctl build kernels/a.cu kernels/b.cu", "kernels", "1 of 2 kernels failed (b.cu: compile error)"),
              ("nvfp4ctl build", "kernels [kernels/ beside task.yml]", "3 kernels built (sm_90a)"),
              ("nvfp4ctl check", "./submission.py@0123456789ab [beside task.yml]", "10/10 pass")]
    memory.write_text("# notes\n\n## Run log\n\n" + "".join(
        runlog.RunEntry(f"2026-11-28T10:00:0{index}Z", command, target, "8b80b04", "no GPU", "0", result).to_line()
        for index, (command, target, result) in enumerate(builds)), encoding="utf-8")
    (gemm / "submission.py").write_text("")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(gemm)
    return tmp_path / "ws"


@pytest.mark.parametrize("named", ["..", "ABSOLUTE", "../gemm/.."])
def test_target_finds_the_builds_whose_logged_target_is_that_folder(folder_targets: Path, named: str) -> None:
    """`build ../dual/kernels/k2.cu ../gemv/kernels/g.cu` logs the folder above both as its target; `log --target
    ..` said "no logged run had it", and the logged ones it listed left that folder out."""
    named = str(folder_targets) if named == "ABSOLUTE" else named
    result = CliRunner().invoke(app, ["log", "--target", named])
    assert result.exit_code == 0, result.output
    assert "2 kernels built" in result.output
    assert "kernels failed" not in result.output and "10/10 pass" not in result.output
    assert f"1 most recent run of {named}" in result.output


def test_target_finds_the_builds_logged_with_the_kernels_folder(folder_targets: Path) -> None:
    result = CliRunner().invoke(app, ["log", "--target", "kernels"])
    assert result.exit_code == 0, result.output
    assert "1 of 2 kernels failed" in result.output and "3 kernels built" in result.output
    assert "2 kernels built" not in result.output and "10/10 pass" not in result.output


def test_the_logged_targets_a_wrong_target_names_include_folders(folder_targets: Path) -> None:
    for args in (["log", "--target", "nosuch.py"], ["log", "--trend", "--target", "nosuch.py"]):
        result = CliRunner().invoke(app, args)
        assert (result.exit_code, result.output) == (
            2, f"error: --target nosuch.py: no logged run had it; logged: {folder_targets}, kernels, submission.py\n")


def test_a_trend_of_a_logged_folder_says_it_has_no_bench(folder_targets: Path) -> None:
    """A folder build logged is no typo: no bench of it, as for a file only linted."""
    result = CliRunner().invoke(app, ["log", "--trend", "--target", "kernels"])
    assert result.exit_code == 0, result.output
    assert "no successful bench of kernels" in result.output


@pytest.mark.parametrize("damaged", [False, True], ids=["clean", "with-an-unreadable-line"])
def test_n_takes_the_latest_runs_by_time_as_the_trend_does_in_a_log_merged_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                                   damaged: bool) -> None:
    """-n took the last lines of the file: another machine's older runs pasted below hid the latest ones."""
    def line(minute: int, command: str = "nvfp4ctl check", target: str = "./submission.py@0123456789ab") -> str:
        return runlog.RunEntry(f"2026-11-28T10:{minute:02d}:00Z", command, target, "8b80b04", "NVIDIA H200 (sm_90)",
                               "0", f"run at {minute}", "nvfp4_gemm").to_line()

    merged = [line(30), line(40), line(50, "nvfp4ctl lint"), line(10), line(20, "nvfp4ctl bench", "./other.py@0123456789ab")]
    if damaged:  # read whole then, for the line numbers of the note
        merged.insert(1, "- 2026-11-28T10:35:00Z · nvfp4ctl check · a cell lost\n")
    memory = tmp_path / "MEMORY.md"
    memory.write_text("## Run log\n\n" + "".join(merged), encoding="utf-8")
    (tmp_path / "submission.py").write_text("")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(tmp_path)

    def shown(*args: str) -> list[str]:
        result = CliRunner().invoke(app, ["log", *args])
        assert result.exit_code == 0, result.output
        return [word.split()[0] for word in result.output.split("run at ")[1:]]

    assert shown("-n", "2") == ["40", "50"]
    assert shown("-n", "3") == ["30", "40", "50"]
    assert shown("-n", "9") == ["10", "20", "30", "40", "50"]
    assert shown("--runs", "-n", "2") == ["30", "40"]
    assert shown("--target", "submission.py", "-n", "3") == ["30", "40", "50"]
    assert [entry.result for entry in runlog.read(memory, 2)] == ["run at 40", "run at 50"]


def test_a_target_whose_name_is_not_utf8_is_found_and_named_as_logged(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The run log writes such a byte `\\xff` (Python holds it as the surrogate \\udcff): --target compared the
    unescaped path, said "no logged run had it" of the file it listed, and printed the surrogate `\\udcff`."""
    named = tmp_path / "sub\udcff.py"
    named.write_text("def custom_kernel(data):\n    return data[6]\n")
    memory = tmp_path / "MEMORY.md"
    cell = runlog.describe_target(named, log_folder=tmp_path, digest="0123456789ab")
    memory.write_text("## Run log\n\n" + runlog.RunEntry(
        "2026-11-28T10:00:00Z", "nvfp4ctl bench", cell, "8b80b04", "NVIDIA H200 (sm_90)", "0",
        "geomean 1.000±0.010 us; 128x128x256 1.000±0.010 us", "nvfp4_gemm").to_line(), encoding="utf-8")
    assert "./sub\\xff.py@" in memory.read_text(encoding="utf-8")
    listed, trend = _listed_and_trend(memory, tmp_path, monkeypatch, "sub\udcff.py")
    assert listed.exit_code == 0, listed.output
    assert f"1 most recent run of sub\\xff.py ({memory})" in listed.output
    assert trend.exit_code == 0 and "sub\\xff.py on NVIDIA H200" in trend.output, trend.output
    for flags in (["--target"], ["--trend", "--target"]):
        unknown = CliRunner().invoke(app, ["log", *flags, "nope\udcfe.py"])
        assert (unknown.exit_code, unknown.output) == (
            2, "error: --target nope\\xfe.py: no logged run had it; logged: sub\\xff.py\n")


def test_check_cells_with_and_without_a_cause_read_back_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check's cell gives each kind's first cause (an exception's message, free text, its cell separator
    written as "-"), where older lines gave a wrong result's alone: `log` reads both kinds of line as runs."""
    results = ["0/1 pass, 1 raised (test 1)", "timeout in test 1",
               "0/1 pass, 1 raised (test 1: RuntimeError: shape mismatch · in my tiling (m=7): k)",
               "timeout in test 1 (no result after 180 s), 1 crash (test 2: killed by SIGSEGV)"]
    lines = [runlog.RunEntry(f"2026-11-28T10:00:0{index}Z", "nvfp4ctl check", "./submission.py@0123456789ab",
                             "8b80b04", "NVIDIA H200 (sm_90)", "4", result, "nvfp4_gemm").to_line()
             for index, result in enumerate(results)]
    read = [runlog.RunEntry.from_line(line) for line in lines]
    assert [(entry.result, entry.problem, entry.note) for entry in read if entry] == [
        (result.replace("·", "-"), "nvfp4_gemm", "") for result in results]
    memory = tmp_path / "MEMORY.md"
    memory.write_text("## Run log\n\n" + "".join(lines), encoding="utf-8")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(tmp_path)
    shown = CliRunner().invoke(app, ["log", "--runs"])
    assert shown.exit_code == 0, shown.output
    assert all(result.replace("·", "-") in shown.output for result in results), shown.output
    assert "4 most recent check or bench runs" in shown.output and "could not be read" not in shown.output


def test_a_target_whose_name_holds_esc_is_found_in_escaped_and_older_raw_lines(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The run log writes ESC as `\\x1b`, as the terminal shows it: --target compares the typed name so, and
    still finds a line logged before that, which holds the ESC raw; the trend draws both runs as one file's."""
    named = tmp_path / "sub\x1b[31m.py"
    named.write_text("def custom_kernel(data):\n    return data[6]\n")
    memory = tmp_path / "MEMORY.md"
    cell = runlog.describe_target(named, log_folder=tmp_path, digest="0123456789ab")
    new = runlog.RunEntry("2026-11-29T10:00:00Z", "nvfp4ctl bench", cell, "8b80b04", "NVIDIA H200 (sm_90)", "0",
                          "geomean 1.000±0.010 us; 128x128x256 1.000±0.010 us", "nvfp4_gemm").to_line()
    assert "./sub\\x1b[31m.py@" in new and "\x1b" not in new
    old = new.replace("2026-11-29T10", "2026-11-28T10").replace("\\x1b", "\x1b").replace("1.000±", "2.000±")
    memory.write_text("## Run log\n\n" + old + new, encoding="utf-8")
    listed, trend = _listed_and_trend(memory, tmp_path, monkeypatch, "sub\x1b[31m.py")
    assert listed.exit_code == 0, listed.output
    assert f"2 most recent runs of sub\\x1b[31m.py ({memory})" in listed.output
    assert trend.exit_code == 0, trend.output
    assert trend.output.count("on NVIDIA H200") == 1 and "2 runs" in trend.output, trend.output
