"""The family end to end as a user meets it: for each problem, a folder holding GPU MODE's own task.yml
(unchanged) and a submission.py, then bare `nvfp4ctl check`, `nvfp4ctl bench` and a wrong submission.

Usage: python3 scripts/gpu_mode_folders.py TASKS_DIR OUT_DIR [--bench]
  TASKS_DIR/<problem>/task.yml are GPU MODE's files (tests/problems/gpu_mode_digests.py --extract,
  then the task.yml beside each); OUT_DIR receives one log per step and summary.txt.
The correct submission is our plain-torch starter; the wrong one is it with one 128x128 tile of C
changed (the grouped GEMM: one group's output changed), which check must pinpoint.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from nvfp4ctl.problems import get_problem, problem_names  # noqa: E402  (this checkout's nvfp4ctl)

# Appended to the starter: the same custom_kernel with one tile (one group) of the output wrong.
SPOIL = {
    "nvfp4_group_gemm": "\n_right = custom_kernel\n\ndef custom_kernel(data):\n    out = _right(data)\n"
                        "    out[1][:64, :64] += 1\n    return out\n",
    "default": "\n_right = custom_kernel\n\ndef custom_kernel(data):\n    out = _right(data)\n"
               "    out[:128, :128] += 1\n    return out\n",
}
# What a pinpointed failure prints, per problem.
PINPOINT = {"nvfp4_group_gemm": "wrong outputs: 1 of", "default": "128x128 tile"}


def run(step: str, args: list[str], cwd: Path, out: Path, expect: int) -> tuple[bool, str]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "nvfp4ctl", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "160"})
    (out / f"{step}.txt").write_text(done.stdout + done.stderr)
    ok = done.returncode == expect
    line = f"{step:<34} exit {done.returncode} (want {expect}) {time.monotonic() - started:6.1f} s  {'ok' if ok else 'FAIL'}"
    return ok, done.stdout + done.stderr if not ok else line


def main() -> int:
    tasks, out = Path(sys.argv[1]), Path(sys.argv[2])
    bench = "--bench" in sys.argv
    out.mkdir(parents=True, exist_ok=True)
    summary: list[str] = []
    all_ok = True
    for problem in problem_names():
        folder = out / "folders" / problem
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "task.yml").write_bytes((tasks / problem / "task.yml").read_bytes())
        code = (REPO / "kernels" / get_problem(problem).fallback_submission).read_text()
        (folder / "submission.py").write_text(code)
        steps = [(f"{problem}-check", ["check"], 0)]
        if bench:
            steps.append((f"{problem}-bench", ["bench"], 0))
        for step, args, expect in steps:
            ok, text = run(step, args, folder, out, expect)
            all_ok &= ok
            summary.append(text.splitlines()[-1] if ok else f"{step}: FAIL\n{text[-2000:]}")
        (folder / "submission.py").write_text(code + SPOIL.get(problem, SPOIL["default"]))
        ok, text = run(f"{problem}-check-wrong", ["check", "--only", "1", "--no-probe"], folder, out, 1)
        marker = PINPOINT.get(problem, PINPOINT["default"])
        pinpointed = marker in (out / f"{problem}-check-wrong.txt").read_text()
        all_ok &= ok and pinpointed
        summary.append(f"{problem}-check-wrong: {'pinpointed' if pinpointed else 'NOT pinpointed'} ({text.splitlines()[-1]})")
    (out / "summary.txt").write_text("\n".join(summary) + "\n")
    print("\n".join(summary))
    return 0 if all_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
