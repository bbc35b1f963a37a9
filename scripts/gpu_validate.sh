#!/usr/bin/env bash
# GPU-side validation in one go (what CI cannot run), each step logged. Usage:
#   scripts/gpu_validate.sh [digests] [family] [check] [tests] [bench] [sm90]   (default: all)
# digests: GPU MODE's generate_input digests (needs their files in build/gpu_mode, see
#          tests/problems/gpu_mode_digests.py --extract); family: the four problems in GPU MODE
#          folders (scripts/gpu_mode_folders.py, --bench); check: the GEMM's main job; tests: every
#          gpu-marked test but the bench fidelity ones; bench: those and `nvfp4ctl bench`;
#          sm90: benchmarks/sm90_kernel.py check + bench of the shipped build.
# Logs go to a work folder; $OUT (or ./gpu-validate-out) receives summary.txt, logs.tgz, the
# digests JSON and MEMORY.md (the device tool brings back at most 8 files).
set -uo pipefail
cd "$(dirname "$0")/.."
dest=${OUT:-gpu-validate-out}; mkdir -p "$dest"
out=$(mktemp -d -t nvfp4ctl-gpu-XXXXXX)
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 COLUMNS=160
export NVFP4CTL_CACHE=${NVFP4CTL_CACHE:-$PWD/.nvfp4ctl-cache}
export NVFP4CTL_TEST_CACHE=${NVFP4CTL_TEST_CACHE:-$NVFP4CTL_CACHE}  # the tests' builds share it (tests/session_cache.py)
what=" ${*:-digests family check tests bench sm90} "
GPU_MODE_COMMIT=f83cb92a534cc67fa98d7e9813e7f8238abdb4e0

# shellcheck source=scripts/gpu_steps.sh
source scripts/gpu_steps.sh
step_dir=$out step_width=14 step_tail=4 step_timeout=()
step() { run_step "$@"; }  # step NAME LIMIT_S CMD...: run, keep the log and the exit code

nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | tee "$out/summary.txt"
if [[ $what == *" digests "* ]]; then
  step digests 300 python3 tests/problems/gpu_mode_digests.py build/gpu_mode --commit "$GPU_MODE_COMMIT"
  cp tests/problems/data/gpu_mode_digests.json "$dest/" 2>/dev/null
fi
if [[ $what == *" family "* ]]; then
  step family 560 python3 scripts/gpu_mode_folders.py build/gpu_mode "$out/family" --bench
fi
if [[ $what == *" check "* ]]; then
  step build 300 python3 -m nvfp4ctl build
  step check 300 python3 -m nvfp4ctl check
  step check-full 300 python3 -m nvfp4ctl check --scales full
  step check-odd 200 python3 -m nvfp4ctl check --shape 256,384,512 --shape 128,256,1024,2 --scales full
fi
if [[ $what == *" tests "* ]]; then
  step pytest-gpu 560 python3 -m pytest -m gpu -q -rs --durations=15 --ignore=tests/bench -p no:cacheprovider
fi
if [[ $what == *" bench "* ]]; then
  step pytest-bench 560 python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/bench
  step bench 120 python3 -m nvfp4ctl bench
fi
if [[ $what == *" sm90 "* ]]; then
  step sm90-check 300 python3 benchmarks/sm90_kernel.py check --variants main
  step sm90-bench 300 python3 benchmarks/sm90_kernel.py bench --variants main
fi
cp MEMORY.md "$out/MEMORY.md" 2>/dev/null
cp "$out/summary.txt" "$dest/summary.txt"
cp MEMORY.md "$dest/MEMORY.md" 2>/dev/null
tar czf "$dest/logs.tgz" -C "$out" .
cat "$out/summary.txt"
