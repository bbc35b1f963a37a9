"""A tune killed outright (`kill -9`) leaves no GPU worker, nor anything a worker started, behind."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

from process_tree import alive, descendants, until

REPO = Path(__file__).resolve().parents[2]

# A stand-in tune: a pool of 2 CPU workers as make_workers starts them for 2 GPUs, each one's task the
# stand-in timing (tune_fakes.stuck_measure), which starts a helper and hangs as a stuck kernel would
TUNE = """
import sys, time
sys.path[:0] = [{repo!r}, {fakes!r}]
from nvfp4ctl.tune import gpu_pool
gpu_pool.MEASURE_JOB = "tune_fakes:stuck_measure"
pool = gpu_pool.GpuPool(gpu_pool.make_workers(["0", "1"], "cpu", 120), {{}}, timeout_s=120)
for home in range(2):
    pool.submit({{"folder": {folder!r}}}, None, "stuck", home)
time.sleep(600)
"""


def test_a_killed_tune_takes_its_gpu_workers_and_what_they_started_with_it(tmp_path: Path) -> None:
    """A worker's child is started by the pool's thread for its GPU, not the tune's main thread, sits in a
    session of its own and, timing, reads no message: it goes by its death signal (runner.child), and
    what it started by its group's reaper, else it would hold its GPU and run on for minutes."""
    script = TUNE.format(repo=str(REPO), fakes=str(REPO / "tests" / "tune"), folder=str(tmp_path))
    tune = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    below: set[int] = set()
    try:
        assert until(lambda: len(list(tmp_path.glob("*.pid"))) == 4, 120), "the stand-in timings never started"
        below = descendants(tune.pid)
        started = {int(p.stem) for p in tmp_path.glob("*.pid")}  # 2 workers' children, their 2 helpers
        assert started <= below, (started, below)
        os.kill(tune.pid, signal.SIGKILL)
        tune.wait(10)
        assert until(lambda: not any(alive(pid) for pid in below), 5), [p for p in below if alive(p)]
        # and nothing holds the tune's stdout: a reader of the pipe sees its end
        assert select.select([tune.stdout], [], [], 5)[0] and tune.stdout.read() == b""
    finally:
        for pid in [tune.pid, *below, *(int(p.stem) for p in tmp_path.glob("*.pid"))]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        tune.stdout.close()
        tune.wait(10)
