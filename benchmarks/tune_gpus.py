"""`nvfp4ctl tune` on 1 GPU and on 2 GPUs, same sweep: wall time and winners side by side.

On a machine with 2 GPUs, from the project root (each step fits a 10-minute command):
    export NVFP4CTL_CACHE=$PWD/.nvfp4ctl-cache            # the build cache, kept between commands
    python3 benchmarks/tune_gpus.py run 2 warm.json -- --shapes benchmarks   # fills the build cache
    python3 benchmarks/tune_gpus.py run 1 one.json  -- --shapes benchmarks
    python3 benchmarks/tune_gpus.py run 2 two.json  -- --shapes benchmarks
    python3 benchmarks/tune_gpus.py compare one.json two.json
Every run is `--fresh --no-write --json`: nothing answered from the resume state (each candidate is
checked and timed again), the dispatch table left as it is; after the warm-up every build is a cache
hit, so the two timed runs differ only in the GPUs that time the candidates.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path


def run(gpus: int, out: Path, extra: list[str]) -> None:
    command = [sys.executable, "-m", "nvfp4ctl", "tune", "--gpus", str(gpus), "--fresh", "--no-write", "--json", *extra]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout) | {"command_wall_s": wall, "gpus": gpus}
    out.write_text(json.dumps(report, indent=1))
    print(f"{gpus} GPU(s): {wall:.1f} s wall, tune {report['wall_s']:.1f} s -> {out}")


def compare(one_path: Path, two_path: Path) -> None:
    one, two = json.loads(one_path.read_text()), json.loads(two_path.read_text())
    print(f"{'GPUs':>4} {'wall s':>8} {'tune s':>8}  GPU busy s  ({one['gpu']})")
    for report in (one, two):
        busy = ", ".join(f"{name} {seconds:.0f}" for name, seconds in report["gpu_busy_s"].items())
        print(f"{report['gpus']:>4} {report['command_wall_s']:8.1f} {report['wall_s']:8.1f}  {busy}")
    print(f"speed-up: {one['command_wall_s'] / two['command_wall_s']:.2f}x wall, {one['wall_s'] / two['wall_s']:.2f}x tune")
    winners = [{s["key"]: s["winner"] for s in r["shapes"]} for r in (one, two)]
    print("winners: same" if winners[0] == winners[1] else "winners differ:")
    for shape_one, shape_two in zip(one["shapes"], two["shapes"]):
        mark = "" if shape_one["winner"] == shape_two["winner"] else "  <- differs"
        print(f"  {shape_one['key']}: current {_us(shape_one['current'])} | winner 1 GPU {_us(shape_one['winner_result'])}"
              f", 2 GPUs {_us(shape_two['winner_result'])}{mark}")


def _us(result: dict | None) -> str:
    return f"{result['us']:.2f} us" if result and result.get("us") is not None else "-"


def main(argv: list[str]) -> None:
    if len(argv) >= 3 and argv[0] == "run":
        extra = argv[3:]
        run(int(argv[1]), Path(argv[2]), extra[1:] if extra[:1] == ["--"] else extra)
    elif len(argv) == 3 and argv[0] == "compare":
        compare(Path(argv[1]), Path(argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
