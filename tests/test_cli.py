"""The CLI boundary: a user mistake is one red line and exit 2, every command run is logged."""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.check import plan
from nvfp4ctl.cli import _RECORDED, app
from nvfp4ctl.errors import ExitCode, FailuresFound, KernelCrash, KernelTimeout, UsageError
from nvfp4ctl.tool_version import tool_version
from nvfp4ctl.workspace import memory_path


@dataclasses.dataclass(frozen=True)
class ThreeTests:
    """A task of three tests and no file: a dataclass, as the target's lookup replaces fields of a task."""
    tests: tuple[int, ...] = (1, 2, 3)
    path: Path | None = None
    submission: Path | None = None
    timeout_s: float = 180.0
    is_users: bool = False
    problem: str = "nvfp4_gemm"
    shipped_because: str | None = None

    def timeout_for(self, run: str) -> None:
        return None

    def resolve_timeout(self, flag: float | None, run: str) -> tuple[float, str]:
        return plan.resolve_timeout(flag, None)

    def gpu_mode_limit_note(self, run: str, source: str) -> None:
        return None


@pytest.fixture
def three_tests(monkeypatch):
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.setattr(plan, "load_task_file", lambda path: ThreeTests())


def test_exit_codes_are_the_documented_ones():
    assert [int(e.exit_code) for e in (FailuresFound(), UsageError(), KernelTimeout(), KernelCrash())] == [1, 2, 3, 4]
    assert ExitCode.OK == 0


def test_usage_error_is_one_line_exit_2_and_logged(three_tests, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", "check", "--only", "11"])  # the log records sys.argv
    result = CliRunner().invoke(app, ["check", "--only", "11"])
    assert result.exit_code == 2
    assert result.output == "error: --only 11: task.yml has 3 tests (1-3)\n"
    entry = runlog.read(memory_path())[-1]
    assert entry.command == "nvfp4ctl check --only 11"
    assert entry.exit_code == "2"
    assert entry.result == "error: --only 11: task.yml has 3 tests (1-3)"


def test_run_log_failure_does_not_change_the_exit_code(three_tests, tmp_path, monkeypatch):
    in_the_way = tmp_path / "notes.txt"
    in_the_way.write_text("x\n")
    memory = in_the_way / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))  # under a file: the append fails
    result = CliRunner().invoke(app, ["check", "--only", "0"])
    assert result.exit_code == 2
    assert "warning: run log not written" in result.output
    # the path and the setting that chose it, not Python's "[Errno 20] Not a directory: '...'"
    assert (f"run log not written to {memory} (NVFP4CTL_MEMORY): {in_the_way} is not a folder"
            in " ".join(result.output.split()))


def test_interrupt_is_reported_and_logged(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(plan, "load_task_file", interrupted)
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    result = CliRunner().invoke(app, ["check"])
    assert "error: interrupted" in result.output
    assert result.exit_code == 130  # not 1: an interrupted run found no failures
    assert runlog.read(memory_path())[-1].result == "interrupted"


def _interrupted_once(real):
    """`real`, except that its first call is cut short by Ctrl-C."""
    calls = []

    def step(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    return step


def test_ctrl_c_while_a_command_starts_is_the_tools_interrupt(monkeypatch):
    """Before the command body runs (the command's set-up in the CLI): "interrupted", exit 130 and the
    run-log line, never click's "Aborted!" (exit 1, or a silent 130 with newer typers)."""
    from nvfp4ctl import workspace

    monkeypatch.setattr(workspace, "reset", _interrupted_once(workspace.reset))
    result = CliRunner().invoke(app, ["dump", "--umma", "--no-cute"])
    assert (result.exit_code, "Aborted" in result.output) == (130, False), result.output
    assert "error: interrupted" in result.output
    assert runlog.read(memory_path())[-1].result == "interrupted"


@pytest.mark.parametrize("line", [["check", "--only", "3"], ["bench", "--json", "--shape", "128x128x256"]],
                         ids=["check", "bench-json"])
def test_ctrl_c_as_the_run_log_setting_is_judged_is_logged(monkeypatch, line):
    """The first step after the command line is parsed, NVFP4CTL_MEMORY judged (loading the run log's code): a Ctrl-C
    there said "interrupted" and exited 130 with no run-log line, where one a moment later has its line."""
    from nvfp4ctl import cli

    from cli_streams import separate_streams_runner

    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory_path()))  # the setting judged, as where a user sets it
    monkeypatch.setattr(cli, "_refuse_a_run_log_that_is_not_one",
                        _interrupted_once(cli._refuse_a_run_log_that_is_not_one))
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *line])  # the line the run log's entry names
    before = len(runlog.read(memory_path()))
    result = separate_streams_runner().invoke(app, line)
    assert result.exit_code == 130, result.output
    assert result.stderr == "error: interrupted\n"
    if "--json" in line:
        assert json.loads(result.stdout) == _INTERRUPTED_DOCUMENT
    logged = runlog.read(memory_path())
    assert [entry.result for entry in logged[before:]] == ["interrupted"]
    assert logged[-1].command == "nvfp4ctl " + " ".join(line)


def test_a_second_ctrl_c_while_an_error_is_shown_is_the_tools_interrupt(three_tests, monkeypatch):
    from nvfp4ctl.console import Console

    monkeypatch.setattr(Console, "error", _interrupted_once(Console.error))
    result = CliRunner().invoke(app, ["check", "--only", "11"])  # a usage error, cut short while shown
    assert (result.exit_code, "Aborted" in result.output) == (130, False), result.output
    assert "error: interrupted" in result.output
    assert runlog.read(memory_path())[-1].result == "interrupted"


def test_ctrl_c_while_the_global_options_are_read_is_the_tools_interrupt(monkeypatch):
    from nvfp4ctl import cli

    monkeypatch.setattr(cli, "set_verbosity", _interrupted_once(cli.set_verbosity))
    result = CliRunner().invoke(app, ["-q", "dump", "--umma", "--no-cute"])
    assert (result.exit_code, "Aborted" in result.output) == (130, False), result.output
    assert "error: interrupted" in result.output


@pytest.mark.parametrize("line", [["-q", "dump", "--umma", "--no-cute"], ["dump", "--umma", "--no-cute"]],
                         ids=["global-option", "command-name"])
def test_ctrl_c_while_typer_parses_the_command_line_is_the_tools_interrupt(monkeypatch, line):
    """The first moments of a run, the program's own options parsed before the group's invoke: exit 130 with no
    word and no run-log line, where the README promises "interrupted" in both."""
    from typer.core import TyperGroup

    monkeypatch.setattr(TyperGroup, "parse_args", _interrupted_once(TyperGroup.parse_args))
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *line])  # the line the run log's entry names
    before = len(runlog.read(memory_path()))
    result = CliRunner().invoke(app, line)
    assert (result.exit_code, "Aborted" in result.output) == (130, False), result.output
    assert "error: interrupted" in result.output
    logged = runlog.read(memory_path())
    assert len(logged) == before + 1 and logged[-1].result == "interrupted"
    assert logged[-1].command == "nvfp4ctl " + " ".join(line)


def test_ctrl_c_while_typer_parses_a_line_naming_no_command_is_said(monkeypatch):
    from typer.core import TyperGroup

    monkeypatch.setattr(TyperGroup, "parse_args", _interrupted_once(TyperGroup.parse_args))
    before = len(runlog.read(memory_path()))
    result = CliRunner().invoke(app, ["-q"])
    assert result.exit_code == 130 and "error: interrupted" in result.output
    assert len(runlog.read(memory_path())) == before



def _main_exit_code() -> int | str | None:
    """The exit code of the program's entry point (cli.main) for the argv set: a Ctrl-C that escaped it as a
    KeyboardInterrupt fails the test (left to pytest, it would stop the whole session)."""
    from nvfp4ctl import cli

    with pytest.raises(SystemExit) as stopped:
        try:
            cli.main()
        except KeyboardInterrupt:
            pytest.fail("Ctrl-C went through main as a KeyboardInterrupt")
    return stopped.value.code


def test_ctrl_c_before_typer_reads_the_command_line_is_the_tools_interrupt(monkeypatch, capsys):
    import typer

    monkeypatch.setattr(typer.main, "get_command", _interrupted_once(typer.main.get_command))
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", "dump", "--umma", "--no-cute"])
    before = len(runlog.read(memory_path()))
    assert _main_exit_code() == 130
    assert "error: interrupted" in capsys.readouterr().err
    assert [e.result for e in runlog.read(memory_path())[before:]] == ["interrupted"]


_INTERRUPTED_DOCUMENT = {"version": 1, "error": "interrupted", "exit_code": 130}


@pytest.mark.parametrize("line", [["bench", "--json", "--shape", "128x128x256"], ["-q", "lint", "--format", "json", "k.cu"]],
                         ids=["bench", "lint"])
def test_ctrl_c_while_typer_parses_a_line_asking_for_json_gives_the_json_document(monkeypatch, line):
    """docs/commands.md: a command asked for JSON still writes one document on stdout when it stops before its
    run; Ctrl-C while the line was parsed wrote none."""
    from typer.core import TyperGroup

    from cli_streams import separate_streams_runner

    monkeypatch.setattr(TyperGroup, "parse_args", _interrupted_once(TyperGroup.parse_args))
    result = separate_streams_runner().invoke(app, line)
    assert result.exit_code == 130, result.output
    assert json.loads(result.stdout) == _INTERRUPTED_DOCUMENT
    assert result.stderr == "error: interrupted\n"


def test_ctrl_c_while_typer_parses_a_line_asking_no_json_writes_nothing_on_stdout(monkeypatch):
    from typer.core import TyperGroup

    from cli_streams import separate_streams_runner

    monkeypatch.setattr(TyperGroup, "parse_args", _interrupted_once(TyperGroup.parse_args))
    result = separate_streams_runner().invoke(app, ["bench", "--only", "--json"])  # --json: --only's value
    assert (result.exit_code, result.stdout) == (130, "")


def test_ctrl_c_while_a_commands_options_are_parsed_under_json_gives_the_json_document(monkeypatch):
    from typer.core import TyperCommand

    from cli_streams import separate_streams_runner

    monkeypatch.setattr(TyperCommand, "parse_args", _interrupted_once(TyperCommand.parse_args), raising=False)
    result = separate_streams_runner().invoke(app, ["tune", "--json", "k.cu"])
    assert result.exit_code == 130, result.output
    assert json.loads(result.stdout) == _INTERRUPTED_DOCUMENT


def test_ctrl_c_while_a_commands_own_options_are_read_is_logged(monkeypatch):
    """The command's own parse (`check --only ...`, after the program's options and the command's name): its
    run-log line says "interrupted", as for a Ctrl-C while the program's options are read."""
    from typer.core import TyperCommand

    monkeypatch.setattr(TyperCommand, "parse_args", _interrupted_once(TyperCommand.parse_args), raising=False)
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", "check", "--only", "3"])  # the line the run log's entry names
    before = len(runlog.read(memory_path()))
    result = CliRunner().invoke(app, ["check", "--only", "3"])
    assert (result.exit_code, "Aborted" in result.output) == (130, False), result.output
    assert result.output.count("error: interrupted") == 1
    logged = runlog.read(memory_path())
    assert [entry.result for entry in logged[before:]] == ["interrupted"]
    assert logged[-1].command == "nvfp4ctl check --only 3"


def test_ctrl_c_while_an_unlogged_commands_options_are_read_adds_no_line(monkeypatch):
    from typer.core import TyperCommand

    monkeypatch.setattr(TyperCommand, "parse_args", _interrupted_once(TyperCommand.parse_args), raising=False)
    before = len(runlog.read(memory_path()))
    result = CliRunner().invoke(app, ["log", "-n", "1"])
    assert result.exit_code == 130 and "error: interrupted" in result.output
    assert len(runlog.read(memory_path())) == before


def test_ctrl_c_before_typer_reads_a_line_asking_for_json_gives_the_json_document(monkeypatch, capsys):
    import typer

    from nvfp4ctl.console import get_console

    get_console().json_written = False  # a fresh process's: an earlier test's document is not this line's
    monkeypatch.setattr(typer.main, "get_command", _interrupted_once(typer.main.get_command))
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", "bench", "--json", "--shape", "128x128x256"])
    assert _main_exit_code() == 130
    said = capsys.readouterr()
    assert json.loads(said.out) == _INTERRUPTED_DOCUMENT and "error: interrupted" in said.err


def test_ctrl_c_while_the_run_log_module_loads_is_the_tools_interrupt(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def importing(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "nvfp4ctl" and fromlist and "runlog" in fromlist:
            monkeypatch.setattr(builtins, "__import__", real_import)
            raise KeyboardInterrupt
        return real_import(name, globals, locals, fromlist, level)

    before = len(runlog.read(memory_path()))
    monkeypatch.setattr(builtins, "__import__", importing)
    result = CliRunner().invoke(app, ["dump", "--umma", "--no-cute"])
    assert (result.exit_code, "Aborted" in result.output) == (130, False), result.output
    assert "run log not written: interrupted" in result.output
    assert len(runlog.read(memory_path())) == before


def test_an_interrupt_while_the_run_log_is_written_is_one_line_not_a_traceback(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runlog, "append", interrupted)
    result = CliRunner().invoke(app, ["dump", "--umma", "--no-cute"])
    assert result.exit_code == 130 and "Traceback" not in result.output
    assert "warning: run log not written: interrupted" in result.output


def test_a_cache_folder_that_cannot_be_made_is_one_line_exit_2_and_still_logged(tmp_path, monkeypatch):
    not_a_folder = tmp_path / "cache-file"
    not_a_folder.write_text("x")
    monkeypatch.setenv("NVFP4CTL_CACHE", str(not_a_folder))
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k(float* p) { p[0] = 1.f; }\n")
    # build's first step makes a lock in the cache, whatever is installed (dump --umma uses the cache
    # only where the nvidia-cutlass wheel is)
    result = CliRunner().invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"error: cannot use the cache folder {not_a_folder} (NVFP4CTL_CACHE): Not a directory" in result.output
    assert "run log not written" not in result.output  # the log's lock falls back to the temporary folder
    assert runlog.read(memory_path())[-1].result.startswith("error: cannot use the cache folder")


def test_a_relative_cache_setting_naming_a_file_is_one_line_exit_2(tmp_path, monkeypatch):
    # the setting stays relative while the failing path (cachefile/locks) is compared from the current folder
    monkeypatch.chdir(tmp_path)
    Path("cachefile").write_text("x")
    monkeypatch.setenv("NVFP4CTL_CACHE", "cachefile")
    Path("k.cu").write_text("__global__ void k(float* p) { p[0] = 1.f; }\n")
    result = CliRunner().invoke(app, ["build", "k.cu", "--arch", "sm_90a"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "error: cannot use the cache folder cachefile (NVFP4CTL_CACHE): Not a directory" in result.output


def _build_with_the_cache(tmp_path, monkeypatch, cache) -> str:
    """A kernel's build with NVFP4CTL_CACHE=`cache`, refused (exit 2): its output flattened."""
    monkeypatch.setenv("NVFP4CTL_CACHE", str(cache))
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k(float* p) { p[0] = 1.f; }\n")
    result = CliRunner().invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert result.exit_code == 2, result.output
    return " ".join(result.output.split())


def test_a_file_where_the_cache_keeps_its_locks_folder_is_one_line_exit_2(tmp_path, monkeypatch):
    """A file named locks in a writable cache folder was a FileExistsError traceback, exit 1."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "locks").write_text("")
    said = _build_with_the_cache(tmp_path, monkeypatch, cache)
    assert (f"error: cannot use the cache folder {cache} (NVFP4CTL_CACHE): {cache / 'locks'}: a file is where nvfp4ctl"
            " keeps a folder; remove it, or point NVFP4CTL_CACHE at another folder") in said


@pytest.mark.parametrize("under", [("a", "b"), ()])
def test_a_cache_folder_under_a_dangling_link_is_one_line_exit_2(tmp_path, monkeypatch, under):
    """Making it fails on the link (above it, or the cache folder itself), not on a path inside the cache
    folder; the line said "File exists (.../link)", which names no fault: it says the link's folder is missing."""
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    cache = tmp_path.joinpath("link", *under)
    said = _build_with_the_cache(tmp_path, monkeypatch, cache)
    assert (f"error: cannot use the cache folder {cache} (NVFP4CTL_CACHE): {tmp_path / 'link'} is a link to a missing"
            f" folder ({tmp_path / 'gone'}); point NVFP4CTL_CACHE at a writable folder") in said


@pytest.mark.parametrize("named", ["k.cu", "submission.py"])
def test_a_cache_folder_under_a_dangling_link_is_refused_before_the_progress_line(tmp_path, monkeypatch, named):
    """`compiling k.cu (sm_90a): 0 of 1, 0 s` came before the cache folder's line, as if a compile had begun."""
    from cli_streams import separate_streams_runner

    (tmp_path / "link").symlink_to(tmp_path / "gone")
    cache = tmp_path / "link" / "c"
    monkeypatch.setenv("NVFP4CTL_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    Path("k.cu").write_text("__global__ void k(float* p) { p[0] = 1.f; }\n")
    Path("submission.py").write_text('from torch.utils.cpp_extension import load_inline\n'
                                     'CUDA = "__global__ void k(float* p) { p[0] = 1.f; }\\n"\n'
                                     'mod = load_inline(name="one", cpp_sources="", cuda_sources=CUDA)\n'
                                     'def custom_kernel(data):\n    return data[-1]\n')
    result = separate_streams_runner().invoke(app, ["build", named, "--arch", "sm_90a"])
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "compiling" not in result.stdout + result.stderr
    assert " ".join(result.stderr.split()) == (
        f"error: cannot use the cache folder {cache} (NVFP4CTL_CACHE): {tmp_path / 'link'} is a link to a missing"
        f" folder ({tmp_path / 'gone'}); point NVFP4CTL_CACHE at a writable folder")


def test_a_cache_whose_locks_folder_cannot_be_written_is_a_permission_error_naming_it(tmp_path, monkeypatch):
    from nvfp4ctl.build.cache import require_usable_cache

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache" / "locks").mkdir(parents=True)
    require_usable_cache()
    monkeypatch.setattr("os.access", lambda path, mode: False)
    with pytest.raises(PermissionError) as error:
        require_usable_cache()
    assert error.value.filename == str(tmp_path / "cache" / "locks")


def test_a_home_that_cannot_be_made_is_the_cache_folders_one_line_exit_2(tmp_path, monkeypatch):
    """HOME=/nonexistent, as a service user has it: making ~/.cache/nvfp4ctl fails on the home itself,
    which only root may create (refused here as it is for any other user)."""
    import os

    home = tmp_path / "nonexistent"
    real_mkdir = os.mkdir

    def refused_in_root(path, *args, **kwargs):
        if Path(path) == home:
            raise PermissionError(13, "Permission denied", str(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.delenv("NVFP4CTL_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(os, "mkdir", refused_in_root)
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k(float* p) { p[0] = 1.f; }\n")
    result = CliRunner().invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert result.exit_code == 2, result.output
    assert (f"error: cannot use the cache folder {home / '.cache' / 'nvfp4ctl'}: Permission denied ({home});"
            " point NVFP4CTL_CACHE at a writable folder") in result.output


def test_an_error_above_a_usable_cache_folder_is_not_the_caches(tmp_path, monkeypatch):
    from nvfp4ctl.cli import _cache_folder_error

    (tmp_path / "cache").mkdir()
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    assert _cache_folder_error(PermissionError(13, "Permission denied", str(tmp_path))) is None


def test_a_full_disk_under_a_relative_cache_setting_names_the_cache(tmp_path, monkeypatch):
    from nvfp4ctl.cli import _full_folder_error

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_CACHE", "relative-cache")
    full_disk = OSError(28, "No space left on device", str(tmp_path / "relative-cache" / "entry" / "main.so"))
    error = _full_folder_error(full_disk)
    assert error is not None and "the cache folder relative-cache (NVFP4CTL_CACHE) is full" in str(error)


def test_other_os_errors_are_not_blamed_on_the_cache(monkeypatch):
    def broken(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "/somewhere/else")

    monkeypatch.setattr(plan, "load_task_file", broken)
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    result = CliRunner().invoke(app, ["check"])
    assert isinstance(result.exception, PermissionError)  # a real crash stays visible


def test_a_crash_of_nvfp4ctl_itself_still_leaves_its_run_log_line(monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("unexpected\nsecond line")

    monkeypatch.setattr(plan, "load_task_file", broken)
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", "check"])
    result = CliRunner().invoke(app, ["check"])
    assert isinstance(result.exception, ValueError)  # the traceback stays: it is a bug to report
    entry = runlog.read(memory_path())[-1]
    assert entry.command == "nvfp4ctl check"
    assert (entry.exit_code, entry.result) == ("1", "internal error: ValueError: unexpected")


@pytest.mark.parametrize("args, message", [
    (["lint", "--format", "xml"], "error: --format: 'xml' is not one of text, json"),
    (["check", "--scales", "xml"], "error: --scales: 'xml' is not one of generator, full"),
    (["check", "--only", "1", "--only"], "error: Option '--only' requires an argument."),
    (["build", "--nosuch"], "error: No such option"),  # then ": --nosuch", or " '--nosuch'." from click 8.5.1
    (["-q", "--nosuch", "build"], "error: No such option"),  # before the command's name: its run all the same
    (["--task", "t.yml", "check", "--nosuch"], "error: No such option"),
])
def test_an_option_click_rejects_is_still_logged(monkeypatch, args, message):
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *args])
    before = len(runlog.read(memory_path()))
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    entries = runlog.read(memory_path())
    assert len(entries) == before + 1
    assert entries[-1].exit_code == "2" and entries[-1].result.startswith(message)
    assert next(arg for arg in args if arg.startswith("--")) in entries[-1].result
    assert entries[-1].command == "nvfp4ctl " + " ".join(args)


@pytest.mark.parametrize("args", [["log", "-n", "x"], ["nosuch"], ["init", "--problem"], ["--nosuch", "log"],
                                  ["--nosuch"], ["--nosuch", "--", "log"], ["--nosuch", "--"]])
def test_parse_errors_of_unlogged_commands_stay_unlogged(args):
    before = len(runlog.read(memory_path()))
    assert CliRunner().invoke(app, args).exit_code == 2
    assert len(runlog.read(memory_path())) == before


@pytest.mark.parametrize("args", [
    ["lint", "{long}.py"],
    ["build", "{long}.cu"],
    ["check", "--submission", "{long}.py"],
    ["export", "--kernel", "default", "-o", "{long}.py"],
    ["dump", "--umma", "--kernel", "{long}.cu"],
    ["tune", "--compile-only", "--kernel", "{long}.cu"],
])
def test_a_name_too_long_for_the_file_system_is_one_line_exit_2_and_logged(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    long = "x" * 300  # over NAME_MAX (255): stat() itself fails, with ENAMETOOLONG
    args = [arg.format(long=long) for arg in args]
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *args])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.output.startswith(f"error: {long}") and result.output.rstrip().endswith("File name too long")
    entry = runlog.read(memory_path())[-1]
    assert entry.exit_code == "2" and entry.result.endswith("File name too long")


def test_a_link_loop_on_a_named_path_is_the_users_error_in_either_form(tmp_path):
    from nvfp4ctl.cli import _named_path_error

    loop = tmp_path / "loop.py"
    # pathlib's resolve() raises a link loop as a RuntimeError before Python 3.13, an OSError since
    for raised in (RuntimeError(f"Symlink loop from {str(loop)!r}"),
                   OSError(40, "Too many levels of symbolic links", str(loop))):
        error = _named_path_error(raised, [loop])
        assert isinstance(error, UsageError) and str(error) == f"{loop}: Too many levels of symbolic links"
    assert _named_path_error(RuntimeError("Symlink loop from '/elsewhere'"), [loop]) is None
    assert _named_path_error(RuntimeError("CUDA error"), [loop]) is None


def test_a_task_file_that_loops_is_one_line_exit_2_and_logged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "task.yml").symlink_to("task.yml")
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    result = CliRunner().invoke(app, ["check", "--task", "task.yml"])
    assert result.exit_code == 2, result.output
    assert result.output == "error: task.yml: cannot read the task file (Too many levels of symbolic links)\n"
    assert runlog.read(memory_path())[-1].exit_code == "2"


def test_an_os_error_on_a_path_the_user_did_not_name_stays_a_crash(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "elsewhere"))

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(plan, "load_task_file", broken)
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    result = CliRunner().invoke(app, ["check", "--task", "task.yml"])  # named, but not the path that failed
    assert isinstance(result.exception, PermissionError)


def test_an_os_error_inside_a_usable_cache_is_not_blamed_on_the_setting():
    from nvfp4ctl.cli import _cache_folder_error
    from nvfp4ctl.project import cache_root

    cache_root().mkdir(parents=True, exist_ok=True)
    full_disk = OSError(28, "No space left on device", str(cache_root() / "entry" / "main.so"))
    assert _cache_folder_error(full_disk) is None  # a real failure stays one



def test_version_is_the_packages():
    import re
    from pathlib import Path

    from nvfp4ctl import __version__

    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()  # tomllib needs 3.11
    assert re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE).group(1) == __version__
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"nvfp4ctl {tool_version()}\n"


def test_version_names_the_commit_the_run_log_records(monkeypatch) -> None:
    """--version printed 0.1.0 alone where the run log's lines said 0.1.0 (abc1234): two builds looked the same."""
    from nvfp4ctl import tool_version as versions

    monkeypatch.setattr(versions, "tool_version", lambda: "0.1.0 (abc1234)")
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == "nvfp4ctl 0.1.0 (abc1234)\n"


@pytest.mark.parametrize("busy", ["filelock", "flock"])
def test_a_busy_run_log_lock_is_not_blamed_on_a_setting(monkeypatch, tmp_path, busy):
    """Another nvfp4ctl holding the run log's lock past its timeout is an OSError (TimeoutError) too,
    but no setting is wrong: the warning must not end '; set NVFP4CTL_MEMORY'."""
    import filelock

    def held(entry, memory):
        raise (filelock.Timeout(str(tmp_path / "runlog.lock")) if busy == "filelock"
               else TimeoutError(f"another nvfp4ctl held {memory} for 30 s"))

    monkeypatch.setattr(runlog, "append", held)
    monkeypatch.delenv("NVFP4CTL_MEMORY", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["dump", "--umma", "--no-cute"])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert "warning: run log not written to" in said
    assert ("could not be acquired" if busy == "filelock" else "held") in said
    assert "set NVFP4CTL_MEMORY" not in said


def _commands() -> list[str]:
    import typer

    return sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", _commands())
def test_help_names_no_checkout_path_a_wheel_user_lacks(command):
    """`kernels/sm100/...` exists only in the repository; from the wheel a help text names the file by
    what it is, or by the absolute path of the copy nvfp4ctl ships (which exists either way). A guide is
    named by its name in the repository (docs/byo_kernel.md, which the wheel ships too), never by a
    path: that named one machine's checkout and wrapped across lines."""
    import re
    from pathlib import Path

    from nvfp4ctl.project import REPO_DIR

    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    # help wraps lines between words, and long paths after "-" or "/"
    unwrapped = re.sub(r"\n\s+", " ", re.sub(r"(?<=[-/])\n\s+", "", result.output))
    relative = re.findall(r"(?<![\w/.-])(?:kernels|docs|tests|benchmarks|scripts)/[\w.-]+(?:/[\w.-]+)*\.\w+", unwrapped)
    assert [name for name in relative if not (name.startswith("docs/") and name.endswith(".md"))] == [], relative
    for guide in relative:
        assert (REPO_DIR / guide).is_file(), guide
    assert re.findall(r"(?<![\w.-])/[\w./-]+\.md\b", unwrapped) == []
    for absolute in re.findall(r"(?<![\w.-])/[\w./-]+\.cu\b", unwrapped):
        assert Path(absolute).is_file(), absolute


@pytest.mark.parametrize("command", ["check", "dump"])
def test_help_names_the_umma_guide_by_its_repository_name(command):
    """check --dump's and dump --from-log's help printed the guide's absolute path, across lines."""
    from nvfp4ctl.project import REPO_DIR

    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "docs/byo_kernel.md" in result.output
    import re

    assert str(REPO_DIR) not in re.sub(r"\n\s*", "", result.output)  # a path wraps after "-" or "/"


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGHUP"])
def test_stop_signals_raise_ctrl_c_inside_the_block_only(signum):
    import os
    import signal

    from nvfp4ctl.interrupts import stop_signals_as_ctrl_c

    number = getattr(signal, signum)
    before = signal.getsignal(number)
    with pytest.raises(KeyboardInterrupt), stop_signals_as_ctrl_c():
        os.kill(os.getpid(), number)
    assert signal.getsignal(number) == before


def test_a_hangup_ignored_by_nohup_stays_ignored():
    import signal

    from nvfp4ctl.interrupts import stop_signals_as_ctrl_c

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stop_signals_as_ctrl_c():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is signal.default_int_handler
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_an_interrupt_whose_message_cannot_be_written_is_still_130_and_logged(monkeypatch):
    """The terminal is gone (SIGHUP): writing "interrupted" to it fails; the exit code and the run log
    still say what happened."""
    from nvfp4ctl.console import Console

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    def terminal_gone(self, message):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(plan, "load_task_file", interrupted)
    monkeypatch.setattr(Console, "error", terminal_gone)
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    result = CliRunner().invoke(app, ["check"])
    assert result.exit_code == 130, result.output
    assert runlog.read(memory_path())[-1].result == "interrupted"


@pytest.mark.parametrize("args, message", [
    (["lint", "--format", "yaml"], "error: --format: 'yaml' is not one of text, json\n"),
    (["bench", "--settle", "nan"], "error: --settle: nan is not a number of seconds ≥ 0\n"),
    (["bench", "--settle", "-1"], "error: --settle: -1 is not a number of seconds ≥ 0\n"),
    (["bench", "--settle", "inf"], "error: --settle: inf is not a number of seconds ≥ 0\n"),
    (["bench", "--mode", "x"], "error: --mode: 'x' is not one of benchmark, leaderboard\n"),
    (["bench", "--max-repeats", "0"], "error: --max-repeats: 0 is not an integer ≥ 1\n"),
    (["bench", "--max-noise", "nan"], "error: --max-noise: nan is not a percentage > 0\n"),
    (["bench", "--max-noise", "few"], "error: --max-noise: few is not a percentage > 0\n"),
    (["bench", "--timeout", "soon"], "error: --timeout: soon is not a number of seconds > 0\n"),
    (["bench", "--only", "1", "--only", "x"], "error: --only: x is not an integer\n"),
    (["build", "--arch", "sm_80"], "error: --arch: 'sm_80' is not one of sm_90a, sm_100a, all\n"),
    (["check", "--only", "three"], "error: --only: three is not an integer\n"),
    (["check", "--seed", "-1"], "error: --seed: -1 is not an integer ≥ 0\n"),
    (["check", "--seed", str(2**63)], f"error: --seed: {2**63} is not an integer ≤ {2**63 - 1}\n"),
    (["check", "--scales", "x"], "error: --scales: 'x' is not one of generator, full\n"),
    (["check", "--timeout", "0"], "error: --timeout: 0 is not a number of seconds > 0\n"),
    (["dump", "--seed", "1.5"], "error: --seed: 1.5 is not an integer ≥ 0\n"),
    (["dump", "--row", "x"], "error: --row: x is not an integer\n"),
    (["dump", "--kblock", "x"], "error: --kblock: x is not an integer\n"),
    (["dump", "--sf-vec", "x"], "error: --sf-vec: x is not an integer\n"),
    (["dump", "--block-k", "x"], "error: --block-k: x is not an integer\n"),
    (["log", "-n", "0"], "error: -n: 0 is not an integer ≥ 1\n"),
    (["log", "-n0"], "error: -n: 0 is not an integer ≥ 1\n"),
    (["log", "--last", "x"], "error: --last: x is not an integer ≥ 1\n"),
    (["log", "--last=x"], "error: --last: x is not an integer ≥ 1\n"),
    (["log", "-n", "5", "--last", "0"], "error: --last: 0 is not an integer ≥ 1\n"),
    (["log", "--last", "0", "--trend", "-n", "x"], "error: -n: x is not an integer ≥ 1\n"),
    (["tune", "--shapes", "x"], "error: --shapes: 'x' is not one of tests, benchmarks, all\n"),
    (["tune", "--budget", "inf"], "error: --budget: inf is not a number of seconds > 0\n"),
    (["tune", "--gpus", "0"], "error: --gpus: 0 is not an integer ≥ 1\n"),
    (["tune", "--rounds", "0"], "error: --rounds: 0 is not an integer ≥ 1\n"),
    (["tune", "--timeout", "nan"], "error: --timeout: nan is not a number of seconds > 0\n"),
])
def test_a_bad_option_value_is_one_line_in_the_tools_words(args, message):
    """Not click's usage block over the wording of the validation library under typer ("Value error, …",
    "Input should be greater than or equal to 0")."""
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.output == message


@pytest.mark.parametrize("args, option", [
    *[([command, "--task", ""], "--task") for command in ("bench", "build", "check", "dump", "export", "lint", "tune")],
    *[([command, "--kernel", ""], "--kernel") for command in ("bench", "check", "dump", "export", "tune")],
    *[([command, "--submission", ""], "--submission") for command in ("bench", "build", "check")],
    (["dump", "--umma", "--from-log", ""], "--from-log"),
])
def test_an_empty_path_is_said_to_be_empty(args, option):
    """`--task ""` said `.: cannot read the task file (Is a directory)`, `--kernel ""` said `--kernel .: not a
    file`: Path("") is the current folder, which the user never named."""
    result = CliRunner().invoke(app, args)
    assert (result.exit_code, result.output) == (2, f"error: {option}: an empty path; name a file\n")


@pytest.mark.parametrize("args, message", [
    (["log", "--target", ""], "--target: an empty path; name a file"),
    (["build", ""], "SOURCES: an empty path; name a file"),
    (["build", "k.cu", ""], "SOURCES: an empty path; name a file"),
    (["lint", ""], "PATHS: an empty path; name a file or folder"),
    (["lint", "k.cu", ""], "PATHS: an empty path; name a file or folder"),
])
def test_an_empty_path_argument_or_log_target_is_said_to_be_empty(tmp_path, monkeypatch, args, message):
    """`log --target ""` looked for runs of the current folder, `build ""` said `. is a folder, not a kernel
    source` and `lint ""` checked the current folder: Path("") is ".", which the user never named. An argument is
    named as --help shows it (SOURCES, PATHS), not by its Python parameter (sources, paths)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    result = CliRunner().invoke(app, args)
    assert (result.exit_code, result.output) == (2, f"error: {message}\n")


def test_an_empty_output_is_said_to_be_empty():
    result = CliRunner().invoke(app, ["export", "--kernel", "default", "-o", ""])
    assert (result.exit_code, result.output) == (2, "error: -o: an empty path; name the file to write\n")


def _options_with_a_short_name() -> list[tuple[str, str, str]]:
    """(command, short name, long name) of every option with both names whose value one of
    nvfp4ctl.options' parsers reads."""
    found = []
    for command in app.registered_commands:
        for hint in inspect.get_annotations(command.callback, eval_str=True).values():
            for info in getattr(hint, "__metadata__", ()):
                if getattr(getattr(info, "parser", None), "__module__", None) != "nvfp4ctl.options":
                    continue
                names = [name for name in (info.default, *(info.param_decls or ())) if isinstance(name, str)]  # an argument has none
                long = [name for name in names if name.startswith("--")]
                found.extend((command.name, name, long[0]) for name in names
                             if long and name.startswith("-") and not name.startswith("--"))
    return sorted(found)


@pytest.mark.parametrize("command, short, long", _options_with_a_short_name())
def test_a_bad_value_names_the_option_as_it_was_typed(command, short, long):
    """`log -n 0` said `--last`, a name the user had not typed; the message names the option as typed,
    in either spelling, and under the global options before the command's name too."""
    bad = {"-o": "newdir/"}.get(short, "not-a-value")  # a folder, where the option names a file to write
    for typed in (short, long):
        for args in ([command, typed, bad], ["-q", command, typed, bad]):
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 2, result.output
            assert result.output.startswith(f"error: {typed}: {bad} "), result.output


def test_a_bad_value_the_arguments_do_not_show_names_the_option_by_its_long_name():
    from nvfp4ctl.options import typed_name, typed_options

    class Param:
        opts = ["-n", "--last"]

    def typed(*args: str) -> tuple:
        return typed_options(args, {"-n": 1, "--last": 1, "--trend": 0, "--grep": 1})

    assert typed_name(Param(), None, "0") == "--last"
    assert typed_name(Param(), typed("--trend", "--", "-n", "0"), "0") == "--last"  # after --: no option
    assert typed_name(Param(), typed("-n", "0", "--last", "5"), "0") == "-n"  # the spelling that came with the value
    assert typed_name(Param(), typed("--grep", "-n", "--last", "0"), "0") == "--last"  # -n: --grep's value


@pytest.mark.parametrize("args, typed", [
    (["--only", "--json"], [("--only", "--json")]),  # a value that looks like an option is still the value
    (["--json", "--only=3", "x", "--shape"], [("--json", None), ("--only", "3"), ("--shape", None)]),
    (["-qn5", "-n", "-q", "-n=5"], [("-q", None), ("-n", "5"), ("-n", "-q"), ("-n", "=5")]),  # as click reads -n=5
    (["--nosuch", "--json", "--no-json", "--", "--json"], [("--nosuch", None), ("--json", None), ("--no-json", None)]),
    (["-", "--only"], [("--only", None)]),
])
def test_typed_options_reads_the_arguments_as_click_parses_them(args, typed):
    from nvfp4ctl.options import typed_options

    arities = {"--only": 1, "-n": 1, "--shape": 1, "--json": 0, "--no-json": 0, "-q": 0}
    assert list(typed_options(args, arities)) == typed


@pytest.mark.parametrize("args, positions", [
    (["--only", "a.py", "b.py"], [2]),  # a.py is --only's value
    (["-qn5", "a.py", "-n", "5", "-", "--json"], [1, 4]),
    (["--only=3", "a.py", "--", "--json", "b.py"], [1, 3, 4]),  # after --, every word is an argument
])
def test_argument_positions_are_the_words_click_reads_as_arguments(args, positions):
    from nvfp4ctl.options import argument_positions

    arities = {"--only": 1, "-n": 1, "--json": 0, "-q": 0}
    assert argument_positions(args, arities) == positions


@pytest.mark.parametrize("args", [
    ["--pair=a", "b", "bench"],  # click takes b as --pair's second value: bench is the name
    ["--pair", "a", "b", "bench"],
    ["-qn5", "bench"],
    ["-qn", "5", "bench"],
    ["--json", "--only", "3", "bench"],
    ["-n=5", "bench"],
])
def test_the_command_line_reading_counts_an_options_values_as_typed_options_does(args):
    """Where the command's name is found (cli._command_position) and the words typed_options reads as
    arguments come from one count of each option's values: the CLI's own count said `--pair=a` took no
    more, where click takes the second value from the next word."""
    from nvfp4ctl.cli import _command_position
    from nvfp4ctl.options import argument_positions

    arities = {"--pair": 2, "-n": 1, "--only": 1, "--json": 0, "-q": 0}
    first_argument = argument_positions(args, arities)[0]
    assert args[first_argument] == "bench"
    assert _command_position(args, arities, {"bench"}.__contains__) == first_argument


def test_typed_options_reads_a_long_command_line_in_linear_time():
    """Each option with a value copied the rest of the line and each token was popped from its front:
    80,000 `--only 1` took 8 s."""
    import time

    from nvfp4ctl.options import typed_options

    args = ["--only", "1"] * 100_000 + ["--json"]
    began = time.process_time()
    typed = typed_options(args, {"--only": 1, "--json": 0})
    assert time.process_time() - began < 2
    assert len(typed) == 100_001 and typed[-1] == ("--json", None) and typed[0] == ("--only", "1")


def test_option_arities_are_the_commands():
    import typer.main

    from nvfp4ctl.options import option_arities

    bench = typer.main.get_command(app).commands["bench"]
    arities = option_arities(bench.params)
    assert arities["--only"] == 1 and arities["--json"] == 0 and arities["-q"] == 0


def test_some_option_has_a_short_name_and_a_parser_of_ours():
    assert ("log", "-n", "--last") in _options_with_a_short_name()


def _choice_options() -> list[tuple[str, type]]:
    """(command, the Enum annotated) of every option whose value nvfp4ctl.options.choice parses."""
    import enum
    import typing

    found = []
    for command in app.registered_commands:
        for hint in inspect.get_annotations(command.callback, eval_str=True).values():
            annotated = typing.get_args(hint)[0] if hasattr(hint, "__metadata__") else None
            if any(getattr(info, "parser", None) is not None for info in getattr(hint, "__metadata__", ())) \
                    and isinstance(annotated, type) and issubclass(annotated, enum.Enum):
                found.append((command.name, annotated))
    return found


@pytest.mark.parametrize("command, enum", _choice_options())
def test_a_choice_survives_the_enum_conversion_of_older_typer(command, enum):
    """typer before 0.29 (0.27.2 on the GPU machines) converts what our parser returns once more,
    looking the member up by str(): a plain (str, Enum) member reads `Cls.member`, matches nothing,
    and every build, check and bench stopped on `None.value`. Emulated here, as that typer does it."""
    from nvfp4ctl.options import Choice, choice

    assert issubclass(enum, Choice)
    by_str = {str(member.value): member for member in enum}
    for member in enum:
        assert by_str.get(str(choice(enum)(member.value))) is member
        assert by_str.get(str(choice(enum)(member))) is member  # a default goes through the parser too


def test_every_enum_option_is_found():
    assert {name for name, _ in _choice_options()} >= {"bench", "build", "check", "lint", "tune"}


@pytest.mark.parametrize("args", [["-q", "lint", "-v"], ["lint", "-v", "-q"], ["-v", "-q", "lint"],
                                  ["-q", "build", "-v", "--arch", "sm_90a"]])
def test_quiet_and_verbose_together_is_a_usage_error(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "error: -q and -v together: pick one"


@pytest.mark.parametrize("args, quiet", [(["-q", "lint", "x.py"], True), (["lint", "-q", "x.py"], True),
                                         (["-v", "lint", "x.py"], False), (["lint", "-v", "x.py"], False)])
def test_quiet_or_verbose_before_or_after_the_command(args, quiet, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert ("checked: x.py" in result.output) is not quiet


def test_a_repeated_integer_option_keeps_every_value(three_tests):
    result = CliRunner().invoke(app, ["check", "--only", "1", "--only", "4"])
    assert result.exit_code == 2
    assert result.output == "error: --only 4: task.yml has 3 tests (1-3)\n"  # the second value, parsed


@pytest.mark.parametrize("args", [["lint"], ["lint", "--format", "xml"]], ids=["run", "parse-error"])
def test_a_run_log_setting_that_names_a_python_file_leaves_it_as_it_was(args, tmp_path, monkeypatch):
    """NVFP4CTL_MEMORY=submission.py appended a Markdown section to the submission and broke it."""
    monkeypatch.chdir(tmp_path)
    code = "def custom_kernel(data):\n    return data[6]\n"
    (tmp_path / "submission.py").write_text(code)
    monkeypatch.setenv("NVFP4CTL_MEMORY", "submission.py")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert (tmp_path / "submission.py").read_text() == code
    if args == ["lint"]:  # refused before the run: one line naming the setting
        assert result.output.count("\n") == 1 and result.output.startswith(
            "error: NVFP4CTL_MEMORY=submission.py: not a run log (its name does not end in .md"), result.output


@pytest.mark.parametrize("args", [["lint"], ["log"]])
def test_a_run_log_setting_that_names_a_python_file_not_there_yet_is_refused_too(args, tmp_path, monkeypatch):
    """NVFP4CTL_MEMORY=x/submission.py with no such file wrote a Markdown run log named submission.py,
    which the next command refused."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "x" / "submission.py"))
    (tmp_path / "x").mkdir()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: NVFP4CTL_MEMORY={tmp_path / 'x' / 'submission.py'}: not a run log (its name does"
                             " not end in .md, and a new run log's name must); nothing was run: point NVFP4CTL_MEMORY"
                             " at a Markdown file (MEMORY.md, say), or unset it\n")
    assert list((tmp_path / "x").iterdir()) == []


@pytest.mark.parametrize("args", [["log"], ["log", "--trend"]])
def test_log_refuses_a_run_log_setting_that_names_a_python_file_as_the_other_commands_do(args, tmp_path, monkeypatch):
    """`log` read submission.py as an empty run log and said "no runs logged yet", exit 0."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    monkeypatch.setenv("NVFP4CTL_MEMORY", "submission.py")
    refused = CliRunner().invoke(app, ["lint"])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.output == refused.output and result.output.count("\n") == 1, result.output


def _json_options() -> dict[str, tuple[str, str, object]]:
    """command → (parameter, the value that asks for JSON) for each command declaring --json or --format."""
    found: dict[str, tuple[str, object]] = {}
    for command in app.registered_commands:
        function = inspect.unwrap(command.callback)
        hints = inspect.get_annotations(function, eval_str=True)
        for name in inspect.signature(function).parameters:
            infos = getattr(hints.get(name), "__metadata__", ())
            decls = [d for info in infos for d in (getattr(info, "default", None), *(getattr(info, "param_decls", None) or ()))
                     if isinstance(d, str)]
            if "--json" in decls:
                found[command.name] = (name, "--json", True)
            elif "--format" in decls:
                found[command.name] = (name, "--format", "json")
    return found


def test_every_json_option_is_declared_where_its_command_is_registered():
    """A command stopped by an error writes {"error", "exit_code"} on stdout only where its registration
    declares how it is asked for JSON: a new --json option, or one whose parameter is renamed, would
    lose the document without a word."""
    from nvfp4ctl.cli import JSON_MODES

    declared = _json_options()
    assert set(declared) >= {"bench", "dump", "lint", "tune"}
    assert set(JSON_MODES) == set(declared)
    for name, (parameter, option, value) in declared.items():
        mode = JSON_MODES[name]
        assert (mode.parameter, mode.option, mode.value) == (parameter, option, value), name


def test_a_json_mode_naming_no_parameter_of_its_command_is_refused_at_registration():
    from nvfp4ctl.cli import JsonMode, _logged

    def command(as_json: bool = False) -> None: ...

    with pytest.raises(TypeError, match="'json', which is no parameter of the command"):
        _logged("renamed", command, json_mode=JsonMode("json", "--json"))


def test_file_options_naming_no_option_of_their_command_are_refused_at_registration():
    from typing import Annotated

    import typer

    from nvfp4ctl.cli import _logged
    from nvfp4ctl.usage_hints import FileOptions

    def command(kernel: str = "") -> None: ...

    command.__annotations__ = {"kernel": Annotated[str, typer.Option("--kernel")]}  # evaluated: a local name
    with pytest.raises(TypeError, match="its file options name --submission, which it does not have"):
        _logged("renamed", command, file_options=FileOptions({".cu": "--kernel", ".py": "--submission"}))


# a failing run of each command with a JSON mode, asked for JSON
_JSON_FAILURES = [
    ["bench", "--json", "--task", "nosuch.yml"],
    ["dump", "--json"],
    ["lint", "--format", "json", "nosuch.py"],
    ["tune", "--json", "--task", "nosuch.yml"],
]


@pytest.mark.parametrize("args", _JSON_FAILURES, ids=lambda args: args[0])
def test_every_command_with_a_json_mode_gives_a_json_document_on_a_failure(args, tmp_path, monkeypatch):
    from cli_streams import separate_streams_runner
    from nvfp4ctl.cli import JSON_MODES

    assert args[0] in JSON_MODES
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    result = separate_streams_runner().invoke(app, args)
    assert result.exit_code == 2, result.output
    document = json.loads(result.stdout)
    assert set(document) == {"version", "error", "exit_code"} and document["exit_code"] == 2
    assert list(document)[0] == "version" and document["version"] == 1
    assert result.stderr == f"error: {document['error']}\n"


@pytest.mark.parametrize("args", _JSON_FAILURES, ids=lambda args: args[0])
@pytest.mark.parametrize("setting", ["folder", "notes.txt"])
def test_a_run_log_setting_that_is_no_run_log_gives_the_json_document_too(args, setting, tmp_path, monkeypatch):
    """NVFP4CTL_MEMORY naming a folder or a file not ending in .md was refused before the run with the
    stderr line alone: a script reading stdout for the document got nothing to parse."""
    from cli_streams import separate_streams_runner

    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "notes.txt").write_text("notes\n")
    monkeypatch.setenv("NVFP4CTL_MEMORY", setting)
    result = separate_streams_runner().invoke(app, args)
    assert result.exit_code == 2, result.output
    document = json.loads(result.stdout)
    assert document["exit_code"] == 2 and document["error"].startswith(f"NVFP4CTL_MEMORY={setting}: "), document
    assert result.stderr == f"error: {document['error']}\n"
    assert (tmp_path / "notes.txt").read_text() == "notes\n"


def test_the_json_failure_test_covers_every_json_command():
    from nvfp4ctl.cli import JSON_MODES

    assert {args[0] for args in _JSON_FAILURES} == set(JSON_MODES)


@pytest.mark.parametrize("args, message", [
    (["init"], "error: Missing option '--problem'; see '{prog} init --help'"),
    (["export", "-o"], "error: Option '-o' requires an argument; see '{prog} export --help'"),
    (["dump", "--umma", "--shape"], "error: Option '--shape' requires an argument; see '{prog} dump --help'"),
    (["check", "--nosuch"], "error: No such option"),
    (["nosuch"], "error: No such command 'nosuch'; see '{prog} --help'"),
    (["--nosuch", "lint"], "error: No such option"),
])
def test_a_command_line_click_rejects_is_one_line_and_exit_2(args, message, tmp_path, monkeypatch):
    """A missing option, an option with no value, an unknown option or command: one line, as every other
    usage error, not click's usage block (nor the boxed panel older typers print)."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    assert result.output.startswith(message.format(prog="nvfp4ctl")), result.output
    assert result.output.count("\n") == 1 and "Usage:" not in result.output, result.output


def test_a_bare_nvfp4ctl_still_shows_its_help():
    result = CliRunner().invoke(app, [])
    assert "Usage:" in result.output and "check" in result.output


@pytest.mark.parametrize("args, message", [
    (["bench", "--json", "--only", "x"], "--only: x is not an integer"),
    (["lint", "--format=json", "--nosuch"], "No such option"),
    (["dump", "--json", "--layout", "--shape"], "Option '--shape' requires an argument"),
    (["bench", "--json", "--timeout"], "Option '--timeout' requires an argument"),
    (["--nosuch", "bench", "--json"], "No such option: --nosuch"),
    (["-q", "--task", "t.yml", "lint", "--format", "json"], "No such option: --task"),
])
def test_a_command_line_click_rejects_still_gives_a_json_document_where_json_was_asked(args, message, tmp_path,
                                                                                       monkeypatch):
    from cli_streams import separate_streams_runner

    monkeypatch.chdir(tmp_path)
    result = separate_streams_runner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    document = json.loads(result.stdout)
    assert document["exit_code"] == 2 and document["error"].startswith(message), document
    assert result.stderr == f"error: {document['error']}\n", result.stderr  # the same message, its --help named
    assert "see ' --help'" not in document["error"], document
    plain = " ".join(args).replace("--format json", "").replace("--format=json", "").replace("--json", "").split()
    plain_result = separate_streams_runner().invoke(app, plain)
    assert plain_result.exit_code == 2 and plain_result.stdout == ""


@pytest.mark.parametrize("args, message", [
    (["bench", "--only", "--json"], "error: --only: --json is not an integer\n"),
    (["lint", "--profile", "--format=json", "--nosuch"], "error: No such option: --nosuch"),
    (["--nosuch", "bench", "--only", "--json"], "error: No such option: --nosuch"),
    (["--nosuch", "bench", "--", "--json"], "error: No such option: --nosuch"),
])
def test_a_json_option_that_is_another_options_value_asks_for_no_json(args, message, tmp_path, monkeypatch):
    """`bench --only --json`: click takes --json for --only's value, so no JSON was asked for."""
    from cli_streams import separate_streams_runner

    monkeypatch.chdir(tmp_path)
    result = separate_streams_runner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.startswith(message), result.stderr


def test_a_json_document_of_an_earlier_command_line_does_not_silence_the_next(tmp_path, monkeypatch):
    """Each command line gives its own document, even one rejected before the command's name, which
    reaches no command to start afresh (app() run twice in one process: an embedding, these tests)."""
    from cli_streams import separate_streams_runner

    monkeypatch.chdir(tmp_path)
    first = separate_streams_runner().invoke(app, ["bench", "--json", "--only", "x"])
    assert json.loads(first.stdout)["exit_code"] == 2
    second = separate_streams_runner().invoke(app, ["--nosuch", "bench", "--json"])
    assert second.exit_code == 2 and json.loads(second.stdout)["error"].startswith("No such option: --nosuch")


def _rejected_with_its_line(args: list[str], line: str, document: bool, folder: Path,
                            monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Runs a command line click rejects (from `folder`): exit 2 with `line` on stderr, and on stdout the
    {"error", "exit_code"} document where JSON was asked for, else nothing. The run-log results it added."""
    from cli_streams import separate_streams_runner

    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *args])
    before = len(runlog.read(memory_path()))
    result = separate_streams_runner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    assert result.stderr == line + "\n", result.stderr
    if document:
        assert json.loads(result.stdout) == {"version": 1, "error": line.removeprefix("error: "), "exit_code": 2}
    else:
        assert result.stdout == ""
    return [entry.result for entry in runlog.read(memory_path())[before:]]


@pytest.mark.parametrize("args, line, document", [
    (["--json", "bench"], "error: --json is an option of the command: nvfp4ctl bench --json", True),
    # the program's own options stay before the name, the command's arguments after it
    (["-q", "--json", "dump", "--umma"], "error: --json is an option of the command: nvfp4ctl -q dump --json --umma",
     True),
    (["-q", "--format", "json", "lint"], "error: --format is an option of the command: nvfp4ctl -q lint --format json",
     True),
    (["--json", "-v", "bench", "--only", "2"], "error: --json is an option of the command: nvfp4ctl -v bench --json"
                                               " --only 2", True),
    (["-q", "--json", "bench", "--", "x"], "error: --json is an option of the command: nvfp4ctl -q bench --json -- x",
     True),
    (["-v", "--json", "bench", "--json", "--only", "2"], "error: --json is an option of the command: nvfp4ctl -v"
                                                         " bench --json --only 2", True),
    (["-q", "--format", "json", "bench"], "error: bench's JSON is --json, not --format json: nvfp4ctl -q bench --json",
     False),
    (["--verbose", "--json"], "error: --json is an option of the commands bench, dump and tune, after the command's"
                              " name: nvfp4ctl --verbose bench --json", False),
    (["--format", "json", "lint"], "error: --format is an option of the command: nvfp4ctl lint --format json", True),
    (["--format=json", "lint"], "error: --format is an option of the command: nvfp4ctl lint --format json", True),
    # spelled as the command takes it after its name, which refuses a flag's value (bench --json=1)
    (["--json=1", "bench"], "error: --json is an option of the command: nvfp4ctl bench --json", True),
    # the word after --format is the command's name, not its value
    (["--format", "lint"], "error: --format is an option of the command, with a value: nvfp4ctl lint --format json"
                           " gives JSON", False),
    (["-q", "--format", "lint", "--only", "1"], "error: --format is an option of the command, with a value:"
                                                 " nvfp4ctl -q lint --format json gives JSON", False),
    # a value the command refuses: said so, not a fix refused on the same word (lint --format xml)
    (["--format", "xml", "lint"], "error: --format is an option of the command, and 'xml' is not one of text, json",
     False),
    (["-q", "--format=xml"], "error: --format is an option of the command lint, after its name, and 'xml' is not one"
                             " of text, json", False),
    # a command that does not take it: the line it gives after the name, not another command's fix
    (["--json", "check"], "error: check has no --json: it gives no JSON; its exit code and its run-log line say how"
                          " it went (nvfp4ctl log)", False),
    (["--json", "lint"], "error: lint's JSON is --format json, not --json: nvfp4ctl lint --format json", False),
    (["--format", "json", "bench"], "error: bench's JSON is --json, not --format json: nvfp4ctl bench --json",
     False),
    (["--json"], "error: --json is an option of the commands bench, dump and tune, after the command's name:"
                 " nvfp4ctl bench --json", False),
    (["--json=yes"], "error: --json is an option of the commands bench, dump and tune, after the command's name:"
                     " nvfp4ctl bench --json", False),
    (["--format"], "error: --format is an option of the command lint, after its name, with a value: nvfp4ctl lint"
                   " --format json gives JSON", False),
])
def test_a_json_option_before_the_commands_name_says_where_it_goes(args, line, document, tmp_path, monkeypatch):
    """click's "No such option: --json (Possible options: --version)" named nothing that takes it. Where the
    command after it takes the option, JSON was asked for as clearly as after the name: stdout gets the
    {"error", "exit_code"} document, as for any other command line rejected with --json."""
    logged = _rejected_with_its_line(args, line, document, tmp_path, monkeypatch)
    if _RECORDED & set(args):  # the command's run, as for any other rejected option
        assert logged == [line]
    else:
        assert logged == []


_FILES = ("submission.py", "gemm.cu", "tiles.cuh", "task.yml", "notes.txt", "umma.log",
          "problem/submission.py", "kernels/only.cu")


@pytest.mark.parametrize("args, line, document", [
    (["check", "submission.py"], "error: check takes the file as an option: nvfp4ctl check --submission submission.py",
     False),
    # the program's own options stay before the command's name
    (["-q", "check", "submission.py"],
     "error: check takes the file as an option: nvfp4ctl -q check --submission submission.py", False),
    (["-v", "--", "bench", "problem"], "error: bench takes a file as an option, not a folder: nvfp4ctl -v bench"
                                       " --submission problem/submission.py", False),
    (["--quiet", "check", "tiles.cuh"], "error: check takes the kernel as an option, the .cu that includes tiles.cuh:"
                                        " nvfp4ctl --quiet check --kernel KERNEL.cu", False),
    # the other words stay where they were typed, quoted as the shell needs
    (["check", "--only", "3", "gemm.cu"],
     "error: check takes the file as an option: nvfp4ctl check --only 3 --kernel gemm.cu", False),
    (["check", "submission.py", "--only", "3"],
     "error: check takes the file as an option: nvfp4ctl check --submission submission.py --only 3", False),
    (["check", "--shape", "128, 256, 512", "submission.py"],
     "error: check takes the file as an option: nvfp4ctl check --shape '128, 256, 512' --submission submission.py",
     False),
    (["check", "--", "submission.py"], "error: check takes the file as an option: nvfp4ctl check --submission"
                                       " submission.py", False),
    (["check", "--only", "3", "problem"], "error: check takes a file as an option, not a folder: nvfp4ctl check"
                                          " --only 3 --submission problem/submission.py", False),
    (["bench", "submission.py"], "error: bench takes the file as an option: nvfp4ctl bench --submission submission.py",
     False),
    (["bench", "--json", "gemm.cu"], "error: bench takes the file as an option: nvfp4ctl bench --json --kernel gemm.cu",
     True),
    (["export", "gemm.cu"], "error: export takes the file as an option: nvfp4ctl export --kernel gemm.cu", False),
    (["export", "mine.py"], "error: export takes the file as an option: nvfp4ctl export --output mine.py", False),
    (["dump", "gemm.cu"], "error: dump takes the file as an option: nvfp4ctl dump --kernel gemm.cu", False),
    (["dump", "--umma", "--json", "umma.log"],
     "error: dump takes the file as an option: nvfp4ctl dump --umma --json --from-log umma.log", True),
    (["tune", "gemm.cu"], "error: tune takes the file as an option: nvfp4ctl tune --kernel gemm.cu", False),
    # a file not there yet, a typo say, is still a path by its suffix: the option then says it is missing
    (["check", "submision.py"], "error: check takes the file as an option: nvfp4ctl check --submission submision.py",
     False),
    (["check", "submission.py", "task.yml"],
     "error: check takes the files as options: nvfp4ctl check --submission submission.py --task task.yml", False),
    (["check", "tiles.cuh"],
     "error: check takes the kernel as an option, the .cu that includes tiles.cuh: nvfp4ctl check --kernel KERNEL.cu",
     False),
    (["bench", "problem"],
     "error: bench takes a file as an option, not a folder: nvfp4ctl bench --submission problem/submission.py", False),
    (["check", "kernels"],
     "error: check takes a file as an option, not a folder: nvfp4ctl check --kernel kernels/only.cu", False),
    (["check", "notes.txt"],
     "error: check takes its files as options (--kernel, --submission, --task); see 'nvfp4ctl check --help'", False),
])
def test_a_file_typed_as_an_argument_names_the_option_it_goes_to(args, line, document, tmp_path, monkeypatch):
    """`build PATH` and `lint PATH` take a path, so `check submission.py` is a natural mistake; click said
    "Got unexpected extra argument(s) (submission.py)", which does not say what to type. The run-log line
    and the JSON document (where the command was asked for JSON) say the same."""
    for name in _FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert _rejected_with_its_line(args, line, document, tmp_path, monkeypatch) == [line]


def test_a_hint_names_a_file_that_is_not_utf8_as_a_shell_reads_it_back(tmp_path, monkeypatch):
    """Python holds b"\\xff" of a file's name as the lone surrogate \\udcff: the hint quoted it '...\\xff'
    (before that, '...\\udcff'), which, pasted, names a file of the four characters \\xff; bash's and zsh's
    $'...' reads the byte back. A name of UTF-8 keeps shlex's quoting."""
    from cli_streams import separate_streams_runner

    monkeypatch.chdir(tmp_path)
    for name, spelled in (("it's\udcff.py", "$'it\\'s\\xff.py'"), ("my süb.py", "'my süb.py'")):
        (tmp_path / name).write_text("")
        result = separate_streams_runner().invoke(app, ["check", name], prog_name="nvfp4ctl")
        assert (result.exit_code, result.stderr) == (
            2, f"error: check takes the file as an option: nvfp4ctl check --submission {spelled}\n")
    (tmp_path / "new\udcff").mkdir()
    made = separate_streams_runner().invoke(app, ["init", "--problem", "nvfp4_gemm", "new\udcff"],
                                            prog_name="nvfp4ctl")
    assert made.exit_code == 0 and "`cd $'new\\xff' && nvfp4ctl check`" in made.stdout, made.output


@pytest.mark.parametrize("args, line", [
    (["log", "submission.py"], "error: log takes the file as an option: nvfp4ctl log --target submission.py"),
    (["log", "--trend", "gemm.cu"], "error: log takes the file as an option: nvfp4ctl log --trend --target gemm.cu"),
    (["log", "-n", "5", "submission.py"],
     "error: log takes the file as an option: nvfp4ctl log -n 5 --target submission.py"),
    (["log", "--trend", "-n", "5", "gemm.cu"],
     "error: log takes the file as an option: nvfp4ctl log --trend -n 5 --target gemm.cu"),
    (["log", "-n", "5", "notes/MEMORY.md"],
     "error: log takes the file as a setting: NVFP4CTL_MEMORY=notes/MEMORY.md nvfp4ctl log -n 5"),
    (["log", "tiles.cuh"], "error: log takes the kernel as an option, the .cu that includes tiles.cuh: nvfp4ctl log"
                           " --target KERNEL.cu"),
    (["log", "notes/MEMORY.md"], "error: log takes the file as a setting: NVFP4CTL_MEMORY=notes/MEMORY.md nvfp4ctl log"),
    (["-q", "log", "notes/MEMORY.md"], "error: log takes the file as a setting: NVFP4CTL_MEMORY=notes/MEMORY.md"
                                       " nvfp4ctl -q log"),
])
def test_a_file_typed_after_log_names_the_option_or_setting_it_goes_to(args, line, tmp_path, monkeypatch):
    """click said "Got unexpected extra argument(s) (submission.py)": the target whose runs to show is
    --target, and the run log read is the one NVFP4CTL_MEMORY names. Reading the log adds no line."""
    from cli_streams import separate_streams_runner

    for name in ("submission.py", "gemm.cu", "tiles.cuh", "notes/MEMORY.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    monkeypatch.chdir(tmp_path)
    before = len(runlog.read(memory_path()))
    result = separate_streams_runner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    assert result.stderr == line + "\n" and result.stdout == "", result.output
    assert len(runlog.read(memory_path())) == before


@pytest.mark.parametrize("args, extra", [
    (["log", "5"], "5"),  # -n 5 meant, say: no file
    (["log", "notes"], "notes"),  # a folder: no one file of it is a trend's target
    (["log", "--target", "a.py", "b.py"], "b.py"),
    (["check", "3"], "3"),  # no path: a misplaced value, say
    (["bench", "--json", "nosuch"], "nosuch"),
    (["check", "--submission", "submission.py", "other.py"], "other.py"),  # the option is given already
    (["export", "-o", "a.py", "b.py"], "b.py"),  # given already by its short name
    (["bench", "a.py", "b.py"], "a.py b.py"),  # one --submission cannot take both
    (["check", "notes.txt"], "notes.txt"),  # no file there, and no kind check takes a file of
])
def test_a_word_that_is_no_file_for_an_option_keeps_clicks_line(args, extra, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text("")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "submission.py").write_text("")
    result = CliRunner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    assert "error: Got unexpected extra argument" in result.output and f"({extra})" in result.output, result.output


@pytest.mark.parametrize("args, line", [
    (["lint", "--json"], "error: lint's JSON is --format json, not --json: nvfp4ctl lint --format json"),
    (["-q", "lint", "--json"], "error: lint's JSON is --format json, not --json: nvfp4ctl -q lint --format json"),
    (["-v", "tune", "--format", "json"], "error: tune's JSON is --json, not --format json: nvfp4ctl -v tune --json"),
    (["check", "--json"], "error: check has no --json: it gives no JSON; its exit code and its run-log line say how"
                          " it went (nvfp4ctl log)"),
    (["-q", "check", "--only", "1", "--json"], "error: check has no --json: it gives no JSON; its exit code and its"
                                               " run-log line say how it went (nvfp4ctl log)"),
    (["log", "--json"], "error: log has no --json: it gives no JSON"),
    (["bench", "--format", "json"], "error: bench's JSON is --json, not --format json: nvfp4ctl bench --json"),
    (["dump", "--umma", "--format=json"], "error: dump's JSON is --json, not --format json: nvfp4ctl dump --umma --json"),
    (["lint", "src", "--json"], "error: lint's JSON is --format json, not --json: nvfp4ctl lint src --format json"),
    (["lint", "src", "--json=1"], "error: lint's JSON is --format json, not --json: nvfp4ctl lint src --format json"),
    (["lint", "src", "--json", "--format", "text"],
     "error: lint's JSON is --format json, not --json: nvfp4ctl lint src --format json"),
    (["-q", "tune", "--shapes", "tests", "--format", "json", "--budget", "5"],
     "error: tune's JSON is --json, not --format json: nvfp4ctl -q tune --shapes tests --json --budget 5"),
    (["tune", "--format", "json"], "error: tune's JSON is --json, not --format json: nvfp4ctl tune --json"),
    (["check", "--format", "json"], "error: check has no --json: it gives no JSON; its exit code and its run-log"
                                    " line say how it went (nvfp4ctl log)"),
])
def test_json_asked_of_a_command_without_json_says_how_to_ask_or_that_it_gives_none(args, line, tmp_path,
                                                                                     monkeypatch):
    """`lint --json` said "No such option: --json", not that lint's JSON is --format json; `check --json` said
    "(Possible options: --only)", the name nearest in spelling, as if --only gave JSON; `bench --format json`,
    lint's way, said "No such option: --format" (dump's offered --mma). No document on stdout: the command
    was not asked for JSON the way it is asked."""
    from cli_streams import separate_streams_runner

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *args])
    before = len(runlog.read(memory_path()))
    result = separate_streams_runner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    assert result.stderr == line + "\n" and result.stdout == "", result.output
    entries = runlog.read(memory_path())
    if "log" in args:  # reading the log adds no line to it
        assert len(entries) == before
    else:
        assert len(entries) == before + 1 and entries[-1].result == line


@pytest.mark.parametrize("args", [["bench", "--format", "text"], ["bench", "--format"], ["tune", "--format", "JSON"]])
def test_a_format_option_that_asks_for_no_json_keeps_clicks_line(args, tmp_path, monkeypatch):
    """Only lint's way of asking for JSON, --format json as lint takes it, is pointed to the command's own."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: No such option: --format"), result.output


def test_every_option_a_file_is_pointed_to_is_an_option_of_its_command():
    import typer

    from nvfp4ctl.cli import FILE_OPTIONS

    group = typer.main.get_command(app)
    assert {"check", "bench", "dump", "export"} <= set(FILE_OPTIONS)
    for name, files in FILE_OPTIONS.items():
        known = {spelling for param in group.commands[name].params for spelling in param.opts}
        assert set(files.options) <= known, name


@pytest.mark.parametrize("args, command, document", [
    # x may be --nosuch's value, but then y is where the command's name goes: bench is no command here
    (["--nosuch", "x", "y", "bench", "--json"], None, False),
    # --task takes a value in every command that has it: log is the task file, bench the command
    (["--task", "log", "bench", "--json"], "bench", True),
    (["--nosuch", "x", "bench", "--json"], "bench", True),
    (["--quiet=bench", "check", "--json"], "check", False),  # the bad value is in the option's own word
    (["-q=x", "check"], "check", False),
    (["--json", "x", "bench"], None, False),  # --json takes no value: x is where the name goes
    (["--task", "bench"], "bench", False),  # no word after --task's value: the value was the command's name
])
def test_the_command_a_rejected_global_option_came_before_is_where_click_reads_it(args, command, document,
                                                                                 tmp_path, monkeypatch):
    from cli_streams import separate_streams_runner

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *args])
    before = runlog.read(memory_path())
    result = separate_streams_runner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert (json.loads(result.stdout)["exit_code"] == 2) if document else result.stdout == "", result.stdout
    entries = runlog.read(memory_path())
    if command is None:
        assert len(entries) == len(before)
    else:
        assert len(entries) == len(before) + 1 and entries[-1].command == "nvfp4ctl " + " ".join(args)


def test_a_json_fix_asks_for_json_once_whatever_was_typed_beside_it() -> None:
    """`tune --format json --json` was fixed as `tune --json --json`, `--json bench --json` as `bench --json
    --json`, and `lint src --json --format text` as `lint src --format json --format text`, which prints text."""
    from nvfp4ctl.usage_hints import _json_in_place, without_option

    assert _json_in_place(("--format", "json", "--json"), "--format json", "--json") == "--json"
    assert _json_in_place(("--shapes", "tests", "--json", "--format=json"), "--format json", "--json") == (
        "--shapes tests --json")
    assert _json_in_place(("src", "--json", "--format", "text"), "--json", "--format json") == "src --format json"
    assert without_option(["--only", "1", "--json", "--json=1", "--", "--json"], "--json", False) == [
        "--only", "1", "--", "--json"]


def test_an_empty_init_folder_is_said_to_be_empty(tmp_path, monkeypatch):
    """`init --problem nvfp4_gemm ""` filled the current folder: Path("") is ".", which the user never named
    (`DIR="$UNSET"`). A bare `init` still fills the current folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "elsewhere.md"))
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", ""])
    assert (result.exit_code, result.output) == (2, "error: DIR: an empty path; name a folder\n")
    assert sorted(tmp_path.iterdir()) == []
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "task.yml").is_file()
