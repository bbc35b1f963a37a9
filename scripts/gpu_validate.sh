#!/usr/bin/env bash
# GPU-side validation in one go (what CI cannot run): the README's main job, the gpu-marked tests
# and the benchmark, each step logged under $OUT (or ./gpu-validate-out). Usage: scripts/gpu_validate.sh [check] [tests] [bench] (default: all three)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-validate-out}; mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 COLUMNS=160
export NVFP4CTL_CACHE=${NVFP4CTL_CACHE:-/tmp/nvfp4ctl-cache}
what=" ${*:-check tests bench} "

step() {  # step NAME LIMIT_S CMD...: run, keep the log and the exit code
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$out/$name.txt" 2>&1; local rc=$?
  printf '%-14s exit %-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" "$*" | tee -a "$out/summary.txt"
}

nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | tee "$out/gpu.txt"
if [[ $what == *" check "* ]]; then
  step build 300 python3 -m nvfp4ctl build
  step check 300 python3 -m nvfp4ctl check
  step check-only3 120 python3 -m nvfp4ctl check --only 3
  step check-full 300 python3 -m nvfp4ctl check --scales full
  step check-odd 200 python3 -m nvfp4ctl check --shape 256,384,512 --shape 128,256,1024,2 --scales full
fi
if [[ $what == *" tests "* ]]; then
  step pytest-gpu 500 python3 -m pytest -m gpu -q -rs --deselect tests/bench -p no:cacheprovider
fi
if [[ $what == *" bench "* ]]; then
  step pytest-bench 400 python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/bench
  step bench 120 python3 -m nvfp4ctl bench
fi
cp MEMORY.md "$out/MEMORY.md" 2>/dev/null
cat "$out/summary.txt"
