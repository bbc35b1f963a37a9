"""A tune killed outright (`kill -9`) leaves no compile worker, compile or resource tracker behind."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

from process_tree import alive, descendants, until

REPO = Path(__file__).resolve().parents[2]

# A stand-in tune: a pool of 2 spawned compile workers, each running `sleep 60` as nvcc would (tune_fakes)
TUNE = """
import sys, time
from pathlib import Path
sys.path[:0] = [{repo!r}, {fakes!r}]
from nvfp4ctl.tune.compile_pool import CompilePool
from nvfp4ctl.tune.knobs import Config
from tune_fakes import slow_compile
pool = CompilePool(Path({folder!r}), "sm_90a", jobs=2, compile_fn=slow_compile)
for value in range(2):
    pool.submit(Config((("K_A", value),)))
time.sleep(600)
"""


def test_a_killed_tune_takes_its_compile_workers_and_their_compiles_with_it(tmp_path: Path) -> None:
    """Each worker sits in a process group of its own, which no signal for the tune reaches: after `kill -9`
    the workers compiled on for minutes, holding the tune's stdout (`tune ... | tail -2` never returned) and
    the pool's resource tracker alive."""
    script = TUNE.format(repo=str(REPO), fakes=str(REPO / "tests" / "tune"), folder=str(tmp_path))
    tune = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    below: set[int] = set()
    try:
        assert until(lambda: len(list(tmp_path.glob("*.pid"))) == 2, 60), "the stand-in compiles never started"
        below = descendants(tune.pid)
        compiles = {int(p.stem) for p in tmp_path.glob("*.pid")}
        assert compiles <= below and len(below) >= 4, below  # 2 workers, their 2 compiles (and the tracker)
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
