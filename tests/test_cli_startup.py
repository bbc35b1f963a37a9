"""`nvfp4ctl --help` stays fast: the CLI module loads no heavy dependency until a command runs."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Each costs from ~10 ms (filelock, yaml) to seconds (torch) on a 2-core machine; none is needed to
# parse arguments or print help.
HEAVY = ("torch", "numpy", "yaml", "filelock", "rich.progress", "rich.markdown", "nvfp4ctl.runlog",
         "nvfp4ctl.lint.engine", "nvfp4ctl.build.builder", "nvfp4ctl.check.run", "nvfp4ctl.bench.session")


def _modules_after(code: str) -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT,
                          check=True, timeout=120)
    return set(json.loads(done.stdout.splitlines()[-1]))


@functools.cache
def _loaded_by_typer_itself() -> frozenset[str]:
    """What `import typer` loads on its own: typer before 0.17 imports rich.markdown there (its help
    renderer), which nvfp4ctl cannot avoid; its newer versions load none of HEAVY."""
    return frozenset(_modules_after("import typer"))


def _heavy(loaded: set[str]) -> list[str]:
    return sorted((loaded - _loaded_by_typer_itself()) & set(HEAVY))


def test_importing_the_cli_imports_no_torch() -> None:
    loaded = _modules_after("import nvfp4ctl.cli")
    assert "torch" not in loaded
    assert not _heavy(loaded), _heavy(loaded)


def test_top_level_help_imports_nothing_heavy() -> None:
    code = ("import sys\nfrom nvfp4ctl.cli import app\n"
            "try:\n    app(['--help'], prog_name='nvfp4ctl')\nexcept SystemExit as e:\n    assert e.code == 0, e.code")
    loaded = _modules_after(code)
    assert not _heavy(loaded), _heavy(loaded)


def test_each_commands_annotations_are_evaluated_once_at_start() -> None:
    """Registering a command evaluates its parameters' annotations for typer; the check of its file
    options reads those, where it evaluated them again: ~1 ms a command on every start, `--help` too."""
    probe = ("import collections, inspect, json\ncalls = collections.Counter()\nreal = inspect.get_annotations\n"
             "def counted(obj, *args, **kwargs):\n"
             "    if kwargs.get('eval_str'):\n        calls[f'{obj.__module__}.{obj.__qualname__}'] += 1\n"
             "    return real(obj, *args, **kwargs)\n"
             "inspect.get_annotations = counted\nimport nvfp4ctl.cli\nprint(json.dumps(calls))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT,
                          check=True, timeout=120)
    calls = json.loads(done.stdout.splitlines()[-1])
    assert "nvfp4ctl.commands.check.command" in calls
    assert {name: count for name, count in calls.items() if count > 1} == {}


def test_typer_alone_loads_none_of_what_nvfp4ctl_must_not() -> None:
    """The allowance above is for typer's own imports, never for torch and the modules of nvfp4ctl."""
    assert not _loaded_by_typer_itself() & (set(HEAVY) - {"rich.markdown"}), sorted(_loaded_by_typer_itself())


def test_the_console_script_starts_in_the_module_that_handles_ctrl_c() -> None:
    """The script imports its entry module before any code of ours runs: that module must be the one
    whose main() catches a Ctrl-C while the CLI loads, not nvfp4ctl.cli."""
    import re

    scripts = re.search(r"^\[project\.scripts\]\n(.*?)^\[", (ROOT / "pyproject.toml").read_text(), re.M | re.S)
    assert scripts is not None
    assert re.search(r'^nvfp4ctl = "nvfp4ctl\.__main__:main"', scripts.group(1), re.M), scripts.group(1)


def test_the_entry_module_loads_nothing_but_the_standard_library() -> None:
    loaded = _modules_after("import nvfp4ctl.__main__")
    assert {name for name in loaded if name.startswith("nvfp4ctl")} == {"nvfp4ctl", "nvfp4ctl.__main__"}
    assert not loaded & {"typer", "click", "rich"}


def test_ctrl_c_while_the_cli_loads_is_the_tools_interrupt(monkeypatch, capsys) -> None:
    """Not a traceback: the line and the exit code of a Ctrl-C at any later point."""
    import builtins

    import pytest

    from nvfp4ctl.__main__ import main
    from nvfp4ctl.errors import ExitCode

    real_import = builtins.__import__

    def interrupted(name: str, *args: object, **kwargs: object) -> object:
        if name == "nvfp4ctl.cli":
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == ExitCode.INTERRUPTED
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "error: interrupted\n")


def test_ctrl_c_deep_in_loading_the_cli_from_the_shell_is_one_line_and_exit_130() -> None:
    # the Ctrl-C comes while nvfp4ctl.cli imports typer, as the console script would meet it
    probe = ("import builtins, sys\nreal = builtins.__import__\n"
             "def interrupted(name, *args, **kwargs):\n"
             "    if name == 'typer':\n        raise KeyboardInterrupt\n"
             "    return real(name, *args, **kwargs)\n"
             "builtins.__import__ = interrupted\n"
             "from nvfp4ctl.__main__ import main\nsys.argv = ['nvfp4ctl', 'log']\nmain()\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "error: interrupted\n")


def test_lint_loads_no_build_machinery() -> None:
    """lint reads include lines with the preprocessor scan; that scan lives outside nvfp4ctl.build, whose
    package loads the builder, the loader and the compile steps (about 85 ms more for every lint)."""
    loaded = _modules_after("import nvfp4ctl.lint.engine, nvfp4ctl.lint.submission")
    assert "nvfp4ctl.build.builder" not in loaded and "torch" not in loaded


def test_lint_of_a_load_submission_loads_no_build_machinery(tmp_path: Path) -> None:
    """A submission that compiles a .cu with cpp_extension.load() has that file read for its C ABI through
    nvfp4ctl.build.submission_sources; the package's own names load lazily, so the builder stays out."""
    (tmp_path / "gemv.cu").write_text('#include "nvfp4_gemv_api.h"\n')
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load\nmod = load(name='k', sources=['gemv.cu'])\n")
    loaded = _modules_after("from pathlib import Path\nfrom nvfp4ctl.lint.submission import api_problem\n"
                            f"p = Path({str(submission)!r})\nassert api_problem(p.read_text(), p.parent)[0] == 'nvfp4_gemv'")
    assert "nvfp4ctl.build.submission_sources" in loaded
    assert "nvfp4ctl.build.builder" not in loaded and "torch" not in loaded
