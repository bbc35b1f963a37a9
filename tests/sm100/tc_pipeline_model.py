"""A small executable model of the tcgen05 kernel's synchronisation protocol, for one launch.

Every CTA of the launch runs three processes written after the kernel's roles (load_role, mma_role,
epilogue_role in kernels/sm100/nvfp4_gemm_sm100_tc.cu), over the segments and stage loads the kernel
itself plans (tests/sm100/tc_plan.py). mbarriers keep hardware semantics: an arrival count and a
transaction-byte count per phase, `try_wait.parity(P)` true once the phase of parity P completed.
TMA deliveries complete in any order after their issue; tcgen05 ops (MMA + commit) complete in issue
order; the epilogue's 128 threads arrive one by one. A random scheduler interleaves everything, and
the model checks, for every config:

- every wait is eventually satisfied (no deadlock, within a CTA or through the split-K flags);
- each stage's barrier receives exactly the bytes the producer announced, equal to the TMA boxes';
- the MMA reads a stage only when it holds the K tile it expects, and no load overwrites a stage the
  MMA has not released; an accumulator is written only after the epilogue released it;
- an owner reads a partial only after its flag, each CTA writes at most one partial, and every tile's
  K range is covered exactly once by its owner and the partials it adds.

It is a model of the protocol, not of timing or of the hardware's data path (tc_plan.py + the
UMMA model cover the data).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from tc_plan import Segment, TcPlan

Wait = Callable[[], bool]
Process = Generator[Wait, None, None]


class ProtocolError(AssertionError):
    """A broken protocol invariant, naming the CTA and what went wrong."""


class MBarrier:
    def __init__(self, name: str, count: int) -> None:
        self.name, self.count = name, count
        self.pending, self.tx, self.completed = count, 0, 0

    def done(self, parity: int) -> bool:
        """mbarrier.try_wait.parity: true while the current phase's parity differs from `parity`."""
        return (self.completed & 1) != parity

    def arrive(self) -> None:
        if self.pending <= 0:
            raise ProtocolError(f"{self.name}: more arrivals than its count {self.count} in one phase")
        self.pending -= 1
        self._advance()

    def expect_tx(self, nbytes: int) -> None:
        self.tx += nbytes

    def complete_tx(self, nbytes: int) -> None:
        self.tx -= nbytes
        if self.tx < 0:
            raise ProtocolError(f"{self.name}: {-self.tx} bytes delivered beyond what was expected")
        self._advance()

    def _advance(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.count


@dataclass
class Cta:
    index: int
    segments: list[Segment]
    stages: int
    full: list[MBarrier] = field(default_factory=list)
    empty: list[MBarrier] = field(default_factory=list)
    tmem_full: list[MBarrier] = field(default_factory=list)
    tmem_empty: list[MBarrier] = field(default_factory=list)
    stage_content: list[tuple[int, int] | None] = field(default_factory=list)  # (tile, k_tile) being/been loaded
    stage_bytes: list[int] = field(default_factory=list)
    stage_free: list[bool] = field(default_factory=list)
    accumulator: list[Segment | None] = field(default_factory=list)
    tensor_pipe: deque[Callable[[], None]] = field(default_factory=deque)  # tcgen05 ops, completed in order


@dataclass
class ModelResult:
    ctas: int
    loads: int
    bytes_per_stage: int
    steps: int


def stage_pieces(plan: TcPlan) -> list[tuple[str, int, int]]:
    """(name, offset in the stage, bytes) of every copy the producer issues per stage."""
    tma = plan.tma
    return [("b", tma["b"]["dst_offset"], tma["b"]["inner_bytes"] * tma["b"]["rows"]),
            ("a", tma["a"]["dst_offset"], tma["a"]["inner_bytes"] * tma["a"]["rows"]),
            ("sfb", tma["sfb"]["dst_offset"], tma["sfb"]["bytes"]),
            ("sfa", tma["sfa"]["dst_offset"], tma["sfa"]["bytes"])]


def check_stage_layout(plan: TcPlan) -> int:
    """The copies of one stage tile it without overlap, fit the stage, and add up to the bytes the
    producer announces (kStageTxBytes). Returns that byte count."""
    cfg = plan.config
    pieces = sorted(stage_pieces(plan), key=lambda p: p[1])
    end = 0
    for name, offset, nbytes in pieces:
        if offset < end:
            raise ProtocolError(f"stage copy {name} at {offset} overlaps the previous one (ends at {end})")
        end = offset + nbytes
    if end > cfg["kStageBytes"]:
        raise ProtocolError(f"stage copies end at {end} > kStageBytes {cfg['kStageBytes']}")
    total = sum(p[2] for p in pieces)
    if total != cfg["kStageTxBytes"]:
        raise ProtocolError(f"TMA delivers {total} bytes per stage, the producer expects {cfg['kStageTxBytes']}")
    if cfg["kStages"] * cfg["kStageBytes"] > cfg["kSmemBytes"]:
        raise ProtocolError("the stages do not fit the dynamic shared memory")
    return total


def _producer(cta: Cta, plan: TcPlan, events: list[Callable[[], None]]) -> Process:
    stage, phase = 0, 0
    pieces = stage_pieces(plan)
    tx = plan.config["kStageTxBytes"]
    for seg in cta.segments:
        for k_tile in range(seg.k_begin, seg.k_end):
            yield (lambda s=stage, p=phase: cta.empty[s].done(p ^ 1))
            if not cta.stage_free[stage]:
                raise ProtocolError(f"CTA {cta.index}: producer refills stage {stage} before the MMA released it")
            cta.stage_free[stage] = False
            cta.stage_content[stage] = (seg.tile, k_tile)
            cta.stage_bytes[stage] = 0
            cta.full[stage].expect_tx(tx)
            cta.full[stage].arrive()
            for _name, _offset, nbytes in pieces:
                events.append(lambda s=stage, b=nbytes: _deliver(cta, s, b))
            stage, phase = (0, phase ^ 1) if stage + 1 == cta.stages else (stage + 1, phase)
    for _ in range(cta.stages):  # the kernel's drain: every stage's last fill released before exit
        yield (lambda s=stage, p=phase: cta.empty[s].done(p ^ 1))
        if not cta.stage_free[stage]:
            raise ProtocolError(f"CTA {cta.index}: producer drain passed stage {stage} before the MMA released it")
        stage, phase = (0, phase ^ 1) if stage + 1 == cta.stages else (stage + 1, phase)


def _deliver(cta: Cta, stage: int, nbytes: int) -> None:
    cta.stage_bytes[stage] += nbytes
    cta.full[stage].complete_tx(nbytes)


def _mma(cta: Cta, plan: TcPlan) -> Process:
    stage, phase = 0, 0
    accumulators = plan.config["kNumAccumulators"]
    tx = plan.config["kStageTxBytes"]
    for index, seg in enumerate(cta.segments):
        acc = index % accumulators
        yield (lambda a=acc, p=(index // accumulators) & 1: cta.tmem_empty[a].done(p ^ 1))
        if cta.accumulator[acc] is not None:
            raise ProtocolError(f"CTA {cta.index}: MMA overwrites accumulator {acc} before the epilogue drained it")
        cta.accumulator[acc] = seg
        for k_tile in range(seg.k_begin, seg.k_end):
            yield (lambda s=stage, p=phase: cta.full[s].done(p))
            if cta.stage_content[stage] != (seg.tile, k_tile) or cta.stage_bytes[stage] != tx:
                raise ProtocolError(f"CTA {cta.index}: MMA reads stage {stage} holding {cta.stage_content[stage]} "
                                    f"({cta.stage_bytes[stage]} B), expected tile {seg.tile} K tile {k_tile} ({tx} B)")
            cta.tensor_pipe.append(lambda s=stage: _release_stage(cta, s))  # tcgen05.commit -> empty[s]
            stage, phase = (0, phase ^ 1) if stage + 1 == cta.stages else (stage + 1, phase)
        cta.tensor_pipe.append(lambda a=acc: cta.tmem_full[a].arrive())


def _release_stage(cta: Cta, stage: int) -> None:
    cta.stage_free[stage] = True
    cta.empty[stage].arrive()


@dataclass
class Exchange:
    epoch: int = 1
    flags: dict[int, int] = field(default_factory=dict)
    partials: dict[int, Segment] = field(default_factory=dict)
    written: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # tile -> K ranges summed into C


def _epilogue(cta: Cta, plan: TcPlan, exchange: Exchange, threads: int) -> Process:
    accumulators = plan.config["kNumAccumulators"]
    for index, seg in enumerate(cta.segments):
        acc = index % accumulators
        ranges = []
        if seg.reduce:  # the owner sums the other CTAs' partials before its own accumulator is ready
            for source in range(seg.first_contributor, cta.index):
                yield (lambda c=source: exchange.flags.get(c) == exchange.epoch)
                partial = exchange.partials.get(source)
                if partial is None or partial.tile != seg.tile:
                    raise ProtocolError(f"CTA {cta.index}: CTA {source}'s slot holds {partial}, not tile {seg.tile}")
                ranges.append((partial.k_begin, partial.k_end))
        yield (lambda a=acc, p=(index // accumulators) & 1: cta.tmem_full[a].done(p))
        if cta.accumulator[acc] != seg:
            raise ProtocolError(f"CTA {cta.index}: epilogue finds {cta.accumulator[acc]} in accumulator {acc}")
        ranges.append((seg.k_begin, seg.k_end))
        if seg.owner:
            if seg.tile in exchange.written:
                raise ProtocolError(f"tile {seg.tile} written twice (CTA {cta.index})")
            exchange.written[seg.tile] = ranges
        else:
            if cta.index in exchange.partials:
                raise ProtocolError(f"CTA {cta.index} writes a second partial (its slot holds one already)")
            exchange.partials[cta.index] = seg
        cta.accumulator[acc] = None
        for _ in range(threads):
            cta.tmem_empty[acc].arrive()
        if not seg.owner:
            exchange.flags[cta.index] = exchange.epoch


def run_model(plan: TcPlan, seed: int = 0, max_steps: int = 50_000_000) -> ModelResult:
    """Runs one launch of `plan` (built with loads) to completion under a random interleaving."""
    check_stage_layout(plan)
    cfg = plan.config
    stages, accumulators, threads = cfg["kStages"], cfg["kNumAccumulators"], cfg["kNumEpilogueThreads"]
    rng = random.Random(seed)
    exchange = Exchange()
    events: list[Callable[[], None]] = []
    ctas: list[Cta] = []
    processes: list[tuple[str, Process, list[Wait | None]]] = []
    loads = 0
    for index in range(plan.ctas):
        cta = Cta(index, plan.segments(index), stages)
        cta.full = [MBarrier(f"CTA {index} full[{s}]", 1) for s in range(stages)]
        cta.empty = [MBarrier(f"CTA {index} empty[{s}]", 1) for s in range(stages)]
        cta.tmem_full = [MBarrier(f"CTA {index} tmem_full[{a}]", 1) for a in range(accumulators)]
        cta.tmem_empty = [MBarrier(f"CTA {index} tmem_empty[{a}]", threads) for a in range(accumulators)]
        cta.stage_content, cta.stage_bytes, cta.stage_free = [None] * stages, [0] * stages, [True] * stages
        cta.accumulator = [None] * accumulators
        ctas.append(cta)
        loads += sum(s.k_end - s.k_begin for s in cta.segments)
        for name, proc in (("producer", _producer(cta, plan, events)), ("mma", _mma(cta, plan)),
                           ("epilogue", _epilogue(cta, plan, exchange, threads))):
            processes.append((f"CTA {index} {name}", proc, [None]))

    # Rounds: every live process, in a shuffled order, runs a short random burst while its wait is
    # satisfied; then a random share of the in-flight TMA copies and tcgen05 ops completes.
    live = list(range(len(processes)))
    steps = 0
    while live or events or any(c.tensor_pipe for c in ctas):
        progress = False
        rng.shuffle(live)
        for i in list(live):
            name, proc, wait = processes[i]
            for _ in range(rng.randint(1, 4)):
                if wait[0] is not None and not wait[0]():
                    break
                steps += 1
                progress = True
                try:
                    wait[0] = next(proc)
                except StopIteration:
                    live.remove(i)
                    break
        rng.shuffle(events)
        done = rng.randint(0 if progress else 1, len(events)) if events else 0
        for _ in range(done):
            events.pop()()  # TMA completions, in any order
        progress |= done > 0
        for cta in ctas:
            for _ in range(rng.randint(0, len(cta.tensor_pipe))):
                cta.tensor_pipe.popleft()()  # tcgen05 ops complete in issue order
                progress = True
        if not progress:
            pending = [c for c in ctas if c.tensor_pipe]
            if pending:
                pending[0].tensor_pipe.popleft()()
                continue
            stuck = ", ".join(processes[i][0] for i in live[:6])
            raise ProtocolError(f"deadlock: {len(live)} processes wait forever ({stuck}, ...)")
        if steps > max_steps:
            raise ProtocolError("the model did not finish within its step budget")
    _check_coverage(plan, exchange)
    return ModelResult(plan.ctas, loads, cfg["kStageTxBytes"], steps)


def _check_coverage(plan: TcPlan, exchange: Exchange) -> None:
    if len(exchange.written) != plan.tiles:
        missing = sorted(set(range(plan.tiles)) - set(exchange.written))[:5]
        raise ProtocolError(f"{plan.tiles - len(exchange.written)} tiles never written (first: {missing})")
    for tile, ranges in exchange.written.items():
        covered = sorted(ranges)
        position = 0
        for begin, end in covered:
            if begin != position:
                raise ProtocolError(f"tile {tile}: K ranges {covered} leave a gap or overlap at K tile {position}")
            position = end
        if position != plan.k_tiles:
            raise ProtocolError(f"tile {tile}: K ranges {covered} stop at {position} of {plan.k_tiles}")
