"""How long `python submission.py` of a kernel's export takes to import (= compile) here: the
leaderboard gives that step 120 s, and a kernel whose export may not compile in time is not shippable.

The export is written to a temporary folder and imported by a fresh Python process with an empty
torch extensions folder (nothing cached), as the server does. With a CPU-only torch, load_inline
cannot link a CUDA extension (no libtorch_cuda); the child then points torch at the CUDA toolkit so
both compiles run and only the link fails: the time is then the compile time without the ~1 s link,
and the result says so. The result names the machine (CPUs, model, load at start) and the verdict
against the leaderboard's 120 s, so a quoted time carries what it was measured on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.build import toolchain
from nvfp4ctl.build.compile import run_compiler, timeout_message
from nvfp4ctl.build.machine import Machine, children_cpu_seconds, this_machine
from nvfp4ctl.build.submission_build import LEADERBOARD_COMPILE_S
from nvfp4ctl.errors import ToolTimeout
from nvfp4ctl.export import export_submission

TIMEOUT_S = 600.0

# Runs in the child: import the submission by path; on a CPU-only torch, give cpp_extension the
# toolkit it does not look for and report a link failure as such.
_CHILD = r"""
import runpy, sys
import torch
import torch.utils.cpp_extension as ce
cpu_only = not torch.cuda.is_available() and torch.version.cuda is None
if cpu_only:
    ce.CUDA_HOME = sys.argv[2]
try:
    runpy.run_path(sys.argv[1], run_name="submission")
    print("NVFP4CTL_SUBMISSION imported")
except Exception as error:
    text = str(error)
    linked = not ("cannot find -ltorch_cuda" in text or "cannot find -lc10_cuda" in text)
    print("NVFP4CTL_SUBMISSION " + ("failed" if linked or not cpu_only else "compiled-no-link"))
    print(text[-2000:])
"""


@dataclass(frozen=True)
class SubmissionTime:
    seconds: float  # wall time of the whole import
    cpu_seconds: float  # CPU time of the child and its compilers (load on a shared machine inflates wall time)
    outcome: str  # "imported", "compiled-no-link" (CPU-only torch) or "failed"
    log: str
    machine: Machine

    @property
    def note(self) -> str:
        return {"imported": "", "compiled-no-link": " (CPU-only torch: compile only, link skipped)"}.get(
            self.outcome, " (FAILED)")

    @property
    def verdict(self) -> str:
        if self.outcome == "failed":
            return "did not compile"
        within = "within" if self.seconds <= LEADERBOARD_COMPILE_S else "OVER"
        return f"{within} the leaderboard's {LEADERBOARD_COMPILE_S:.0f} s limit"

    def summary(self, name: str) -> str:
        """One line with the facts a quoted compile time needs: wall and CPU seconds, the machine, the
        verdict ('k.cu: python submission.py took 18.2 s (19.6 s CPU) on 2 logical CPUs (...), load
        0.10 at start: within the leaderboard's 120 s limit')."""
        return (f"{name}: python submission.py took {self.seconds:.1f} s ({self.cpu_seconds:.1f} s CPU){self.note} "
                f"on {self.machine.describe()}: {self.verdict}")


def time_submission(kernel: Path, arch: str | None = None) -> SubmissionTime:
    cuda_home = toolchain.cuda_home()
    with tempfile.TemporaryDirectory(prefix="nvfp4ctl-submission-") as folder:
        root = Path(folder)
        submission = root / "submission.py"
        export_submission(kernel, submission, arch)
        env_extensions = root / "torch_extensions"
        machine = this_machine()  # the load before our own compile adds to it
        started = time.perf_counter()
        cpu_before = children_cpu_seconds()
        try:  # run_compiler: a stop at the limit ends ninja and nvcc too, not the child Python alone
            _, log = run_compiler([sys.executable, "-c", _CHILD, str(submission), str(cuda_home)], root,
                                  {**os.environ, "TORCH_EXTENSIONS_DIR": str(env_extensions), "MAX_JOBS": "2"},
                                  timeout_s=TIMEOUT_S)
        except subprocess.TimeoutExpired as error:  # a timeout (exit 3), as a compiler's: not a mistake in the input
            raise ToolTimeout(timeout_line(kernel.name)) from error
        seconds = time.perf_counter() - started
        cpu = children_cpu_seconds() - cpu_before
    marker = [line for line in log.splitlines() if line.startswith("NVFP4CTL_SUBMISSION ")]
    outcome = marker[-1].split()[1] if marker else "failed"
    return SubmissionTime(round(seconds, 1), round(cpu, 1), outcome, log, machine)


def timeout_line(name: str) -> str:
    """One line for an import stopped at TIMEOUT_S: past the leaderboard's limit as well, where that is lower."""
    line = f"{name}: {timeout_message('python submission.py', TIMEOUT_S)}"
    return line + (f": OVER the leaderboard's {LEADERBOARD_COMPILE_S:.0f} s limit"
                   if TIMEOUT_S > LEADERBOARD_COMPILE_S else "")

