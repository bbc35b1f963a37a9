"""Typer entry point: parses, calls one command module, turns errors into one line and an exit code."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Annotated

import typer

from nvfp4ctl import runlog
from nvfp4ctl.commands import bench, build, check, dump, export, init, lint, log
from nvfp4ctl.console import NORMAL, QUIET, VERBOSE, get_console, set_verbosity
from nvfp4ctl.env import Env, env_flag
from nvfp4ctl.errors import ExitCode, NvfpError
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.project import memory_path, project_root

app = typer.Typer(
    name="nvfp4ctl",
    help="Build, check, benchmark and lint NVFP4 block-scaled kernels (GPU MODE nvfp4_gemm, nvfp4_dual_gemm, nvfp4_group_gemm, nvfp4_gemv).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=env_flag(Env.DEBUG),
)


@app.callback()
def _global_options(
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Only results and errors.")] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Show details (full compiler output, child logs).")] = False,
) -> None:
    set_verbosity(QUIET if quiet else VERBOSE if verbose else NORMAL)


def _logged(name: str, command: Callable[..., Outcome], record: bool = True) -> Callable[..., None]:
    """Run a command, show a failure as one red line, append the run log, exit with the code."""

    @functools.wraps(command)
    def wrapper(*args: object, **kwargs: object) -> None:
        try:
            outcome = command(*args, **kwargs)
        except NvfpError as error:
            get_console().error(str(error))
            outcome = Outcome(result=f"error: {str(error).splitlines()[0] if str(error) else type(error).__name__}",
                              exit_code=error.exit_code)
        except KeyboardInterrupt:
            get_console().error("interrupted")
            outcome = Outcome(result="interrupted", exit_code=ExitCode.INTERRUPTED)
        if record:
            try:
                runlog.append(runlog.make_entry(outcome, sys.argv[1:], project_root()), memory_path())
            except Exception as error:  # the log must never turn a result into a failure
                get_console().warn(f"run log not written: {error}")
        raise typer.Exit(int(outcome.exit_code))

    app.command(name)(wrapper)
    return wrapper


_logged("build", build.command)
_logged("check", check.command)
_logged("bench", bench.command)
_logged("dump", dump.command)
_logged("lint", lint.command)
_logged("export", export.command)
_logged("log", log.command, record=False)  # reading the log does not add to it
_logged("init", init.command, record=False)  # nothing has run yet; MEMORY.md is being made


def main() -> None:
    app()
