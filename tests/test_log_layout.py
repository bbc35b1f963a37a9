"""`nvfp4ctl log` below the width its table needs: one plain record per run, no time stamp, hash or shape
broken; the table where it fits."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.cli import app
from nvfp4ctl.flowed_records import INDENT, SEPARATOR

KERNEL = "./kernels/sm90/nvfp4_gemm_sm90.cu@92559cbfdefb [default for sm_90]"
SUBMISSION = "./submission.py@256b699e8403 [task.yml submission:]"
# (command, target, exit code, result, problem): the runs of a day's work, CPU-only commands among them
KINDS = [
    ("nvfp4ctl lint submission.py", "./submission.py@256b699e8403", "0", "0 errors, 0 warnings (1 file checked)",
     "nvfp4_gemm"),
    ("nvfp4ctl build --arch sm_90a", SUBMISSION, "0",
     "nothing to compile (no load_inline/load call, no CuTe DSL kernel)", "nvfp4_gemm"),
    ("nvfp4ctl dump --umma --mma=128,128,64 --idesc 0x1", "-", "1",
     "umma values: 1 descriptor checked against the config, 5 mismatches", ""),
    ("nvfp4ctl check --shape 256,384,512 --shape 128,256,1024,2", KERNEL, "0", "2/2 pass", "nvfp4_gemm"),
    ("nvfp4ctl bench", KERNEL, "0", "geomean 25.058±0.005 us; 128x7168x16384 52.561±0.018 | 128x4096x7168"
     " 20.310±0.009 | 128x7168x2048 14.739±0.005 us", "nvfp4_gemm"),
    ("nvfp4ctl check", "./group/submission.py@0f1e2d3c4b5a", "3", "timeout after 180 s (test 4)",
     "nvfp4_group_gemm"),
    ("nvfp4ctl bench --shape 80,4096,7168;176,4096,7168", "./group/submission.py@0f1e2d3c4b5a", "0",
     "geomean 31.2±0.1 us; g2:m80+176:n4096:k7168 31.2±0.1 us", "nvfp4_group_gemm"),
]


def _write_runs(memory: Path, count: int) -> list[runlog.RunEntry]:
    entries = []
    for index in range(count):
        command, target, code, result, problem = KINDS[index % len(KINDS)]
        gpu = "no GPU" if command.split()[1] in ("lint", "build", "dump") else "NVIDIA H200 (sm_90)"
        entries.append(runlog.RunEntry(f"2026-11-28T{10 + index // 60:02d}:{index % 60:02d}:07Z", command, target,
                                       f"8b80b0{index % 10}+dirty", gpu, code, result, problem))
    memory.write_text("# notes\n\n## Run log\n\n" + "".join(entry.to_line() for entry in entries), encoding="utf-8")
    return entries


def _shown_target(entry: runlog.RunEntry) -> str:
    path, digest = runlog.split_target(entry.target)
    return f"{path.removeprefix('./')}@{digest[:8]}" if path else entry.target


def _raw_line(entry: runlog.RunEntry) -> str:
    """The entry's line with its cells as they are, as a line logged before every cell was escaped (or a hand
    edit) holds them: to_line escapes them."""
    cells = [entry.time, f"`{entry.command}`", entry.target, entry.commit, entry.gpu, entry.exit_code, entry.result,
             entry.problem]
    return "- " + " · ".join(cells) + "\n"


def _log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: str | None,
         count: int = 35, last: int = 28) -> tuple[list[runlog.RunEntry], str]:
    memory = tmp_path / "MEMORY.md"
    entries = _write_runs(memory, count)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)  # pytest-xdist sets 80
    else:
        monkeypatch.setenv("COLUMNS", columns)
    result = CliRunner().invoke(app, ["log", "-n", str(last)])
    assert result.exit_code == 0, result.output
    return entries[-last:], result.output


@pytest.mark.parametrize("columns", [40, 60, 80, 120])
def test_a_narrow_log_is_one_record_per_run_with_every_value_whole(tmp_path, monkeypatch, columns) -> None:
    """At 80 columns rich folded the table's columns: `2026-11-` over `28`, `submissi` over `on.py@25`."""
    shown, output = _log(tmp_path, monkeypatch, str(columns))
    title, *lines = output.splitlines()
    assert title == f"28 most recent runs ({tmp_path / 'MEMORY.md'})"
    assert "┃" not in output and "│" not in output
    firsts = [line for line in lines if not line.startswith(INDENT)]
    assert [line[:19] for line in firsts] == [entry.time.replace("T", " ").rstrip("Z") for entry in shown]
    for line in lines:  # past the width only where a single word is longer than the line
        assert len(line) <= columns or " " not in line.strip(), line
    words = set(" ".join(line.strip() for line in lines).split(" "))
    for entry in shown:
        for value in (_shown_target(entry), entry.commit, entry.gpu, f"exit {entry.exit_code}", entry.problem):
            assert value in output, value
        assert set(entry.result.split(" ")) <= words, entry.result
    for shape in ("128x7168x16384", "g2:m80+176:n4096:k7168", "256,384,512", "128,256,1024,2"):
        assert shape in words


def test_a_record_reads_its_cells_in_the_tables_order(tmp_path, monkeypatch) -> None:
    shown, output = _log(tmp_path, monkeypatch, "80", count=5, last=1)
    (entry,) = shown
    assert output.splitlines()[1:] == [
        "2026-11-28 10:04:07 · nvfp4ctl bench · kernels/sm90/nvfp4_gemm_sm90.cu@92559cbf",
        f"{INDENT}8b80b04+dirty · NVIDIA H200 (sm_90) · exit 0",
        f"{INDENT}geomean 25.058±0.005 us; 128x7168x16384 52.561±0.018 | 128x4096x7168",
        f"{INDENT}20.310±0.009 | 128x7168x2048 14.739±0.005 us · nvfp4_gemm",
    ]
    assert entry.command == "nvfp4ctl bench"


def test_a_records_control_characters_are_stripped_or_escaped_as_in_the_table(tmp_path, monkeypatch) -> None:
    """A BEL or an ESC in a run log's cell (an older line's, a hand edit's) reached the terminal raw from the records,
    where the table strips BEL."""
    memory = tmp_path / "MEMORY.md"
    entry = runlog.RunEntry("2026-11-28T10:00:07Z", "nvfp4ctl check", "./submission.py@256b699e8403", "8b80b04",
                            "NVIDIA H200 (sm_90)", "1", "1/2 pass\x07 \x1b[2Jcleared\u202e", "nvfp4_gemm")
    memory.write_text("## Run log\n\n" + _raw_line(entry), encoding="utf-8")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "40")
    result = CliRunner().invoke(app, ["log"])
    assert result.exit_code == 0 and "┃" not in result.output, result.output
    assert "1/2 pass \\x1b[2Jcleared\\u202e" in " ".join(result.output.split()), result.output
    assert not any(ch in result.output for ch in "\x07\x1b\u202e"), repr(result.output)


def test_the_tables_cells_escape_an_escape_as_the_records_do(tmp_path, monkeypatch) -> None:
    """rich's table strips BEL but passed ESC and U+202E on to the terminal (an older line's, a hand edit's), where
    the records escape them."""
    memory = tmp_path / "MEMORY.md"
    entry = runlog.RunEntry("2026-11-28T10:00:07Z", "nvfp4ctl check", "./sub\x1b[31mmission.py@256b699e8403",
                            "8b80b04", "NVIDIA H200 (sm_90)", "1", "1/2 pass\x07 \x1b[2Jcleared\u202e", "nvfp4_gemm")
    memory.write_text("## Run log\n\n" + _raw_line(entry), encoding="utf-8")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    result = CliRunner().invoke(app, ["log"])
    assert result.exit_code == 0 and "┃" in result.output, result.output
    assert "1/2 pass \\x1b[2Jcleared\\u202e" in result.output and "sub\\x1b[31mmission.py" in result.output
    assert not any(ch in result.output for ch in "\x07\x1b\u202e"), repr(result.output)


def test_a_wide_terminal_keeps_the_table(tmp_path, monkeypatch) -> None:
    shown, output = _log(tmp_path, monkeypatch, "400")
    assert "┃ time (UTC)" in output and SEPARATOR not in output
    for entry in shown:  # each run on one row of the table
        assert any(entry.time.replace("T", " ").rstrip("Z") in line and entry.result in line
                   for line in output.splitlines())


def test_a_pipe_gets_one_line_per_run_where_the_table_would_break_a_value(tmp_path, monkeypatch) -> None:
    shown, output = _log(tmp_path, monkeypatch, None)
    assert output.splitlines()[1:] == [SEPARATOR.join(
        [entry.time.replace("T", " ").rstrip("Z"), entry.command, _shown_target(entry), entry.commit, entry.gpu,
         f"exit {entry.exit_code}", entry.result] + ([entry.problem] if entry.problem else [])) for entry in shown]


def test_a_pipe_keeps_the_table_where_it_fits(tmp_path, monkeypatch) -> None:
    memory = tmp_path / "MEMORY.md"
    runlog.append(runlog.RunEntry("2026-11-28T10:00:07Z", "nvfp4ctl lint", "./submission.py@256b699e8403",
                                  "8b80b04", "no GPU", "0", "0 errors, 0 warnings", "nvfp4_gemm"), memory)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.delenv("COLUMNS", raising=False)
    output = CliRunner().invoke(app, ["log"]).output
    assert "┃ time (UTC)" in output and "│ 2026-11-28 10:00:07 │ nvfp4ctl lint │" in output


def _short_runs(memory: Path, count: int) -> None:
    """`count` runs whose table fits a wide terminal with every word whole."""
    memory.write_text("## Run log\n\n" + "".join(
        runlog.RunEntry(f"2026-11-28T10:{index // 60 % 60:02d}:{index % 60:02d}Z", "nvfp4ctl lint", "-", "8b80b04",
                        "no GPU", "0", f"run {index}").to_line() for index in range(count)), encoding="utf-8")


def test_a_huge_listing_is_written_as_records_past_rich(tmp_path, monkeypatch) -> None:
    """`log -n 100000` over 35,000 runs took half a minute: rich measured and drew every row of the table."""
    import nvfp4ctl.console

    memory = tmp_path / "MEMORY.md"
    _short_runs(memory, nvfp4ctl.console.MOST_ROWS_DRAWN + 1)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")  # wide enough for the table: the row count alone decides

    def no_table(*args: object, **kwargs: object) -> None:
        raise AssertionError("a rich Table was made for a huge listing")

    printed_to_stdout = []
    rich_print = nvfp4ctl.console._Printer.print

    def counted_print(printer: nvfp4ctl.console._Printer, *args: object, **kwargs: object) -> None:
        if not printer.stderr:
            printed_to_stdout.append(args)
        rich_print(printer, *args, **kwargs)

    monkeypatch.setattr(nvfp4ctl.console, "Table", no_table)
    monkeypatch.setattr(nvfp4ctl.console._Printer, "print", counted_print)
    result = CliRunner().invoke(app, ["log", "-n", "100000"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 + nvfp4ctl.console.MOST_ROWS_DRAWN + 1
    assert lines[-1] == f"2026-11-28 10:08:20 · nvfp4ctl lint · - · 8b80b04 · no GPU · exit 0 · run {len(lines) - 2}"
    assert printed_to_stdout == []  # one write of the lines: rich took seconds to split them


def test_a_listing_up_to_the_most_rows_drawn_is_still_a_table(tmp_path, monkeypatch) -> None:
    import nvfp4ctl.console

    memory = tmp_path / "MEMORY.md"
    _short_runs(memory, 4)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr(nvfp4ctl.console, "MOST_ROWS_DRAWN", 3)
    assert "┃ time (UTC)" in CliRunner().invoke(app, ["log", "-n", "3"]).output
    assert CliRunner().invoke(app, ["log", "-n", "4"]).output.splitlines()[1:] == [
        f"2026-11-28 10:00:0{index} · nvfp4ctl lint · - · 8b80b04 · no GPU · exit 0 · run {index}" for index in range(4)]


@pytest.mark.parametrize("last", [str(2**63), str(10**30)])
def test_a_last_past_any_count_shows_every_run(tmp_path, monkeypatch, last) -> None:
    """-n 9223372036854775808 (one past sys.maxsize) was a ValueError traceback from itertools.islice and exit 1."""
    memory = tmp_path / "MEMORY.md"
    _short_runs(memory, 4)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    for args in (["-n", last], ["--runs", "-n", last], ["--trend", "-n", last]):
        result = CliRunner().invoke(app, ["log", *args])
        assert result.exit_code == 0 and result.exception is None, (args, result.output)
    assert CliRunner().invoke(app, ["log", "-n", last]).output == CliRunner().invoke(app, ["log", "-n", "4"]).output
