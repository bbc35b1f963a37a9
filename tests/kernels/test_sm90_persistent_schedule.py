"""The sm_90a kernel's persistent schedule, run on the CPU: kernels/sm90/sm90_scheduler.cuh's own
PersistentUnit / unit_coords / persistent_plan_for (host and device code) compiled by nvcc into a
host program that walks every CTA's units as the kernel's loops do.

What a wrong schedule would do on an H100 (a tile computed twice or never, a K range lost, an owner
waiting on a part that its own CTA runs later: a hang) is checked here for every task.yml shape the
planner sends persistent and for a sweep of others, without a GPU."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


# For each case: the plan for `most` resident CTAs, then one line per unit in the order its CTA runs
# it: cta, step (its place in that CTA's sequence), global unit index, tile, part, K begin, K tiles.
PROGRAM = r"""
#include <cstdio>
#include "sm90_scheduler.cuh"
using namespace nvfp4_sm90;

int main() {
  int m_tiles, n_tiles, k_tiles, most, max_parts, slots;
  while (std::scanf("%d %d %d %d %d %d", &m_tiles, &n_tiles, &k_tiles, &most, &max_parts, &slots) == 6) {
    const int tiles = m_tiles * n_tiles;
    const PersistentPlan plan = persistent_plan_for(tiles, k_tiles, most, max_parts, slots);
    const PersistentSplit split = persistent_split(k_tiles, plan.parts);
    std::printf("plan %d %d\n", plan.ctas, plan.parts);
    for (int cta = 0; cta < plan.ctas; ++cta) {
      int step = 0;
      for (PersistentUnit u{0, cta}; u.sweep < split.parts; u.advance(plan.ctas, tiles), ++step) {
        const TileCoords t = unit_coords(u, split, m_tiles, n_tiles);
        std::printf("unit %d %d %d %d %d %d %d\n", cta, step, u.sweep * tiles + u.tile, t.m_tile * n_tiles + t.n_tile,
                    u.part(split), t.k_tile_begin, t.num_k_tiles);
      }
    }
    std::printf("end\n");
  }
  return 0;
}
"""

# (m tiles, n tiles, K tiles, resident CTAs, most parts): 2304x4608x7168 and 384x7168x2304 on an
# H100's 132 SMs, the checker's persistent shapes (benchmarks/sm90_kernel.py), and uneven others.
CASES = [(18, 36, 56, 132, 2), (3, 56, 18, 132, 2), (3, 56, 18, 132, 3), (10, 16, 8, 132, 4), (5, 27, 16, 132, 4),
         (7, 19, 8, 132, 4), (2, 67, 3, 132, 4), (9, 17, 1, 132, 4), (4, 40, 30, 114, 3), (1, 133, 12, 132, 4)]
SLOTS = 512


@pytest.fixture(scope="module")
def schedule(host_program) -> Path:
    return host_program("schedule", PROGRAM)


def run_cases(binary: Path, cases: list[tuple[int, int, int, int, int]]) -> list[tuple[tuple[int, int], list[tuple[int, ...]]]]:
    stdin = "".join(f"{m} {n} {k} {most} {parts} {SLOTS}\n" for m, n, k, most, parts in cases)
    out = subprocess.run([str(binary)], input=stdin, capture_output=True, text=True, check=True).stdout
    results, plan, units = [], (0, 0), []
    for line in out.splitlines():
        word, *numbers = line.split()
        if word == "plan":
            plan, units = (int(numbers[0]), int(numbers[1])), []
        elif word == "unit":
            units.append(tuple(int(x) for x in numbers))
        else:
            results.append((plan, units))
    return results


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_every_k_tile_of_every_tile_runs_once_and_owners_wait_only_on_earlier_units(schedule: Path, case) -> None:
    m_tiles, n_tiles, k_tiles, most, max_parts = case
    tiles = m_tiles * n_tiles
    ((ctas, parts), units), = run_cases(schedule, [case])
    assert 0 < ctas <= most < tiles and 1 <= parts <= max_parts and tiles * (parts - 1) <= SLOTS
    # every (tile, K tile) exactly once, the parts of a tile in K order from part 0
    covered: dict[int, list[tuple[int, int, int]]] = {}
    for _, _, _, tile, part, k_begin, k_num in units:
        covered.setdefault(tile, []).append((part, k_begin, k_num))
    assert sorted(covered) == list(range(tiles))
    for tile, ranges in covered.items():
        ranges.sort()
        assert [p for p, _, _ in ranges] == list(range(parts)), tile
        assert ranges[0][1] == 0 and all(a[1] + a[2] == b[1] for a, b in zip(ranges, ranges[1:]))
        assert ranges[-1][1] + ranges[-1][2] == k_tiles and all(n > 0 for _, _, n in ranges)
    # a CTA runs its units in increasing index order, and the kernel's loop is the one modelled
    by_cta: dict[int, list[int]] = {}
    for cta, step, index, *_ in units:
        by_cta.setdefault(cta, []).append(index)
        assert index == cta + step * ctas
    assert all(indices == sorted(indices) for indices in by_cta.values())
    # the owner (part 0) runs after every other part of its tile: it waits only on lower indices,
    # which with every CTA resident cannot deadlock
    index_of = {(tile, part): index for _, _, index, tile, part, _, _ in units}
    for tile in range(tiles):
        assert all(index_of[(tile, part)] < index_of[(tile, 0)] for part in range(1, parts))
    # the busiest CTA has as few units as the unit count allows on `ctas` CTAs
    assert max(map(len, by_cta.values())) == -(-tiles * parts // ctas) == -(-tiles * parts // most)


def test_the_plan_prefers_fewer_parts_on_a_tie_and_respects_the_workspace(schedule: Path) -> None:
    (plan_big, _), (plan_384, _), (plan_384_3, _), (plan_tight, _) = run_cases(
        schedule, [(18, 36, 56, 132, 4), (3, 56, 18, 132, 2), (3, 56, 18, 132, 3), (4, 200, 16, 132, 4)])
    # 2304x4608x7168: 5 whole tiles on the busiest CTA = 280 K tiles; 2 or 4 parts give no fewer
    assert plan_big == (130, 1)
    # 384x7168x2304: 2 parts: 336 units, 3 on the busiest CTA, 27 K tiles instead of 36
    assert plan_384 == (112, 2)
    assert plan_384_3 == (126, 3)
    # 800 tiles: a second part would need 800 workspace slots of 512
    assert plan_tight[1] == 1
