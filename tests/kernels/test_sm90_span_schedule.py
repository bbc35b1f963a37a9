"""The sm_90a kernel's spanning split, run on the CPU: kernels/sm90/sm90_scheduler.cuh's own
span_longest / span_range / tile_at / span_tile (host and device code) compiled by nvcc into a host
program that prints every CTA's range and the reduction it takes part in, as the kernel computes them.

What a wrong split would do on an H100 (a K tile of a tile computed twice or never, a range going on
in the wrong tile after an M-tile or batch boundary, a tile with more owners than the epilogue has
code for, an owner waiting on a slot nobody writes: a hang) is checked here for every shape the
planner may send spanning, without a GPU."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest



PROGRAM = r"""
#include <cstdio>
#include "sm90_scheduler.cuh"
using namespace nvfp4_sm90;

int main() {
  std::printf("most_owners %d\n", kMaxSpanOwners);  // span_epilogue's instances (sm90_config.cuh)
  int m_tiles, n_tiles, l, k_tiles, ctas, min_k;
  while (std::scanf("%d %d %d %d %d %d", &m_tiles, &n_tiles, &l, &k_tiles, &ctas, &min_k) == 6) {
    const int tiles = m_tiles * n_tiles * l, longest = span_longest(tiles, k_tiles, ctas, min_k);
    std::printf("longest %d\n", longest);
    if (longest > 0) {
      const SpanSplit split = span_split(tiles * k_tiles, ctas, k_tiles);
      for (int cta = 0; cta < ctas; ++cta) {
        const SpanRange r = span_range(cta, split, k_tiles, m_tiles, n_tiles);
        const TileCoords next = tile_at(r.first + 1, m_tiles, n_tiles);
        const SpanTile st = span_tile(cta, split, k_tiles);
        std::printf("cta %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", cta, r.first, r.tile.m_tile,
                    r.tile.n_tile, r.tile.batch, r.tile.k_tile_begin, r.tile.num_k_tiles, r.tile.first_len, next.m_tile,
                    next.n_tile, next.batch, st.last, st.first_cta, st.owners, st.partners, int(st.tail), int(st.spans),
                    span_cta_of(span_begin(cta, split), split), span_slot(st, cta - st.first_cta),
                    span_hand_over_slot(cta));
        for (int s = 0; s <= kMaxSpanOwners; ++s) std::printf(" %d", s < st.partners ? span_slot(st, s) : -1);
        std::printf("\n");
      }
    }
    std::printf("end\n");
  }
  return 0;
}
"""


# Every first-tile index a spanning CTA may compute: units <= 256 CTAs * 1024 K tiles (sm90_plan.cuh).
DIVISION = r"""
#include <cstdio>
#include "sm90_scheduler.cuh"
using namespace nvfp4_sm90;

int main() {
  long wrong = 0;
  for (int d = 2; d <= 1024; ++d) {
    const uint32_t magic = div_magic(uint32_t(d));
    for (int n = 0; n <= 256 * 1024; ++n) wrong += div_by_magic(n, magic) != n / d;
  }
  std::printf("%ld\n", wrong);
  return 0;
}
"""


@dataclass(frozen=True)
class Range:
    cta: int
    first: int
    m_tile: int
    n_tile: int
    batch: int
    k_begin: int
    k_num: int
    first_len: int
    next_m: int
    next_n: int
    next_batch: int
    last: int
    first_cta: int
    owners: int
    partners: int
    tail: int
    spans: int
    cta_of_begin: int
    own_slot: int  # where this CTA stores its share of its last tile's reduction
    hand_over_slot: int  # where it hands its first tile's partial over (if it spans)
    partner_slots: tuple[int, ...]  # where its last tile's reduction reads partner s (owners, then the tail)


@pytest.fixture(scope="module")
def span(host_program) -> Path:
    return host_program("span", PROGRAM)


@pytest.fixture(scope="module")
def most_owners(span: Path) -> int:
    out = subprocess.run([str(span)], input="", capture_output=True, text=True, check=True).stdout
    return int(out.split()[1])


def run_cases(binary: Path, cases: list[tuple[int, ...]]) -> list[tuple[int, list[Range]]]:
    stdin = "".join(" ".join(map(str, case)) + "\n" for case in cases)
    out = subprocess.run([str(binary)], input=stdin, capture_output=True, text=True, check=True).stdout
    results, longest, ranges = [], 0, []
    for line in out.splitlines():
        word, *numbers = line.split()
        if word == "most_owners":
            continue
        if word == "longest":
            longest, ranges = int(numbers[0]), []
        elif word == "cta":
            values = [int(x) for x in numbers]
            ranges.append(Range(*values[:20], tuple(x for x in values[20:] if x >= 0)))
        else:
            results.append((longest, ranges))
    return results


def tile_index(m_tile: int, n_tile: int, batch: int, m_tiles: int, n_tiles: int) -> int:
    return (batch * m_tiles + m_tile) * n_tiles + n_tile  # N tile fastest, as the split launches' grids


# (M tiles, N tiles, L, K tiles, CTAs): task shapes that may span on an H100's 132 SMs (512x1536x7168,
# 256x7168x2048, 128x7168x16384), ranges that cross M-tile and batch boundaries, uneven others, and
# 256x2304x14336, where CTA 65's range holds one K tile of M tile 0 and goes on into M tile 1.
CASES = [(4, 12, 1, 56, 132), (2, 56, 1, 16, 132), (1, 56, 1, 128, 132), (3, 12, 1, 40, 132), (2, 9, 2, 24, 132),
         (5, 7, 1, 64, 78), (1, 1, 7, 96, 20), (4, 33, 1, 12, 132), (2, 7, 3, 33, 114), (3, 7, 2, 20, 100),
         (1, 40, 1, 56, 132), (2, 18, 1, 112, 132)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_every_k_tile_runs_once_and_every_tile_is_reduced_by_its_own_contributors(span: Path, most_owners: int,
                                                                                   case) -> None:
    m_tiles, n_tiles, l, k_tiles, ctas = case
    tiles = m_tiles * n_tiles * l
    ((longest, ranges),) = run_cases(span, [(*case, 1)])
    assert longest > 0, "the case is meant to fit a spanning split"
    assert len(ranges) == ctas and max(r.k_num for r in ranges) == longest == -(-tiles * k_tiles // ctas)
    covered: dict[int, list[int]] = {}
    contributors: dict[int, list[Range]] = {}
    for r in ranges:
        assert tile_index(r.m_tile, r.n_tile, r.batch, m_tiles, n_tiles) == r.first and r.cta_of_begin == r.cta
        assert 0 < r.first_len <= r.k_num <= k_tiles and r.k_begin + r.first_len <= k_tiles
        covered.setdefault(r.first, []).extend(range(r.k_begin, r.k_begin + r.first_len))
        contributors.setdefault(r.first, []).append(r)
        if r.first_len < r.k_num:  # goes on at K tile 0 of the next tile in launch order
            assert r.k_begin + r.first_len == k_tiles and r.first + 1 < tiles
            assert tile_index(r.next_m, r.next_n, r.next_batch, m_tiles, n_tiles) == r.first + 1
            covered.setdefault(r.first + 1, []).extend(range(r.k_num - r.first_len))
            contributors.setdefault(r.first + 1, []).append(r)
        assert r.last == (r.first + 1 if r.first_len < r.k_num else r.first) and r.spans == (r.first_len < r.k_num)
    assert sorted(covered) == list(range(tiles))
    assert all(sorted(ks) == list(range(k_tiles)) for ks in covered.values())
    by_cta = {r.cta: r for r in ranges}
    for tile, group in contributors.items():
        ctas_in_k_order = [r.cta for r in group]
        assert ctas_in_k_order == list(range(ctas_in_k_order[0], ctas_in_k_order[-1] + 1))
        ending = [r for r in group if r.last == tile]
        tail = [r for r in group if r.last != tile]
        assert 1 <= len(ending) <= most_owners and len(tail) <= 1
        for owner in ending:  # every owner agrees on the partners, slots and tail of its tile
            assert (owner.first_cta, owner.owners, owner.partners, owner.tail) == (
                ctas_in_k_order[0], len(ending), len(group), int(bool(tail)))
        if tail:  # the tail is the last partner in K order; its hand-over slot (2 c) is the one its owners read
            assert tail[0].cta == ctas_in_k_order[-1] == ending[0].first_cta + ending[0].owners
            assert by_cta[tail[0].cta].spans
        # every owner reads each partner from the slot that partner writes: an owner's own slot, the
        # tail's hand-over slot
        written = [r.own_slot for r in ending] + [r.hand_over_slot for r in tail]
        assert all(owner.partner_slots == tuple(written) for owner in ending)
    # no two writers share a slot: owners' slots and hand-over slots of the whole launch
    slots = [r.own_slot for r in ranges] + [r.hand_over_slot for r in ranges if r.spans]
    assert len(slots) == len(set(slots))


def test_the_plan_refuses_ranges_it_cannot_reduce(span: Path) -> None:
    results = run_cases(span, [
        (1, 200, 1, 8, 132, 1),   # more tiles than CTAs
        (3, 56, 1, 18, 132, 1),   # 384x7168x2304: a range of 23 K tiles would touch three tiles
        (4, 4, 1, 56, 132, 1),    # 512x512x7168: 6-7 K tiles, up to 9 owners in a tile of 56
        (4, 12, 1, 56, 132, 21),  # shorter than the shared-A minimum asked for
        (4, 12, 1, 56, 132, 20),  # 512x1536x7168 itself: 20-21 K tiles per CTA
    ])
    assert [longest for longest, _ in results] == [0, 0, 0, 0, 21]


def test_the_magic_division_is_exact_over_every_range_start(host_program) -> None:
    binary = host_program("division", DIVISION, optimize=True)
    assert subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.strip() == "0"
