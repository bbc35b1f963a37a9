"""A cost model (not a measurement) of NVFP4 GEMM kernels on a B200, per benchmark shape.

No B200 has run any of these kernels. The model estimates the leaderboard's per-call time (50
back-to-back calls between one event pair, so launch overhead counts) from a few documented rates,
with the same formulas for every design:

    per call   = max(host issue time, launch gap + device time)
    device     = CTA setup + max(slowest CTA's main loop + epilogue, DRAM-bound time, L2-bound time)
    CTA loop   = sum over its K tiles of max(MMA time, bytes into shared memory / per-SM ingress)
    epilogue   = C bytes it writes / per-SM store rate + partial bytes it writes and reads / that
                 rate + one flag round trip per wait (split-K designs only)

Inputs (`Rates`, every one a flag): DRAM read rate; aggregate L2 -> SMEM rate; per-SM SMEM ingress
(TMA) rate; per-SM global store/load rate of the epilogue; fp4 MMA rate per SM; launch gap (measured
on an H100, benchmarks/launch_gap.cu: 1.7-1.8 us); CTA setup (barrier init, TMEM allocation, first
TMA round trip); host issue time per call. The B200 numbers are public peak figures derated by
assumption, not measurements: change them with the flags and the ranking may change; the script
prints the inputs with the results.

Designs modelled:
- `cutlass`  kernels/sm100/nvfp4_gemm_sm100.cu: 128x64 tiles (M = 128), one CTA per tile, full K,
             a persistent scheduler with grid = min(tiles, SMs) (112 / 64 / 112 CTAs).
- `tc-dp`    the tcgen05 kernel's 128x128 tiles without split (one CTA per tile).
- `tc-split2` 128x128 tiles, every tile split in 2 equal K halves (one partial per tile).
- `tc-span`  the tcgen05 kernel as shipped: its dispatch table's config (128 B rows x 128 or 64 A
             rows per tile) and CTA count, one contiguous range of (tile, K tile) units per CTA, ranges
             crossing tiles (kernels/common/sm100_split.cuh).
- `tc-span-mc2` the same plus a 2-CTA cluster multicasting A (halves A's L2 reads; per-SM ingress
             unchanged). Not built: shown to tell whether it would pay.
- `tc-span-2sm` the same work split with cta_group::2 UMMA pairs (each CTA loads half of A's rows,
             so 28 KB instead of 36 KB per K tile enter each SM). Not built.
- `floor`    a perfect kernel, no design: every byte of A, B, both scale tensors and C moved once at
             the DRAM rate, plus CTA setup, then the same launch gap and host issue as ours. No design
             under these inputs can beat it; the verdict under the table compares the goal with it and
             solves how small setup (or the launch gap) would have to be for the floor to reach it.

    python3 benchmarks/sm100_cost_model.py [--dram-tbps 7.2] [--sm-ingress-gbps 150] ...
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path

SHAPES = [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048)]
SOL_US = [8.994, 2.354, 1.333]  # GPU MODE's B200 speed of light at 1.5 GHz
GOAL_US = 6.0  # issue 15: a modelled geomean of at most 6 us
B200_SMS = 148
KERNEL = Path(__file__).resolve().parents[1] / "kernels" / "sm100" / "nvfp4_gemm_sm100_tc.cu"


TILE_M_OF = {"kTile128": 128, "kTile64": 64}  # the kernel's ConfigId -> rows of A per tile


def dispatch_table(kernel: Path = KERNEL) -> dict[tuple[int, int, int], tuple[int, int]]:
    """The kernel's dispatch table, read from its source: (m, n, k) -> (rows of A per tile, CTAs)."""
    text = kernel.read_text()
    table = text[text.index("kDispatch[]"):]
    table = table[:table.index("};")]
    rows = re.findall(r"\{(\d+),\s*(\d+),\s*(\d+),\s*(\w+),\s*(\d+)\}", table)
    return {(int(m), int(n), int(k)): (TILE_M_OF[config], int(ctas)) for m, n, k, config, ctas in rows}


@dataclass(frozen=True)
class Rates:
    dram_tbps: float = 7.2  # HBM3e read, ~90 % of 8 TB/s
    l2_tbps: float = 20.0  # aggregate L2 -> SMEM (TMA) over all SMs
    sm_ingress_gbps: float = 150.0  # one SM's TMA ingress (~80 B/clk at 1.9 GHz)
    sm_store_gbps: float = 100.0  # one SM's epilogue global stores (C, partials): fire and forget
    sm_partial_read_gbps: float = 100.0  # one SM's partial loads (128 independent loads per thread in flight)
    mma_tflops_per_sm: float = 60.0  # dense fp4 (~9 PFLOP/s over 148 SMs)
    launch_gap_us: float = 1.8  # back-to-back launch overhead (H100, launch_gap.cu)
    setup_us: float = 1.0  # barrier init, TMEM alloc, tensor-map prefetch, first TMA round trip
    flag_us: float = 0.5  # one release/acquire flag round trip through L2
    host_issue_us: float = 2.5  # torch binding checks + 2 tensor-map encodes + launch, per call (the
    #   sm90 kernel, which does the same per call, shows 2.1-2.9 us between launches on an H100)
    host_issue_cutlass_us: float = 4.0  # CUTLASS initialize() rebuilds 5 TMA descriptors per call (guess)


Segment = tuple[int, int, int]  # (tile, first K tile, end K tile)


@dataclass(frozen=True)
class Design:
    name: str
    tile_m: int  # rows of A per tile
    tile_n: int  # rows of B per tile
    block_k: int
    k_tiles: int  # K tiles per output tile
    segments: list[list[Segment]]  # per CTA, in the order it processes them
    a_multicast: int = 1  # CTAs sharing one L2 read of A (TMA multicast in a cluster)
    a_split: int = 1  # CTAs each loading 1/a_split of A (cta_group::2 UMMA: A's rows split across the pair)


def span_segments(tiles: int, k_tiles: int, ctas: int) -> list[list[Segment]]:
    """Per CTA its segments in processing order: sm100_split::SpanPlan in Python (contiguous unit
    ranges; a range ending inside a tile does that partial segment first). A test checks it against
    the kernel's own plan printer."""
    units = tiles * k_tiles
    out = []
    for c in range(ctas):
        begin, end = c * units // ctas, (c + 1) * units // ctas
        segs = []
        u = begin
        while u < end:
            tile = u // k_tiles
            stop = min(end, (tile + 1) * k_tiles)
            segs.append((tile, u - tile * k_tiles, stop - tile * k_tiles))
            u = stop
        if len(segs) > 1 and segs[-1][2] != k_tiles:
            segs = [segs[-1], *segs[:-1]]
        out.append(segs)
    return out


def per_cta_tiles(tiles: int, k_tiles: int, grid: int) -> list[list[Segment]]:
    """A persistent data-parallel grid: CTA i runs tiles i, i + grid, ... over the full K."""
    return [[(t, 0, k_tiles) for t in range(i, tiles, grid)] for i in range(grid)]


def designs(m: int, n: int, k: int, sms: int = B200_SMS) -> list[Design]:
    tiles64, tiles, k_tiles = (m // 128) * (n // 64), (m // 128) * (n // 128), k // 256
    out = [Design("cutlass", 128, 64, 256, k_tiles, per_cta_tiles(tiles64, k_tiles, min(tiles64, sms))),
           Design("tc-dp", 128, 128, 256, k_tiles, span_segments(tiles, k_tiles, min(tiles, sms)))]
    if 2 * tiles <= sms and k_tiles >= 2:
        out.append(Design("tc-split2", 128, 128, 256, k_tiles, span_segments(tiles, k_tiles, 2 * tiles)))
    tile_m, ctas = dispatch_table().get((m, n, k), (128, sms))
    span_tiles = (m // tile_m) * (n // 128)
    span = span_segments(span_tiles, k_tiles, min(ctas, sms, span_tiles * k_tiles))
    out.append(Design("tc-span", tile_m, 128, 256, k_tiles, span))
    out.append(Design("tc-span-mc2", tile_m, 128, 256, k_tiles, span, a_multicast=2))
    out.append(Design("tc-span-2sm", tile_m, 128, 256, k_tiles, span, a_split=2))
    return out


# The kernel's issue asks for at least this many of 148 SMs busy on every bench shape.
LEAST_BUSY_SMS = 128


def best_span_ctas(m: int, n: int, k: int, r: Rates, least: int = LEAST_BUSY_SMS, sms: int = B200_SMS,
                   tile_m: int = 128) -> tuple[int, float]:
    """The CTA count in [least, sms] with the lowest modelled time for a spanning split of tile_m x 128
    tiles (ties: fewer CTAs). With least = 1, one CTA per tile (no split) is one of the counts tried."""
    tiles, k_tiles = (m // tile_m) * (n // 128), k // 256
    best = None
    for ctas in range(min(least, tiles * k_tiles), min(sms, tiles * k_tiles) + 1):
        design = Design("tc-span", tile_m, 128, 256, k_tiles, span_segments(tiles, k_tiles, ctas))
        us = estimate(design, m, n, k, r).per_call_us
        if best is None or us < best[1] - 1e-9:
            best = (ctas, us)
    assert best is not None
    return best


@dataclass(frozen=True)
class Estimate:
    design: str
    ctas: int
    per_call_us: float
    device_us: float
    bound: str  # what sets the device time: "cta", "dram" or "l2"
    loop_us: float = 0.0  # the slowest CTA's K tiles back to back (its main loop without waits)
    unit_us: float = 0.0  # one K tile of that loop
    unit_limit: str = ""  # what sets a K tile's time: "per-SM ingress" or "MMA"
    cta_us: float = 0.0  # the slowest CTA's end: loop, epilogue, split-K exchange
    dram_us: float = 0.0  # bytes once at the DRAM rate


def cta_end_times(design: Design, unit_us: float, r: Rates) -> list[float]:
    """When each CTA's epilogue finishes (us after its setup). MMA: its K tiles back to back, at
    most two segments ahead of the epilogue (two TMEM accumulators). Epilogue, per segment in order:
    a partial is stored and its flag raised; an owner of a split tile first waits for the other
    CTAs' flags and sums their partials (overlapping its own MMAs), then writes C."""
    k_tiles = design.k_tiles
    partial_bytes = design.tile_m * design.tile_n * 4
    c_bytes = design.tile_m * design.tile_n * 2
    store_us = 1.0 / (r.sm_store_gbps * 1e3)
    read_us = 1.0 / (r.sm_partial_read_gbps * 1e3)
    first_piece: dict[int, int] = {}
    for cta, segs in enumerate(design.segments):
        for tile, _, _ in segs:
            first_piece[tile] = min(first_piece.get(tile, cta), cta)

    def run(cta: int, publish: dict[int, float] | None) -> tuple[float, float | None]:
        mma_done, epi_free, epi_ends, published = 0.0, 0.0, [], None
        for i, (tile, k_begin, k_end) in enumerate(design.segments[cta]):
            start = max(mma_done, epi_ends[i - 2] if i >= 2 else 0.0)
            mma_done = start + (k_end - k_begin) * unit_us
            if k_end != k_tiles:  # partial
                epi_free = max(epi_free, mma_done) + partial_bytes * store_us
                published = epi_free + r.flag_us
            else:
                sources = range(first_piece[tile], cta) if k_begin > 0 else range(0)
                if sources and publish is not None:
                    ready = max(publish[s] for s in sources) + r.flag_us
                    epi_free = max(epi_free, ready) + len(sources) * partial_bytes * read_us
                epi_free = max(epi_free, mma_done) + c_bytes * store_us
            epi_ends.append(epi_free)
        return epi_free, published

    publish = {c: p for c in range(len(design.segments)) if (p := run(c, None)[1]) is not None}
    return [run(c, publish)[0] for c in range(len(design.segments))]


def dram_bytes(m: int, n: int, k: int) -> int:
    """A, B (fp4), both scale tensors (one byte per 16 K values) and C (fp16), each once."""
    return (m * k // 2 + n * k // 2) + (m + n) * k // 16 + m * n * 2


def per_call_us(device_us: float, host_us: float, r: Rates) -> float:
    """Back-to-back calls: the host issues one call while the GPU runs the previous one."""
    return max(host_us, r.launch_gap_us + device_us)


def estimate(design: Design, m: int, n: int, k: int, r: Rates) -> Estimate:
    a_tile = design.tile_m * design.block_k // 2
    b_tile = design.tile_n * design.block_k // 2
    sf = (max(design.tile_m, 128) + max(design.tile_n, 128)) * design.block_k // 16  # whole 128-row chunks
    a_bytes = a_tile // design.a_split
    unit_bytes = a_bytes + b_tile + sf
    unit_mma_us = 2 * design.tile_m * design.tile_n * design.block_k / (r.mma_tflops_per_sm * 1e6)
    unit_load_us = unit_bytes / (r.sm_ingress_gbps * 1e3)
    unit_us = max(unit_mma_us, unit_load_us)
    ends = cta_end_times(design, unit_us, r)
    slowest = max(range(len(ends)), key=ends.__getitem__)
    cta_us = ends[slowest]
    dram_us = dram_bytes(m, n, k) / (r.dram_tbps * 1e6)
    units = sum(e - b for segs in design.segments for _, b, e in segs)
    l2_us = units * (unit_bytes - a_bytes + a_bytes / design.a_multicast) / (r.l2_tbps * 1e6)
    main = max(cta_us, dram_us, l2_us)
    bound = "cta" if main == cta_us else "dram" if main == dram_us else "l2"
    device = r.setup_us + main
    host = r.host_issue_cutlass_us if design.name == "cutlass" else r.host_issue_us
    loop_us = sum(e - b for _, b, e in design.segments[slowest]) * unit_us
    limit = "per-SM ingress" if unit_load_us >= unit_mma_us else "MMA"
    return Estimate(design.name, len(design.segments), per_call_us(device, host, r), device, bound,
                    loop_us, unit_us, limit, cta_us, dram_us)


def floor_estimate(m: int, n: int, k: int, r: Rates) -> Estimate:
    """A perfect kernel: its bytes once at the DRAM rate after setup, with our kernel's host issue."""
    dram_us = dram_bytes(m, n, k) / (r.dram_tbps * 1e6)
    device = r.setup_us + dram_us
    return Estimate("floor", 0, per_call_us(device, r.host_issue_us, r), device, "dram", dram_us=dram_us)


def floor_geomean(r: Rates) -> float:
    return geomean([floor_estimate(*shape, r).per_call_us for shape in SHAPES])


def break_even(r: Rates, name: str, goal_us: float = GOAL_US) -> float | None:
    """The largest value of the input `name` (a Rates field, searched in [0, its value]) at which the
    floor's geomean reaches goal_us; None when even 0 does not. The floor only grows with setup and
    launch gap, so bisection finds it."""
    def reaches(value: float) -> bool:
        return floor_geomean(replace(r, **{name: value})) <= goal_us

    low, high = 0.0, getattr(r, name)
    if reaches(high):
        return high
    if not reaches(low):
        return None
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if reaches(middle) else (low, middle)
    return low


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def shape_name(shape: tuple[int, int, int]) -> str:
    return "x".join(map(str, shape))


def row(name: str, ests: list[Estimate]) -> str:
    cells = "".join(f"{e.per_call_us:>7.2f} ({e.device_us:4.1f},{e.ctas if e.ctas else '-':>4},{e.bound:>4})"
                    for e in ests)
    return f"{name:<13}{cells}{geomean([e.per_call_us for e in ests]):>10.2f}"


def why_slower(ours: Estimate, floor: Estimate) -> str:
    """What keeps a design above the floor on one shape, in the model's own terms."""
    if ours.bound == "cta":
        units = round(ours.loop_us / ours.unit_us)
        return (f"bound by its slowest CTA: {units} K tiles x {ours.unit_us:.2f} us ({ours.unit_limit}) = "
                f"{ours.loop_us:.1f} us, + {ours.cta_us - ours.loop_us:.1f} us of epilogue (C; where split: "
                f"partial stores, flag waits, partial reads), "
                f"vs {floor.dram_us:.1f} us of DRAM")
    if ours.bound == "l2":
        return "bound by L2 -> SMEM traffic (A re-read by every CTA)"
    return "DRAM-bound like the floor; the rest is host issue"


def verdict(r: Rates, ours: list[Estimate], floors: list[Estimate], cutlass: list[Estimate]) -> list[str]:
    floor_mean, ours_mean = geomean([e.per_call_us for e in floors]), geomean([e.per_call_us for e in ours])
    reach = "out of reach" if floor_mean > GOAL_US else "within reach"
    lines = [f"Verdict (MODEL, not a measurement): goal geomean <= {GOAL_US:.2f} us (SOL {geomean(SOL_US):.2f}).",
             f"  floor {floor_mean:.2f} us: A, B, both scale tensors and C once at {r.dram_tbps} TB/s + setup "
             f"{r.setup_us} us + launch gap {r.launch_gap_us} us (at least host issue {r.host_issue_us} us); "
             f"the goal is {reach} with these inputs.",
             f"  tc-span {ours_mean:.2f} us = {ours_mean / floor_mean:.2f} x the floor "
             f"(cutlass {geomean([e.per_call_us for e in cutlass]):.2f} us = "
             f"{geomean([e.per_call_us for e in cutlass]) / floor_mean:.2f} x)."]
    for shape, mine, floor in zip(SHAPES, ours, floors):
        loss = mine.per_call_us - floor.per_call_us
        why = why_slower(mine, floor) if loss >= 0.005 else "at the floor"
        lines.append(f"  {shape_name(shape)}: tc-span {mine.per_call_us:.2f} vs floor {floor.per_call_us:.2f} us "
                     f"(+{loss:.2f}): {why}")
    setup, gap = break_even(r, "setup_us"), break_even(r, "launch_gap_us")
    together = replace(r, setup_us=0.0, launch_gap_us=r.setup_us + r.launch_gap_us)  # they add up
    both = break_even(together, "launch_gap_us")
    def said(value: float | None) -> str:
        return "not even at 0" if value is None else f"<= {value:.2f} us"
    lines.append(f"  break-even for the floor to reach {GOAL_US:.2f} us: setup_us {said(setup)} (now {r.setup_us}), "
                 f"or launch_gap_us {said(gap)} (now {r.launch_gap_us}), or setup + launch gap together "
                 f"{said(both)} (now {r.setup_us + r.launch_gap_us:.1f}).")
    return lines


def table(r: Rates) -> list[str]:
    by_design: dict[str, list[Estimate]] = {}
    for shape in SHAPES:
        for design in designs(*shape):
            by_design.setdefault(design.name, []).append(estimate(design, *shape, r))
    floors = [floor_estimate(*shape, r) for shape in SHAPES]
    lines = ["MODEL, not a measurement (no B200 has run these kernels). Inputs: "
             + ", ".join(f"{k}={v}" for k, v in asdict(r).items()), ""]
    head = f"{'design':<13}" + "".join(f"{shape_name(s):>22}" for s in SHAPES) + f"{'geomean':>10}"
    lines += [head, f"{'':<13}" + "".join(f"{'us (device, CTAs, bound)':>22}" for _ in SHAPES)]
    lines += [row(name, ests) for name, ests in by_design.items() if len(ests) == len(SHAPES)]
    lines.append(row("floor", floors))
    lines.append(f"{'SOL':<13}" + "".join(f"{s:>22.3f}" for s in SOL_US) + f"{geomean(SOL_US):>10.2f}")
    lines.append("")
    table = dispatch_table()
    for shape in SHAPES:
        choices = {tile_m: best_span_ctas(*shape, r, tile_m=tile_m) for tile_m in (128, 64)}
        tile_m, (ctas, us) = min(choices.items(), key=lambda item: item[1][1])
        other = 128 if tile_m == 64 else 64
        anywhere = min(((t, best_span_ctas(*shape, r, least=1, tile_m=t)) for t in (128, 64)), key=lambda c: c[1][1])
        unbound = (f"; on any CTA count: {anywhere[0]}-row on {anywhere[1][0]} CTAs, {anywhere[1][1]:.2f} us"
                   if anywhere[1][0] < LEAST_BUSY_SMS else "")
        lines.append(f"best spanning plan with >= {LEAST_BUSY_SMS} CTAs for {shape_name(shape)}: {tile_m}-row A tiles, "
                     f"{ctas} CTAs ({us:.2f} us; {other}-row: {choices[other][1]:.2f} us on {choices[other][0]}){unbound}; "
                     f"kernel's table: {table.get(shape)}")
    lines.append("")
    return lines + verdict(r, by_design["tc-span"], floors, by_design["cutlass"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, value in asdict(Rates()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=float, default=value)
    args = parser.parse_args()
    rates = Rates(**{name: getattr(args, name) for name in asdict(Rates())})
    print("\n".join(table(rates)))


if __name__ == "__main__":
    main()
