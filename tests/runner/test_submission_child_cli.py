"""`check` and `bench` of a submission whose child misbehaves at import or leaves processes behind, run as the
user runs them (a separate nvfp4ctl process, NVFP4CTL_DEVICE=cpu): what they say and what outlives them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nvfp4ctl.errors import ExitCode
from process_tree import wait_dead

SHAPE = "128,256,256"


def _nvfp4ctl(folder: Path, *args: str, env: dict[str, str] | None = None,
              timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ, NVFP4CTL_DEVICE="cpu", PYTHONPATH=os.pathsep.join(sys.path), COLUMNS="400")
    environment.update(env or {}, TMPDIR=str(folder))  # a crash's kept child log lands in the test's folder
    return subprocess.run([sys.executable, "-m", "nvfp4ctl", *args], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=timeout_s)


def _submission(folder: Path, name: str, header: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(header) + "\n\nfrom nvfp4ctl.problems.nvfp4_gemm.harness.reference import ref_kernel"
                    "\n\ndef custom_kernel(data):\n    return ref_kernel(data)\n")
    return path


def test_bench_of_a_submission_that_aborts_at_import_says_its_load_crashed(tmp_path: Path) -> None:
    """bench said `bench 128x256x256 crashed`, blaming the shape, where check said the load crashed."""
    _submission(tmp_path, "abort_import.py", "import os\nos.abort()")
    bench = _nvfp4ctl(tmp_path, "bench", "--submission", "abort_import.py", "--shape", SHAPE)
    assert bench.returncode == ExitCode.CRASH, bench.stderr
    said = bench.stderr + bench.stdout
    assert "error: loading abort_import.py (--submission) crashed: the child died (killed by SIGABRT)" in said, said
    assert "bench 128x256x256 crashed" not in said
    check = _nvfp4ctl(tmp_path, "check", "--submission", "abort_import.py", "--shape", SHAPE)
    assert "loading abort_import.py (--submission) crashed: the child died (killed by SIGABRT)" in check.stdout, check.stdout


def test_a_hang_at_import_is_stopped_at_the_load_limit_the_header_names(tmp_path: Path) -> None:
    """The load's own watchdog (at least 600 s, for builds) was named nowhere: the header said `timeout 8 s
    (--timeout)`, then the run waited 601 s, and nothing could shorten it."""
    _submission(tmp_path, "hang_import.py", "import time\ntime.sleep(3600)")
    for command in ("check", "bench"):
        run = _nvfp4ctl(tmp_path, command, "--submission", "hang_import.py", "--shape", SHAPE, "--timeout", "8",
                        env={"NVFP4CTL_LOAD_TIMEOUT": "2"}, timeout_s=60)
        said = run.stdout + run.stderr
        assert run.returncode == ExitCode.TIMEOUT, said
        assert "load limit 2 s (NVFP4CTL_LOAD_TIMEOUT)" in said, said
        assert ("loading hang_import.py (--submission) ran past 2 s (a hang at import or build?"
                " NVFP4CTL_LOAD_TIMEOUT=S sets this limit)") in said, said


def test_the_header_names_the_default_load_limit_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    _submission(tmp_path, "good.py", "")
    for command in ("check", "bench"):
        bad = _nvfp4ctl(tmp_path, command, "--submission", "good.py", "--shape", SHAPE, env={"NVFP4CTL_LOAD_TIMEOUT": "0"})
        assert bad.returncode == ExitCode.USAGE, bad.stdout + bad.stderr
        assert "error: NVFP4CTL_LOAD_TIMEOUT=0: expected a finite number of seconds > 0" in bad.stdout + bad.stderr
    check = _nvfp4ctl(tmp_path, "check", "--submission", "good.py", "--shape", SHAPE, "--timeout", "8")
    assert "timeout 8 s (--timeout) · load limit 600 s (default)" in check.stdout, check.stdout
    bench = _nvfp4ctl(tmp_path, "bench", "--submission", "good.py", "--shape", SHAPE, "--timeout", "900",
                      "--max-repeats", "3", timeout_s=300)  # the header is the test, not the timing
    assert "timeout 900 s per shape (--timeout) · load limit 900 s (default)" in bench.stdout, bench.stdout


@pytest.mark.parametrize(("command", "ending", "env", "exit_code"), [
    ("check", "", {}, ExitCode.OK),
    ("bench", "", {}, ExitCode.OK),
    ("check", "import os\nos.abort()", {}, ExitCode.CRASH),
    ("bench", "import time\ntime.sleep(3600)", {"NVFP4CTL_LOAD_TIMEOUT": "3"}, ExitCode.TIMEOUT),
])
def test_a_process_the_submission_starts_in_a_session_of_its_own_does_not_outlive_the_run(
        tmp_path: Path, command: str, ending: str, env: dict[str, str], exit_code: int) -> None:
    """Killing the child's process group could not reach it: the sleep ran on, its parent init (PPID 1)."""
    pid_file = tmp_path / "sleep.pid"
    _submission(tmp_path, "leaves_a_sleep.py", "\n".join([
        "import subprocess",
        '_sleep = subprocess.Popen(["sleep", "778"], start_new_session=True)',
        f"open({str(pid_file)!r}, 'w').write(str(_sleep.pid))",
        ending]))
    quick = ["--max-repeats", "3"] if command == "bench" else []  # the sleep's fate is the test, not the timing
    run = _nvfp4ctl(tmp_path, command, "--submission", "leaves_a_sleep.py", "--shape", SHAPE, *quick, env=env,
                    timeout_s=300)
    assert run.returncode == exit_code, run.stdout + run.stderr
    sleep = int(pid_file.read_text())
    gone = wait_dead(sleep, 5.0)
    if not gone:
        os.kill(sleep, signal.SIGKILL)  # nor left running by the test
    assert gone, f"the submission's sleep (pid {sleep}) outlived `nvfp4ctl {command}`"
