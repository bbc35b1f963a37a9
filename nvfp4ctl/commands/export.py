"""`nvfp4ctl export`: write a single-file GPU MODE submission.py from a kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvfp4ctl.console import get_console
from nvfp4ctl.errors import UsageError
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.project import shipped
from nvfp4ctl.workspace import users_kernels_dir

LEADERBOARD_ARCH = "sm_100a"  # the B200 leaderboard
B200_KERNEL = "sm100/nvfp4_gemm_sm100.cu"
DEFAULT_BY_NAME = "default"


def default_kernel(kernel: Path | None) -> Path:
    """--kernel PATH; `--kernel default`: ours; none: the B200 kernel of the user's kernels/ folder."""
    if kernel is not None:
        return shipped("kernels") / B200_KERNEL if str(kernel) == DEFAULT_BY_NAME else kernel
    kernels = users_kernels_dir()
    if kernels is None:
        raise UsageError("no kernel to export here (no kernels/ folder): pass --kernel PATH,"
                         " or --kernel default for nvfp4ctl's own B200 kernel")
    return kernels / B200_KERNEL


def command(
    kernel: Annotated[
        Path | None, typer.Option("--kernel", help="Kernel .cu to embed ('default': nvfp4ctl's own B200 kernel)."
                                  " Default: kernels/sm100/nvfp4_gemm_sm100.cu of your folder.", show_default=False)
    ] = None,
    output: Annotated[Path, typer.Option("-o", "--output", help="Where to write the submission.")] = Path("submission.py"),
) -> Outcome:
    """Write a submission.py that compiles the kernel with load_inline and calls it from custom_kernel."""
    from nvfp4ctl.export import export_submission  # here, not at the top: keeps `--help` fast

    console = get_console()
    source = default_kernel(kernel)
    if not source.is_file():
        raise UsageError(f"no B200 kernel at {source}; pass --kernel PATH")
    submission = export_submission(source, output)
    if submission.arch != LEADERBOARD_ARCH:
        console.warn(f"{source.name} is an {submission.arch} kernel: the B200 leaderboard needs {LEADERBOARD_ARCH}")
    size_kb = len(submission.text.encode()) / 1024
    console.ok(f"wrote {output} ({size_kb:.0f} kB): {source.name} for {submission.arch}, {len(submission.embedded)} files embedded")
    console.info(f"next: nvfp4ctl lint {output} && nvfp4ctl check --submission {output}")
    return Outcome(result=f"wrote {output.name} from {source.name} ({submission.arch})", target=output)
