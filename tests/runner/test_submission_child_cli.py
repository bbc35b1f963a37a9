"""`check` and `bench` of a submission whose child misbehaves at import or leaves processes behind, run as the
user runs them (a separate nvfp4ctl process, NVFP4CTL_DEVICE=cpu): what they say and what outlives them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from nvfp4ctl.errors import ExitCode

SHAPE = "128,256,256"


def _nvfp4ctl(folder: Path, *args: str, env: dict[str, str] | None = None,
              timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ, NVFP4CTL_DEVICE="cpu", PYTHONPATH=os.pathsep.join(sys.path), COLUMNS="400")
    environment.update(env or {}, TMPDIR=str(folder))  # a crash's kept child log lands in the test's folder
    return subprocess.run([sys.executable, "-m", "nvfp4ctl", *args], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=timeout_s)


def _submission(folder: Path, name: str, header: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(header) + "\n\ndef custom_kernel(data):\n    return data[6]\n")
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
