"""Which calls the sm_90a kernel sends to its direct kernel, and in which configuration: the header's
own direct_plan_for (kernels/sm90/nvfp4_gemm_sm90_direct.cuh, host code) compiled by nvcc into a host
program and run on the CPU for an H100's 132 SMs.

The GPU tests in test_sm90_kernel.py run the direct kernel on DIRECT_SHAPES through the same rule;
the first test here proves that those shapes reach every configuration the launch has, so none of its
four instances goes untested on a GPU."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.kernels.test_sm90_kernel import DIRECT_SHAPES

PROGRAM = r"""
#include <cstdio>
#include "nvfp4_gemm_sm90_direct.cuh"
using namespace nvfp4_sm90;

int main() {
  std::printf("default %d\n", NVFP4_SM90_DIRECT_MAX_UNITS);
  int m, n, k, l, sms, max_units, warp_m, warps_k;
  while (std::scanf("%d %d %d %d %d %d %d %d", &m, &n, &k, &l, &sms, &max_units, &warp_m, &warps_k) == 8) {
    const DirectPlan p = direct_plan_for(m, n, k, l, sms, max_units, warp_m, warps_k);
    std::printf("%d %d\n", p.warp_m, p.warps_k);
  }
  return 0;
}
"""

H100_SMS = 132
EVERYWHERE = 100_000_000  # the GPU tests' build: NVFP4_SM90_DIRECT_MAX_UNITS at this value


@pytest.fixture(scope="module")
def plan(host_program):
    binary: Path = host_program("direct_plan", PROGRAM)

    def plans(queries: list[tuple[int, ...]]) -> tuple[int, list[tuple[int, int]]]:
        """(the header's default max units, (warp_m, warps_k) per query: m n k l sms max_units warp_m warps_k)."""
        text = "\n".join(" ".join(map(str, q)) for q in queries) + "\n"
        done = subprocess.run([str(binary)], input=text, capture_output=True, text=True, check=True)
        lines = done.stdout.splitlines()
        default = int(lines[0].split()[1])
        return default, [tuple(map(int, line.split())) for line in lines[1:]]

    return plans


def test_the_gpu_test_shapes_reach_every_configuration_of_the_launch(plan) -> None:
    _, got = plan([(m, n, k, l, H100_SMS, EVERYWHERE, 0, 0) for m, n, k, l, _ in DIRECT_SHAPES])
    assert got == [expected for *_, expected in DIRECT_SHAPES]
    assert set(got) == {(32, 1), (32, 2), (32, 4), (64, 1)}  # launch_direct's instances (sm90_launch.cuh)


def test_the_shipped_table_sends_two_task_shapes_to_the_direct_kernel(plan) -> None:
    from nvfp4ctl.build.knobs import read_dispatch
    from nvfp4ctl.task import load_task

    repo = Path(__file__).resolve().parents[2]
    task = load_task(repo / "task.yml")
    shapes = sorted({(c.m, c.n, c.k, c.l) for c in (*task.tests, *task.benchmarks)})
    table = {(e.m, e.n, e.k, e.l): e.value for e in read_dispatch(repo / "kernels" / "sm90" / "sm90_dispatch.cuh")
             if e.knob == "DIRECT_MAX_UNITS"}
    default, got = plan([(*shape, H100_SMS, table.get(shape, 128), 0, 0) for shape in shapes])
    assert default == 128
    direct = {shape: p for shape, p in zip(shapes, got) if p != (0, 0)}
    # 128 x 256 x 256: 4 units, under the default; 128 x 3072 x 1536: 288 units, its table entry 512
    # (`nvfp4ctl tune --knobs DIRECT_MAX_UNITS`); the next smallest, 256 x 7168 x 256 (224), stays pipelined
    assert direct == {(128, 256, 256, 1): (32, 2), (128, 3072, 1536, 1): (32, 4)}


@pytest.mark.parametrize(
    "query,expected",
    [
        ((128, 256, 256, 1, H100_SMS, 4, 0, 0), (32, 2)),  # exactly at the threshold
        ((128, 256, 256, 2, H100_SMS, 4, 0, 0), (0, 0)),  # a batch doubles the units
        ((128, 256, 256, 1, H100_SMS, 0, 0, 0), (0, 0)),  # 0: never
        ((128, 256, 256, 1, H100_SMS, 128, 0, 1), (32, 1)),  # the knobs decide
        ((128, 256, 256, 1, H100_SMS, 128, 64, 4), (64, 1)),  # 64-row warps never split K
        ((128, 256, 256, 1, 0, 128, 0, 0), (32, 2)),  # no SM count: as if the grid never filled the GPU
        ((128, 512, 1024, 1, H100_SMS, 512, 0, 0), (32, 4)),  # 32 CTAs unsplit: split 4 ways
        ((128, 3072, 1536, 1, H100_SMS, 512, 0, 0), (32, 4)),  # 384 CTAs: one wave at 3 per SM
        ((256, 2048, 1024, 1, H100_SMS, 512, 0, 0), (32, 2)),  # 4 ways would be 512 CTAs: two waves
        ((128, 65536 * 32, 256, 1, H100_SMS, EVERYWHERE, 0, 0), (64, 1)),  # wide enough for 64-row warps
        ((128, 128, 256, 20000, 0, EVERYWHERE, 0, 0), (64, 1)),  # 32-row warps would pass grid y, 64-row ones fit
        ((128, 128, 256, 40000, H100_SMS, EVERYWHERE, 0, 0), (0, 0)),  # 80000 row blocks: past grid y
    ],
)
def test_the_rule(plan, query: tuple[int, ...], expected: tuple[int, int]) -> None:
    _, got = plan([query])
    assert got == [expected]
