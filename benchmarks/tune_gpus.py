"""`nvfp4ctl tune` on 1 GPU and on 2 GPUs, same sweep: wall time and winners side by side.

Run on a machine with 2 GPUs, from the project root:
    python3 benchmarks/tune_gpus.py [extra tune options, default: --shapes benchmarks]
First a 2-GPU run fills the build cache (every candidate compiled once), then the same sweep runs
with --gpus 1 and with --gpus 2 (both --fresh, so nothing is answered from the resume state and
every candidate is checked and timed again; builds are cache hits in both). --no-write keeps the
dispatch table as it is. Prints the two wall times, the ratio and whether the winners agree.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time


def tune(gpus: int, extra: list[str]) -> tuple[float, dict]:
    command = [sys.executable, "-m", "nvfp4ctl", "tune", "--gpus", str(gpus), "--fresh", "--no-write", "--json", *extra]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return wall, json.loads(done.stdout)


def winners(report: dict) -> dict[str, dict]:
    return {shape["key"]: shape["winner"] for shape in report["shapes"]}


def main() -> None:
    extra = sys.argv[1:] or ["--shapes", "benchmarks"]
    warm_s, _ = tune(2, extra)
    print(f"warm-up (2 GPUs, fills the build cache): {warm_s:.1f} s")
    one_s, one = tune(1, extra)
    two_s, two = tune(2, extra)
    print(f"{'GPUs':>4} {'wall s':>8} {'tune s':>8}  GPU busy s")
    for count, wall, report in ((1, one_s, one), (2, two_s, two)):
        busy = ", ".join(f"{name} {seconds:.0f}" for name, seconds in report["gpu_busy_s"].items())
        print(f"{count:>4} {wall:8.1f} {report['wall_s']:8.1f}  {busy}")
    print(f"speed-up 2 vs 1 GPU: {one_s / two_s:.2f}x wall, {one['wall_s'] / two['wall_s']:.2f}x tune")
    same = winners(one) == winners(two)
    print("winners: same" if same else "winners differ:")
    if not same:
        for key in winners(one):
            print(f"  {key}: 1 GPU {winners(one)[key]} | 2 GPUs {winners(two)[key]}")
    for shape in two["shapes"]:
        print(f"  {shape['key']}: current {shape['current']['us']:.2f} us, winner {shape['winner_result']['us']:.2f} us")


if __name__ == "__main__":
    main()
