"""The bench's run-log line, and the comparison with the previous bench of the same target.

The line a bench leaves in MEMORY.md (Outcome.result) carries every shape's mean and error so a
later bench can compare: "geomean 41.20±0.02 us; 128x7168x16384 98.10±0.05 | 128x4096x7168 30.20±0.02 us".

"Same target" means the same file on the same GPU, not the same content: the comparison is
there to judge the edit you just made, so the content is expected to differ (the log's hash tells
whether it did). A change is "same" when it is within the combined noise: twice the combined
standard error of the two means, but never less than what two processes of the same code differ by
(docs/bench_stability.md): GEOMEAN_RUN_TO_RUN of the geomean, SHAPE_RUN_TO_RUN of a shape's mean, which
carries an offset per process of up to 2-3 % on short calls whose cause is not found.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from nvfp4ctl.bench.settings import TimingSettings, same_settings, settings_of
from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems import DEFAULT_PROBLEM, get_problem
from nvfp4ctl.runlog import RunEntry, TimeFloor, logged_path, resolved_as_logged, split_target, time_order

# relative; measured on H100s: consecutive benches' geomeans up to 1.3 % apart with the settle phase
# (2026-11-28), short shapes' per-process offsets up to 2-3 %
GEOMEAN_RUN_TO_RUN = 0.02
SHAPE_RUN_TO_RUN = 0.03
SIGMAS = 2.0

_GEOMEAN = re.compile(r"^geomean (?P<mean>[0-9.]+)(?:±(?P<err>[0-9.]+))? us; (?P<rest>.*) us$")
# A result names each shape by its problem's label (ProblemBase.label), the key itself but for the GEMV's with
# an L: "128x7168x16384", the grouped GEMM's "g8:m80+176+...:n4096:k7168" (no key has a space), the GEMV's
# "7168x16384" and "4096x7168 l=8", which lines written before labels were logged name by its key "4096x7168x8".
SHAPE_NAME = r"\S+(?: l=[0-9]+)?"
_SHAPE = re.compile(rf"^(?P<key>{SHAPE_NAME}) (?P<mean>[0-9.]+)(?:±(?P<err>[0-9.]+))?$")


@dataclass(frozen=True)
class Timing:
    mean: float
    err: float


@dataclass(frozen=True)
class LoggedBench:
    geomean: Timing
    shapes: dict[str, Timing]


@dataclass(frozen=True)
class Delta:
    name: str  # a shape key or "geomean"
    before: Timing
    after: Timing

    @property
    def pct(self) -> float:
        return 100.0 * (self.after.mean - self.before.mean) / self.before.mean

    @property
    def noise(self) -> float:
        combined = SIGMAS * math.hypot(self.before.err, self.after.err)
        floor = GEOMEAN_RUN_TO_RUN if self.name == "geomean" else SHAPE_RUN_TO_RUN
        return max(combined, floor * (self.before.mean + self.after.mean) / 2)

    @property
    def verdict(self) -> str:
        change = self.after.mean - self.before.mean
        if abs(change) <= self.noise:
            return "same"
        return "faster" if change < 0 else "slower"


@dataclass(frozen=True)
class Comparison:
    entry: RunEntry  # the previous bench's log line
    same_code: bool  # the target's content hash is unchanged
    deltas: list[Delta]  # shapes present in both runs, then the geomean when all shapes match
    tool: str = ""  # the nvfp4ctl of this bench (tool_version); the previous one's is its entry's

    @property
    def by_another_tool(self) -> bool:
        """Whether another nvfp4ctl timed the previous bench (one that logged no version counts as another):
        a change may then be the tool's, not the code's."""
        return self.entry.tool != self.tool


def tool_named(tool: str) -> str:
    """The nvfp4ctl a run log line names (its tool_version), as bench's comparison and log's trend say it."""
    return f"nvfp4ctl {tool}" if tool else "an nvfp4ctl that logged no version"


def result_line(geomean: Timing, shapes: Sequence[tuple[str, Timing]]) -> str:
    parts = " | ".join(f"{key} {t.mean:.3f}±{t.err:.3f}" for key, t in shapes)
    return f"geomean {geomean.mean:.3f}±{geomean.err:.3f} us; {parts} us"


def parse_result_line(text: str, problem: str | None = None) -> LoggedBench | None:
    """A bench's logged result; None for any other result and for a line no bench writes (hand-edited):
    a time that is nan, inf, 0 or not a number ("1.2.3"), which no kernel takes and no comparison or
    trend can use (a percentage of 0 µs, a "best 0.00"). `problem`: the run's (logged_problem), whose keys
    the shapes are then held by (logged_key): "4096x7168 l=8" and an older line's "4096x7168x8" are one shape;
    without it, as logged."""
    found = _GEOMEAN.match(text.strip())
    if not found:
        return None
    shapes: dict[str, Timing] = {}
    for part in found["rest"].split(" | "):
        shape = _SHAPE.match(part.strip())
        if not shape or (timing := _timing(shape["mean"], shape["err"])) is None:
            return None
        shapes[logged_key(problem, shape["key"]) if problem is not None else shape["key"]] = timing
    geomean = _timing(found["mean"], found["err"])
    return LoggedBench(geomean, shapes) if geomean is not None else None


def _timing(mean: str, err: str | None) -> Timing | None:
    try:
        timing = Timing(float(mean), float(err or 0.0))
    except ValueError:
        return None
    return timing if timing.mean > 0 else None


def logged_problem(entry: RunEntry) -> str:
    """The problem a logged run was of; lines written before the log named one were the GEMM's."""
    return entry.problem or DEFAULT_PROBLEM


def logged_key(problem: str, name: str) -> str:
    """The key of a shape as a result of `problem`'s names it (ProblemBase.key_of_label): the GEMV's "4096x7168 l=8"
    as "4096x7168x8", the key bench, `log --shape` and older lines go by; a name of a problem this nvfp4ctl does
    not know (a newer one's, a user's own) as it is."""
    try:
        return get_problem(problem).key_of_label(name)
    except UsageError:
        return name


def _target_path(cell: str, root: Path, log_folder: Path | None) -> Path | None:
    """The logged target's file (runlog.logged_path)."""
    path, _ = split_target(cell)
    return logged_path(path, root, log_folder) if path else None


@dataclass(frozen=True)
class _Candidate:
    entry: RunEntry
    logged: LoggedBench
    when: tuple[str, int]  # its time (runlog.time_order), then its place from the log's end, negated: later is more


def find_previous(newest_first: Iterable[RunEntry], target: Path, gpu: str, shapes: Collection[str],
                  root: Path | None = None, problem: str | None = None,
                  log_folder: Path | None = None, settings: TimingSettings | None = None,
                  other_settings: list[RunEntry] | None = None,
                  floor: TimeFloor | None = None) -> tuple[RunEntry, LoggedBench] | None:
    """The latest successful bench of `target` (by path) on `gpu` that timed all of `shapes`; failing
    that, the latest that timed at least one of them (a full bench is not judged by an `--only` run).
    The latest by the time logged (runlog.time_order, as log --trend orders runs), of one second the later
    line: a log merged by hand holds an older run below a later one.
    `newest_first` is the run log from its end (runlog.newest_first); `floor`, the TimeFloor it was read with,
    is set to the full bench found, so that no older line is parsed.
    `log_folder` is the run log's folder, where its "./" paths start; `root` the user's folder, where an
    older line's relative path starts (default: the working directory): a log shared by two folders
    names the one's submission.py apart from the other's, but on its older lines both are one.
    `problem`: only benches of that problem count: the GEMM's and the dual GEMM's shape keys are alike
    ("128x128x256"), so a path and a shape key alone would judge one problem by another's times.
    `settings`: only benches timed with the same count (bench/settings.py: a quick `--max-repeats 3` run is
    no measure of a full one); `other_settings` receives, newest first, the benches that would have counted
    but for their settings and are more recent than the one found (all of them where none is), so bench can
    say why it compared with an older one, or with none."""
    root = root or Path.cwd()
    wanted = resolved_as_logged(target)  # a name is logged escaped (ESC, a byte that is not UTF-8): compared so
    full: _Candidate | None = None
    partial: _Candidate | None = None  # the latest that timed some of the shapes, for want of a full one
    passed_over: list[tuple[tuple[str, int], RunEntry]] = []  # for their settings
    for place, entry in enumerate(newest_first):
        when = (time_order(entry.time), -place)
        if full is not None and when <= full.when:  # older than the full bench found: it cannot be the latest
            continue
        if entry.subcommand != "bench" or entry.exit_code != "0" or entry.gpu != gpu:
            continue
        if problem is not None and logged_problem(entry) != problem:
            continue
        if _target_path(entry.target, root, log_folder) not in wanted:
            continue
        logged = parse_result_line(entry.result, logged_problem(entry))
        if logged is None or not any(key in logged.shapes for key in shapes):
            continue
        if settings is not None and not same_settings(settings_of(entry.command), settings, logged_problem(entry)):
            passed_over.append((when, entry))
            continue
        if all(key in logged.shapes for key in shapes):
            full = _Candidate(entry, logged, when)
            if floor is not None:
                floor.time = entry.time
        elif full is None and (partial is None or when > partial.when):
            partial = _Candidate(entry, logged, when)
    found = full or partial
    if other_settings is not None:
        newest = sorted(passed_over, key=lambda later: later[0], reverse=True)
        other_settings.extend(entry for when, entry in newest if found is None or when > found.when)
    return (found.entry, found.logged) if found is not None else None


def compare(previous: tuple[RunEntry, LoggedBench], geomean: Timing, shapes: Sequence[tuple[str, Timing]],
            digest: str, tool: str = "") -> Comparison:
    """`digest`: the target's content hash now; `tool`: the nvfp4ctl timing it now (tool_version)."""
    entry, logged = previous
    deltas = [Delta(key, logged.shapes[key], now) for key, now in shapes if key in logged.shapes]
    if deltas and len(deltas) == len(shapes) == len(logged.shapes):
        deltas.append(Delta("geomean", logged.geomean, geomean))
    return Comparison(entry, same_code=split_target(entry.target)[1] == digest, deltas=deltas, tool=tool)
