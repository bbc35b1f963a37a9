"""What a command hands back to the CLI: its exit code and the one-line result for the run log."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.errors import ExitCode


@dataclass(frozen=True)
class Outcome:
    result: str  # one line, e.g. "10/10 pass", "timeout in test 6", "3 errors, 1 warning"
    exit_code: ExitCode = ExitCode.OK
    target: Path | str | None = None  # file the command ran or checked (hashed in the run log)
    gpu: str | None = None  # "NVIDIA H100 80GB HBM3 (sm_90)" when the command saw a GPU
    target_source: str | None = None  # why that file: "beside task.yml", "--submission", ...
    problem: str | None = None  # the task's problem, recorded in the run log
    # the target's content hash as the command read it (content_digest); None: hashed as the file is when logged
    target_digest: str | None = None
