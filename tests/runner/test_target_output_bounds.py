"""A submission's own output and exception messages, however large, reach the terminal and the run log bounded:
check and bench on CPU with the real nvfp4_gemm problem and submissions that print megabytes or raise with one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_streams import separate_streams_runner
from nvfp4ctl.bounded_text import (MAX_CAUSE, MAX_RESULT_CELL, SHOWN_TAIL, TailLimits, bounded_cause,
                                   clipped_line, clipped_tail, message_head)
from nvfp4ctl.cli import app
from nvfp4ctl.env import Env
from nvfp4ctl.runlog.entry import RunEntry

SHAPE = ("--shape", "128,256,256")
FEW_KB = 8_000  # what a crash's whole report may print, the child's 6 MB included

SPAM_CRASH = """\
import os, sys

def custom_kernel(data):
    sys.stdout.write("x" * (4 * 2**20) + "\\n"); sys.stdout.flush()
    sys.stderr.write("y" * (2 * 2**20) + "\\n"); sys.stderr.flush()
    os.abort()
"""
SPAM_HANG = """\
import sys, time

def custom_kernel(data):
    sys.stdout.write("x" * (4 * 2**20) + "\\n"); sys.stdout.flush()
    time.sleep(60)
"""
HUGE_RAISE = 'def custom_kernel(data):\n    raise RuntimeError("z" * 2**20)\n'
MANY_LINES_RAISE = 'def custom_kernel(data):\n    raise RuntimeError("\\n".join(f"line {i}" for i in range(5000)))\n'


@pytest.fixture
def on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)


def _run(tmp_path: Path, command: str, source: str, *extra: str, timeout: str = "60"):
    """The CLI on `source`; a timeout far past what a loaded machine's start needs, but for the hang's test."""
    submission = tmp_path / "spam.py"
    submission.write_text(source)
    result = separate_streams_runner().invoke(app, [*extra, command, "--submission", str(submission), *SHAPE,
                                                    "--timeout", timeout])
    return result, result.stdout + result.stderr


def _logged_line() -> str:
    lines = [line for line in Path(os.environ[Env.MEMORY]).read_text().splitlines() if line.startswith("- ")]
    return lines[-1]


@pytest.mark.parametrize("command", ["check", "bench"])
def test_a_crash_after_megabytes_of_output_shows_a_bounded_tail_naming_the_full_log(on_cpu, tmp_path, command):
    """Both lines came whole (6.3 MB) under "crashed: the child died (killed by SIGABRT)"."""
    result, shown = _run(tmp_path, command, SPAM_CRASH)
    assert result.exit_code == 4, shown[:4000]
    assert len(shown) < FEW_KB, shown[:4000]
    assert "killed by SIGABRT" in shown
    assert "x" * SHOWN_TAIL.chars + f"… [+{4 * 2**20 - SHOWN_TAIL.chars} characters]" in shown
    assert "y" * SHOWN_TAIL.chars + f"… [+{2 * 2**20 - SHOWN_TAIL.chars} characters]" in shown
    log = Path(shown.split("full child log: ")[1].split()[0])
    assert log.stat().st_size > 6 * 2**20  # what was left out is kept there
    assert len(_logged_line()) < 1000


def test_verbose_shows_more_of_each_line_still_bounded(on_cpu, tmp_path):
    result, shown = _run(tmp_path, "check", SPAM_CRASH, "-v")
    assert result.exit_code == 4, shown[:4000]
    assert "x" * 2000 + "… [+" in shown and "x" * 2001 not in shown
    assert len(shown) < 4 * FEW_KB


def test_a_hang_after_megabytes_of_output_is_a_bounded_timeout(on_cpu, tmp_path):
    result, shown = _run(tmp_path, "check", SPAM_HANG, timeout="8")
    assert result.exit_code == 3, shown[:4000]
    assert len(shown) < FEW_KB, shown[:4000]
    assert "no result after 8 s" in shown and "full child log: " in shown


@pytest.mark.parametrize("command", ["check", "bench"])
def test_a_megabyte_exception_message_is_shown_and_logged_bounded(on_cpu, tmp_path, command):
    """check printed 2 MB (the message in the headline and in the traceback); bench logged the whole 1 MB
    message, a run-log line of 1,048,872 characters."""
    result, shown = _run(tmp_path, command, HUGE_RAISE)
    assert result.exit_code == 4, shown[:4000]
    assert len(shown) < FEW_KB, shown[:4000]
    assert "custom_kernel raised RuntimeError: zzz" in shown and "characters]" in shown
    line = _logged_line()
    assert len(line) < 600, line
    cause = bounded_cause("RuntimeError: " + "z" * 2**20)
    assert len(cause) == MAX_CAUSE and (f"custom_kernel raised {cause} · " if command == "bench" else cause) in line


def test_an_exception_message_of_thousands_of_lines_shows_its_first_lines(on_cpu, tmp_path):
    result, shown = _run(tmp_path, "check", MANY_LINES_RAISE)
    assert result.exit_code == 4, shown[:4000]
    assert len(shown) < FEW_KB, shown[:4000]
    assert "RuntimeError: line 0\n" in shown and "line 4\n" in shown and "line 5\n" not in shown
    assert "[4995 more lines of the message not shown]" in shown
    assert 'raise RuntimeError(' in shown  # the frame stays among the lines kept


def test_a_short_exception_is_shown_as_it_was(on_cpu, tmp_path):
    result, shown = _run(tmp_path, "bench", 'def custom_kernel(data):\n    raise ValueError("no tile config")\n')
    assert result.exit_code == 4, shown
    assert "error: bench 128x256x256: custom_kernel raised ValueError: no tile config\n" in shown
    assert "  ValueError: no tile config" in shown and "characters]" not in shown
    assert " · error: bench 128x256x256: custom_kernel raised ValueError: no tile config · " in _logged_line()


def test_every_command_s_result_cell_is_bounded():
    entry = RunEntry("2026-01-01T00:00:00Z", "nvfp4ctl lint", "x.py", "abc", "-", "1", "w" * 2**20)
    cells = entry.to_line().split(" · ")
    assert len(cells[-1].rstrip("\n")) == MAX_RESULT_CELL and cells[-1].rstrip("\n").endswith("…")
    short = RunEntry("2026-01-01T00:00:00Z", "nvfp4ctl lint", "x.py", "abc", "-", "1", "3 errors, 1 warning")
    assert short.to_line().endswith(" · 3 errors, 1 warning\n")


def test_the_helpers_leave_short_text_as_it_is_and_say_what_they_cut():
    assert clipped_line("abc", 3) == "abc" and clipped_line("abcd", 3) == "abc… [+1 character]"
    assert clipped_tail(["a", "b"], TailLimits(2, 10)) == ["a", "b"]
    assert clipped_tail(["a", "b", "c"], TailLimits(2, 10)) == ["… [1 earlier line not shown]", "b", "c"]
    assert message_head(["a"] * 3, TailLimits(2, 10)) == ["a", "a", "… [1 more line of the message not shown]"]
