"""The sm_90a kernel's persistent schedule, run on the CPU: kernels/sm90/sm90_scheduler.cuh's own
PersistentUnit / unit_coords / persistent_plan_for (host and device code) compiled by nvcc into a
host program that walks every CTA's units as the kernel's loops do, for both kinds of plan: every
tile cut into parts (sweeps), and whole tiles first with only the remainder cut.

What a wrong schedule would do on an H100 (a tile computed twice or never, a K range lost, an owner
waiting on a part that its own CTA runs later: a hang) is checked here for every task.yml shape the
planner sends persistent and for a sweep of others, without a GPU."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


# For each case: the plan for `most` resident CTAs (CTAs, parts, whole tiles), then one line per unit
# in the order its CTA runs it: cta, step (its place in that CTA's sequence), global unit index (whole
# tiles first, then sweep by sweep over the split tiles), tile, part, K begin, K tiles, contributions.
# A last argument of 0 asks for sweeps only (the experiment PERSISTENT_SWEEPS_ONLY).
PROGRAM = r"""
#include <cstdio>
#include "sm90_scheduler.cuh"
using namespace nvfp4_sm90;

int main() {
  int m_tiles, n_tiles, k_tiles, most, max_parts, slots, whole_first;
  while (std::scanf("%d %d %d %d %d %d %d", &m_tiles, &n_tiles, &k_tiles, &most, &max_parts, &slots, &whole_first) == 7) {
    const int tiles = m_tiles * n_tiles;
    const PersistentPlan plan = persistent_plan_for(tiles, k_tiles, most, max_parts, slots, whole_first != 0);
    const PersistentSplit split = persistent_split(tiles, k_tiles, plan.parts, plan.whole_tiles);
    std::printf("plan %d %d %d\n", plan.ctas, plan.parts, plan.whole_tiles);
    for (int cta = 0; cta < plan.ctas; ++cta) {
      int step = 0;
      for (PersistentUnit u = PersistentUnit::first(cta, split); u.active(split); u.advance(plan.ctas, split), ++step) {
        const TileCoords t = unit_coords(u, split, m_tiles, n_tiles);
        const int index = u.sweep < 0 ? u.tile : split.whole_tiles + u.sweep * split.split_tiles + u.tile;
        std::printf("unit %d %d %d %d %d %d %d %d\n", cta, step, index, t.m_tile * n_tiles + t.n_tile, u.part(split),
                    t.k_tile_begin, t.num_k_tiles, u.parts(split));
      }
    }
    std::printf("end\n");
  }
  return 0;
}
"""

# (m tiles, n tiles, K tiles, resident CTAs, most parts[, whole tiles first]): 2304x4608x7168 and
# 384x7168x2304 on an H100's 132 SMs, the checker's persistent shapes (benchmarks/sm90_kernel.py),
# uneven others, a single split tile (no magic) and split tiles fewer than CTAs (the magic), and the
# same with sweeps only.
CASES = [(18, 36, 56, 132, 2), (3, 56, 18, 132, 2), (3, 56, 18, 132, 3), (10, 16, 8, 132, 4), (5, 27, 16, 132, 4),
         (7, 19, 8, 132, 4), (2, 67, 3, 132, 4), (9, 17, 1, 132, 4), (4, 40, 30, 114, 3), (1, 133, 12, 132, 4),
         (2, 67, 30, 132, 4), (5, 200, 16, 132, 4),
         (3, 56, 18, 132, 2, 0), (3, 56, 18, 132, 3, 0), (10, 16, 8, 132, 4, 0), (1, 133, 12, 132, 4, 0)]
SLOTS = 512
OWNER_SHORT = {"v17": 2, "v16": 0}  # K tiles the owner's part is shorter than an even share (kOwnerExchangeKTiles)
EXPERIMENTS = Path(__file__).resolve().parents[2] / "benchmarks" / "sm90_experiments.h"


@pytest.fixture(scope="module")
def schedule(host_program) -> Path:
    return host_program("schedule", PROGRAM)


@pytest.fixture(scope="module")
def schedules(host_program, schedule) -> dict[str, Path]:
    """The shipped schedule (v17) and v16's: the experiments PERSISTENT_PARTS_AFTER_WHOLE and
    PERSISTENT_EVEN_PARTS, through the header that benchmarks/sm90_kernel.py force-includes."""
    v16 = ("#define NVFP4_SM90_PERSISTENT_PARTS_AFTER_WHOLE 1\n#define NVFP4_SM90_PERSISTENT_EVEN_PARTS 1\n"
           f'#include "{EXPERIMENTS}"\n')
    return {"v17": schedule, "v16": host_program("schedule_v16", v16 + PROGRAM)}


Plan = tuple[int, int, int]  # CTAs, parts per split tile, whole tiles


def run_cases(binary: Path, cases: list[tuple[int, ...]]) -> list[tuple[Plan, list[tuple[int, ...]]]]:
    stdin = "".join(f"{m} {n} {k} {most} {parts} {SLOTS} {rest[0] if rest else 1}\n"
                    for m, n, k, most, parts, *rest in cases)
    out = subprocess.run([str(binary)], input=stdin, capture_output=True, text=True, check=True).stdout
    results: list[tuple[Plan, list[tuple[int, ...]]]] = []
    plan, units = (0, 0, 0), []
    for line in out.splitlines():
        word, *numbers = line.split()
        if word == "plan":
            plan, units = (int(numbers[0]), int(numbers[1]), int(numbers[2])), []
        elif word == "unit":
            units.append(tuple(int(x) for x in numbers))
        else:
            results.append((plan, units))
    return results


@pytest.mark.parametrize("order", ["v17", "v16"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_every_k_tile_of_every_tile_runs_once_and_owners_wait_only_on_parts_that_wait_on_nothing(
        schedules: dict[str, Path], case, order: str) -> None:
    m_tiles, n_tiles, k_tiles, most, max_parts, *whole_first = case
    tiles = m_tiles * n_tiles
    ((ctas, parts, whole), units), = run_cases(schedules[order], [case])
    split_tiles = tiles - whole
    assert 0 < ctas <= most < tiles and 1 <= parts <= max_parts and split_tiles * (parts - 1) <= SLOTS
    assert whole % ctas == 0 and split_tiles >= 1 and (whole == 0 or (ctas == most and split_tiles < most))
    if whole_first == [0]:
        assert whole == 0
    # every (tile, K tile) exactly once: whole tiles in one unit, split tiles' parts in K order from part 0
    covered: dict[int, list[tuple[int, int, int, int]]] = {}
    for _, _, _, tile, part, k_begin, k_num, contributions in units:
        covered.setdefault(tile, []).append((part, k_begin, k_num, contributions))
    assert sorted(covered) == list(range(tiles))
    for tile, ranges in covered.items():
        ranges.sort()
        tile_parts = 1 if tile < whole else parts
        assert [p for p, _, _, _ in ranges] == list(range(tile_parts)), tile
        assert all(c == tile_parts for *_, c in ranges), tile
        assert ranges[0][1] == 0 and all(a[1] + a[2] == b[1] for a, b in zip(ranges, ranges[1:]))
        assert ranges[-1][1] + ranges[-1][2] == k_tiles and all(n > 0 for _, _, n, _ in ranges)
        if tile_parts > 1:  # the owner's part is shorter than an even share by OWNER_SHORT; the others even
            assert ranges[0][2] == max(1, k_tiles // tile_parts - OWNER_SHORT[order]), tile
            assert max(n for _, _, n, _ in ranges[1:]) - min(n for _, _, n, _ in ranges[1:]) <= 1, tile
    # CTA c runs the units c, c + ctas, ... of the launch (whole tiles, then sweep by sweep): in that
    # order with sweeps only, and with whole tiles its non-owner parts first, then its whole tiles,
    # then its owner part (v17)
    by_cta: dict[int, list[tuple[int, int]]] = {}
    for cta, step, index, _, part, _, _, contributions in units:
        assert step == len(by_cta.setdefault(cta, []))
        # phase in v17's order: 0 a non-owner part, 1 a whole tile, 2 an owner part
        by_cta[cta].append((index, 1 if contributions == 1 else 2 if part == 0 else 0))
    for cta, sequence in by_cta.items():
        indices = [index for index, _ in sequence]
        assert sorted(indices) == list(range(cta, whole + split_tiles * parts, ctas))
        assert sequence == sorted(sequence, key=lambda u: (u[1] if whole and parts > 1 and order == "v17" else 0, u[0]))
    # the owner (part 0) runs after every other part of its tile (it waits only on lower indices), and
    # no CTA runs a non-owner part after an owner part: the parts an owner waits on wait on nothing
    # and come first in their CTAs, so with every CTA resident the launch cannot deadlock
    index_of = {(tile, part): index for _, _, index, tile, part, *_ in units}
    for tile in range(whole, tiles):
        assert all(index_of[(tile, part)] < index_of[(tile, 0)] for part in range(1, parts))
    for sequence in by_cta.values():
        parts_run = [phase for _, phase in sequence if phase != 1]
        assert parts_run == sorted(parts_run)
    # the busiest CTA has as few units as the unit count allows on `ctas` CTAs, and on `most`
    total = whole + split_tiles * parts
    assert max(map(len, by_cta.values())) == -(-total // ctas) == -(-total // most)


def test_the_plan_runs_whole_tiles_first_where_that_saves_k_tiles_and_unit_boundaries(schedule: Path) -> None:
    (big, _), (p2, _), (p3, _), (p2_sweeps, _), (p3_sweeps, _) = run_cases(
        schedule, [(18, 36, 56, 132, 4), (3, 56, 18, 132, 2), (3, 56, 18, 132, 3), (3, 56, 18, 132, 2, 0),
                   (3, 56, 18, 132, 3, 0)])
    # 2304x4608x7168: 5 whole tiles on the busiest CTA = 280 K tiles; parts give no fewer, and whole
    # tiles first (4 each, then 120 tiles on 132 CTAs) ties: sweeps stay, on 130 CTAs
    assert big == (130, 1, 0)
    # 384x7168x2304: one whole tile on each of 132 CTAs, then the other 36 tiles in 2 parts (owner 7,
    # the other 11: 18 + 11 = 29 K tiles in 2 units, not 3 units of 11) or in 3 (owner 4, others 7:
    # 18 + 7 = 25)
    assert p2 == (132, 2, 132) and p3 == (132, 3, 132)
    # sweeps only (before v16): 336 units on 112 CTAs, or 504 on 126
    assert p2_sweeps == (112, 2, 0) and p3_sweeps == (126, 3, 0)


def test_the_plan_respects_the_workspace(schedule: Path) -> None:
    # 1056 tiles = 8 per CTA, no remainder: a second part would need 1056 workspace slots of 512
    (tight, _), = run_cases(schedule, [(4, 264, 16, 132, 4)])
    assert tight == (132, 1, 0)
