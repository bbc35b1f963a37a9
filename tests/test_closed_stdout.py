"""A stdout whose reader has gone (`nvfp4ctl dump --layout | head -1`) is quiet: the command runs to its
end, exits with its own code and logs its result. It exited 1 ("failures found", which fails a
`set -o pipefail` script) with nothing on stderr and no run-log line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nvfp4ctl.runlog import read


def _run_with_stdout_closed(args: list[str], folder: Path, memory: Path) -> subprocess.CompletedProcess[str]:
    """nvfp4ctl ARGS with its stdout a pipe whose reading end is closed before it writes anything."""
    import nvfp4ctl

    env = dict(os.environ, NVFP4CTL_MEMORY=str(memory), NVFP4CTL_DEVICE="cpu",
               PYTHONPATH=os.pathsep.join([str(Path(nvfp4ctl.__file__).resolve().parents[1]), *sys.path]))
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "nvfp4ctl", *args], cwd=folder, env=env, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("args, exit_code, result", [
    (["dump", "--layout", "--shape", "128,256,256"], 0, "layout: 128x256x256 l=1, 2 scale batches checked"),
    (["dump", "--layout", "--shape", "128,256,256", "--json"], 0, "layout: 128x256x256 l=1, 2 scale batches checked"),
    (["lint", "submission.py"], 1, "1 error"),  # the command's own failure stays its exit code
], ids=["table", "json", "lint-error"])
def test_a_closed_stdout_keeps_the_commands_exit_code_and_run_log_line(tmp_path, args, exit_code, result):
    (tmp_path / "submission.py").write_text("def other(data):\n    return data\n")
    memory = tmp_path / "MEMORY.md"
    done = _run_with_stdout_closed(args, tmp_path, memory)
    assert done.returncode == exit_code, done.stderr
    assert done.stderr == ""  # no traceback, no "Exception ignored ... BrokenPipeError"
    entry = read(memory)[-1]
    assert (entry.exit_code, entry.command) == (str(exit_code), f"nvfp4ctl {' '.join(args)}")
    assert entry.result.startswith(result), entry.result


def test_the_version_into_a_closed_stdout_is_quiet(tmp_path):
    done = _run_with_stdout_closed(["--version"], tmp_path, tmp_path / "MEMORY.md")
    assert (done.returncode, done.stderr) == (0, "")


def test_a_huge_log_listing_into_a_closed_stdout_is_quiet(tmp_path):
    """Its records are written past rich (Console._records): the closed pipe is still met as rich meets it."""
    from nvfp4ctl.console import MOST_ROWS_DRAWN
    from nvfp4ctl.runlog import RunEntry

    memory = tmp_path / "MEMORY.md"
    memory.write_text("## Run log\n\n" + RunEntry("2026-11-28T10:00:00Z", "nvfp4ctl lint", "-", "8b80b04", "no GPU", "0",
                                                  "0 errors").to_line() * (MOST_ROWS_DRAWN + 1), encoding="utf-8")
    done = _run_with_stdout_closed(["log", "-n", str(MOST_ROWS_DRAWN + 1)], tmp_path, memory)
    assert (done.returncode, done.stderr) == (0, "")
