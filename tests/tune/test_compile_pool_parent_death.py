"""A tune killed outright (`kill -9`) leaves no compile worker, compile or resource tracker behind."""

from __future__ import annotations

from pathlib import Path

from killed_tune import kill_and_see_everything_below_end

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
    def check_started(compiles: set[int], below: set[int]) -> None:
        assert compiles <= below and len(below) >= 4, below  # 2 workers, their 2 compiles (and the tracker)

    kill_and_see_everything_below_end(TUNE, tmp_path, 2, 60, check_started)
