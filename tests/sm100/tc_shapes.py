"""The shapes the tcgen05 kernel's CPU proofs cover: every task.yml test and benchmark (l = 1) plus
batched and odd-split variants the leaderboard does not use but the C API accepts."""

from __future__ import annotations

from nvfp4ctl.project import REPO_DIR
from nvfp4ctl.task import load_task

TASK = load_task(REPO_DIR / "task.yml")
BENCH_SHAPES = [(c.m, c.n, c.k, c.l) for c in TASK.benchmarks]
TEST_SHAPES = [(c.m, c.n, c.k, c.l) for c in TASK.tests]
EXTRA_SHAPES = [(256, 512, 1024, 3), (128, 384, 2560, 2), (384, 128, 4608, 1)]
ALL_SHAPES = sorted(set(BENCH_SHAPES + TEST_SHAPES + EXTRA_SHAPES))
