"""`nvfp4ctl --help` stays fast: the CLI module loads no heavy dependency until a command runs."""

from __future__ import annotations

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


def test_importing_the_cli_imports_no_torch() -> None:
    loaded = _modules_after("import nvfp4ctl.cli")
    assert "torch" not in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_top_level_help_imports_nothing_heavy() -> None:
    code = ("import sys\nfrom nvfp4ctl.cli import app\n"
            "try:\n    app(['--help'], prog_name='nvfp4ctl')\nexcept SystemExit as e:\n    assert e.code == 0, e.code")
    loaded = _modules_after(code)
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
