"""Which calls the sm_90a kernel runs as wide tiles (v20: 192 rows of A per CTA, one unsplit wave of
shared-A CTAs): the header's own wide_tiles_for (kernels/sm90/sm90_scheduler.cuh, host code) compiled
by nvcc into a host program and run on the CPU for an H100 (132 resident CTAs of either kernel).

The GPU tests in test_sm90_kernel.py run WIDE through the shipped rule and WIDE_EVERYWHERE with the
knob at 2; the first tests here prove those shapes take the wide kernel there."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.kernels.test_sm90_kernel import WIDE, WIDE_EVERYWHERE

PROGRAM = r"""
#include <cstdio>
#include "sm90_scheduler.cuh"
using namespace nvfp4_sm90;

int main() {
  std::printf("default %d\n", NVFP4_SM90_WIDE_TILES);
  int m, n, k, l, narrow, wide, knob, min_k_tiles;
  while (std::scanf("%d %d %d %d %d %d %d %d", &m, &n, &k, &l, &narrow, &wide, &knob, &min_k_tiles) == 8)
    std::printf("%d\n", wide_tiles_for(m, n, l, k / BLOCK_K, narrow, wide, knob, min_k_tiles));
  return 0;
}
"""

H100 = 132
SHARED_A_MIN_K_TILES = 8  # the knob's shipped value (sm90_config.cuh)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wide_ctas(host_program):
    binary: Path = host_program("wide_plan", PROGRAM)

    def ctas(queries: list[tuple[int, ...]]) -> tuple[int, list[int]]:
        """(the header's default knob, CTAs per query: m n k l narrow_resident wide_resident knob min_k_tiles)."""
        text = "\n".join(" ".join(map(str, q)) for q in queries) + "\n"
        done = subprocess.run([str(binary)], input=text, capture_output=True, text=True, check=True)
        lines = done.stdout.splitlines()
        return int(lines[0].split()[1]), [int(line) for line in lines[1:]]

    return ctas


def test_the_gpu_tests_reach_the_wide_kernel(wide_ctas) -> None:
    default, shipped = wide_ctas([(*shape, H100, H100, 1, SHARED_A_MIN_K_TILES) for shape in WIDE])
    assert default == 1
    assert shipped == [112, 96]
    _, everywhere = wide_ctas([(*shape, H100, H100, 2, SHARED_A_MIN_K_TILES) for shape in WIDE_EVERYWHERE])
    assert all(ctas > 0 for ctas in everywhere), everywhere


def test_the_harness_wide_shapes_run_wide_tiles_in_the_shipped_build(wide_ctas) -> None:
    from tests.kernels.benchmark_scripts import imported_benchmark

    for harness in imported_benchmark("sm90_kernel"):
        shapes = harness.WIDE_SHAPES
    _, got = wide_ctas([(*shape, H100, H100, 1, SHARED_A_MIN_K_TILES) for shape in shapes])
    assert all(96 <= ctas <= H100 for ctas in got), dict(zip(shapes, got))


def test_of_the_task_shapes_only_384x7168x2304_runs_wide_tiles(wide_ctas) -> None:
    from nvfp4ctl.build.knobs import read_dispatch
    from nvfp4ctl.task import load_task

    task = load_task(REPO / "task.yml")
    shapes = sorted({(c.m, c.n, c.k, c.l) for c in (*task.tests, *task.benchmarks)})
    table = {(e.m, e.n, e.k, e.l): e.value for e in read_dispatch(REPO / "kernels" / "sm90" / "sm90_dispatch.cuh")
             if e.knob == "WIDE_TILES"}
    _, got = wide_ctas([(*shape, H100, H100, table.get(shape, 1), SHARED_A_MIN_K_TILES) for shape in shapes])
    assert {shape: ctas for shape, ctas in zip(shapes, got) if ctas} == {(384, 7168, 2304, 1): 112}


@pytest.mark.parametrize(
    "query,expected",
    [
        ((384, 7168, 2304, 1, H100, H100, 1, 8), 112),  # 168 narrow tiles overfill 132 CTAs, 112 wide ones fit
        ((384, 7168, 2304, 1, H100, H100, 0, 8), 0),  # 0: never
        ((384, 7168, 2304, 2, H100, H100, 1, 8), 0),  # a batch: 224 wide tiles are two waves
        ((384, 5120, 2304, 1, H100, H100, 1, 8), 0),  # 120 narrow tiles fit a wave: they stay
        ((384, 5120, 2304, 1, H100, H100, 2, 8), 80),  # 2: wherever the wide tiles fit
        ((512, 7168, 2304, 1, H100, H100, 2, 8), 0),  # M not a multiple of 192
        ((384, 7168, 896, 1, H100, H100, 1, 8), 0),  # 7 K tiles: too short for shared A
        ((384, 7168, 1024, 1, H100, H100, 1, 8), 112),  # 8 K tiles: enough
        ((384, 7168, 2304, 1, H100, 100, 1, 8), 0),  # fewer resident wide CTAs than tiles
        ((384, 7168, 2304, 1, 0, 0, 1, 8), 0),  # no occupancy known: never
        ((1536, 4096, 2048, 1, 300, 300, 2, 8), 256),  # a larger GPU: up to kSharedAMaxCtas CTAs
        ((1536, 4224, 2048, 1, 300, 300, 2, 8), 0),  # 264 CTAs: more than the launch-wide barrier's flags
    ],
)
def test_the_rule(wide_ctas, query: tuple[int, ...], expected: int) -> None:
    _, got = wide_ctas([query])
    assert got == [expected]
