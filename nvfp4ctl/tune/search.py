"""Which candidates to try: coordinate descent from the start configuration, one knob at a time.

Per knob (declaration order), every declared value is tried with all other knobs at their current
best. A scope=kernel knob changes device code for every shape, so it gets one value for all shapes:
the one with the best geomean over them (a value wrong on any shape is out). A scope=plan knob gets
its best value per shape. A value replaces the current one only if it is faster by more than
`min_gain` (noise must not flip winners between runs), and, where a `rematch` is given, only if it
stays faster by that much when both are timed again back to back in one worker: candidates timed
minutes apart differ by 1-2 % with the very same plan (the GPU's clocks drift; H200, 2026-11-27:
29.23 against 28.76 us on 512x1536x7168), more than many a knob's real gain. Where the sweep's
fastest value does not hold its lead, the next one that led by more than `min_gain` is rematched,
up to `MAX_CHALLENGERS` values per step and shape (a kernel knob's: by geomean). Rounds repeat while
anything changed, up to `rounds`; `budget_s` stops the search between knobs. The choices depend on
the measurements alone, never on their order, so any number of GPUs, or a resumed run, takes the
same path.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from nvfp4ctl.build.knobs import Knob
from nvfp4ctl.tune.knobs import Config, KernelKnobs, tunable
from nvfp4ctl.tune.results import Measurement, geomean
from nvfp4ctl.tune.table import DispatchTable, Shape
from nvfp4ctl.words import seconds_text

Request = tuple[Config, Shape]
Evaluate = Callable[[list[Request], str], dict[tuple[str, Shape], Measurement]]
# (the current best, a challenger that beat it, the shape): both timed again back to back
Duel = tuple[Config, Config, Shape]
DuelKey = tuple[str, str, Shape]  # (current id, challenger id, shape)
Rematch = Callable[[list[Duel], str], dict[DuelKey, tuple[Measurement, Measurement]]]

T = TypeVar("T")

DEFAULT_ROUNDS = 1
DEFAULT_MIN_GAIN = 0.01
# values rematched per step and shape at most: the sweep's leader and two runners-up. Each rematch
# times four calls back to back, and the further down the sweep a lead is, the more likely it is noise
MAX_CHALLENGERS = 3


@dataclass(frozen=True)
class SearchSettings:
    rounds: int = DEFAULT_ROUNDS
    min_gain: float = DEFAULT_MIN_GAIN  # fraction: 0.01 = a new value must be 1 % faster
    budget_s: float | None = None
    only: frozenset[str] | None = None  # full knob names to search (--knobs); None: every knob with a choice


@dataclass(frozen=True)
class RematchResult:
    """A challenger against the current best, timed back to back; `kept`: it won by more than min_gain
    (a kernel knob's value: by the geomean over every shape, `joint_gain`)."""
    step: str  # the knob step's label
    shape: Shape
    current_id: str
    challenger_id: str
    current: Measurement
    challenger: Measurement
    kept: bool
    joint_gain: float | None = None  # a kernel knob: current geomean / challenger geomean - 1 (inf: one failed)
    attempt: int = 1  # 1: the sweep's fastest value; 2, 3: the runners-up, rematched after it lost


@dataclass
class SearchOutcome:
    start: dict[Shape, Config]
    best: dict[Shape, Config]
    best_result: dict[Shape, Measurement]
    knobs_done: list[str] = field(default_factory=list)
    stopped: str | None = None  # why the search ended early ("budget ...")
    rematches: list[RematchResult] = field(default_factory=list)


def start_configs(knobs: KernelKnobs, shapes: Sequence[Shape], table: DispatchTable | None) -> dict[Shape, Config]:
    """Declared defaults, overlaid by the table's kernel set and each shape's plan entry."""
    base = knobs.defaults()
    if table is None:
        return {shape: base for shape in shapes}
    base = base.merged(table.kernel)
    return {shape: base.merged(table.plan.get(shape, {})) for shape in shapes}


def steps(knobs: KernelKnobs, only: frozenset[str] | None = None) -> tuple[Knob, ...]:
    return tuple(knob for knob in tunable(knobs.knobs) if only is None or knob.name in only)


def one_round(knobs: KernelKnobs, start: dict[Shape, Config], only: frozenset[str] | None = None) -> list[Request]:
    """Every candidate of one round that changes a single knob from the start (compile-only)."""
    requests: list[Request] = [(config, shape) for shape, config in start.items()]
    for knob in steps(knobs, only):
        for shape, config in start.items():
            requests += [(config.with_value(knob.name, v), shape) for v in knob.values if v != config[knob.name]]
    return requests


def compile_only_builds(requests: list[Request],
                        as_built: Callable[[Config], Config | None] = lambda config: config) -> list[Config | None]:
    """What a compile-only round builds for `requests` (one_round's): the shipped build (None) and each
    distinct candidate once, shapes that share a start sharing its builds; `as_built` gives None for the
    candidate whose build is the shipped one (a kernel without a table: its defaults)."""
    return list(dict.fromkeys([None, *(as_built(config) for config, _ in requests)]))


def round_size(knobs: KernelKnobs, shapes: int, only: frozenset[str] | None = None) -> int:
    """(candidate, shape) pairs in one round, the start included (the first round's share of the progress bar)."""
    return shapes * (1 + sum(len(knob.values) - 1 for knob in steps(knobs, only)))


def coordinate_descent(knobs: KernelKnobs, start: dict[Shape, Config], evaluate: Evaluate,
                       settings: SearchSettings = SearchSettings(),
                       clock: Callable[[], float] = time.monotonic, rematch: Rematch | None = None) -> SearchOutcome:
    began = clock()
    shapes = list(start)
    found = evaluate([(config, shape) for shape, config in start.items()], "start")
    best = dict(start)
    best_result = {shape: found[(config.id, shape)] for shape, config in start.items()}
    outcome = SearchOutcome(start=dict(start), best=best, best_result=best_result)
    for round_index in range(settings.rounds):
        changed = False
        for knob in steps(knobs, settings.only):
            name = knobs.entry_name(knob.name)  # as the table's entries name it, not by a prefix they may lack
            if settings.budget_s is not None and clock() - began > settings.budget_s:
                outcome.stopped = f"budget of {seconds_text(settings.budget_s)} spent before {name}"
                return outcome
            label = f"{name} (round {round_index + 1})" if settings.rounds > 1 else name
            step = _kernel_step if knob.scope == "kernel" else _plan_step
            referee = _Referee(rematch, settings.min_gain, label, outcome.rematches)
            changed |= step(knob, shapes, best, best_result, evaluate, label, settings.min_gain, referee)
            outcome.knobs_done.append(knob.name)
        if not changed:
            break
    return outcome


def _time(result: Measurement) -> float:
    return result.us if result.ok else math.inf


@dataclass
class _Referee:
    """Rematches a step's leads against the current best (all of a step's duels at once, so the GPUs
    share them). Without a rematch, or where the current best failed (a wrong or rejected start has
    no time to be beaten back to back), every first-pass lead stands."""
    rematch: Rematch | None
    min_gain: float
    step: str
    log: list[RematchResult]

    def kept(self, duels: list[Duel], best_result: dict[Shape, Measurement], together: bool = False,
             attempt: int = 1) -> set[Shape]:
        """The shapes whose lead holds; `together` (a kernel knob: one value for every shape): all or
        none, by the geomeans of the rematches."""
        shapes = {shape for _, _, shape in duels}
        if self.rematch is None or (together and not all(best_result[s].ok for s in shapes)):
            return shapes
        judged = [duel for duel in duels if best_result[duel[2]].ok]
        found = self.rematch(judged, f"{self.step}: rematch") if judged else {}
        pairs = [found[(current.id, challenger.id, shape)] for current, challenger, shape in judged]
        joint: float | None = None
        if together:
            current_geo, challenger_geo = _score([_time(p[0]) for p in pairs]), _score([_time(p[1]) for p in pairs])
            joint = current_geo / challenger_geo - 1
            held = [challenger_geo < current_geo * (1 - self.min_gain)] * len(pairs)
        else:
            held = [_time(challenger) < _time(current) * (1 - self.min_gain) for current, challenger in pairs]
        results = [RematchResult(self.step, shape, current.id, challenger.id, *pair, keep, joint, attempt)
                   for (current, challenger, shape), pair, keep in zip(judged, pairs, held)]
        self.log.extend(results)
        return (shapes - {shape for _, _, shape in judged}) | {r.shape for r in results if r.kept}


def _kernel_step(knob: Knob, shapes: list[Shape], best: dict[Shape, Config], best_result: dict[Shape, Measurement],
                 evaluate: Evaluate, label: str, min_gain: float, referee: _Referee) -> bool:
    current = best[shapes[0]][knob.name]  # one value for every shape
    values = [v for v in dict.fromkeys(knob.values) if v != current]
    requests = [(best[s].with_value(knob.name, v), s) for v in values for s in shapes]
    found = evaluate(requests, label)
    score = {current: _score([_time(best_result[s]) for s in shapes])}
    for v in values:
        score[v] = _score([_time(found[(best[s].with_value(knob.name, v).id, s)]) for s in shapes])
    leading = sorted((v for v in values if score[v] < score[current] * (1 - min_gain)), key=lambda v: score[v])
    # a value that builds another's program on every shape shares its result: rematched once, not again as a runner-up
    leading = _first_of_each(leading, lambda v: tuple(_program(found, best[s].with_value(knob.name, v), s) for s in shapes))
    winner = next((v for attempt, v in enumerate(leading[:MAX_CHALLENGERS], 1)
                   if referee.kept([(best[s], best[s].with_value(knob.name, v), s) for s in shapes], best_result,
                                   together=True, attempt=attempt)), None)
    if winner is None:
        return False
    for s in shapes:
        best[s] = best[s].with_value(knob.name, winner)
        best_result[s] = found[(best[s].id, s)]
    return True


def _program(found: dict[tuple[str, Shape], Measurement], config: Config, shape: Shape) -> str:
    """The candidate that ran for `config` on `shape`: itself, or the one of the same program whose result it
    was given (Measurement.same_code_as)."""
    return found[(config.id, shape)].same_code_as or config.id


def _first_of_each(items: list[T], program: Callable[[T], Hashable]) -> list[T]:
    """`items` in order, less each one whose program an earlier one ran already."""
    seen: set[Hashable] = set()
    kept = []
    for item in items:
        if (ran := program(item)) not in seen:
            seen.add(ran)
            kept.append(item)
    return kept


def _score(times: list[float]) -> float:
    return math.inf if any(math.isinf(t) for t in times) else geomean(times)


def _plan_step(knob: Knob, shapes: list[Shape], best: dict[Shape, Config], best_result: dict[Shape, Measurement],
               evaluate: Evaluate, label: str, min_gain: float, referee: _Referee) -> bool:
    requests = [(best[s].with_value(knob.name, v), s) for s in shapes for v in dict.fromkeys(knob.values)
                if v != best[s][knob.name]]
    found = evaluate(requests, label)
    # per shape, the values that lead by more than min_gain in the sweep, fastest first
    queues: dict[Shape, list[tuple[Config, Measurement]]] = {}
    for s in shapes:
        tried = sorted(((config, found[(config.id, shape)]) for config, shape in requests if shape == s),
                       key=lambda item: _time(item[1]))
        leads = [item for item in tried if _time(item[1]) < _time(best_result[s]) * (1 - min_gain)]
        # candidates of one program share one result: its first in the sweep's order leads for all of them
        queues[s] = _first_of_each(leads, lambda item: _program(found, item[0], s))[:MAX_CHALLENGERS]
    leaders: dict[Shape, tuple[Config, Measurement]] = {}
    for attempt in range(1, MAX_CHALLENGERS + 1):  # every shape's next challenger at once, so the GPUs share them
        heads = {s: queue[attempt - 1] for s, queue in queues.items() if s not in leaders and len(queue) >= attempt}
        if not heads:
            break
        held = referee.kept([(best[s], config, s) for s, (config, _) in heads.items()], best_result, attempt=attempt)
        leaders.update({s: head for s, head in heads.items() if s in held})
    for s, (config, result) in leaders.items():
        best[s], best_result[s] = config, result
    return bool(leaders)
