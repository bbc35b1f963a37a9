"""scripts/gpu_steps.sh, the step runner gpu_tune.sh and gpu_validate.sh share, on CPU: a step's log,
its summary lines and exit code, and gpu_tune.sh's time budget with stand-ins for python3 and nvidia-smi."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"

pytestmark = pytest.mark.skipif(not (shutil.which("bash") and shutil.which("timeout")), reason="needs bash and timeout")


def _bash(script: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_run_step_keeps_the_log_summarises_and_returns_the_exit_code(tmp_path: Path) -> None:
    script = f"""set -uo pipefail
source {SCRIPTS / 'gpu_steps.sh'}
step_dir={tmp_path} step_width=10 step_tail=2 step_timeout=()
run_step fails 30 bash -c 'echo one; echo two; echo three; exit 3'; echo "rc=$?"
run_step slow 1 sleep 20; echo "rc=$?"
"""
    result = _bash(script, tmp_path)
    assert "rc=3" in result.stdout and "rc=124" in result.stdout, result.stdout + result.stderr
    assert (tmp_path / "fails.txt").read_text() == "one\ntwo\nthree\n"
    summary = (tmp_path / "summary.txt").read_text().splitlines()
    assert summary[0].startswith("fails      exit 3 ") and summary[1:3] == ["    two", "    three"]
    assert summary[3].startswith("slow       exit 124")


FAKE_PYTHON = """#!/usr/bin/env bash
echo "fake python3 $*"
case "$*" in *"sm90_kernel.py check"*) exit 1 ;; esac
exit 0
"""


def test_gpu_tune_runs_what_fits_in_its_time_and_resumes(tmp_path: Path) -> None:
    tree, bin_dir = tmp_path / "tree", tmp_path / "bin"
    (tree / "scripts").mkdir(parents=True)
    (tree / "kernels" / "sm90").mkdir(parents=True)
    (tree / "kernels" / "sm90" / "sm90_dispatch.cuh").write_text("// table\n")
    for name in ("gpu_tune.sh", "gpu_steps.sh"):
        shutil.copy(SCRIPTS / name, tree / "scripts" / name)
    bin_dir.mkdir()
    for name, text in (("python3", FAKE_PYTHON), ("nvidia-smi", "#!/usr/bin/env bash\necho FAKE GPU\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GPU_TUNE_SECONDS": "100",
           "OUT": str(tmp_path / "out")}
    for _ in range(2):  # the second command skips the step the first one finished
        result = _bash("bash scripts/gpu_tune.sh sm100-time tune-all task-bench", tree, env)
        assert result.returncode == 0, result.stdout + result.stderr
    summary = (tmp_path / "out" / "summary.txt").read_text()
    assert summary.count("sm100-time       exit 0 ") == 1
    assert summary.count("tune-all         not started: ") == 2 and "needs 120s" in summary
    assert summary.count("sm90-check       exit 1 ") == 2 and "sm90-task-bench" not in summary
    assert (tree / "build" / "gpu_tune" / "sm90-libs.txt").read_text().count("fake python3") == 2  # appended
