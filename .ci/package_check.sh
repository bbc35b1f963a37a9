#!/usr/bin/env bash
# CI: nvfp4ctl installed the way a stranger installs it, not from the checkout.
#   1. On a "connected machine": build our wheel and download every dependency, with a CPU-only
#      torch, into one wheelhouse (docs/install.md, "Offline install").
#   2. On the "offline machine": a fresh virtualenv that sees neither the checkout, this machine's
#      site-packages nor any index, installs from the wheelhouse alone (--no-index --find-links).
#   3. From a folder holding only the user's submission.py (no task.yml, no kernels/ nearby: the
#      shipped copies must be used): --help, lint on the file and on its defaults, dump --umma
#      --no-cute, export --kernel default, init (lint and check in the folder it writes), and check
#      on the CPU with the pure-torch submission the wheel ships (proves the CPU torch loads and runs).
# Usage: .ci/package_check.sh [WORK_DIR]   (default: a fresh temporary folder, removed at the end)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
WORK=${1:-$(mktemp -d -t nvfp4ctl-package-XXXXXX)}
[ $# -ge 1 ] || trap 'rm -rf "$WORK"' EXIT
WHEELHOUSE=$WORK/wheelhouse
VENV=$WORK/venv
mkdir -p "$WHEELHOUSE" "$WORK/empty"
step() { echo "== package check: $*"; }

step "1. wheelhouse (our wheel + every dependency, CPU torch) in $WHEELHOUSE"
python3 -m pip wheel -q --no-deps -w "$WHEELHOUSE" "$REPO"
WHEEL=$(ls "$WHEELHOUSE"/nvfp4ctl-*.whl)
# Pin torch to the build already on this machine (a CPU one in CI): otherwise the resolver may pick
# a newer CUDA build from the index, gigabytes instead of ~190 MB.
TORCH=$(python3 -c 'import torch; print(torch.__version__)')
echo "torch==$TORCH" > "$WORK/constraints.txt"
python3 -m pip download -q -d "$WHEELHOUSE" -c "$WORK/constraints.txt" "$WHEEL"
ls "$WHEELHOUSE" | sed 's/^/  /'

step "2. offline install into a fresh virtualenv (no index, no site-packages, no pip config)"
python3 -m venv "$VENV"
# PIP_CONFIG_FILE=/dev/null: no find-links or index from this machine's pip configuration.
PIP_CONFIG_FILE=/dev/null PIP_FIND_LINKS= PIP_EXTRA_INDEX_URL= PIP_INDEX_URL= \
  "$VENV/bin/python" -m pip install -q --no-index --find-links "$WHEELHOUSE" nvfp4ctl

step "3. commands from a folder holding only a submission.py"
cd "$WORK/empty"
export NVFP4CTL_CACHE=$WORK/cache NVFP4CTL_MEMORY=$WORK/MEMORY.md NO_COLOR=1
unset NVFP4CTL_TASK
NV="$VENV/bin/nvfp4ctl"
run() { echo "\$ nvfp4ctl $*"; "$NV" "$@"; }
"$VENV/bin/python" - <<'PY'
import nvfp4ctl, sys
from nvfp4ctl.project import SHIPPED_DIR
assert sys.prefix in nvfp4ctl.__file__, f"nvfp4ctl imported from {nvfp4ctl.__file__}, not the virtualenv"
assert (SHIPPED_DIR / "task.yml").is_file() and (SHIPPED_DIR / "kernels" / "sm100").is_dir(), SHIPPED_DIR
assert (SHIPPED_DIR / "docs" / "byo_kernel.md").is_file(), SHIPPED_DIR  # messages and --help name it
print(f"nvfp4ctl from {nvfp4ctl.__file__}")
PY
run --help > /dev/null
run check --help > /dev/null
cat > submission.py <<'PY'
import torch


def custom_kernel(data):
    a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
    return c
PY
run lint submission.py
run lint  # the user's folder: submission.py, never the package's own files
echo "\$ nvfp4ctl dump --umma --no-cute"; "$NV" dump --umma --no-cute > "$WORK/dump.txt"; tail -n 1 "$WORK/dump.txt"
run export --kernel default -o exported_submission.py
run lint exported_submission.py
run init --problem nvfp4_gemv project  # the starter comes from the wheel's copy of kernels/
(cd project && run lint && NVFP4CTL_DEVICE=cpu run check --only 1)
SUBMISSION=$("$VENV/bin/python" -c 'from nvfp4ctl.project import shipped; print(shipped("kernels/torch_dequant/submission.py"))')
NVFP4CTL_DEVICE=cpu run check --submission "$SUBMISSION" --only 1
step "ok"
