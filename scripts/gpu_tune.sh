#!/usr/bin/env bash
# `nvfp4ctl tune` on a GPU machine, resumable across commands of at most 10 minutes. Usage:
#   scripts/gpu_tune.sh [sm100-time] [proof] [tune-all] [task-bench]      (default: all, in this order)
# sm100-time: `python submission.py` time of the tcgen05 kernel's export on this machine's CPU;
# proof:      benchmarks/tune_gpus.py on the benchmark shapes: a warm-up that fills the build cache,
#             then the same sweep on 1 GPU and on 2 GPUs, and the comparison (needs 2 GPUs);
# tune-all:   the sm_90a kernel tuned over every task.yml shape, writing its dispatch table;
# task-bench: benchmarks/sm90_kernel.py check + bench of the shipped build (with that table) on all
#             13 task.yml shapes against the cuBLAS anchor.
# A step whose result is already in build/gpu_tune (kept on a warm machine between commands) is
# skipped; a step that would start with less than its least time left waits for the next command.
# $OUT receives summary.txt, logs.tgz, the proof JSONs, the dispatch table and the run log.
set -uo pipefail
cd "$(dirname "$0")/.."
dest=${OUT:-gpu-tune-out}; mkdir -p "$dest"
keep=build/gpu_tune; mkdir -p "$keep"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 COLUMNS=160
export NVFP4CTL_CACHE=${NVFP4CTL_CACHE:-$PWD/.nvfp4ctl-cache}
export NVFP4CTL_MEMORY=${NVFP4CTL_MEMORY:-$PWD/$keep/MEMORY.md}
what=" ${*:-sm100-time proof tune-all task-bench} "
deadline=$((SECONDS + ${GPU_TUNE_SECONDS:-560}))
table=kernels/sm90/sm90_dispatch.cuh

# shellcheck source=scripts/gpu_steps.sh
source scripts/gpu_steps.sh
step_dir=$keep step_width=16 step_tail=6
step_timeout=(-s INT -k 20)  # SIGINT first: tune saves what it measured

step() {  # step NAME LEAST_S CMD...: run within the time left, keep the log and the exit code
  local name=$1 least=$2; shift 2
  local left=$((deadline - SECONDS))
  if ((left < least)); then
    printf "%-${step_width}s not started: %ss left, needs %ss\n" "$name" "$left" "$least" | tee -a "$keep/summary.txt"
    return 99
  fi
  run_step "$name" "$left" "$@"
}

proof_run() {  # proof_run NAME GPUS LEAST_S: one tune_gpus.py run unless its JSON exists
  [[ -f $keep/$1.json ]] && return 0
  step "proof-$1" "$3" python3 benchmarks/tune_gpus.py run "$2" "$keep/$1.json.part" -- --shapes benchmarks &&
    mv "$keep/$1.json.part" "$keep/$1.json"
}

{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } | tee -a "$keep/summary.txt"
if [[ $what == *" sm100-time "* && ! -f $keep/sm100-time.done ]]; then
  step sm100-time 60 python3 -m nvfp4ctl build kernels/sm100/nvfp4_gemm_sm100_tc.cu --submission-time &&
    touch "$keep/sm100-time.done"
fi
if [[ $what == *" proof "* ]]; then
  proof_run warm 2 200 && proof_run one 1 240 && proof_run two 2 150 &&
    python3 benchmarks/tune_gpus.py compare "$keep/one.json" "$keep/two.json" | tee "$keep/compare.txt"
fi
if [[ $what == *" tune-all "* && ! -f $keep/tune-all.done ]]; then
  # SIGINT at the time limit: tune saves what it measured and the next command resumes from there
  step tune-all 120 python3 -m nvfp4ctl tune --shapes all && touch "$keep/tune-all.done"
  cp "$table" "$keep/sm90_dispatch.cuh"
fi
if [[ $what == *" task-bench "* ]]; then
  # each command gets the local tree again: bench the table the tune wrote, or say there is none
  if [[ -f $keep/tune-all.done ]]; then cp "$keep/sm90_dispatch.cuh" "$table"
  else echo "task-bench: no finished tune-all here, timing the table as sent" | tee -a "$keep/summary.txt"; fi
  mkdir -p .sm90build
  step sm90-libs 90 python3 benchmarks/sm90_kernel.py libs --variants main &&
    step sm90-check 60 python3 benchmarks/sm90_kernel.py check --variants main &&
    step sm90-task-bench 150 python3 benchmarks/sm90_kernel.py bench --variants main --shapes task --out "$keep"
fi
cp "$keep/summary.txt" "$dest/summary.txt"
cp "$keep"/*.json "$keep/compare.txt" "$keep/sm90_dispatch.cuh" "$dest/" 2>/dev/null
tar czf "$dest/logs.tgz" -C "$keep" .
