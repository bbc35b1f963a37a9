"""Every command's parameters reach click as they are declared: an Argument as an argument, an Option
under its own names. Needs no torch, so CI also runs it on the oldest Python pyproject.toml allows
(.ci/floor_check.sh): on Python 3.10 `typing.get_type_hints` wrapped each hint whose default is None
in Optional[...], typer no longer saw the Annotated metadata inside, and `nvfp4ctl lint PATH` said
"Got unexpected extra argument"."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.models import ArgumentInfo, OptionInfo
from typer.testing import CliRunner

from nvfp4ctl.cli import app


def _declared() -> list[tuple[str, str, object]]:
    """(command, parameter, its typer ArgumentInfo/OptionInfo) as the command's own function declares them."""
    found = []
    for command in app.registered_commands:
        function = inspect.unwrap(command.callback)
        for name, hint in inspect.get_annotations(function, eval_str=True).items():
            infos = [info for info in getattr(hint, "__metadata__", ()) if isinstance(info, (ArgumentInfo, OptionInfo))]
            found.extend((command.name, name, info) for info in infos)
    return found


def _click_params(command: str) -> dict[str, Any]:
    """The click command's parameters by name (click's own, or the copy newer typers carry)."""
    group = typer.main.get_command(app)
    return {param.name: param for param in group.commands[command].params if param.name}  # type: ignore[attr-defined]


def test_the_declarations_are_found() -> None:
    declared = {(command, name) for command, name, _ in _declared()}
    assert {("lint", "paths"), ("check", "only"), ("log", "last")} <= declared


@pytest.mark.parametrize("command, name, info", _declared(), ids=lambda value: value if isinstance(value, str) else "")
def test_each_parameter_reaches_click_as_declared(command: str, name: str, info: object) -> None:
    param = _click_params(command).get(name)
    assert param is not None, f"{command}: {name} is not a parameter of the click command"
    if isinstance(info, ArgumentInfo):
        assert param.param_type_name == "argument", f"{command} {name}: declared an argument, registered as {param.opts}"
        return
    assert param.param_type_name == "option", f"{command} {name}: declared an option, registered as an argument"
    declared = {decl for decl in (info.default, *(info.param_decls or ())) if isinstance(decl, str) and decl.startswith("-")}
    assert declared <= set(param.opts) | set(param.secondary_opts), f"{command} {name}: {sorted(declared)} vs {param.opts}"
    assert param.help == info.help, f"{command} {name}: registered without its declared help (its metadata was lost)"


def test_lint_takes_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    (tmp_path / "clean.py").write_text("x = 1\n")
    result = CliRunner().invoke(app, ["lint", "clean.py"])
    assert result.exit_code == 0, result.output
