"""A tune killed outright (`kill -9`) leaves no GPU worker, nor anything a worker started, behind."""

from __future__ import annotations

from pathlib import Path

from killed_tune import kill_and_see_everything_below_end

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
    def check_started(started: set[int], below: set[int]) -> None:  # 2 workers' children, their 2 helpers
        assert started <= below, (started, below)

    kill_and_see_everything_below_end(TUNE, tmp_path, 4, 120, check_started)
