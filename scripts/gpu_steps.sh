# One logged step of a GPU script; sourced by scripts/gpu_tune.sh and scripts/gpu_validate.sh, not run.
# The sourcing script sets, before its first step:
#   step_dir      the folder of the step logs (NAME.txt) and of summary.txt
#   step_width    the width of the name column in summary.txt
#   step_tail     how many of a log's last lines summary.txt repeats
#   step_timeout  an array of timeout(1) options, e.g. (-s INT -k 20) for a step that saves on SIGINT
# Logs are appended to: a step resumed by a later command keeps its earlier output (gpu_tune.sh), and
# a fresh step_dir (gpu_validate.sh) starts every log empty anyway.

run_step() {  # run_step NAME LIMIT_S CMD...: run under timeout, keep the log, summarise; returns CMD's exit code
  local name=$1 limit=$2; shift 2
  local start=$SECONDS log=$step_dir/$name.txt rc
  timeout ${step_timeout[@]+"${step_timeout[@]}"} "$limit" "$@" >>"$log" 2>&1; rc=$?
  printf "%-${step_width}s exit %-3s %4ss  %s\n" "$name" "$rc" "$((SECONDS - start))" "$*" | tee -a "$step_dir/summary.txt"
  tail -n "$step_tail" "$log" | sed 's/^/    /' | tee -a "$step_dir/summary.txt"
  return $rc
}
