"""`nvfp4ctl init --problem NAME [DIR]`: start a project for one of the four NVFP4 problems."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvfp4ctl.console import get_console
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.problems import get_problem, problem_names


def command(
    problem: Annotated[str, typer.Option("--problem", metavar="NAME", help=f"One of {', '.join(problem_names())}.")],
    folder: Annotated[Path, typer.Argument(metavar="DIR", show_default=False, help="Folder to create or fill (default: here).")] = Path("."),
) -> Outcome:
    """Write task.yml, a correct plain-torch submission.py and a MEMORY.md for a problem; overwrite nothing."""
    from nvfp4ctl.scaffold import init_project

    spec = get_problem(problem)
    made = init_project(spec, folder)
    console = get_console()
    for path in made.written:
        console.info(f"wrote {path}")
    console.ok(f"{spec.name}: `{_cd_into(made.folder)}nvfp4ctl check` runs submission.py on every test")
    return Outcome(result=f"init {spec.name} in {made.folder}", problem=spec.name)


def _cd_into(folder: Path) -> str:
    """"cd DIR && " as it can be pasted into a shell (quoted where DIR has spaces or quotes, "./" before
    a name that starts with "-", which cd would read as an option); "" for the current folder."""
    import os
    import shlex

    if folder.resolve() == Path.cwd().resolve():
        return ""
    typed = str(folder)
    if typed.startswith("-"):
        typed = os.path.join(".", typed)
    return f"cd {shlex.quote(typed)} && "
