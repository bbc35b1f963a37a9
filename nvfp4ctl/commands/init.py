"""`nvfp4ctl init --problem NAME [DIR]`: start a project for one of the four NVFP4 problems."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvfp4ctl.console import get_console
from nvfp4ctl.env import Env, env_str
from nvfp4ctl.options import path
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.problems import get_problem, problem_names


def command(
    problem: Annotated[str, typer.Option("--problem", metavar="NAME", help=f"One of {', '.join(problem_names())} (or GPU MODE's spelling, nvfp4-gemv).")],
    folder: Annotated[Path, typer.Argument(metavar="DIR", parser=path("a folder"), show_default=False, help="Folder to create or fill (default: here).")] = Path("."),
) -> Outcome:
    """Write task.yml, a correct plain-torch submission.py and a MEMORY.md for a problem; overwrite nothing."""
    from nvfp4ctl.scaffold import init_project

    spec = get_problem(problem)
    made = init_project(spec, folder)
    console = get_console()
    for path in made.written:
        console.info(f"wrote {path}")
    if (elsewhere := _run_log_elsewhere(made.folder)) is not None:
        # MEMORY.md is still written, for the folder's notes: a run log set elsewhere must not cost a
        # folder its notes file, nor leave one whose "Run log" section never fills without a word
        console.note(_elsewhere_note(elsewhere, made.folder / "MEMORY.md"))
    console.ok(f"{spec.name}: `{_cd_into(made.folder)}nvfp4ctl check` runs submission.py on every test")
    return Outcome(result=f"init {spec.name} in {made.folder}", problem=spec.name)


def _run_log_elsewhere(folder: Path) -> Path | None:
    """The run log NVFP4CTL_MEMORY names where it is not the folder's own MEMORY.md, else None."""
    setting = env_str(Env.MEMORY)
    if not setting:
        return None
    memory = Path(setting)
    same = memory.resolve() == (folder / "MEMORY.md").resolve()
    return None if same else memory


def _elsewhere_note(memory: Path, own: Path) -> str:
    """Where the runs go instead of the folder's own MEMORY.md: the null device keeps none, as every
    command that logs takes it (no line written), so it is no log they go to."""
    from nvfp4ctl.runlog import is_null_device

    if is_null_device(memory):
        return f"runs are not logged ({Env.MEMORY}={memory}): unset {Env.MEMORY} to log them in {own} beside these notes"
    return f"runs are logged to {memory} ({Env.MEMORY}), not to {own}: unset {Env.MEMORY} to log them beside these notes"


def _cd_into(folder: Path) -> str:
    """"cd DIR && " as it can be pasted into a shell (quoted where DIR has spaces or quotes, "./" before
    a name that starts with "-", which cd would read as an option); "" for the current folder."""
    from nvfp4ctl.usage_hints import shell_path

    if folder.resolve() == Path.cwd().resolve():
        return ""
    return f"cd {shell_path(folder)} && "
