"""`nvfp4ctl export`: write a single-file GPU MODE submission.py from a kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvfp4ctl.console import get_console
from nvfp4ctl.errors import UsageError
from nvfp4ctl.export import export_submission
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.project import kernels_dir

LEADERBOARD_ARCH = "sm_100a"  # the B200 leaderboard


def default_kernel() -> Path:
    return kernels_dir() / "sm100" / "nvfp4_gemm_sm100_tc.cu"


def command(
    kernel: Annotated[
        Path | None, typer.Option("--kernel", help="Kernel .cu to embed. Default: kernels/sm100/nvfp4_gemm_sm100_tc.cu (the CUTLASS one: kernels/sm100/nvfp4_gemm_sm100.cu).", show_default=False)
    ] = None,
    output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the submission.")] = Path("submission.py"),
) -> Outcome:
    """Write a submission.py that compiles the kernel with load_inline and calls it from custom_kernel."""
    console = get_console()
    source = kernel or default_kernel()
    if kernel is None and not source.is_file():
        raise UsageError(f"no B200 kernel at {source}; pass --kernel PATH")
    submission = export_submission(source, output)
    if submission.arch != LEADERBOARD_ARCH:
        console.warn(f"{source.name} is an {submission.arch} kernel: the B200 leaderboard needs {LEADERBOARD_ARCH}")
    if submission.never_run:
        console.warn(f"{source.name} has never run on {submission.arch} (its `nvfp4ctl: never-run-on` mark): "
                     "run `nvfp4ctl check` on that GPU before submitting")
    size_kb = len(submission.text.encode()) / 1024
    console.ok(f"wrote {output} ({size_kb:.0f} kB): {source.name} for {submission.arch}, {len(submission.embedded)} files embedded")
    console.info(f"next: nvfp4ctl lint {output} && nvfp4ctl check --submission {output}")
    return Outcome(result=f"wrote {output.name} from {source.name} ({submission.arch})", target=output)
