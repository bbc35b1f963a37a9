"""A terminal whose encoding lacks a character nvfp4ctl prints (PYTHONIOENCODING=ascii, a latin-1
locale) gets it escaped, `\\xfc`, and the command's own exit code: never a UnicodeEncodeError traceback.

Run as the shell runs it, in a child: a CliRunner writes into streams of its own, not the real ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _nvfp4ctl(args: list[str], cwd: Path, encoding: str = "ascii", **more_env: str) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING=encoding, PYTHONUTF8="0",
               NVFP4CTL_MEMORY=str(cwd / "MEMORY.md"), NVFP4CTL_CACHE=str(cwd / "cache"), **more_env)
    env.pop("NVFP4CTL_TASK", None)
    return subprocess.run([sys.executable, "-m", "nvfp4ctl", *args], capture_output=True, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=300)


def _no_traceback(done: subprocess.CompletedProcess[bytes]) -> None:
    assert b"Traceback" not in done.stderr + done.stdout, done.stderr.decode(errors="replace")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_init_into_a_folder_the_terminal_cannot_spell_writes_and_says_so(tmp_path: Path, encoding: str) -> None:
    folder = tmp_path / "ascii ü 日本"
    done = _nvfp4ctl(["init", "--problem", "nvfp4_gemm", str(folder)], tmp_path, encoding)
    _no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert {path.name for path in folder.iterdir()} >= {"task.yml", "submission.py", "MEMORY.md"}
    assert b"\\u65e5\\u672c" in done.stdout  # 日本, in neither encoding
    assert (b"\\xfc" in done.stdout) == (encoding == "ascii")


def test_lint_and_log_show_a_path_and_a_separator_ascii_lacks(tmp_path: Path) -> None:
    (tmp_path / "bad ü.py").write_text('import subprocess\nsubprocess.run(["ls"])\n')
    linted = _nvfp4ctl(["lint", "bad ü.py"], tmp_path)
    _no_traceback(linted)
    assert linted.returncode == 1  # its finding, not a crash
    assert b"bad \\xfc.py:2:1: NV603" in linted.stdout

    as_json = _nvfp4ctl(["lint", "--format", "json", "bad ü.py"], tmp_path)
    _no_traceback(as_json)
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["files"] == ["bad ü.py"]

    logged = _nvfp4ctl(["log", "-n", "2"], tmp_path, COLUMNS="60")  # too narrow for its table: one record a run
    _no_traceback(logged)
    assert logged.returncode == 0
    assert logged.stdout.count(b" \\xb7 nvfp4ctl lint ") == 2  # the ` · ` between a run's cells


def test_lint_list_rules_draws_its_table_on_an_ascii_terminal(tmp_path: Path) -> None:
    done = _nvfp4ctl(["lint", "--list-rules"], tmp_path)
    _no_traceback(done)
    assert done.returncode == 0
    assert b"NV603" in done.stdout
