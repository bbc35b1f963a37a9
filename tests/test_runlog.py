"""The MEMORY.md run log: whole lines under concurrency and kills, notes untouched, `log -n N`."""

from __future__ import annotations

import errno
import hashlib
import multiprocessing
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from cli_streams import separate_streams_runner
from typer.testing import CliRunner

from nvfp4ctl import commit_stamp, runlog
from nvfp4ctl.bounded_text import MAX_RESULT_CELL
from nvfp4ctl.cli import app
from nvfp4ctl.errors import ExitCode, UsageError
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.runner.gpu import GpuInfo
from nvfp4ctl.runlog.section import _block_tokens, _markdown_parser
from nvfp4ctl.workspace import memory_path

NOTES = "# My notes\n\n- tile 128x256 was slower · 2.4 µs\r\n- weird bytes: \t café ✓\n\nno newline at the end"


def _entry(result: str, command: str = "nvfp4ctl check") -> runlog.RunEntry:
    return runlog.RunEntry("2026-11-25T10:00:00Z", command, "sub.py@abc", "1234567", "H100 (sm_90)", "0", result)


def _append_one(memory: str, index: int) -> None:
    runlog.append(_entry(f"{index}/10 pass · writer {index}" + " padding" * 200), Path(memory))


def test_eight_concurrent_appenders_write_eight_whole_lines(tmp_path):
    memory = tmp_path / "MEMORY.md"
    memory.write_text(NOTES)
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_append_one, args=(str(memory), i)) for i in range(8)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(30)
    assert all(writer.exitcode == 0 for writer in writers)
    text = memory.read_text()
    assert text.count(runlog.HEADING) == 1
    entries = runlog.read(memory)
    assert sorted(int(e.result.split("/")[0]) for e in entries) == list(range(8))
    assert all(e.result.endswith(" padding") for e in entries)
    assert " · " not in entries[0].result  # the separator inside a cell is neutralised
    log_lines = text.partition(runlog.HEADING)[2].splitlines()
    assert sum(line.startswith("- ") for line in log_lines) == 8


def test_a_writer_killed_mid_run_leaves_no_half_line(tmp_path):
    memory = tmp_path / "MEMORY.md"
    script = textwrap.dedent(f"""
        from pathlib import Path
        from nvfp4ctl import runlog
        entry = runlog.RunEntry("t", "nvfp4ctl check", "x", "c", "g", "0", "pass " + "y" * 3000)
        print("ready", flush=True)
        while True:
            runlog.append(entry, Path({str(memory)!r}))
    """)
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    text = memory.read_text()
    assert text.endswith("\n")
    log = text.partition(runlog.HEADING + "\n")[2]
    lines = [line for line in log.splitlines() if line.startswith("- ")]
    assert lines and all(runlog.RunEntry.from_line(line) is not None for line in lines)
    # the lock died with the writer: the next run appends at once
    runlog.append(_entry("after the kill"), memory)
    assert runlog.read(memory)[-1].result == "after the kill"


def test_users_notes_stay_byte_identical(tmp_path):
    memory = tmp_path / "MEMORY.md"
    memory.write_bytes(NOTES.encode())
    for i in range(3):
        runlog.append(_entry(f"run {i}"), memory)
    data = memory.read_bytes()
    assert data.startswith(NOTES.encode())
    assert data[len(NOTES.encode()) :].startswith(b"\n\n" + runlog.HEADING.encode())
    assert [e.result for e in runlog.read(memory)] == ["run 0", "run 1", "run 2"]


def test_missing_memory_file_is_created_with_the_section(tmp_path):
    memory = tmp_path / "sub" / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    assert memory.read_text().startswith(runlog.HEADING + "\n\n" + runlog.PREAMBLE + "\n\n- ")


@pytest.mark.parametrize("failure", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()],
                         ids=["disk-full", "interrupted"])
@pytest.mark.parametrize("notes", [None, NOTES], ids=["new-file", "users-notes"])
def test_a_failed_append_leaves_memory_md_as_it_was(tmp_path, monkeypatch, failure, notes):
    """The first append makes MEMORY.md to lock it: when the write then fails, no empty file is left
    behind (a later `init` or the user would find an empty MEMORY.md); the user's notes stay as they were."""
    memory = tmp_path / "MEMORY.md"
    if notes is not None:
        memory.write_bytes(notes.encode())

    def fails(*args, **options):
        raise failure

    monkeypatch.setattr(runlog.appending, "write_bytes_atomic", fails)
    monkeypatch.setattr(runlog.appending, "append_in_place", fails)
    with pytest.raises(type(failure)):
        runlog.append(_entry("lost"), memory)
    if notes is None:
        assert not memory.exists(), "a failed first append left an empty MEMORY.md"
    else:
        assert memory.read_bytes() == notes.encode()
    assert [p.name for p in tmp_path.iterdir()] == ([] if notes is None else ["MEMORY.md"])


CODE = "def custom_kernel(data):\n    return data[6]\n"


def test_a_file_that_is_not_a_run_log_is_never_appended_to(tmp_path):
    """The section the append adds is Markdown: at the end of a submission.py or a task.yml it breaks
    the file. Such a file stays byte for byte as it was."""
    for name in ("submission.py", "task.yml", "notes.txt"):
        foreign = tmp_path / name
        foreign.write_text(CODE)
        with pytest.raises(UsageError, match="not a run log"):
            runlog.append(_entry("lost"), foreign)
        assert foreign.read_text() == CODE


@pytest.mark.parametrize("name, text", [("notes.md", CODE), ("NOTES.MARKDOWN", CODE), ("new.md", None),
                                        ("log.txt", f"{runlog.HEADING}\n\n")])
def test_markdown_files_new_or_not_and_existing_run_logs_take_the_line(tmp_path, name, text):
    memory = tmp_path / name
    if text is not None:
        memory.write_text(text)
    runlog.append(_entry("kept"), memory)
    assert [e.result for e in runlog.read(memory)] == ["kept"]


@pytest.mark.parametrize("name, text", [("submission.py", None), ("empty.txt", ""), ("task.yml", None)])
def test_a_new_or_empty_file_not_named_md_is_refused_as_a_full_one_is(tmp_path, name, text):
    """A new submission.py became a Markdown run log, which the next command then refused as not one."""
    memory = tmp_path / name
    if text is not None:
        memory.write_text(text)
    assert runlog.not_a_run_log(memory) == "not a run log (its name does not end in .md, and a new run log's name must)"
    with pytest.raises(UsageError, match="not a run log"):
        runlog.append(_entry("lost"), memory)
    assert (memory.read_text() if text is not None else memory.exists()) == (text if text is not None else False)


def test_a_device_named_by_the_setting_is_no_file_to_refuse_and_a_folder_is_refused(tmp_path):
    """/dev/null takes the lines (logging off); a folder, named .md or not, can hold no run log."""
    assert runlog.not_a_run_log(Path(os.devnull)) is None
    runlog.append(_entry("gone"), Path(os.devnull))
    (tmp_path / "notes.md").mkdir()
    for folder in (tmp_path, tmp_path / "notes.md"):
        assert runlog.not_a_run_log(folder) == "a folder, not a run log file"


def test_a_run_log_set_to_dev_null_writes_nothing_and_warns_nothing(tmp_path, monkeypatch):
    """CI sets NVFP4CTL_MEMORY=/dev/null to keep no run log: the line went to /dev/null, but its lock file was
    made in the cache folder all the same (locks/runlog-….lock), a write a run with no log has no use for."""
    project, cache = tmp_path / "project", tmp_path / "cache"
    project.mkdir()
    (project / "submission.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    monkeypatch.setenv("NVFP4CTL_MEMORY", os.devnull)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(cache))
    monkeypatch.chdir(project)
    result = separate_streams_runner().invoke(app, ["lint", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert result.stderr == "", result.stderr
    assert sorted(path.name for path in project.iterdir()) == ["submission.py"]
    assert not cache.exists(), sorted(cache.rglob("*"))


@pytest.mark.parametrize("spelling", ["/dev/null", "/dev/../dev/null", "//dev/null", "link"])
def test_the_null_device_however_spelt_keeps_no_run_log_nor_looks_anything_up(tmp_path, monkeypatch, spelling):
    """Only the spelling /dev/null was told apart: /dev/../dev/null or a link to /dev/null still made a lock file in
    the cache folder, and every spelling ran the entry's git and GPU look-ups for a line nobody keeps."""
    project, cache = tmp_path / "project", tmp_path / "cache"
    project.mkdir()
    (project / "submission.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    if spelling == "link":
        (tmp_path / "null.md").symlink_to(os.devnull)
        spelling = str(tmp_path / "null.md")
    looked_up: list[str] = []
    monkeypatch.setattr(runlog, "make_entry", lambda *args, **kwargs: looked_up.append("entry"))
    monkeypatch.setenv("NVFP4CTL_MEMORY", spelling)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(cache))
    monkeypatch.chdir(project)
    result = separate_streams_runner().invoke(app, ["lint", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert result.stderr == "", result.stderr
    assert looked_up == [] and not cache.exists(), sorted(cache.rglob("*"))
    runlog.append(_entry("gone"), Path(spelling))  # the append alone takes no lock for it either
    assert not cache.exists(), sorted(cache.rglob("*"))


@pytest.mark.parametrize("args", [["lint", "clean.py"], ["log"], ["log", "--trend"]])
def test_a_run_log_setting_naming_a_folder_is_refused_before_anything_runs(args, tmp_path, monkeypatch):
    """NVFP4CTL_MEMORY=/some/folder: lint ran and warned "run log not written ... Is a directory", exit 0, and
    `log` said "cannot read the run log": refused as a submission.py is, exit 2 and nothing run."""
    (tmp_path / "clean.py").write_text("x = 1\n")
    folder = tmp_path / "MEMORY.md"
    folder.mkdir()
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(folder))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()) == (
        f"error: NVFP4CTL_MEMORY={folder}: a folder, not a run log file; nothing was run: point NVFP4CTL_MEMORY"
        " at a Markdown file (MEMORY.md, say), or unset it")
    assert list(folder.iterdir()) == []


def test_a_run_log_whose_folder_is_missing_makes_it_unless_a_setting_names_it(tmp_path):
    made = tmp_path / "made" / "deeper" / "MEMORY.md"
    runlog.append(_entry("kept"), made)  # nvfp4ctl's own choice (the cache folder's MEMORY.md, say)
    assert [e.result for e in runlog.read(made)] == ["kept"]
    named = tmp_path / "nonexist" / "dir" / "MEMORY.md"
    with pytest.raises(FileNotFoundError) as raised:
        runlog.refuse_a_missing_folder(named)
    assert raised.value.strerror == f"there is no folder {tmp_path / 'nonexist'}; make it first"
    runlog.refuse_a_missing_folder(made)  # all there
    submission = tmp_path / "submission.py"
    submission.write_text(CODE)
    runlog.refuse_a_missing_folder(submission / "a" / "MEMORY.md")  # the append names the file in the way


def test_a_command_whose_run_log_setting_names_a_missing_folder_warns_and_keeps_its_result(tmp_path, monkeypatch):
    """NVFP4CTL_MEMORY=/nonexist/dir/M.md silently made /nonexist/dir/."""
    (tmp_path / "clean.py").write_text("x = 1\n")
    memory = tmp_path / "nonexist" / "dir" / "M.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint", "clean.py"])
    assert result.exit_code == 0, result.output  # lint's own result
    assert (f"warning: run log not written to {memory} (NVFP4CTL_MEMORY): there is no folder {tmp_path / 'nonexist'};"
            " make it first") in " ".join(result.output.split())
    assert not (tmp_path / "nonexist").exists()


@pytest.mark.parametrize("args", [["log"], ["log", "--trend"], ["-q", "log"]])
def test_log_says_the_folder_its_run_log_setting_names_does_not_exist(args, tmp_path, monkeypatch):
    """`log` said "no runs logged yet in /nonexist/dir/M.md", as if the folder were there and empty: a typo
    in the setting read as a project never run. Exit 0, as for a run log not written yet."""
    memory = tmp_path / "nonexist" / "dir" / "M.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert " ".join(result.output.split()) == (f"no run log at {memory} (NVFP4CTL_MEMORY): there is no folder"
                                               f" {tmp_path / 'nonexist'}")
    assert not (tmp_path / "nonexist").exists()


def test_missing_folder_is_the_first_from_the_top(tmp_path):
    assert runlog.missing_folder(tmp_path / "a" / "b" / "MEMORY.md") == tmp_path / "a"
    assert runlog.missing_folder(tmp_path / "MEMORY.md") is None
    (tmp_path / "file").write_text("")
    assert runlog.missing_folder(tmp_path / "file" / "a" / "MEMORY.md") is None  # file_in_the_way names it


@pytest.mark.parametrize("command, name", [
    ("nvfp4ctl bench --json", "bench"),
    ("nvfp4ctl -q bench", "bench"),
    ("nvfp4ctl --task log bench", "bench"),  # log is --task's value
    ("nvfp4ctl --task=log bench", "bench"),
    ("nvfp4ctl --only 3 --timeout 5 check", "check"),
    ("nvfp4ctl --shape 128,128,256 dump --umma", "dump"),
    ("nvfp4ctl --nosuch x bench", "bench"),  # an unknown option's word that names no command is its value
    ("nvfp4ctl --nosuch log bench", "log"),  # one that names a command is the command, as the CLI reads it
    ("nvfp4ctl -q", ""),
    ("nvfp4ctl -- bench --only 1", "bench"),  # click runs bench: its times belong to bench's history
    ("nvfp4ctl -q --", ""),
])
def test_a_lines_command_is_where_the_cli_reads_it(command, name):
    """The first word without a dash was taken: `nvfp4ctl --task log bench` read back as log."""
    assert runlog.command_name(command) == name
    assert _entry("r", command=command).subcommand == name


def test_a_rejected_line_the_cli_logs_for_a_command_reads_back_as_that_command(tmp_path, monkeypatch):
    args = ["--task", "log", "bench", "--json"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *args])
    result = CliRunner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    entry = runlog.read(memory_path())[-1]
    assert entry.command == "nvfp4ctl --task log bench --json" and entry.subcommand == "bench"


def test_entry_line_round_trip():
    entry = _entry("9/10 pass, 1 fail (test 3)", command="nvfp4ctl check --only 3")
    line = entry.to_line()
    assert line.startswith("- 2026-11-25T10:00:00Z · `nvfp4ctl check --only 3` · sub.py@abc")
    assert runlog.RunEntry.from_line(line) == entry


def test_make_entry_hashes_the_target(tmp_path):
    target = tmp_path / "submission.py"
    target.write_text("def custom_kernel(data): ...\n")
    entry = runlog.make_entry(Outcome("10/10 pass", ExitCode.OK, target, "NVIDIA H100 (sm_90)"), ["check"], tmp_path)
    assert entry.target == f"submission.py@{runlog.file_digest(target)}"  # relative to the project root
    assert entry.command == "nvfp4ctl check" and entry.exit_code == "0" and entry.gpu == "NVIDIA H100 (sm_90)"


def _committed_repo(root: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                              capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    (root / "MEMORY.md").write_text("# notes\n")
    (root / "kernel.cu").write_text("// k\n")
    git("add", "."), git("commit", "-qm", "start")
    return git("rev-parse", "--short", "HEAD")


def test_the_run_logs_own_lines_do_not_make_the_tree_dirty(tmp_path):
    commit = _committed_repo(tmp_path)
    (tmp_path / "sub").mkdir()
    memory = tmp_path / "MEMORY.md"
    outcome = Outcome("10/10 pass", ExitCode.OK, None, "NVIDIA H100 (sm_90)")
    runlog.append(runlog.make_entry(outcome, ["check"], tmp_path, memory), memory)
    for cwd in (tmp_path, tmp_path / "sub"):  # a tracked MEMORY.md the last command appended to
        assert runlog.make_entry(outcome, ["check"], cwd, memory).commit == commit
    assert runlog.make_entry(outcome, ["check"], tmp_path).commit == commit  # no log named: MEMORY.md is none
    (tmp_path / "kernel.cu").write_text("// changed\n")
    assert runlog.make_entry(outcome, ["check"], tmp_path, memory).commit == f"{commit}+dirty"
    elsewhere = tmp_path.parent / f"{tmp_path.name}-log" / "MEMORY.md"  # a log outside the tree changes nothing
    assert runlog.make_entry(outcome, ["check"], tmp_path, elsewhere).commit == f"{commit}+dirty"
    (tmp_path / "kernel.cu").write_text("// k\n")
    assert runlog.git_state(tmp_path / "sub", memory) == commit


def test_another_folders_run_log_does_not_make_the_tree_dirty(tmp_path):
    """git_state left out only the log being written: once gemm/MEMORY.md had a new line, every run of
    another folder (dual/, its own log) recorded the commit as "+dirty"."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path,
                              check=True, capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    for folder in ("gemm", "dual"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "MEMORY.md").write_text("# notes\n")
        (tmp_path / folder / "submission.py").write_text("# s\n")
    git("add", "."), git("commit", "-qm", "start")
    commit = git("rev-parse", "--short", "HEAD")
    outcome = Outcome("clean", ExitCode.OK, None, "no GPU")
    runlog.append(runlog.make_entry(outcome, ["lint"], tmp_path / "gemm", tmp_path / "gemm" / "MEMORY.md"),
                  tmp_path / "gemm" / "MEMORY.md")
    dual_log = tmp_path / "dual" / "MEMORY.md"
    assert runlog.make_entry(outcome, ["lint"], tmp_path / "dual", dual_log).commit == commit
    assert runlog.git_state(tmp_path, tmp_path / "runs.md") == commit  # a log of another name: still none
    (tmp_path / "runs.md").write_text("x\n"), git("add", "runs.md"), git("commit", "-qm", "runs")
    commit = git("rev-parse", "--short", "HEAD")
    (tmp_path / "runs.md").write_text("x\n- a run\n")
    assert runlog.git_state(tmp_path / "dual", tmp_path / "runs.md") == commit  # the log named, of any name
    assert runlog.git_state(tmp_path / "dual", dual_log) == f"{commit}+dirty"  # runs.md is no run log here
    (tmp_path / "dual" / "submission.py").write_text("# changed\n")
    assert runlog.git_state(tmp_path / "gemm", tmp_path / "runs.md") == f"{commit}+dirty"  # code still counts


def test_targets_outside_the_project_are_logged_by_absolute_path(tmp_path):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir(), elsewhere.mkdir()
    inside, outside = project / "kernels" / "k.cu", elsewhere / "k.cu"
    inside.parent.mkdir()
    inside.write_text("a"), outside.write_text("b")
    assert runlog.describe_target(inside, project) == f"kernels/k.cu@{runlog.file_digest(inside)}"
    assert runlog.describe_target(outside, project) == f"{outside.resolve()}@{runlog.file_digest(outside)}"
    assert runlog.describe_target(None, project) == "-"
    assert runlog.describe_target(inside.parent, project) == "kernels"  # a folder: no hash


def test_log_command_shows_the_last_n(tmp_path, monkeypatch):
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "200")
    for i in range(5):
        runlog.append(_entry(f"result-{i}"), memory)
    result = CliRunner().invoke(app, ["log", "-n", "2"])
    assert result.exit_code == 0, result.output
    assert "2 most recent runs" in result.output
    assert "result-3" in result.output and "result-4" in result.output
    assert "result-2" not in result.output
    assert len(runlog.read(memory)) == 5  # `log` itself is not logged
    assert "1 most recent run (" in CliRunner().invoke(app, ["log", "-n", "1"]).output


def test_log_command_errors_and_empty_log(tmp_path, monkeypatch):
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    empty = CliRunner().invoke(app, ["log"])
    assert empty.exit_code == 0 and "no runs logged yet" in empty.output
    bad = CliRunner().invoke(app, ["log", "-n", "0"])
    assert bad.exit_code == 2 and "-n: 0 is not an integer ≥ 1" in bad.output


@pytest.mark.parametrize("quiet", [["-q", "log"], ["log", "-q"], ["log", "--quiet"]])
def test_log_under_quiet_still_shows_the_entries(tmp_path, monkeypatch, quiet):
    """-q means fewer words around the results, and the entries are log's result: it printed nothing."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "200")
    assert "no runs logged yet" in CliRunner().invoke(app, quiet).output
    runlog.append(_entry("result-0"), memory)
    result = CliRunner().invoke(app, quiet)
    assert result.exit_code == 0 and "1 most recent run (" in result.output and "result-0" in result.output


def test_the_problem_is_a_last_cell_and_older_lines_still_parse() -> None:
    entry = runlog.RunEntry("2026-11-26T09:00:00Z", "nvfp4ctl check", "-", "abc", "no GPU", "0", "1/1 pass",
                            "nvfp4_dual_gemm")
    line = entry.to_line()
    assert line.rstrip().endswith(" · 1/1 pass · nvfp4_dual_gemm")
    assert runlog.RunEntry.from_line(line) == entry
    older = line.replace(" · nvfp4_dual_gemm", "")
    assert runlog.RunEntry.from_line(older).problem == ""


def test_a_kernel_hash_changes_with_its_local_headers(tmp_path: Path) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text('#include "k_table.cuh"\n__global__ void k() {}\n')
    table = tmp_path / "k_table.cuh"
    table.write_text("// entries\n")
    before = runlog.file_digest(kernel)
    table.write_text("// entries\n{128, 256, 256, 1, 4},\n")  # what a tune writes
    assert runlog.file_digest(kernel) != before
    submission = tmp_path / "submission.py"
    submission.write_text("x = 1\n")
    assert runlog.file_digest(submission) == hashlib.sha256(b"x = 1\n").hexdigest()[:12]


def test_log_of_a_run_log_path_that_is_a_folder_is_one_line_exit_2(tmp_path, monkeypatch):
    """Where nvfp4ctl's own choice (MEMORY.md beside the task.yml) is a folder: no setting to refuse."""
    import nvfp4ctl.commands.log

    memory = tmp_path / "MEMORY.md"
    memory.mkdir()
    monkeypatch.delenv("NVFP4CTL_MEMORY", raising=False)
    monkeypatch.setattr(nvfp4ctl.commands.log, "memory_path", lambda: memory)
    for args in (["log"], ["log", "--trend"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and result.output == f"error: cannot read the run log {memory}: Is a directory\n"



@pytest.mark.parametrize("args", [["log"], ["log", "--trend"], ["log", "-n", "1"]])
def test_log_of_a_run_log_that_is_a_link_in_a_loop_says_so_exit_2(args, tmp_path, monkeypatch):
    """A link in a loop read as a file not there yet: "no runs logged yet", exit 0, where lint warned of the loop."""
    memory, other = tmp_path / "A.md", tmp_path / "B.md"
    memory.symlink_to(other)
    other.symlink_to(memory)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.output == f"error: cannot read the run log {memory}: {os.strerror(errno.ELOOP)}\n"

def test_log_shows_an_unresolved_target_as_logged(tmp_path, monkeypatch):
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "200")
    runlog.append(runlog.RunEntry("2026-11-27T07:00:00Z", "nvfp4ctl check", "-", "abc", "no GPU", "2", "error: x"),
                  memory)
    result = CliRunner().invoke(app, ["log"])
    assert result.exit_code == 0 and "@-" not in result.output


def test_line_breaks_of_every_kind_in_a_cell_keep_the_entry_on_one_line(tmp_path):
    memory = tmp_path / "MEMORY.md"
    odd = runlog.RunEntry("2026-11-27T10:00:00Z", "nvfp4ctl lint 'foo\r\nbar.py' \x0b\u2028x", "-", "abc1234", "no GPU",
                          "2", "error: foo\rbar.py: no such file")
    assert odd.to_line().count("\n") == 1 and len(odd.to_line().splitlines()) == 1
    runlog.append(odd, memory)
    (entry,) = runlog.read(memory, 5)
    assert entry.command == "nvfp4ctl lint 'foo bar.py'   x" and entry.result == "error: foo bar.py: no such file"


def _append_many(cache: str, memory: str, tag: str) -> None:
    import os

    os.environ["NVFP4CTL_CACHE"] = cache  # the lock folder follows it
    for i in range(25):
        runlog.append(_entry(f"{tag}-{i}" + " padding" * 300), Path(memory))


def test_writers_with_different_cache_folders_still_write_every_line(tmp_path):
    """Two shells, one with NVFP4CTL_CACHE set and one without (an editor's lint hook beside a bench):
    their locks live in different folders, but they append to the same MEMORY.md. No line may be lost."""
    memory = tmp_path / "MEMORY.md"
    memory.write_text(NOTES)
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_append_many, args=(str(tmp_path / f"cache{i}"), str(memory), f"w{i}"))
               for i in range(3)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
    assert all(writer.exitcode == 0 for writer in writers)
    assert sorted(e.result.split(" ")[0] for e in runlog.read(memory)) == sorted(
        f"w{i}-{j}" for i in range(3) for j in range(25))
    assert memory.read_bytes().startswith(NOTES.encode())


def test_a_cpu_run_is_logged_as_cpu_not_as_the_machines_gpu(monkeypatch):
    """NVFP4CTL_DEVICE=cpu on a GPU host: bench's CPU times must not be filed under the GPU's name,
    where the next GPU bench would compare itself with them."""
    monkeypatch.setattr(runlog.entry, "first_gpu", lambda: GpuInfo("NVIDIA H100 80GB HBM3", "9.0"))
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    assert runlog.detect_gpu() == runlog.CPU_DEVICE_LABEL
    monkeypatch.delenv("NVFP4CTL_DEVICE")
    assert runlog.detect_gpu() == "NVIDIA H100 80GB HBM3 (sm_90)"


def test_commands_that_run_nothing_on_a_device_log_the_machines_gpu_under_a_cpu_setting(tmp_path, monkeypatch):
    """NVFP4CTL_DEVICE picks where check, bench and tune run; lint, build, dump and export run nothing
    there, and their lines said `cpu (NVFP4CTL_DEVICE=cpu)`, a device they never used."""
    pytest.importorskip("torch", reason="dump and export import torch (the oldest Python's floor check has none)")
    h100 = "NVIDIA H100 80GB HBM3 (sm_90)"
    monkeypatch.setattr(runlog.entry, "first_gpu", lambda: GpuInfo("NVIDIA H100 80GB HBM3", "9.0"))
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text("def custom_kernel(data):\n    return data[-1]\n", encoding="utf-8")
    for args in (["lint", "submission.py"], ["build", "submission.py"], ["dump", "--umma", "--mma", "128,128,64"],
                 ["export", "--kernel", "default", "-o", str(tmp_path / "out.py")]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert runlog.read(memory_path())[-1].gpu == h100, args
    assert runlog.detect_gpu(runs_on_device=False) == h100
    assert runlog.detect_gpu(runs_on_device=True) == runlog.CPU_DEVICE_LABEL
    result = CliRunner().invoke(app, ["check", "--only", "0"])  # check's own line keeps the device it would run on
    assert result.exit_code == 2 and runlog.read(memory_path())[-1].gpu == runlog.CPU_DEVICE_LABEL


def _finished_within(seconds: float, function, *args) -> list:
    """`function(*args)`'s result in a one-item list, or [] when it had not returned after `seconds`
    (a thread left blocked on a pipe is a daemon: it does not hold up the test run)."""
    results: list = []
    worker = threading.Thread(target=lambda: results.append(function(*args)), daemon=True)
    worker.start()
    worker.join(seconds)
    return results


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_takes_the_line_and_is_never_read(tmp_path):
    """NVFP4CTL_MEMORY=/dev/stderr sent down a pipe, or a FIFO: reading it first waited for its writers,
    this process among them, so the command never ended; `log` of one waited the same way."""
    pipe = tmp_path / "MEMORY.md"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)  # the far end
    reader.start()
    assert _finished_within(10, runlog.append, _entry("through the pipe"), pipe) == [None]
    # the append has closed the only writer, so the reader is at EOF: wait for it to return, not for a
    # fixed time (0.2 s was too short once on a loaded machine); the bound only keeps a hang from blocking
    reader.join(60)
    assert not reader.is_alive(), "the reader never saw the writer close the pipe"
    assert b"through the pipe" in received[0]
    assert _finished_within(10, runlog.read, pipe) == [[]]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_no_process_reads_is_said_not_lost(tmp_path, monkeypatch):
    """The flock on the run log opened the FIFO for reading and writing, so this process was its reader: the line
    went into a pipe no one read, the command warned of nothing, and the entry was lost. A plain open for writing
    would have waited for a reader for ever."""
    from nvfp4ctl import atomic_file

    monkeypatch.setattr(atomic_file, "FIFO_READER_WAIT_S", 0.2)
    pipe = tmp_path / "MEMORY.md"
    os.mkfifo(pipe)
    [raised] = _finished_within(20, _raised, runlog.append, _entry("into no reader"), pipe)
    assert isinstance(raised, OSError) and raised.errno == errno.ENXIO, raised
    project = tmp_path / "project"
    project.mkdir()
    (project / "submission.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(pipe))
    [result] = _finished_within(20, separate_streams_runner().invoke, app, ["lint"])
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == f"warning: run log not written to {pipe} (NVFP4CTL_MEMORY): a FIFO that no process reads"


@pytest.fixture
def socket_path() -> Iterator[Path]:
    """A bound Unix socket's path, in a short folder of /tmp: AF_UNIX takes paths of about 100 bytes only."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    path = folder / "log.md"
    try:
        with socket.socket(socket.AF_UNIX) as bound:
            bound.bind(str(path))
            yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets are POSIX")
@pytest.mark.parametrize("args", [["log"], ["log", "--trend"], ["log", "-n", "1"]])
def test_log_of_a_run_log_that_is_a_socket_says_it_is_no_regular_file_exit_2(args, socket_path, monkeypatch):
    """A socket was read as holding no lines, as a FIFO is: "no runs logged yet", exit 0, where no line can be
    read from it, nor written."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(socket_path))
    monkeypatch.chdir(socket_path.parent)
    result = separate_streams_runner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == (f"error: cannot read the run log {socket_path} (NVFP4CTL_MEMORY): not a regular file"
                             " but a socket, which cannot be opened as a file\n")


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets are POSIX")
@pytest.mark.parametrize(("source", "exit_code"), [("def custom_kernel(data):\n    return data[6]\n", 0),
                                                   ("import torch\ng = torch.cuda.CUDAGraph()\n", 1)],
                         ids=["clean", "failures found"])
def test_a_run_log_that_is_a_socket_costs_the_line_with_one_warning_not_the_result(source, exit_code, socket_path,
                                                                                   monkeypatch):
    """As for a FIFO no process reads: the command does its work and keeps its exit code, and says once that
    its line was not written."""
    (socket_path.parent / "submission.py").write_text(source)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(socket_path))
    monkeypatch.chdir(socket_path.parent)
    [result] = _finished_within(20, separate_streams_runner().invoke, app, ["lint"])
    assert result.exit_code == exit_code, result.output
    assert result.stderr.count("warning: run log not written") == 1, result.stderr
    assert result.stderr.strip().endswith(f"warning: run log not written to {socket_path} (NVFP4CTL_MEMORY): a socket,"
                                          " which cannot be opened as a file")


def _raised(function, *args) -> BaseException | None:
    try:
        function(*args)
    except BaseException as error:  # noqa: BLE001 - what it raised is the result
        return error
    return None


def test_a_byte_of_an_argument_that_is_not_utf8_is_logged_escaped(tmp_path, monkeypatch):
    """Python holds such a byte as a lone surrogate (\\udcff), which UTF-8 cannot encode: the line was dropped with
    `run log not written: 'utf-8' codec can't encode character '\\udcff' ... surrogates not allowed`."""
    line = _entry("error: no such file or folder: x\udcff.py", "nvfp4ctl lint 'x\udcff.py'").to_line()
    assert line.encode("utf-8") and "lint 'x\\xff.py'" in line and "folder: x\\xff.py" in line
    assert "\\ud800" in _entry("odd \ud800").to_line()  # a surrogate no byte decodes to, written as its code
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    named = tmp_path / "x\udcff.py"
    named.write_text("def custom_kernel(data):\n    return data[6]\n")
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", "lint", "x\udcff.py"])  # what the log takes the command from
    result = separate_streams_runner().invoke(app, ["lint", "x\udcff.py"])
    assert result.exit_code == 0 and "run log not written" not in result.stderr, result.stderr
    [entry] = runlog.read(tmp_path / "MEMORY.md")
    assert entry.command == "nvfp4ctl lint 'x\\xff.py'" and entry.target.startswith("./x\\xff.py@"), entry


def test_a_run_log_whose_name_is_not_utf8_takes_the_line(tmp_path, monkeypatch):
    """NVFP4CTL_MEMORY=mem\\xff.md: its lock's name hashed the path's text, which UTF-8 cannot encode (a lone
    surrogate), and every command warned `run log not written: 'utf-8' codec can't encode character '\\udcff'`."""
    monkeypatch.chdir(tmp_path)
    memory = tmp_path / "mem\udcff.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", "lint", "a.py"])
    result = separate_streams_runner().invoke(app, ["lint", "a.py"])
    assert result.exit_code == 0 and "run log not written" not in result.stderr, result.stderr
    assert [entry.command for entry in runlog.read(memory)] == ["nvfp4ctl lint a.py"]
    assert runlog.lock_path(memory) != runlog.lock_path(tmp_path / "mem\udcfe.md")  # each file its own lock


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd (Linux)")
def test_a_link_to_a_pipe_like_dev_stderr_takes_the_line(tmp_path):
    """/dev/stderr links to /proc/self/fd/2; sent down a pipe, that resolves to "pipe:[N]", a name no
    folder holds: the line was staged there and lost ("No such file or directory")."""
    read_end, write_end = os.pipe()
    link = tmp_path / "stderr"
    link.symlink_to(f"/proc/self/fd/{write_end}")
    try:
        runlog.append(_entry("down the pipe"), link)
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        assert b"down the pipe" in pipe.read()


def test_a_heading_after_a_byte_order_mark_is_the_run_log_section(tmp_path):
    """A MEMORY.md that is only the run log, saved as UTF-8 with BOM: the heading was not recognised, a
    second section was appended, and `log` read only the runs below it."""
    memory = tmp_path / "MEMORY.md"
    before = ("\ufeff" + runlog.HEADING + "\n\n" + _entry("before the editor").to_line()).encode()
    memory.write_bytes(before)
    runlog.append(_entry("after the editor"), memory)
    data = memory.read_bytes()
    assert data.startswith(before) and data.count(runlog.HEADING.encode()) == 1
    assert [e.result for e in runlog.read(memory)] == ["before the editor", "after the editor"]


@pytest.mark.parametrize("notes", ["# notes\r\nlast line\r\n", "# notes\r\nno final line break"],
                         ids=["final-crlf", "no-final-break"])
def test_a_file_with_windows_line_breaks_keeps_them(tmp_path, notes):
    memory = tmp_path / "MEMORY.md"
    memory.write_bytes(notes.encode())
    runlog.append(_entry("first"), memory)
    runlog.append(_entry("second"), memory)
    data = memory.read_bytes()
    assert data.startswith(notes.encode())
    assert data.count(b"\n") == data.count(b"\r\n")  # no bare \n: every line ends as the user's do
    assert [e.result for e in runlog.read(memory)] == ["first", "second"]



@pytest.mark.parametrize("notes", ["# notes\rlast line\r", "# notes\rno final line break",
                                   "## Run log\r\r- a note\r\r## Ideas\r\rx\r"],
                         ids=["final-cr", "no-final-break", "section-below"])
def test_a_file_with_old_mac_line_breaks_keeps_them(tmp_path, notes):
    """A file whose lines end in a lone \\r (an old Mac editor's) got \\n lines appended: mixed endings."""
    memory = tmp_path / "MEMORY.md"
    memory.write_bytes(notes.encode())
    runlog.append(_entry("first"), memory)
    runlog.append(_entry("second"), memory)
    data = memory.read_bytes()
    assert b"\n" not in data, data
    assert data.startswith(notes.encode().split(b"## Ideas")[0].rstrip(b"\r"))
    assert data.endswith(b"## Ideas\r\rx\r") == notes.endswith("## Ideas\r\rx\r")
    assert [e.result for e in runlog.read(memory)] == ["first", "second"]
    assert [e.result for e in runlog.read(memory, 1)] == ["second"]


def test_notes_below_the_run_log_under_a_heading_of_their_own_stay_below_it(tmp_path):
    """A user's "## Ideas" after the run log: every later run landed under it, inside their notes."""
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    below = b"\n## Ideas\n\n- try 2-CTA\n```sh\n# not a heading\n```\n"
    memory.write_bytes(memory.read_bytes() + below)
    runlog.append(_entry("second"), memory)
    data = memory.read_bytes()
    assert data.endswith(below)
    assert data[: -len(below)].endswith(_entry("second").to_line().encode())
    assert [e.result for e in runlog.read(memory)] == ["first", "second"]


@pytest.mark.parametrize("heading", ["## Run Log", "## run log", "## RUN LOG", "## Run log (nvfp4ctl)",
                                     "## Run log: B200 box", "## Run log ##", "Run log\n-------",
                                     "Run Log (B200 box)\n-", "  run log:  B200\n  ---  "])
def test_a_run_log_heading_spelled_another_way_is_the_section(tmp_path, heading):
    """A heading typed by hand (`## Run Log`, `## Run log (nvfp4ctl)`, the same h2 underlined: `Run log` over
    `-------`) was not recognised: a second section was appended and `log` read only the runs below it."""
    memory = tmp_path / "MEMORY.md"
    before = f"# notes\n\n{heading}\n\n{_entry('typed by hand').to_line()}".encode()
    memory.write_bytes(before)
    runlog.append(_entry("appended"), memory)
    data = memory.read_bytes()
    assert data == before + _entry("appended").to_line().encode()
    assert [e.result for e in runlog.read(memory)] == ["typed by hand", "appended"]
    assert [e.result for e in runlog.read(memory, 1)] == ["appended"]


@pytest.mark.parametrize("heading", ["## Run logs", "## Run log ideas", "## Running log", "### Run log",
                                     "# Run log", "## Run log-book", "## Not the run log", "Run log\n=======",
                                     "Run logs\n--------", "my notes\nRun log\n-------", "    Run log\n-------"])
def test_a_heading_of_the_users_that_only_resembles_the_run_log_is_not_taken_for_it(tmp_path, heading):
    memory = tmp_path / "MEMORY.md"
    before = f"{heading}\n\n{_entry('not a run').to_line()}".encode()
    memory.write_bytes(before)
    runlog.append(_entry("appended"), memory)
    data = memory.read_bytes()
    assert data.startswith(before) and data.decode().splitlines().count(runlog.HEADING) == 1
    assert [e.result for e in runlog.read(memory)] == ["appended"]



def test_an_underlined_run_log_heading_again_below_the_first_keeps_the_log_going(tmp_path, monkeypatch):
    """As a second `## Run log` does: `Run log` over `---` below the log is no section of the user's."""
    memory = tmp_path / "MEMORY.md"
    before = f"Run log\n-------\n\n{_entry('one').to_line()}\nRun log\n---\n\n{_entry('two').to_line()}"
    memory.write_text(before)
    runlog.append(_entry("three"), memory)
    assert memory.read_text() == before + _entry("three").to_line()
    assert [e.result for e in runlog.read(memory)] == ["one", "two", "three"]
    assert runlog.runs_below_the_log(memory) is None

def test_a_run_log_path_under_a_file_says_that_file_is_not_a_folder(tmp_path, monkeypatch):
    """NVFP4CTL_MEMORY=submission.py/MEMORY.md: the append warned "File exists (…/submission.py)" and `log`
    said "no runs logged yet", as if a run log could ever be there."""
    submission = tmp_path / "submission.py"
    submission.write_text(CODE)
    memory = submission / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    with pytest.raises(NotADirectoryError) as raised:
        runlog.append(_entry("lost"), memory)
    assert raised.value.strerror == f"{submission} is not a folder"
    assert runlog.file_in_the_way(memory) == submission
    assert runlog.file_in_the_way(tmp_path / "new" / "MEMORY.md") is None  # made by the append
    for args in (["log"], ["log", "--trend"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2
        assert result.output == f"error: {memory} cannot hold a run log: {submission} is not a folder\n"
    assert submission.read_text() == CODE


def test_a_command_with_its_run_log_under_a_file_warns_that_the_file_is_not_a_folder(tmp_path, monkeypatch):
    submission = tmp_path / "submission.py"
    submission.write_text(CODE)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(submission / "MEMORY.md"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint", "submission.py"])
    assert result.exit_code == 0  # lint's own result
    assert (f"warning: run log not written to {submission / 'MEMORY.md'} (NVFP4CTL_MEMORY): {submission} is not"
            " a folder\n") in result.output


@pytest.mark.parametrize("command, exit_code", [(["lint", "submission.py"], 0), (["lint", "missing.py"], 2)])
def test_a_read_only_memory_md_is_left_alone_with_one_warning(tmp_path, monkeypatch, command, exit_code):
    """A MEMORY.md made read-only to stop the logging was replaced anyway (the replace needs only the
    folder's permission) and kept its 0444. Decided by the mode bits: tests run as root here, who may
    open any file for writing."""
    (tmp_path / "submission.py").write_text(CODE)
    memory = tmp_path / "MEMORY.md"
    memory.write_text(NOTES)
    runlog.append(_entry("before"), memory)
    before, inode = memory.read_bytes(), memory.stat().st_ino
    memory.chmod(0o444)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(runlog.ReadOnlyRunLog, match="MEMORY.md is read-only$"):
        runlog.append(_entry("lost"), memory)
    result = CliRunner().invoke(app, command)
    assert result.exit_code == exit_code  # lint's own result, and nothing else
    assert result.output.count("run log not written") == 1
    assert f"warning: run log not written: {memory} is read-only\n" in result.output
    assert memory.read_bytes() == before and memory.stat().st_ino == inode
    assert stat.S_IMODE(memory.stat().st_mode) == 0o444
    memory.chmod(0o644)  # writable again: logging resumes
    runlog.append(_entry("after"), memory)
    assert [e.result for e in runlog.read(memory)] == ["before", "after"]


def _odd_log(seed: int) -> bytes:
    """A run log with what a hand-edited, long-lived MEMORY.md may hold: several headings, CRLF, a BOM,
    bytes that are not UTF-8, characters of several bytes, every kind of line break, long lines."""
    import random

    chooser = random.Random(seed)
    pieces = [b"\xef\xbb\xbf" if chooser.random() < 0.3 else b""]
    for i in range(chooser.randrange(0, 60)):
        pieces.append(chooser.choice([
            _entry(f"run {i} ✓ café").to_line().encode(),
            _entry(f"run {i}").to_line().replace("\n", "\r\n").encode(),
            runlog.HEADING.encode() + b"\n", b"## Run Log (box)\r\n", b"## Ideas\n", b"\n", b"notes \xff\xfe\n",
            b"- not \xe2\x9c an entry\r", "- a \u2028 b · c\x85\n".encode(), b"x" * 300 + b"\n",
            _entry("no final break").to_line().rstrip("\n").encode(),
        ]))
    return b"".join(pieces)


@pytest.mark.parametrize("seed", range(40))
def test_the_last_n_read_from_the_end_are_the_last_n_of_the_whole_log(tmp_path, monkeypatch, seed):
    memory = tmp_path / "MEMORY.md"
    memory.write_bytes(_odd_log(seed))
    every = runlog.read(memory)
    for block in (1, 2, 3, 7, 64, 1 << 16):  # pieces that end inside a character, a \r\n, a long line
        monkeypatch.setattr(runlog.reading, "_BLOCK_BYTES", block)
        for count in (1, 2, 3, 5, 100):
            assert runlog.read(memory, count) == every[-count:]


def test_log_n_reads_only_the_end_of_a_large_log(tmp_path, monkeypatch):
    """`log -n 2` parsed every line of the log, then kept the last two: ~8 s on a 47 MB log. Reading
    from the end, it needs the last lines and the heading near the top, whatever the log's size."""
    memory = tmp_path / "MEMORY.md"
    line = runlog.RunEntry("2026-11-25T10:00:00Z", "nvfp4ctl check", "submission.py@0123456789ab", "1234567",
                           "no GPU", "0", "10/10 pass").to_line()
    memory.write_text("# notes\n\n" + runlog.HEADING + "\n\n" + line * 300_000
                      + _entry("one before last").to_line() + _entry("last").to_line())
    small = tmp_path / "small.md"
    runlog.append(_entry("warm-up"), small)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(small))
    assert CliRunner().invoke(app, ["log", "-n", "2"]).exit_code == 0  # the imports and the table's first drawing
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    started = time.process_time()
    result = CliRunner().invoke(app, ["log", "-n", "2"])
    spent = time.process_time() - started
    assert result.exit_code == 0 and "2 most recent runs" in result.output
    assert "one before last │" in result.output and " last │" in result.output and "10/10 pass" not in result.output
    # parsing all 300,000 lines (32 MB) took 3 s of CPU here; the end alone takes milliseconds
    assert spent < 0.5, f"log -n 2 took {spent:.2f} s of CPU on a {memory.stat().st_size >> 20} MB log"


@pytest.mark.parametrize("comment", ["## Run Log", "## run log: see MEMORY.md", "## Run log (nvfp4ctl)"])
def test_a_python_comment_like_a_run_log_heading_does_not_make_the_file_one(tmp_path, comment):
    """Hand-typed heading variants count in a Markdown file; in submission.py such a comment must not open
    it to Markdown lines (NVFP4CTL_MEMORY=submission.py)."""
    foreign = tmp_path / "submission.py"
    foreign.write_text(f"{comment}\n{CODE}")
    with pytest.raises(UsageError, match="not a run log"):
        runlog.append(_entry("lost"), foreign)
    assert foreign.read_text() == f"{comment}\n{CODE}"


def test_log_n_on_a_log_with_one_very_long_line_reads_it_once(tmp_path, monkeypatch):
    """A long line (a note with an inline image) below the runs: each block read back was joined to all
    the later ones again, which grew with the square of the line's length (8 MB in 4 KB blocks: 1.3 s of
    CPU that way, 0.03 s joined once)."""
    monkeypatch.setattr(runlog.reading, "_BLOCK_BYTES", 1 << 12)
    memory = tmp_path / "MEMORY.md"
    memory.write_text(runlog.HEADING + "\n\n" + _entry("first").to_line() + _entry("second").to_line()
                      + "![plot](data:image/png;base64," + "A" * (8 << 20) + ")\n")
    started = time.process_time()
    entries = runlog.read(memory, last=2)
    spent = time.process_time() - started
    assert [e.result for e in entries] == ["first", "second"]
    assert spent < 0.5, f"read the last 2 entries in {spent:.2f} s of CPU"


def test_a_read_only_run_log_costs_no_entry(tmp_path, monkeypatch):
    """Logging switched off with chmod a-w: the entry (two git calls, a GPU lookup) is not even made."""
    import os
    import stat

    memory = tmp_path / "MEMORY.md"
    memory.write_text(runlog.HEADING + "\n\n")
    os.chmod(memory, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    (tmp_path / "clean.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))

    def no_entry(*args, **kwargs):
        raise AssertionError("make_entry ran for a read-only run log")

    monkeypatch.setattr(runlog, "make_entry", no_entry)
    result = CliRunner().invoke(app, ["lint", "clean.py"])
    assert result.exit_code == 0, result.output
    assert "is read-only" in result.output and "make_entry ran" not in result.output


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_a_memory_md_saved_as_utf16_or_utf32_stays_so_and_is_read(tmp_path, monkeypatch, codec):
    """A MEMORY.md saved as "Unicode" (Windows Notepad: UTF-16 LE with a byte order mark, CRLF) got
    a UTF-8 section appended (a file of two encodings, the run log unreadable to the editor) and `log`
    found nothing in it: its lines are written back in the file's own encoding, its mark and notes kept."""
    import codecs

    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE,
           "utf-32-le": codecs.BOM_UTF32_LE, "utf-32-be": codecs.BOM_UTF32_BE}[codec]
    memory = tmp_path / "MEMORY.md"
    notes = "# Notes\r\n\r\n- café ✓ 𝄞\r\n"
    memory.write_bytes(bom + notes.encode(codec))
    runlog.append(_entry("first"), memory)
    runlog.append(_entry("second · ✓"), memory)
    data = memory.read_bytes()
    assert data.startswith(bom)
    text = data[len(bom):].decode(codec)  # strict: the whole file is one encoding
    assert text.startswith(notes) and text.count(runlog.HEADING) == 1 and "\n" not in text.replace("\r\n", "")
    assert [e.result for e in runlog.read(memory)] == ["first", "second - ✓"]
    assert [e.result for e in runlog.read(memory, last=1)] == ["second - ✓"]
    assert runlog.not_a_run_log(memory.rename(tmp_path / "notes.txt")) is None  # its heading is found
    (tmp_path / "notes.txt").rename(memory)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["log"])
    assert result.exit_code == 0 and "first" in result.output and "second" in result.output, result.output


def test_a_memory_md_that_is_no_valid_utf16_is_left_as_it_is_with_one_warning(tmp_path, monkeypatch):
    """A UTF-16 byte order mark before bytes that are no UTF-16 (an odd count, a lone surrogate): a copy
    made from what decodes would lose the rest, so the line is not written and the command ends as it would."""
    import codecs

    memory = tmp_path / "MEMORY.md"
    memory.write_bytes(codecs.BOM_UTF16_LE + "# Notes\n".encode("utf-16-le") + b"\x00\xd8" + b"!")
    before = memory.read_bytes()
    with pytest.raises(runlog.UndecodableRunLog, match="MEMORY.md starts with a UTF-16-LE byte order mark"):
        runlog.append(_entry("lost"), memory)
    result = _lint_logging_to(memory, tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output  # lint's own result
    assert result.output.count("warning: run log not written:") == 1
    assert "is no valid UTF-16-LE text; it was left as it is" in " ".join(result.output.split())
    assert memory.read_bytes() == before
    assert runlog.read(memory) == []



@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_memory_md_saved_as_utf16_without_its_mark_stays_so_and_is_read(tmp_path, monkeypatch, codec):
    """UTF-16 with no byte order mark got UTF-8 lines and a second "## Run log" section appended: a file of two
    encodings, and `log` showed 1 run of 2. Its NUL bytes tell it; it is written back as it was saved."""
    memory = tmp_path / "MEMORY.md"
    notes = f"# Notes\n\n{runlog.HEADING}\n\n{_entry('before · café').to_line()}\n## Ideas\n\nx\n"
    memory.write_bytes(notes.replace("\n", "\r\n").encode(codec))  # Notepad's line breaks
    before = memory.read_bytes().decode(codec)
    runlog.append(_entry("after ✓"), memory)
    text = memory.read_bytes().decode(codec)  # strict: the whole file is one encoding, with no mark added
    assert not text.startswith("\ufeff") and text.count(runlog.HEADING) == 1 and text.endswith("## Ideas\r\n\r\nx\r\n")
    assert len(text) == len(before) + len(_entry("after ✓").to_line()) + 1  # its \r\n
    assert [e.result for e in runlog.read(memory)] == ["before - café", "after ✓"]
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["-q", "log"])
    assert result.exit_code == 0 and "before" in result.output and "after" in result.output, result.output


@pytest.mark.parametrize("notes", [b"# Notes\n\nabc\x00de\n", b"# Notes\n\nabc\x00def\n", b"\x00# Notes caf\xc3\xa9\n"],
                         ids=["even-length", "odd-length", "nul-first"])
def test_a_utf8_memory_md_with_a_stray_nul_byte_gets_utf8_lines(tmp_path, monkeypatch, notes):
    """One NUL byte near the start of a UTF-8 MEMORY.md made it "UTF-16 without its mark": UTF-16 lines were
    appended after the UTF-8 notes (`log` showed garbage), and an odd-length one was refused as "reads as
    UTF-16-LE". Its notes are kept byte for byte, NUL included, and its runs are UTF-8 lines."""
    memory = tmp_path / "MEMORY.md"
    memory.write_bytes(notes)
    result = _lint_logging_to(memory, tmp_path, monkeypatch)
    assert result.exit_code == 0 and "run log not written" not in result.output, result.output
    runlog.append(_entry("second ✓"), memory)
    data = memory.read_bytes()
    assert data.startswith(notes) and data.count(b"\x00") == 1
    text = data.decode("utf-8")  # strict: the whole file is UTF-8
    assert text.count(runlog.HEADING) == 1
    assert [e.result for e in runlog.read(memory)][1:] == ["second ✓"] and len(runlog.read(memory)) == 2
    result = CliRunner().invoke(app, ["-q", "log"])
    assert result.exit_code == 0 and "second ✓" in result.output, result.output


def test_utf16_without_its_mark_in_a_script_other_than_latin_is_still_told_by_its_nul_bytes(tmp_path):
    """Notes mostly in Cyrillic have NUL bytes beside their spaces, digits and line breaks only: still UTF-16."""
    memory = tmp_path / "MEMORY.md"
    notes = "# Заметки\n\nядро быстрее на 3% при блоке 128\n"
    memory.write_bytes(notes.encode("utf-16-le"))
    runlog.append(_entry("первый"), memory)
    text = memory.read_bytes().decode("utf-16-le")
    assert text.startswith(notes) and text.count(runlog.HEADING) == 1
    assert [e.result for e in runlog.read(memory)] == ["первый"]


def test_utf16_without_its_mark_holding_lines_of_the_other_byte_order_is_left_as_it_is(tmp_path):
    """Notes in UTF-16 LE with lines in UTF-16 BE after them decode as LE (as characters such as U+2300), but the
    NULs of the BE lines lie at the other parity: no one encoding, so nothing is written back from a guess."""
    memory = tmp_path / "MEMORY.md"
    data = "# Notes\n\n".encode("utf-16-le") + f"{runlog.HEADING}\n\n- a line appended in the other order\n".encode(
        "utf-16-be")
    memory.write_bytes(data)
    with pytest.raises(runlog.UndecodableRunLog, match="reads as UTF-16-LE but is no valid UTF-16-LE text"):
        runlog.append(_entry("lost"), memory)
    assert memory.read_bytes() == data


CJK_NOTES = "# 笔记\n" + "这是关于内核的笔记。" * 20 + "\n"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_its_mark_in_cjk_is_told_by_its_line_feeds(tmp_path, monkeypatch, codec):
    """Notes mostly in CJK: a code unit's two bytes are often both printable (U+5173 is `s` and `Q`), so counting
    NULs beside ASCII characters took them for UTF-8 and refused them as no valid UTF-8, nothing written. Bytes
    that are no UTF-8, whose line feeds tell a byte order and which decode strictly in it, are that UTF-16."""
    data = CJK_NOTES.encode(codec)
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    memory = tmp_path / "MEMORY.md"
    memory.write_bytes(data)
    result = _lint_logging_to(memory, tmp_path, monkeypatch)
    assert result.exit_code == 0 and "run log not written" not in result.output, result.output
    runlog.append(_entry("第二次 ✓"), memory)
    text = memory.read_bytes().decode(codec)  # strict: the whole file is one encoding, with no mark added
    assert text.startswith(CJK_NOTES) and not text.startswith("\ufeff") and text.count(runlog.HEADING) == 1
    assert len(runlog.read(memory)) == 2 and runlog.read(memory)[1].result == "第二次 ✓"
    result = CliRunner().invoke(app, ["-q", "log"])
    assert result.exit_code == 0 and "第二次 ✓" in result.output, result.output


def test_utf16_without_its_mark_where_cjk_puts_nul_bytes_at_the_other_parity_is_still_utf16(tmp_path):
    """U+4E00 (一) is 00 4E in UTF-16 LE: a NUL at the parity of BE's ASCII, more of them than the notes have ASCII
    characters. The line feeds tell LE, and no NUL character decodes: UTF-16 LE."""
    memory = tmp_path / "MEMORY.md"
    notes = "# 一\n" + "一一得一，一二得二。" * 10 + "\n"
    memory.write_bytes(notes.encode("utf-16-le"))
    runlog.append(_entry("一"), memory)
    text = memory.read_bytes().decode("utf-16-le")
    assert text.startswith(notes) and text.count(runlog.HEADING) == 1
    assert [e.result for e in runlog.read(memory)] == ["一"]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_its_mark_in_cyrillic_that_is_no_utf8_is_utf16(tmp_path, codec):
    """Ukrainian notes (ґ is U+0491, 91 04 in LE, 04 91 in BE: no UTF-8) with one line feed: UTF-16 of its order."""
    memory = tmp_path / "MEMORY.md"
    notes = "# Нотатки: ґрати ядра\n"
    data = notes.encode(codec)
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    memory.write_bytes(data)
    runlog.append(_entry("перший"), memory)
    text = memory.read_bytes().decode(codec)
    assert text.startswith(notes) and text.count(runlog.HEADING) == 1
    assert [e.result for e in runlog.read(memory)] == ["перший"]


@pytest.mark.parametrize("data, reason", [
    (CJK_NOTES.encode("utf-16-le") + "- 另一种字节序的一行\n".encode("utf-16-be"),
     "has no byte order mark and reads as UTF-16-LE but is no valid UTF-16-LE text"),
    (CJK_NOTES.encode("utf-16-le") + b"\x00\xd8" + "\n".encode("utf-16-le"),
     "has no byte order mark and reads as UTF-16-LE but is no valid UTF-16-LE text"),
    (CJK_NOTES.encode("utf-16-be") + b"!", "has no byte order mark and reads as UTF-16-BE but is no valid"),
    (CJK_NOTES.encode("utf-32-le"), "has no byte order mark and reads as UTF-16-LE but is no valid"),
    ("笔记内核".encode("utf-16-le"), "has no byte order mark naming another encoding but is no valid UTF-8 text"),
], ids=["lines-of-the-other-byte-order", "lone-surrogate", "odd-length", "utf-32-without-mark", "no-order-told"])
def test_cjk_with_no_mark_that_is_no_one_utf16_is_left_as_it_is(tmp_path, data, reason):
    """Bytes that are no UTF-8 are UTF-16 only where a byte order is told and the whole file decodes strictly in
    it, with no NUL character and no line feed of the other order; otherwise nothing is written from a guess."""
    memory = tmp_path / "MEMORY.md"
    memory.write_bytes(data)
    with pytest.raises(runlog.UndecodableRunLog, match=reason):
        runlog.append(_entry("lost"), memory)
    assert memory.read_bytes() == data


@pytest.mark.parametrize("data, reason", [
    ("# notes caf\xe9\n\n## Run log\n\n".encode("latin-1"),
     "has no byte order mark naming another encoding but is no valid UTF-8 text"),
    ("# notes\n".encode("utf-32-le"), "has no byte order mark and reads as UTF-16-LE but is no valid UTF-16-LE text"),
    ("# notes\n".encode("utf-16-le") + b"!", "has no byte order mark and reads as UTF-16-LE but is no valid"),
], ids=["latin-1", "utf-32-without-mark", "odd-utf-16"])
def test_a_memory_md_with_no_mark_that_is_no_utf8_is_left_as_it_is_with_one_warning(tmp_path, monkeypatch, data,
                                                                                      reason):
    """Latin-1's `caf\\xe9` got UTF-8 lines appended: a file of two encodings, neither of which reads it whole."""
    memory = tmp_path / "MEMORY.md"
    memory.write_bytes(data)
    with pytest.raises(runlog.UndecodableRunLog, match=reason):
        runlog.append(_entry("lost"), memory)
    result = _lint_logging_to(memory, tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output  # lint's own result
    assert result.output.count("warning: run log not written:") == 1
    assert f"{reason}" in " ".join(result.output.split()) and "it was left as it is" in result.output
    assert memory.read_bytes() == data

def test_a_target_file_is_logged_relative_to_the_run_logs_folder(tmp_path):
    """Two folders sharing one run log (NVFP4CTL_MEMORY) each have a submission.py: the line names
    which, from the log's folder, where "submission.py" relative to each run's folder named both alike."""
    shared, first, second = tmp_path / "MEMORY.md", tmp_path / "gemm_a", tmp_path / "gemm_b"
    for folder in (first, second):
        folder.mkdir()
        (folder / "submission.py").write_text(f"# {folder.name}\n")
    cells = {runlog.make_entry(Outcome("10/10 pass", ExitCode.OK, folder / "submission.py", "H100"), ["check"],
                               folder, shared).target for folder in (first, second)}
    assert cells == {f"./{folder.name}/submission.py@{runlog.file_digest(folder / 'submission.py')}"
                     for folder in (first, second)}
    outside = tmp_path / "elsewhere" / "k.cu"
    outside.parent.mkdir()
    outside.write_text("x")
    assert runlog.describe_target(outside, first, None, first) == f"{outside.resolve()}@{runlog.file_digest(outside)}"
    assert runlog.describe_target(first, tmp_path, None, tmp_path) == "gemm_a"  # a folder is a label: as before


def test_logged_paths_resolve_from_the_log_for_new_lines_and_from_the_reader_for_older_ones(tmp_path):
    log_folder, reader = tmp_path, tmp_path / "gemm_b"
    assert runlog.logged_path("./gemm_a/submission.py", reader, log_folder) == (tmp_path / "gemm_a" / "submission.py")
    assert runlog.logged_path("submission.py", reader, log_folder) == reader / "submission.py"  # an older line
    assert runlog.logged_path("/abs/k.cu", reader, log_folder) == Path("/abs/k.cu")
    assert runlog.log_folder_of(Path("MEMORY.md")) == Path.cwd()


def test_log_names_each_folders_file_of_a_shared_log_from_the_logs_folder(tmp_path, monkeypatch):
    """One log for several problem folders: every line's submission.py@hash alike told them not apart."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "250")
    for folder, digest in (("nvfp4_gemv", "a7cbea65aaaa"), ("nvfp4_dual_gemm", "0b1c2d3e4444")):
        runlog.append(runlog.RunEntry("2026-11-27T07:00:00Z", "nvfp4ctl check", f"./{folder}/submission.py@{digest}"
                                      " [beside task.yml]", "abc", "no GPU", "0", "1/1 pass"), memory)
    runlog.append(runlog.RunEntry("2026-11-27T07:00:00Z", "nvfp4ctl lint", "./submission.py@1234567890ab", "abc",
                                  "no GPU", "0", "clean"), memory)
    runlog.append(runlog.RunEntry("2026-11-27T07:00:00Z", "nvfp4ctl build", "kernels/sm90/k.cu@fedcba987654", "abc",
                                  "no GPU", "0", "built"), memory)  # an older line: relative to its run's folder
    result = CliRunner().invoke(app, ["log"])
    assert result.exit_code == 0, result.output
    assert "nvfp4_gemv/submission.py@a7cbea65" in result.output
    assert "nvfp4_dual_gemm/submission.py@0b1c2d3e" in result.output
    assert "│ submission.py@12345678" in result.output and "./" not in result.output
    assert "kernels/sm90/k.cu@fedcba98" in result.output


def test_lint_and_build_lines_carry_the_problem_of_the_task_they_ran_under(tmp_path, monkeypatch):
    """check and bench fill the problem column; lint's and build's lines in a GEMV folder said "-"."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    folder = tmp_path / "gemv"
    assert CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemv", str(folder)]).exit_code == 0
    monkeypatch.chdir(folder)
    lint = CliRunner().invoke(app, ["lint"])
    assert lint.exit_code == 0, lint.output
    monkeypatch.setattr("nvfp4ctl.commands.build_submission.build_submission",
                        lambda path, *args: Outcome(result="host code only: nothing to compile", target=path))
    build = CliRunner().invoke(app, ["build"])
    assert build.exit_code == 0, build.output
    assert [entry.problem for entry in runlog.read(memory)] == ["nvfp4_gemv", "nvfp4_gemv"]  # lint's, build's


def test_lint_of_a_lone_file_leaves_the_problem_unsaid(tmp_path, monkeypatch):
    """No task.yml of the user's: the shipped GEMM task only stands in, and is no fact about the file."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clean.py").write_text("def custom_kernel(data):\n    return data\n")
    assert CliRunner().invoke(app, ["lint", "clean.py"]).exit_code in (0, 1)
    assert runlog.read(memory)[-1].problem == ""


@pytest.mark.parametrize("heading", [b"### Tuning TODO\n", b"#### deeper\n", b"###### six\n", b"#\tTab\n",
                                     b"Tuning TODO\n===========\n", b"Tuning TODO\n-----\n",
                                     b"Tuning TODO, a title\nof two lines\n---\n", b"   ### indented\n"])
def test_a_section_of_the_users_under_any_heading_after_the_log_stays_below_it(tmp_path, heading):
    """`### Tuning TODO` or a setext `Ideas` / `=====` after the run log: only `# ` and `## ` ended the
    log, and the next run's line was appended after the user's note, inside their section."""
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    below = b"\n" + heading + b"BELOW-NOTE-1\n"
    memory.write_bytes(memory.read_bytes() + below)
    runlog.append(_entry("second"), memory)
    data = memory.read_bytes()
    assert data.endswith(below), data.decode()
    assert data[: -len(below)].endswith(_entry("second").to_line().encode())


@pytest.mark.parametrize("inside", [
    b"tried 2-CTA: slower\n",  # a plain note between runs
    b"tried 2-CTA: slower\n\n",
    b"- a note of the user's\n---\n",  # a list item then a rule: no setext heading
    _entry("lazy").to_line().encode() + b"continued\n===\n",  # a lazy continuation of the entry: no heading
    b"\n---\n",  # a rule alone
    b"```\n### in code\nnote\n---\n```\n",
    b"#hashtag without a space\n",
    b"\n    ### in an indented code block\n    # a comment\n",  # 4 spaces: code, no heading
    b"\n\t### a tab's indentation\n",
])
def test_the_logs_own_lines_and_a_users_note_inside_it_stay_in_the_log(tmp_path, inside):
    """What is no heading inside the run log keeps the log going: the next line goes after it."""
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    memory.write_bytes(memory.read_bytes() + inside)
    before = memory.read_bytes()
    runlog.append(_entry("second"), memory)
    assert memory.read_bytes() == before + _entry("second").to_line().encode()


def _log_with_two_broken_lines(memory: Path) -> None:
    """Lines 5 and 7 were runs' until a hand edit: a cell lost, a cell added before the problem's; line 8 is a
    note of the user's."""
    added = replace(_entry("two cells"), problem="nvfp4_gemm").to_line().replace("two cells", "two · extra · cells")
    memory.write_text(runlog.HEADING + "\n\n" + runlog.PREAMBLE + "\n\n"  # lines 1-4
                      + "- 2026-11-25T09:00:00Z · `nvfp4ctl check` · sub.py@abc\n"  # 5: three cells
                      + _entry("kept 1").to_line()  # 6
                      + added  # 7: ten cells
                      + "- try 2-CTA · later\n"  # 8: no run
                      + _entry("kept 2").to_line())  # 9


@pytest.mark.parametrize("args", [["log"], ["log", "-n", "2"], ["log", "-n", "3"]])
def test_log_says_once_after_the_table_which_lines_it_could_not_read(tmp_path, monkeypatch, args):
    """A run's line with a cell lost or added was skipped without a word: a run missing from the table."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "200")
    _log_with_two_broken_lines(memory)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    note = f"2 lines of the run log could not be read as runs and are left out: lines 5, 7 of {memory}"
    if args == ["log", "-n", "2"]:  # the two shown are lines 6 and 9: line 5 would not have been shown either
        note = f"1 line of the run log could not be read as a run and is left out: line 7 of {memory}"
    assert result.output.count("could not be read") == 1 and note in result.output, result.output
    assert result.output.index("kept 2") < result.output.index("could not be read")
    assert "2 lines of" not in CliRunner().invoke(app, ["-q", *args]).output  # a note: -q leaves it out


def test_log_of_the_last_runs_with_no_broken_line_among_them_says_nothing(tmp_path, monkeypatch):
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    _log_with_two_broken_lines(memory)
    runlog.append(_entry("kept 3"), memory)
    result = CliRunner().invoke(app, ["log", "-n", "1"])
    assert result.exit_code == 0 and "kept 3" in result.output and "could not be read" not in result.output
    numbered = runlog.read_numbered(memory)
    assert [e.result for e in numbered.entries] == ["kept 1", "kept 2", "kept 3"]
    assert numbered.lines == [6, 9, 10] and numbered.unread == [5, 7]


def _log_shown(tmp_path: Path, monkeypatch, lines: str):
    """`log` of a MEMORY.md holding `lines` under the run log's heading, wide enough that no cell wraps."""
    memory = tmp_path / "MEMORY.md"
    memory.write_text(f"{runlog.HEADING}\n\n{lines}")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "300")
    return CliRunner().invoke(app, ["log"])


@pytest.mark.parametrize(("added", "note"), [(" (2-stage pipeline)", "2-stage pipeline"),
                                             (" · tried swizzle 128B", "tried swizzle 128B"),
                                             (" - BK=256, (2 stages)", "- BK=256, (2 stages)"), ("", "")])
def test_a_note_typed_after_the_problem_is_a_note_not_part_of_the_problem(tmp_path, monkeypatch, added, note):
    """`nvfp4_dual_gemm (2-stage pipeline)` was read as a problem of that name (a trend of its own, a run bench's
    comparison passed over), and `nvfp4_dual_gemm · tried swizzle 128B` as a line that could not be read."""
    logged = replace(_entry("geomean 19.800±0.020 us; 256x4096x7168 15.840±0.010 us", "nvfp4ctl bench"),
                     problem="nvfp4_dual_gemm")
    entry = runlog.RunEntry.from_line(logged.to_line().rstrip("\n") + added + "\n")
    assert entry is not None and (entry.problem, entry.note) == ("nvfp4_dual_gemm", note)
    assert replace(entry, note="") == logged
    result = _log_shown(tmp_path, monkeypatch, logged.to_line().rstrip("\n") + added + "\n" + _entry("later").to_line())
    assert result.exit_code == 0 and "could not be read" not in result.output, result.output
    assert (" note " in result.output) == bool(note) and note in result.output


def test_logs_note_column_is_left_aligned_as_text_reads(tmp_path, monkeypatch):
    """The note column was right-aligned like the problem column: a short note sat at the far end of a long one."""
    logged = replace(_entry("10/10 pass"), problem="nvfp4_dual_gemm").to_line().rstrip("\n")
    result = _log_shown(tmp_path, monkeypatch, f"{logged} (2-stage pipeline, slower)\n{logged} (ok)\n")
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[-2] for line in result.output.splitlines() if line.startswith("│")}
    assert rows == {" 2-stage pipeline, slower ", " ok                       "}, result.output


@pytest.mark.parametrize("problem", ["nvfp4_gemm_v2", "nvfp4_future_problem (its note)"])
def test_a_problem_cell_that_starts_with_no_known_problem_is_kept_whole(problem):
    line = replace(_entry("10/10 pass"), problem=problem).to_line()
    entry = runlog.RunEntry.from_line(line)
    assert entry is not None and (entry.problem, entry.note) == (problem, "")


@pytest.mark.parametrize(("added", "note"), [(" · tried swizzle 128B", "tried swizzle 128B"),
                                             (" · (2-stage pipeline)", "2-stage pipeline"), (" · v2", "v2")])
def test_a_note_typed_after_a_line_with_no_problem_is_a_note_not_its_problem(tmp_path, monkeypatch, added, note):
    """A line that logged no problem (an older run's, a lint's outside a task) with a note after its result read
    that note as the run's problem: a trend and a problem column of its own, and no note."""
    logged = _entry("0 errors, 0 warnings (1 file checked)", "nvfp4ctl lint")
    entry = runlog.RunEntry.from_line(logged.to_line().rstrip("\n") + added + "\n")
    assert entry is not None and (entry.problem, entry.note) == ("", note)
    assert replace(entry, note="") == logged
    result = _log_shown(tmp_path, monkeypatch, logged.to_line().rstrip("\n") + added + "\n")
    assert result.exit_code == 0 and "could not be read" not in result.output, result.output
    assert " note " in result.output and " problem " not in result.output and note in result.output


def test_a_cell_added_after_no_known_problem_is_still_a_broken_line():
    line = _entry("two cells").to_line().replace("two cells", "two · extra · cells").rstrip("\n") + " · nvfp4_gemm\n"
    assert runlog.RunEntry.from_line(line) is None and runlog.looks_like_a_run(line)


_BENCH_RESULT = "geomean 25.198±0.006 us; 128x7168x16384 52.931±0.016 us"


def _bench_line(time: str, problem: str = "") -> str:
    """A bench's line of ./submission.py on a B200, as nvfp4ctl writes it (no problem cell: an older line's)."""
    return runlog.RunEntry(f"2026-11-28T10:{time}Z", "nvfp4ctl bench", "./submission.py@0123456789ab", "1234567",
                           "NVIDIA B200 (sm_100)", "0", _BENCH_RESULT, problem).to_line()


def _rows(output: str) -> list[list[str]]:
    """The cells of each row of `log`'s table, stripped."""
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in output.splitlines() if line.startswith("│")]


@pytest.mark.parametrize("note", ["nvfp4_gemm: tried BLOCK_N 256, slower", "nvfp4_gemm, BLOCK_N 256: slower",
                                  "nvfp4_gemm_sm90.cu: 2-stage pipeline", "nvfp4_gemm.cu tuned"])
def test_a_note_that_starts_with_a_problems_name_stays_the_users_note(tmp_path, monkeypatch, note):
    """A note typed after a line with no problem cell (a lint's outside a task) that starts with a problem's name,
    `nvfp4_gemm: tried BLOCK_N 256, slower`, was read as the run's problem nvfp4_gemm with the note `: tried ...`
    (`nvfp4_gemm_sm90.cu: ...` as a problem of that whole name): the name runs on into the user's words there,
    where nvfp4ctl's problem cell is the name alone."""
    lint = _entry("0 errors, 0 warnings (1 file checked)", "nvfp4ctl lint").to_line().rstrip("\n")
    entry = runlog.RunEntry.from_line(f"{lint} · {note}\n")
    assert entry is not None and (entry.problem, entry.note) == ("", note)
    real = runlog.RunEntry.from_line(_bench_line("00:00", "nvfp4_gemm"))
    assert real is not None and (real.problem, real.note) == ("nvfp4_gemm", "")
    lines = (_bench_line("00:00", "nvfp4_gemm") + f"{lint} · {note}\n"
             f"- {note}\n{note}\n")  # the same words as a bullet and a line of the user's own: no run
    result = _log_shown(tmp_path, monkeypatch, lines)
    assert result.exit_code == 0 and "could not be read" not in result.output, result.output
    rows = _rows(result.output)
    # in time order, as every listing is: the lint's line is logged on the 25th, the bench's on the 28th
    assert [row[-2:] for row in rows] == [["-", note], ["nvfp4_gemm", "-"]], result.output


def _target_and_trend_of_two_benches(tmp_path, monkeypatch, note: str, between: str = ""):
    """`log --target submission.py` and `log --trend` over two older bench lines (no problem cell), the second
    with `note` typed after its result and `between` lines of the user's between them."""
    memory = tmp_path / "MEMORY.md"
    memory.write_text(f"# notes\n\n{runlog.HEADING}\n\n{_bench_line('00:00')}{between}"
                      + _bench_line("10:00").rstrip("\n") + f" · {note}\n")
    (tmp_path / "submission.py").write_text("")
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.chdir(tmp_path)
    return (CliRunner().invoke(app, ["log", "--target", "submission.py"]), CliRunner().invoke(app, ["log", "--trend"]))


def test_log_target_and_trend_keep_a_note_that_starts_with_a_problems_name_the_users(tmp_path, monkeypatch):
    """An older bench line (no problem cell: the GEMM's) with the note `nvfp4_dual_gemm: same BLOCK_N next` took
    nvfp4_dual_gemm for its problem: `log --trend` plotted it apart from the bench before it, a trend of one run each."""
    note = "nvfp4_dual_gemm: same BLOCK_N next"
    listed, trend = _target_and_trend_of_two_benches(tmp_path, monkeypatch, note, "- nvfp4_dual_gemm: BLOCK_N 128 first\n")
    assert listed.exit_code == 0 and "2 most recent runs of submission.py" in listed.output, listed.output
    assert " problem " not in listed.output and [row[-1] for row in _rows(listed.output)] == ["-", note], listed.output
    assert trend.exit_code == 0, trend.output
    assert "submission.py on NVIDIA B200 (sm_100): 2 benches" in trend.output, trend.output
    assert "nvfp4_dual_gemm" not in trend.output and trend.output.count(" best ") == 1, trend.output


@pytest.mark.parametrize("note", ["tried swizzle 128B · slower", "BLOCK_N 256 · 2 stages · slower by 3 %",
                                  "nvfp4_gemm: tried BLOCK_N 256 · slower"])
def test_a_note_with_the_cell_separator_after_a_line_with_no_problem_is_a_note(tmp_path, monkeypatch, note):
    """`tried swizzle 128B · slower` typed after a lint's result (a line with no problem cell) made a line of
    nine cells: `log` left that run out and named its line as one it could not read."""
    lint = _entry("0 errors, 0 warnings (1 file checked)", "nvfp4ctl lint")
    line = lint.to_line().rstrip("\n") + f" · {note}\n"
    entry = runlog.RunEntry.from_line(line)
    assert entry is not None and (entry.problem, entry.note) == ("", note)
    assert replace(entry, note="") == lint
    real = _bench_line("00:00", "nvfp4_gemm")
    result = _log_shown(tmp_path, monkeypatch, real + line + _entry("later").to_line())
    assert result.exit_code == 0 and "could not be read" not in result.output, result.output
    # in time order, as every listing is: the bench's line is logged on the 28th, the two others on the 25th
    assert [row[-2:] for row in _rows(result.output)] == [["-", note], ["-", "-"], ["nvfp4_gemm", "-"]], result.output


def test_log_target_and_trend_read_a_note_with_the_cell_separator_after_an_older_bench(tmp_path, monkeypatch):
    """An older bench line (no problem cell) with `tried swizzle 128B · slower` after its result was left out of
    `log --target` and `log --trend` as a line that could not be read: the trend lost that run."""
    note = "tried swizzle 128B · slower"
    listed, trend = _target_and_trend_of_two_benches(tmp_path, monkeypatch, note)
    assert listed.exit_code == 0 and "could not be read" not in listed.output, listed.output
    assert [row[-1] for row in _rows(listed.output)] == ["-", note], listed.output
    assert trend.exit_code == 0 and "could not be read" not in trend.output, trend.output
    assert "submission.py on NVIDIA B200 (sm_100): 2 benches" in trend.output, trend.output


def test_a_cell_added_inside_a_line_with_a_problem_is_still_a_broken_line(tmp_path, monkeypatch):
    """A note after a line with no problem may hold the separator; a line whose last cell is nvfp4ctl's problem
    cell and that has a cell more before it was hand-edited inside its cells: no note, a line `log` names."""
    line = replace(_entry("two cells"), problem="nvfp4_gemm").to_line().replace("two cells", "two · extra · cells")
    assert runlog.RunEntry.from_line(line) is None and runlog.looks_like_a_run(line)
    result = _log_shown(tmp_path, monkeypatch, line + _entry("later").to_line())
    assert result.exit_code == 0, result.output
    assert "could not be read as a run and is left out: line 3" in result.output, result.output


@pytest.mark.parametrize("note", ["- 2026-11-28T12:30Z: cccc = 2-stage pipeline, fastest so far",
                                  "- 2026-11-28T12:30 tried K=128: slower", "- 2026-11-28: back from the B200"])
def test_a_note_of_the_users_that_starts_with_a_time_is_no_broken_run(tmp_path, monkeypatch, note):
    """A bullet of the user's own that starts with an ISO time was named a line that could not be read as a run:
    only a line of the run line's shape (its time, then the cell separator) is a broken run."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    runlog.append(_entry("kept"), memory)
    memory.write_text(memory.read_text() + note + "\n")
    assert not runlog.looks_like_a_run(note)
    assert runlog.read_numbered(memory).unread == []
    for args in (["log"], ["log", "--trend"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0 and "could not be read" not in result.output, result.output


@pytest.mark.parametrize("line", ["- 2026-11-25T09:00:00Z · `nvfp4ctl check` · sub.py@abc",  # cells lost
                                  "- 2026-11-25T09:00:00Z · nvfp4ctl check · sub.py@abc · 1234567",  # quotes lost
                                  "- 2026-11-25T09:0"])  # a write killed inside the time stamp
def test_a_damaged_run_line_is_still_named_as_one(line):
    assert runlog.looks_like_a_run(line)


@pytest.mark.parametrize("before", [
    "- 2026-11-28T10:00:00Z · `nvfp4ctl lint submission.py` · submission.py@abc · 890b176 · none · 0 · clean\n\n"
    "```sh\nnvfp4ctl bench\n```\n",  # a fence right above the heading
    "",  # the run log's own heading
], ids=["after a fence", "after the log's heading"])
@pytest.mark.parametrize("underline", ["-----", "====="])
def test_a_setext_heading_right_below_the_log_stays_a_heading_over_every_append(tmp_path, before, underline):
    """`Ideas` over `-----` right after a fence or `## Run log`: the line went right above `Ideas`,
    which Markdown then reads as that list item's text, so the heading was gone and the next run went under it."""
    memory = tmp_path / "MEMORY.md"
    heading = f"Ideas\n{underline}\n- try 2-CTA\n"
    memory.write_text(f"{runlog.HEADING}\n{before}{heading}")
    for result in ("first", "second", "third"):
        runlog.append(_entry(result), memory)
        text = memory.read_text()
        assert text.endswith("\n\n" + heading), text  # a blank line before `Ideas`: it stays a heading
    runs = "".join(_entry(result).to_line() for result in ("first", "second", "third"))
    assert text.startswith(f"{runlog.HEADING}\n{before}{runs}\n"), text


@pytest.mark.parametrize("users", [
    "\n---\n\n### Ideas\n- try 2-CTA\n",
    "\n***\n\n\n## Ideas\n",
    "\n___\n\n---\n\nIdeas\n=====\n",  # two rules: the section starts at the first
    "\n---\nIdeas\n=====\n",  # a setext heading right below the rule
    "\n* * *\n\nTuning TODO, a title\nof two lines\n-----\n",
], ids=["--- then ###", "*** then ##", "two rules then setext", "--- right above setext", "* * * then setext"])
def test_a_rule_drawn_above_a_section_of_the_users_stays_above_its_heading(tmp_path, users):
    """A thematic break between the log and `### Ideas`: new runs went after the `---`, below the separator
    the user drew; it belongs to their section, and the line goes before it."""
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    memory.write_text(memory.read_text() + users)
    runlog.append(_entry("second"), memory)
    text = memory.read_text()
    assert text.endswith(_entry("first").to_line() + _entry("second").to_line() + users), text


DIARY = ("\n### Tuning diary\n- 2026-11-28T10:30 tried K=128: slower\n"
         + _entry("pasted into the diary").to_line() + "\n---\n\nmore notes\n")


@pytest.mark.parametrize("args", [["log"], ["log", "-n", "1"], ["log", "--trend"]])
def test_log_reads_no_line_of_a_section_of_the_users_after_the_log(tmp_path, monkeypatch, args):
    """A `### Tuning diary` after the log is the user's (the next run goes before it), but `log` read on
    past it: its bullets were runs, or lines it could not read as runs."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "200")
    runlog.append(_entry("logged"), memory)
    memory.write_text(memory.read_text() + DIARY)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "could not be read" not in result.output and "pasted" not in result.output, result.output


def test_the_readers_stop_where_the_next_line_would_go(tmp_path):
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    memory.write_text(memory.read_text() + DIARY)
    runlog.append(_entry("second"), memory)
    assert memory.read_text().endswith(_entry("second").to_line() + DIARY)
    for last in (None, 1, 2, 5):
        assert [e.result for e in runlog.read(memory, last)] == ["first", "second"][-(last or 2):]
    numbered = runlog.read_numbered(memory)
    assert [e.result for e in numbered.entries] == ["first", "second"] and numbered.unread == []
    assert numbered.lines == [5, 6]
    passed_over: list[str] = []
    assert [e.result for e in runlog.newest_first(memory, passed_over)] == ["second", "first"] and not passed_over


@pytest.mark.parametrize("comment", [
    "\n<!--\n## old notes\n- 2026-11-20 tried split-K\n-->\n",
    "\n<!-- old notes:\n\n### Ideas\n\n-->\n",
    "\n<details>\n## folded\n</details>\n",
], ids=["comment", "comment with blank lines", "html block"])
def test_a_heading_inside_an_html_block_below_the_log_is_no_section_of_the_users(tmp_path, comment):
    """`<!--` / `## old notes` / `-->` below the runs: the heading was taken for the user's section and the
    next run was written inside the comment, where no Markdown viewer shows it."""
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    memory.write_text(memory.read_text() + comment)
    before = memory.read_text()
    runlog.append(_entry("second"), memory)
    # a blank line after `</details>`, which a comment's `-->` needs not: the line is no part of the block
    blank = "\n" if comment.startswith("\n<details>") else ""
    assert memory.read_text() == before + blank + _entry("second").to_line()
    assert [e.result for e in runlog.read(memory)] == ["first", "second"]


def _list_item_lines(text: str) -> set[int]:
    """The lines (from 0) where CommonMark starts a list item in `text`."""
    return {token.map[0] for token in _block_tokens(text.encode()) if token.type == "list_item_open"}


@pytest.mark.parametrize("users", ["", "\n### Ideas\n- try 2-CTA\n"], ids=["at the end", "before a heading of the user's"])
@pytest.mark.parametrize("block", ["<div>\nnote\n</div>\n", "<details>\n<summary>B200 box</summary>\n</details>\n",
                                   "<div align=\"center\"><img src=\"plot.png\"></div>\n"])
def test_a_run_written_below_an_html_block_is_a_list_item_not_the_blocks_text(tmp_path, block, users):
    """`<div>` ... `</div>` right above where the next run goes (at the end, or before a heading of the user's): only
    a blank line ends such an HTML block, and the runs were written right below it, the block's raw text from then on."""
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    memory.write_text(memory.read_text() + "\n" + block + users)
    for result in ("second", "third"):
        runlog.append(_entry(result), memory)
    text = memory.read_text()
    assert text.endswith(block + "\n" + _entry("second").to_line() + _entry("third").to_line() + users), text
    runs = [number for number, line in enumerate(text.splitlines()) if line.startswith("- 2026")]
    assert set(runs) <= _list_item_lines(text), text
    assert [e.result for e in runlog.read(memory)] == ["first", "second", "third"]


@pytest.mark.parametrize("fence", [
    "````\n```\n### in code\n````\n",  # a shorter fence inside a longer one
    "```\n~~~\n### in code\n```\n",  # the other character closes nothing
    "```\n```sh\n### in code\n```\n",  # a fence with an info string closes nothing
    "~~~~\n### in code\n~~~\n## in code too\n~~~~\n",
], ids=["shorter", "other character", "info string", "fewer tildes"])
def test_a_fence_closes_only_with_its_own_character_as_many_and_no_info_string(tmp_path, fence):
    """Any line of three backticks or tildes toggled the fence: the `### in code` inside it became the
    user's section and the next run went above the fence."""
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    memory.write_text(memory.read_text() + fence)
    before = memory.read_text()
    runlog.append(_entry("second"), memory)
    assert memory.read_text() == before + _entry("second").to_line()


def test_a_fence_closed_below_the_log_leaves_the_heading_after_it_the_users(tmp_path):
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    users = "\n### Ideas\n```\n## Run log\n```\n"
    memory.write_text(memory.read_text() + "```\n### in code\n```\n" + users)
    runlog.append(_entry("second"), memory)
    assert memory.read_text().endswith(_entry("second").to_line() + users)


@pytest.mark.parametrize("quoted", [
    "\n### How to\n\n```md\n## Run log\n\n- x\n```\n",
    "\n```md\n## Run log\n```\n",
    "\n<!--\n## Run log\n-->\n",
], ids=["fence in a section of the user's", "fence in the log", "html comment"])
def test_a_run_log_heading_quoted_below_the_log_is_not_its_heading(tmp_path, quoted):
    """A `## Run log` quoted in a fenced code block below the log became the log's heading: read() gave 0
    runs, and the next line went into the code block."""
    memory = tmp_path / "MEMORY.md"
    runlog.append(_entry("first"), memory)
    memory.write_text(memory.read_text() + quoted)
    runlog.append(_entry("second"), memory)
    text = memory.read_text()
    assert [e.result for e in runlog.read(memory)] == ["first", "second"]
    assert [e.result for e in runlog.read(memory, 1)] == ["second"]
    assert quoted.rstrip("\n") in text, text  # the next line went into no quoted block


def test_a_run_log_heading_quoted_above_the_log_is_not_its_heading(tmp_path):
    memory = tmp_path / "MEMORY.md"
    notes = "# notes\n\n```md\n## Run log\n- 2026-11-20T10:00:00Z · example\n```\n\n"
    memory.write_text(notes + runlog.HEADING + "\n\n" + _entry("first").to_line())
    runlog.append(_entry("second"), memory)
    assert memory.read_text() == notes + runlog.HEADING + "\n\n" + _entry("first").to_line() + _entry("second").to_line()
    assert [e.result for e in runlog.read(memory)] == ["first", "second"]


def _counting_parsed_characters(monkeypatch) -> list[int]:
    """The lengths of the texts handed to markdown-it from now on."""
    parsed: list[int] = []
    parser = _markdown_parser()

    class Counting:
        def parse(self, text: str) -> list:
            parsed.append(len(text))
            return parser.parse(text)

    monkeypatch.setattr(runlog.section, "_markdown_parser", lambda: Counting())
    return parsed


def test_an_append_and_the_last_runs_of_a_huge_log_with_a_users_section_stay_fast(tmp_path, monkeypatch):
    """A 25 MB log of 300,000 runs, a fence among them and a section of the user's at the end: only pieces
    of it are parsed as Markdown. Counted in characters parsed, not in seconds: a CPU-time bound failed on
    the floor check's older markdown-it-py (0.54 s against 0.5) with the same pieces parsed."""
    parsed = _counting_parsed_characters(monkeypatch)
    memory = tmp_path / "MEMORY.md"
    line = runlog.RunEntry("2026-11-25T10:00:00Z", "nvfp4ctl check", "submission.py@0123456789ab", "1234567",
                           "no GPU", "0", "10/10 pass").to_line()
    users = "\n### Tuning diary\n```\n## Run log\n```\n"
    memory.write_text("# notes\n\n" + runlog.HEADING + "\n\n" + line * 150_000 + "```\n### code\n```\n"
                      + line * 150_000 + _entry("last").to_line() + users)
    assert memory.stat().st_size > 25 << 20
    assert [e.result for e in runlog.read(memory, 2)] == ["10/10 pass", "last"]
    runlog.append(_entry("appended"), memory)
    assert memory.read_text().endswith(_entry("last").to_line() + _entry("appended").to_line() + users)
    assert parsed and sum(parsed) < memory.stat().st_size // 50, f"{sum(parsed)} characters parsed as Markdown"


def test_a_huge_log_with_rules_and_underlines_among_its_runs_parses_only_the_lines_between_runs(tmp_path, monkeypatch):
    """Lines that may be headings among 300,000 runs (a rule, `#x`, a note underlined with `===`, which Markdown
    reads as the run's own text): each was parsed with the 64 KB after it, about the whole 26 MB log, seconds for
    every command. Only the lines between two runs' lines are parsed now, with the run's line on either side."""
    parsed = _counting_parsed_characters(monkeypatch)
    memory = tmp_path / "MEMORY.md"
    line = runlog.RunEntry("2026-11-25T10:00:00Z", "nvfp4ctl check", "submission.py@0123456789ab", "1234567",
                           "no GPU", "0", "10/10 pass").to_line()
    among = ["---\n", "#x\n", "a note\n===\n", "\n---\n\n", "***\n"]
    stretch = "".join(line * 99 + between for between in among)
    users = "\n### Tuning diary\n- idea\n"
    memory.write_text("# notes\n\n" + runlog.HEADING + "\n\n" + stretch * 600 + _entry("last").to_line() + users)
    assert memory.stat().st_size > 25 << 20
    assert [e.result for e in runlog.read(memory, 2)] == ["10/10 pass", "last"]
    runlog.append(_entry("appended"), memory)
    assert memory.read_text().endswith(_entry("last").to_line() + _entry("appended").to_line() + users)
    # both commands: 3,000 notable lines each, parsed with the runs' lines around them (~2% of the file)
    assert sum(parsed) < memory.stat().st_size // 20, f"{sum(parsed)} characters parsed as Markdown"


def test_the_newest_run_is_the_one_just_written_and_no_pasted_run_in_a_users_fence_is_read(tmp_path):
    """Readers that read on past the log's end took a run left under the user's heading, and a run line pasted into
    a fenced block of theirs, as the newest runs: `log -n 1` and bench's comparison showed them, not the run just
    written above that heading."""
    memory = tmp_path / "MEMORY.md"
    old, left, pasted = _entry("old run").to_line(), _entry("left under the heading").to_line(), _entry("pasted").to_line()
    memory.write_text(f"{runlog.HEADING}\n\n{old}\n\n### B200 session\n\n{left}\n\n```\n{pasted}\n```\n")
    runlog.append(_entry("just written"), memory)
    assert [entry.result for entry in runlog.read(memory)] == ["old run", "just written"]
    assert [entry.result for entry in runlog.read(memory, 1)] == ["just written"]



@pytest.mark.parametrize("fence", ["```", "~~~~", "```text"])
def test_a_run_quoted_in_a_fence_inside_the_log_is_no_run(tmp_path, monkeypatch, fence):
    """A run's line quoted in a fenced code block inside the log (with a `## heading` in the fence too, which is
    no section of the user's) was read as a run by `log`, `log -n` and bench's comparison."""
    memory = tmp_path / "MEMORY.md"
    closing = fence.rstrip("text")
    quoted = f"\n{fence}\n## not a heading\n{_entry('PASTED').to_line()}{closing}\n"
    memory.write_text(f"# N\n\n{runlog.HEADING}\n\n{_entry('one').to_line()}{quoted}{_entry('two').to_line()}")
    runlog.append(_entry("three"), memory)
    assert memory.read_text().endswith(quoted + _entry("two").to_line() + _entry("three").to_line())
    assert [e.result for e in runlog.read(memory)] == ["one", "two", "three"]
    assert [e.result for e in runlog.read(memory, 3)] == ["one", "two", "three"]
    numbered = runlog.read_numbered(memory)
    assert [e.result for e in numbered.entries] == ["one", "two", "three"] and numbered.lines == [5, 11, 12]
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path)
    for args in (["-q", "log"], ["-q", "log", "-n", "3"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0 and "PASTED" not in result.output and "three" in result.output, result.output


def test_a_fence_left_open_in_the_log_hides_no_run_written_below_it(tmp_path):
    """CommonMark runs a fence never closed on to the end of the file: every run appended below it would be lost."""
    memory = tmp_path / "MEMORY.md"
    memory.write_text(f"{runlog.HEADING}\n\n{_entry('one').to_line()}\n```\nsome code\n")
    runlog.append(_entry("two"), memory)
    assert [e.result for e in runlog.read(memory)] == ["one", "two"]
    assert [e.result for e in runlog.read(memory, 1)] == ["two"]


def test_runs_quoted_in_fences_among_a_huge_log_are_skipped_with_only_the_fences_parsed(tmp_path, monkeypatch):
    """A fence quoting a run every 10,000 runs of 300,000: only the stretches around the fences are parsed."""
    parsed = _counting_parsed_characters(monkeypatch)
    memory = tmp_path / "MEMORY.md"
    line = runlog.RunEntry("2026-11-25T10:00:00Z", "nvfp4ctl check", "submission.py@0123456789ab", "1234567",
                           "no GPU", "0", "10/10 pass").to_line()
    stretch = line * 10_000 + "```\n" + _entry("quoted").to_line() + "```\n"
    memory.write_text("# notes\n\n" + runlog.HEADING + "\n\n" + stretch * 30 + _entry("last").to_line())
    assert memory.stat().st_size > 25 << 20
    assert [e.result for e in runlog.read(memory, 2)] == ["10/10 pass", "last"]
    numbered = runlog.read_numbered(memory, 2)
    assert [e.result for e in numbered.entries] == ["10/10 pass", "last"] and not numbered.unread
    entries = runlog.read(memory)
    assert len(entries) == 300_001 and not any(e.result == "quoted" for e in entries)
    assert sum(parsed) < memory.stat().st_size // 50, f"{sum(parsed)} characters parsed as Markdown"

def _log_with_runs_under_a_heading_of_the_users(memory: Path, users: str) -> None:
    """Lines 1-5: the run log with one run; from line 7 the user's section, as an older version left it."""
    memory.write_text(runlog.HEADING + "\n\n" + runlog.PREAMBLE + "\n\n"  # lines 1-4
                      + _entry("read").to_line()  # 5
                      + "\n### B200 session\n"  # 6, 7
                      + users)


UNDER_THE_HEADING = (_entry("left 1").to_line() + _entry("left 2").to_line()  # 8, 9
                     + "- try 2-CTA\n\n"  # 10, 11: a note of the user's
                     + "```\n" + _entry("in a fence").to_line() + "```\n\n"  # 12-14, 15
                     + "    " + _entry("indented code").to_line() + "\n"  # 16, 17
                     + "<!--\n" + _entry("in a comment").to_line() + "-->\n\n"  # 18-20, 21
                     + _entry("left 3").to_line())  # 22


@pytest.mark.parametrize("args", [["log"], ["log", "-n", "1"], ["log", "--trend"]])
def test_log_names_the_runs_left_under_a_heading_of_the_users(tmp_path, monkeypatch, args):
    """Older versions appended runs under a heading written after the log; the log ends at that heading, so
    `log` showed fewer runs and said nothing. A run quoted in a fence, indented code or a comment is no run."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    _log_with_runs_under_a_heading_of_the_users(memory, UNDER_THE_HEADING)
    result = separate_streams_runner().invoke(app, args)
    assert result.exit_code == 0, result.output
    note = (f"3 runs below your heading `### B200 session` (line 7) are not read (lines 8, 9, 22 of {memory}):"
            " the run log ends there; move them above it to count them")
    assert result.stderr.count("below your heading") == 1 and note in " ".join(result.stderr.split()), result.stderr
    assert "below your heading" not in result.stdout
    assert "left 1" not in result.stdout  # still not read: only named
    quiet = separate_streams_runner().invoke(app, ["-q", *args])
    assert quiet.exit_code == 0 and "below your heading" not in quiet.stderr + quiet.stdout


@pytest.mark.parametrize("args", [["log"], ["log", "-n", "3"], ["log", "--trend"], ["log", "-n", "3", "--trend"]])
def test_log_reads_the_run_log_once(tmp_path, monkeypatch, args):
    """`log` read MEMORY.md for its runs, again for the lines it could not read (with -n) and again for the runs
    below the log: two or three reads, each finding the log's end again, of a file that may be tens of MB."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    _log_with_two_broken_lines(memory)
    memory.write_text(memory.read_text() + "\n### B200 session\n\n" + _entry("left").to_line())
    reads: list[str] = []
    opened = Path.open

    def counted(self, mode="r", *args, **kwargs):
        if self == memory and "w" not in mode:
            reads.append(mode)
        return opened(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counted)  # Path.read_bytes opens the file with it too
    result = separate_streams_runner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "could not be read" in result.stderr and "below your heading" in result.stderr, result.stderr
    assert len(reads) == 1, f"MEMORY.md read {len(reads)} times"


def test_log_names_one_run_under_a_heading_even_where_no_run_is_read(tmp_path, monkeypatch):
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "400")
    memory.write_text(f"{runlog.HEADING}\n\nIdeas\n=====\n\n" + _entry("left").to_line())
    result = separate_streams_runner().invoke(app, ["log"])
    assert result.exit_code == 0 and "no runs logged yet" in result.stdout, result.output
    note = (f"1 run below your heading `Ideas` (line 3) is not read (line 6 of {memory}):"
            " the run log ends there; move it above the heading to count it")
    assert note in " ".join(result.stderr.split()), result.stderr


@pytest.mark.parametrize("users", [
    "```\n" + _entry("in a fence").to_line() + "```\n",
    "~~~md\n- old:\n" + _entry("in a fence").to_line() + "~~~\n",
    "    " + _entry("indented code").to_line(),
    "<!--\n" + _entry("in a comment").to_line() + "-->\n",
    "> " + _entry("quoted").to_line(),
    "- try 2-CTA\n- ran `nvfp4ctl bench` twice\n",
], ids=["fence", "tilde fence", "indented code", "html comment", "block quote", "notes"])
def test_a_run_pasted_in_a_block_of_the_users_section_is_not_named(tmp_path, monkeypatch, users):
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    _log_with_runs_under_a_heading_of_the_users(memory, users)
    assert runlog.runs_below_the_log(memory) is None
    result = separate_streams_runner().invoke(app, ["log"])
    assert result.exit_code == 0 and "below your heading" not in result.stderr, result.stderr


@pytest.mark.parametrize("text", [
    "",  # no run log yet
    f"# notes\n\n{runlog.HEADING}\n\n" + _entry("one").to_line() + _entry("two").to_line(),  # no user section
    f"{runlog.HEADING}\n\n" + _entry("one").to_line() + "\n```\n### in code\n" + _entry("x").to_line() + "```\n",
], ids=["empty", "no section of the user's", "a heading in a fence is none"])
def test_no_section_of_the_users_after_the_log_no_note(tmp_path, monkeypatch, text):
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    memory.write_text(text)
    assert runlog.runs_below_the_log(memory) is None
    result = separate_streams_runner().invoke(app, ["log"])
    assert result.exit_code == 0 and "below your heading" not in result.stderr, result.stderr


def test_runs_below_the_log_counts_past_ten_and_numbers_lines_as_an_editor_does(tmp_path):
    memory = tmp_path / "MEMORY.md"
    runs = "".join(_entry(f"left {index}").to_line() for index in range(12))
    memory.write_bytes((f"{runlog.HEADING}\r\n\r\n" + _entry("read").to_line() + "\r\n## Ideas\r\n"
                        + runs.replace("\n", "\r\n")).encode())
    below = runlog.runs_below_the_log(memory)
    assert below == runlog.RunsBelowTheLog("## Ideas", 5, list(range(6, 18)))
    assert [e.result for e in runlog.read(memory)] == ["read"]


def _lint_logging_to(memory, folder, monkeypatch):
    """`nvfp4ctl lint submission.py` in `folder` (a clean submission written there), its run logged to `memory`."""
    (folder / "submission.py").write_text(CODE)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(folder)
    return CliRunner().invoke(app, ["lint", "submission.py"])


def _by(tool: str, time: str) -> runlog.RunEntry:
    return runlog.RunEntry(f"2026-11-28T{time}Z", "nvfp4ctl check", "sub.py@abc [beside task.yml]", "1234567",
                           "H100 (sm_90)", "0", "10/10 pass", "nvfp4_gemm", tool)


@pytest.mark.parametrize("args", [["log"], ["log", "-q"]])
def test_log_says_where_the_nvfp4ctl_of_the_listed_runs_changed(tmp_path, monkeypatch, args):
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "200")
    for tool, time in [("", "09:00:00"), ("0.1.0 (abc1234)", "10:00:00"), ("0.1.0 (abc1234)", "11:00:00"),
                       ("0.1.0 (def5678)", "12:00:00")]:
        runlog.append(_by(tool, time), memory)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    said = result.output[result.output.index("nvfp4ctl changed"):].splitlines()
    assert said == ["nvfp4ctl changed between these runs:", "  from 2026-11-28 09:00:00: one that logged no version",
                    "  from 2026-11-28 10:00:00: 0.1.0 (abc1234)", "  from 2026-11-28 12:00:00: 0.1.0 (def5678)"]
    assert "[beside task.yml" not in result.output  # the table names the target as before
    shown = CliRunner().invoke(app, ["log", "-n", "2"]).output  # a change among the listed runs only
    assert "  from 2026-11-28 11:00:00: 0.1.0 (abc1234)\n  from 2026-11-28 12:00:00: 0.1.0 (def5678)" in shown
    assert "09:00" not in shown and "10:00" not in shown


def test_log_names_the_first_few_nvfp4ctl_changes_then_counts_the_rest(tmp_path, monkeypatch):
    """600 runs alternating between two installs were a line each at every change, about 600 under the table."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "200")
    tools = ("0.1.0 (abc1234)", "0.1.0 (def5678)")
    runs = "".join(_by(tools[index % 2], f"{index // 3600:02d}:{index // 60 % 60:02d}:{index % 60:02d}").to_line()
                   for index in range(600))
    memory.write_text(f"{runlog.HEADING}\n\n{runs}")
    result = CliRunner().invoke(app, ["log", "-n", "600"])
    assert result.exit_code == 0, result.output
    said = result.output[result.output.index("nvfp4ctl changed"):].splitlines()
    assert said[:3] == ["nvfp4ctl changed between these runs:", "  from 2026-11-28 00:00:00: 0.1.0 (abc1234)",
                        "  from 2026-11-28 00:00:01: 0.1.0 (def5678)"], said
    assert said[1:] == [*said[1:11], "  and 590 more changes"], said


def test_log_says_nothing_of_the_nvfp4ctl_where_one_made_every_listed_run(tmp_path, monkeypatch):
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.setenv("COLUMNS", "200")
    for tool, time in [("0.1.0 (abc1234)", "09:00:00"), ("0.1.0 (def5678)", "10:00:00"), ("0.1.0 (def5678)", "11:00:00")]:
        runlog.append(_by(tool, time), memory)
    assert "nvfp4ctl changed" not in CliRunner().invoke(app, ["log", "-n", "2"]).output
    older = tmp_path / "older.md"  # a log of lines that name no version: as before
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(older))
    runlog.append(_by("", "09:00:00"), older), runlog.append(_by("", "10:00:00"), older)
    result = CliRunner().invoke(app, ["log"])
    assert result.exit_code == 0 and "2 most recent runs" in result.output and "nvfp4ctl changed" not in result.output


_LOGGED_NOTES = f"# Notes\n\nmy note: keep this\n\n{runlog.HEADING}\n\n{runlog.PREAMBLE}\n\n"


def test_an_editor_saving_in_place_while_a_line_is_appended_keeps_the_notes(tmp_path):
    """nano and VS Code save in place: truncate, then write. A read between the two was committed by a copy moved
    over the file, and the editor's write went to the replaced file: MEMORY.md kept only the run log."""
    memory = tmp_path / "MEMORY.md"
    memory.write_text(_LOGGED_NOTES + _entry("before").to_line() + "\n")
    saved = memory.read_bytes()
    with memory.open("wb") as editor:  # truncated: the append reads an empty file
        runlog.append(_entry("during the save"), memory)
        editor.write(saved)
    assert memory.read_bytes().startswith(saved), "the notes the editor saved were lost"


def test_a_hard_linked_memory_md_stays_linked_when_a_line_is_appended(tmp_path):
    memory = tmp_path / "MEMORY.md"
    memory.write_text(_LOGGED_NOTES)
    other = tmp_path / "shared-notes.md"
    os.link(memory, other)
    runlog.append(_entry("linked"), memory)
    assert memory.stat().st_ino == other.stat().st_ino
    assert [e.result for e in runlog.read(other)] == ["linked"]


def test_an_editor_saving_a_shorter_text_after_a_truncated_read_leaves_the_appended_ends_after_it(tmp_path):
    """What docs/commands.md says of the in-place append: the editor's text lands whole; the heading and
    preamble the append wrote to the empty file it read are partly written over, their end and the run's
    line left after the editor's text."""
    memory = tmp_path / "MEMORY.md"
    memory.write_text(_LOGGED_NOTES)
    saved = b"# Notes\n\nshort\n"
    with memory.open("wb") as editor:  # truncated: the append reads an empty file
        runlog.append(_entry("during the save"), memory)
        editor.write(saved)
    text = memory.read_bytes()
    assert text.startswith(saved)
    assert runlog.HEADING.encode() not in text and text.endswith(b" during the save\n")


def test_a_line_before_a_users_section_breaks_a_hard_link(tmp_path):
    """docs/commands.md: the replace path (a copy moved over the file) leaves the other name with the old text."""
    memory = tmp_path / "MEMORY.md"
    memory.write_text(_LOGGED_NOTES + "## Ideas\n")
    other = tmp_path / "shared-notes.md"
    os.link(memory, other)
    runlog.append(_entry("replaced"), memory)
    assert memory.stat().st_ino != other.stat().st_ino
    assert other.read_text() == _LOGGED_NOTES + "## Ideas\n"
    assert [e.result for e in runlog.read(memory)] == ["replaced"]


def _editor_saving(memory: Path, monkeypatch, times: int) -> list[bytes]:
    """An editor saving `memory` in place (truncate, write) right before each of the append's first `times`
    copies is moved over it; what it saved, in order."""
    replace = runlog.appending.write_bytes_atomic
    saves: list[bytes] = []

    def saving_first(path, data, **options):
        if len(saves) < times:
            saves.append(memory.read_bytes().replace(b"my note", f"my note {len(saves)}".encode()))
            with memory.open("wb") as editor:
                editor.write(saves[-1])
            os.utime(memory, ns=(time.time_ns(), time.time_ns() + 1_000_000))  # a coarse clock keeps no change
        return replace(path, data, **options)

    monkeypatch.setattr(runlog.appending, "write_bytes_atomic", saving_first)
    return saves


def test_a_copy_is_never_moved_over_an_editors_save_made_after_the_read(tmp_path, monkeypatch):
    """A line before a section of the user's still replaces the file: only while it is the one read; an editor's
    save in between is read again and kept."""
    memory = tmp_path / "MEMORY.md"
    memory.write_text(_LOGGED_NOTES + _entry("before").to_line() + "\n\n## Ideas\n\n- try 2-CTA\n")
    saves = _editor_saving(memory, monkeypatch, times=1)
    runlog.append(_entry("after the save"), memory)
    text = memory.read_text()
    assert "my note 0" in text and "- try 2-CTA" in text
    assert [e.result for e in runlog.read(memory)] == ["before", "after the save"]
    assert len(saves) == 1


def test_an_editor_saving_at_every_try_costs_the_line_never_the_notes(tmp_path, monkeypatch):
    memory = tmp_path / "MEMORY.md"
    memory.write_text(_LOGGED_NOTES + _entry("before").to_line() + "\n\n## Ideas\n")
    saves = _editor_saving(memory, monkeypatch, times=10)
    with pytest.raises(runlog.ChangedWhileWritten, match="changed while it was written"):
        runlog.append(_entry("lost"), memory)
    assert memory.read_bytes() == saves[-1]
    assert len(saves) == runlog.appending.PLACING_TRIES


def test_a_line_cut_short_by_a_full_disk_is_taken_back(tmp_path, monkeypatch):
    memory = tmp_path / "MEMORY.md"
    memory.write_text(_LOGGED_NOTES)
    before = memory.read_bytes()
    real_write = os.write
    calls: list[int] = []

    def half_then_full(fd, data):
        calls.append(fd)
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patched, pytest.raises(OSError, match="No space"):
        patched.setattr(os, "write", half_then_full)
        runlog.append(_entry("half"), memory)
    assert memory.read_bytes() == before


def test_the_run_log_marks_a_changed_tree_as_a_wheels_stamp_does(tmp_path, monkeypatch):
    """entry.py wrote "+dirty" as its own string beside commit_stamp.DIRTY, the mark a wheel's stamp and
    tool_version read: one changed alone would log a checkout's changes in another word than a wheel's."""
    commit = _committed_repo(tmp_path)
    (tmp_path / "kernel.cu").write_text("// changed\n")
    monkeypatch.setattr(commit_stamp, "DIRTY", "+changed")
    assert runlog.git_state(tmp_path) == f"{commit}+changed"


def test_every_cell_is_logged_as_the_terminal_shows_it_and_its_cut_splits_no_escape():
    """ESC and U+202E of a typed name or a result were written raw, so `cat MEMORY.md` recoloured and reordered
    the terminal; BEL is stripped, as the terminal's messages strip it."""
    entry = runlog.RunEntry("2026-11-27T10:00:00Z", "nvfp4ctl check --submission 'x\x1b[31mred\u202e.py'",
                            "x\x1b[31mred\u202e.py", "abc1234", "no GPU", "2",
                            "error: no such file: x\x1b[31mred\u202e.py\x07", "nvfp4_gemm", tool="0.1.0 (abc1234)")
    line = entry.to_line()
    assert line[:-1].isprintable(), line
    read = runlog.RunEntry.from_line(line)
    assert read is not None and read.command == "nvfp4ctl check --submission 'x\\x1b[31mred\\u202e.py'"
    assert read.target == "x\\x1b[31mred\\u202e.py" and read.tool == "0.1.0 (abc1234)"
    assert read.result == "error: no such file: x\\x1b[31mred\\u202e.py" and read.problem == "nvfp4_gemm"
    long = runlog.RunEntry.from_line(_entry("z" * (MAX_RESULT_CELL - 4) + "\u202e" * 3).to_line())
    assert long is not None and long.result == "z" * (MAX_RESULT_CELL - 4) + "…"  # not `\u20…`
