#!/usr/bin/env bash
# CI: the CLI tests again on the oldest typer, rich, PyYAML, filelock and markdown-it-py pyproject.toml allows (the
# main run has the newest), then the torch-free ones also on the oldest Python it allows. click is left to pip within that typer's own range, as a user's install
# gets it: a typer whose range admits a click it breaks on is below the floor.
# The virtualenv sees this machine's site-packages (torch, pytest, the editable nvfp4ctl), so only
# those few small packages install: under a minute in all on a 2-core machine.
# Usage: .ci/floor_check.sh [WORK_DIR]   (default: a fresh temporary folder, removed at the end)
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-$(mktemp -d -t nvfp4ctl-floor-XXXXXX)}
[ $# -ge 1 ] || trap 'rm -rf "$WORK"' EXIT
VENV=$WORK/venv

# "typer>=0.15.4" in pyproject.toml's dependencies -> typer==0.15.4
PINS=$(python3 - <<'PY'
import re
from pathlib import Path

text = Path("pyproject.toml").read_text()
floors = dict(re.findall(r'^\s*"(typer|rich|pyyaml|filelock|markdown-it-py)>=([0-9][^",;\s]*)"', text, re.M))
missing = {"typer", "rich", "pyyaml", "filelock", "markdown-it-py"} - floors.keys()
if missing:
    raise SystemExit(f"floor check: no >= floor for {', '.join(sorted(missing))} in pyproject.toml")
print(" ".join(f"{name}=={version}" for name, version in sorted(floors.items())))
PY
)
echo "== floor check: $PINS"
python3 -m venv --system-site-packages "$VENV"
# pip may say the newer typer outside the virtualenv now conflicts: the virtualenv's own one wins there.
"$VENV/bin/python" -m pip install -q --disable-pip-version-check $PINS
"$VENV/bin/python" -m pip list --disable-pip-version-check 2>/dev/null | grep -iE '^(typer|click|rich|filelock|pyyaml|markdown-it-py) '

# The tests that drive the CLI end to end: parsing, help, errors, exit codes, --json, the run log; and
# the printer's own, whose tables, spinner and bars are rich's.
PYTHONPATH=$PWD "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
  tests/test_cli.py tests/test_console.py tests/test_help.py tests/test_cli_startup.py tests/test_init.py tests/test_runlog.py \
  tests/test_log_layout.py tests/test_flowed_records.py tests/test_tool_version.py \
  tests/lint/test_cli.py tests/bench/test_bench_command.py tests/check/test_plan.py \
  tests/dump/test_dump_cli.py tests/tune/test_tune_command.py tests/test_cli_registration.py

# The same floors on the oldest Python requires-python allows, where this machine has one (pyenv's
# versions count): typing differs between Pythons in ways typer depends on (3.10 wrapped every hint
# defaulting to None in Optional, and typer lost the arguments and options inside). There is no torch
# for it here, so only the tests that need none run: registration, lint, the task file, the run log.
OLDEST=$(sed -n 's/^requires-python *= *">= *\([0-9]*\.[0-9]*\)".*/\1/p' pyproject.toml)
OLD_PYTHON=$(command -v "python$OLDEST" 2>/dev/null || true)
if [ -z "$OLD_PYTHON" ] || ! "$OLD_PYTHON" -c '' 2>/dev/null; then
  OLD_PYTHON=$(ls -d "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/"$OLDEST".*/bin/python"$OLDEST" 2>/dev/null | sort -V | tail -n 1 || true)
fi
if [ -z "$OLD_PYTHON" ]; then
  echo "== floor check on Python $OLDEST: skipped, no Python $OLDEST on this machine"
  exit 0
fi
echo "== floor check on $("$OLD_PYTHON" --version) ($OLD_PYTHON): $PINS"
"$OLD_PYTHON" -m venv "$WORK/venv-oldest"
"$WORK/venv-oldest/bin/python" -m pip install -q --disable-pip-version-check $PINS pytest
PYTHONPATH=$PWD "$WORK/venv-oldest/bin/python" -m pytest -q -p no:cacheprovider \
  tests/test_cli_registration.py tests/test_task.py tests/test_runlog.py tests/lint
