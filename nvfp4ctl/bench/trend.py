"""Bench times over the logged runs: per target and GPU, one series per shape, commits marked.

Reads only the run log (MEMORY.md): every successful `nvfp4ctl bench` line carries each shape's
mean and error (history.result_line). Runs are grouped by target file and GPU, the way the bench's
own comparison with the previous run groups them, so numbers from different cards never share a
plot. `plot` draws one series as text (no styling): a dot per run, its value on a small y axis,
a mark under every run whose commit differs from the run before, another under every run on the same
commit whose target's content hash differs (an edit not committed), and a row of marks under the runs
made by another nvfp4ctl than the run before (a step there may be the tool's, not the kernel's).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl import commit_stamp
from nvfp4ctl.bench.history import SHAPE_NAME, LoggedBench, logged_key, logged_problem, parse_result_line, tool_named
from nvfp4ctl.bench.settings import TimingSettings, settings_of
from nvfp4ctl.errors import UsageError
from nvfp4ctl.printable import shown
from nvfp4ctl.runlog import (CPU_DEVICE_LABEL, LOG_RELATIVE, RunEntry, folder_target, logged_path, resolved_as_logged,
                             split_target, time_order, time_shown)
from nvfp4ctl.words import plural

GEOMEAN = "geomean"


@dataclass(frozen=True)
class Run:
    time: str  # UTC, as logged
    commit: str  # short hash, "+dirty" when the tree had changes
    digest: str  # the target file's content hash
    bench: LoggedBench
    tool: str = ""  # the nvfp4ctl that timed it ("0.1.0 (abc1234)"; "": a line that named none)

    def value(self, key: str) -> float | None:
        if key == GEOMEAN:
            return self.bench.geomean.mean
        timing = self.bench.shapes.get(key)
        return timing.mean if timing else None


@dataclass
class Trend:
    target: str  # the target's path, relative to the reader's folder when inside it
    gpu: str
    runs: list[Run] = field(default_factory=list)
    problem: str = ""  # the task's problem: one path may hold another problem's submission in another folder
    settings: str = ""  # the timing options that differ from bench's defaults ("--max-repeats 3"); "": none

    @property
    def on_cpu(self) -> bool:
        """NVFP4CTL_DEVICE=cpu runs: their times say nothing of the leaderboard's, nor of an edit's effect."""
        return self.gpu == CPU_DEVICE_LABEL

    def keys(self, with_geomean: bool = False) -> list[str]:
        """Shapes in the order first timed, then the geomean (only over the runs that timed geomean_shapes).
        Of a target timed at one shape the geomean is that shape's time, a second plot of it: there only when
        asked (`with_geomean`), as `--shape geomean` asks for every target's."""
        keys = list(dict.fromkeys(key for run in self.runs for key in run.bench.shapes))
        return keys + [GEOMEAN] if len(keys) > 1 or with_geomean else keys

    def geomean_shapes(self) -> frozenset[str]:
        """The set of shapes whose geomeans are compared: the one most runs timed (a tie: the latest run's of
        those), the task's benchmarks as a rule. A geomean over another set is none of theirs, but one ad-hoc
        `bench --shape` must not leave the series empty, as asking for every shape ever timed did."""
        sets = [frozenset(run.bench.shapes) for run in self.runs]
        counts = Counter(sets)
        most = max(counts.values(), default=0)
        return next((shapes for shapes in reversed(sets) if counts[shapes] == most), frozenset())

    def geomean_left_out(self) -> list[int]:
        """The runs (indexes) left out of the geomean's series: they timed another set than geomean_shapes."""
        compared = self.geomean_shapes()
        return [index for index, run in enumerate(self.runs) if frozenset(run.bench.shapes) != compared]

    def series(self, key: str) -> list[float | None]:
        """One value per run (None: that run did not time the shape, or, for the geomean, another set of shapes)."""
        if key != GEOMEAN:
            return [run.value(key) for run in self.runs]
        left_out = set(self.geomean_left_out())
        return [None if index in left_out else run.value(GEOMEAN) for index, run in enumerate(self.runs)]

    def changes(self) -> list[bool]:
        """Per run: is it the first run on its commit ("+dirty" edits on top count as the same commit)?"""
        commits = [run.commit.removesuffix(commit_stamp.DIRTY) for run in self.runs]
        return [i == 0 or commit != commits[i - 1] for i, commit in enumerate(commits)]

    def content_changes(self) -> list[bool]:
        """Per run: is it on the commit of the run before (a new commit is marked already) with other content of
        the target, as its logged hash says ("+dirty" edits, one commit's many tries)? A line that logged no
        hash changes nothing."""
        commits = self.changes()
        return [not commits[i] and bool(run.digest) and bool(self.runs[i - 1].digest)
                and run.digest != self.runs[i - 1].digest for i, run in enumerate(self.runs)]

    def tool_changes(self) -> list[bool]:
        """Per run: did another nvfp4ctl time the run before it (the first run shown: no)?"""
        return [i > 0 and run.tool != self.runs[i - 1].tool for i, run in enumerate(self.runs)]


# The keys a bench's shapes are held by (ProblemBase.key): "128x7168x16384" (l when not 1), the GEMV's "7168x16384"
# and "4096x7168x8" (logged as "4096x7168 l=8": parse_result_line reads it back as its key), the grouped GEMM's
# "g8:m80+176:n4096:k7168"
_SIZES_KEY = re.compile(r"[1-9][0-9]*(?:x[1-9][0-9]*){1,3}")
_GROUPED_KEY = re.compile(r"g[1-9][0-9]*(?::[a-z][0-9]+(?:\+[0-9]+)*)+")


def shown_key(problem: str, key: str) -> str:
    """A logged key as its problem's label names it: the GEMV's "4096x7168x8" as "4096x7168 l=8", never
    read as a GEMM's M×N×K; a key of no problem nvfp4ctl knows as it is."""
    from nvfp4ctl.problems import get_problem

    if key == GEOMEAN:
        return key
    try:
        return get_problem(problem).label_of_key(key)
    except UsageError:  # a problem this nvfp4ctl does not know (a newer one's log)
        return key


def normalize_shape(text: str) -> str:
    """"128,7168,16384" or "128x7168x16384" -> the log's key "128x7168x16384"; "geomean" as is; the
    grouped GEMM's --shape as bench takes it ("192,3072,4096;320,3072,4096") -> its logged key
    ("g2:m192+320:n3072:k4096"); the GEMV's label as the trend titles a series ("4096x7168 l=8") -> its key
    ("4096x7168x8"). A text that is no shape's key is a UsageError, whatever the log holds (a typo is told
    as such at once)."""
    malformed = UsageError(f"--shape {text}: expected M,N,K[,L] as positive integers (GEMV M,K[,L]; a grouped"
                           " GEMM's M1,N1,K1;M2,N2,K2 or logged key, g8:m80+176:n4096:k7168; a GEMV's label as"
                           " the trend shows it, 256x512 l=2) or geomean, e.g. --shape 128,7168,16384")
    if ";" in text:
        from nvfp4ctl.problems import get_problem

        grouped = get_problem("nvfp4_group_gemm")
        try:
            return grouped.key(grouped.parse_shape(text, 0))
        except UsageError:
            raise malformed from None
    cleaned = text.strip().lower().replace(",", "x").replace(" ", "")
    if cleaned == GEOMEAN or _GROUPED_KEY.fullmatch(cleaned):
        return cleaned
    if _LABEL_L in cleaned:
        key = _key_of_label(cleaned.replace(_LABEL_L, f" {_LABEL_L}", 1))
        if key is None:
            raise malformed
        return key
    if not _SIZES_KEY.fullmatch(cleaned):
        raise malformed
    parts = cleaned.split("x")
    if len(parts) >= 3 and parts[-1] == "1":  # l = 1 is left out of the log's keys (K is never 1)
        parts = parts[:-1]
    return "x".join(parts)


_LABEL_L = "l="  # a label's batch, "4096x7168 l=8": the one part no key has


def _key_of_label(label: str) -> str | None:
    """The key a problem's label names ("4096x7168 l=8" -> the GEMV's "4096x7168x8"); None where no problem's
    label is that text (every label of the other problems is its key, which normalize_shape reads already)."""
    from nvfp4ctl.problems import all_problems

    return next((key for problem in all_problems() if (key := problem.key_of_label(label)) != label), None)


def collect(entries: Iterable[RunEntry], root: Path, target: Path | None = None, last: int | None = None,
            log_project: Path | None = None, log_folder: Path | None = None) -> list[Trend]:
    """Successful benches grouped by (target, GPU, problem, timing settings), oldest run first by the time logged
    (not the line's place: a log merged by hand); the most recently run group first. The problem keeps apart
    what a log shared by several folders names alike (each folder's submission.py, the GEMM's and the dual
    GEMM's "128x128x256"); the settings a quick
    `--max-repeats 3` run from the full ones (bench/settings.py).

    A logged "./" path starts from `log_folder`, the run log's folder, so one log shared by two folders
    keeps their files apart; an older line's relative path is read against `root`, this checkout (the
    folder of the run that wrote it, which the line does not say). `target` keeps only that file's runs,
    matched as logged_path reads them, or an older line's path in `log_project`, the project the log
    lives in; `last` keeps each group's most recent runs."""
    base = root.resolve()
    groups: dict[tuple[str, str, str, TimingSettings], Trend] = {}
    order: dict[tuple[str, str, str, TimingSettings], int] = {}
    for index, entry in enumerate(entries):
        if entry.subcommand != "bench" or entry.exit_code != "0":
            continue
        problem = logged_problem(entry)
        bench = parse_result_line(entry.result, problem)
        path, digest = split_target(entry.target)
        if bench is None or not path:
            continue
        resolved = logged_path(path, root, log_folder)
        if target is not None and not _names(target, path, root, log_project, log_folder):
            continue
        timed_with = settings_of(entry.command).resolved(problem)
        # as the line names the file now (escaped), so an older line's raw ESC joins the same trend
        key = (shown(str(resolved)), entry.gpu, problem, timed_with)
        if key not in groups:
            groups[key] = Trend(_shown(path, base, log_folder), entry.gpu, problem=problem,
                                settings=" ".join(timed_with.options(problem)))
        groups[key].runs.append(Run(entry.time, entry.commit, digest, bench, entry.tool))
        order[key] = index
    for trend in groups.values():
        # a log merged by hand holds its lines out of time order: a trend, its span and its first -> last go by
        # time, as bench's previous run does (runlog.time_order); a stable sort keeps runs of one second in file order
        trend.runs.sort(key=lambda run: time_order(run.time))
    latest = {key: time_order(trend.runs[-1].time) for key, trend in groups.items()}  # sorted: the last is the latest
    trends = [groups[key] for key in sorted(groups, key=lambda k: (latest[k], order[k]), reverse=True)]
    if last:
        for trend in trends:
            trend.runs = trend.runs[-last:]
    return trends


def failed_benches(entries: Iterable[RunEntry], root: Path, target: Path | None = None,
                   log_project: Path | None = None, log_folder: Path | None = None) -> list[RunEntry]:
    """The benches (of `target`, matched as collect matches it) that ended with an exit code other than 0, in
    time order (runlog.time_order), the last the latest: where no bench succeeded, they say why no trend is
    drawn, where "run nvfp4ctl bench" would send the user to run again what failed."""
    failed = [entry for entry in entries if entry.subcommand == "bench" and entry.exit_code != "0"
              and (target is None or had_target(entry, root, target, log_project, log_folder))]
    return sorted(failed, key=lambda entry: time_order(entry.time))


def unreadable_benches(entries: Sequence[RunEntry], lines: Sequence[int], root: Path, targets: Sequence[Path] = (),
                       shapes: Collection[str] = (), log_project: Path | None = None,
                       log_folder: Path | None = None) -> list[int]:
    """The lines (`lines`: each entry's) of successful benches whose result no bench writes (a hand edit
    such as `geomean 2x.1 us`): collect leaves them out of every trend. `targets` keeps only those files',
    each matched as collect matches it; `shapes` (the log's keys) only those whose text names one of them
    (every bench has a geomean): the lines of the runs the trend was asked for."""
    found: list[int] = []
    for entry, line in zip(entries, lines):
        if entry.subcommand != "bench" or entry.exit_code != "0" or parse_result_line(entry.result) is not None:
            continue
        path, _ = split_target(entry.target)
        if targets and not (path and any(_names(target, path, root, log_project, log_folder) for target in targets)):
            continue
        if shapes and GEOMEAN not in shapes and not set(shapes) & _named_keys(entry.result, logged_problem(entry)):
            continue
        found.append(line)
    return found


_NAME_FIRST = re.compile(SHAPE_NAME)


def _named_keys(result: str, problem: str) -> set[str]:
    """The name each part of a bench's result starts with ("geomean", "128x7168x16384", the GEMV's "4096x7168 l=8"),
    read or not, as the log's key (logged_key: "4096x7168x8")."""
    return {logged_key(problem, found[0]) for part in re.split(r"[;|]", result)
            if (found := _NAME_FIRST.match(part.strip()))}


def logged_targets(entries: Iterable[RunEntry], root: Path, log_folder: Path | None = None) -> list[str]:
    """Every file the run log names as a target, by any command, as `collect` names them, and every folder
    (a build of several kernels), sorted."""
    base = root.resolve()
    return sorted({_shown(path, base, log_folder) for path in map(_logged_file_or_folder, (e.target for e in entries))
                   if path})


def is_logged(entries: Iterable[RunEntry], root: Path, target: Path, log_project: Path | None = None,
              log_folder: Path | None = None) -> bool:
    """Whether any run, by any command and whatever its result, had `target` (matched as `collect` does)."""
    return any(had_target(entry, root, target, log_project, log_folder) for entry in entries)


def had_target(entry: RunEntry, root: Path, target: Path, log_project: Path | None = None,
               log_folder: Path | None = None) -> bool:
    """Whether the run had `target` (matched as `collect` matches it), a file or a folder a build of several
    kernels logged: that one relative to the run's user folder, which `root` stands for, as for an older line."""
    path, _ = split_target(entry.target)
    if path:
        return _names(target, path, root, log_project, log_folder)
    folder = folder_target(entry.target)
    return bool(folder) and (root / folder).resolve() in resolved_as_logged(target)


def _logged_file_or_folder(cell: str) -> str:
    return split_target(cell)[0] or folder_target(cell)


def _names(target: Path, logged: str, root: Path, log_project: Path | None, log_folder: Path | None) -> bool:
    """Whether a logged path is the target file: a "./" path in the log's folder, an older line's in this
    checkout or in the log's own project."""
    wanted = resolved_as_logged(target)  # a name is logged escaped (ESC, a byte that is not UTF-8): compared so
    if logged_path(logged, root, log_folder) in wanted:
        return True
    older = not logged.startswith(LOG_RELATIVE) or log_folder is None
    return older and log_project is not None and (log_project / logged).resolve() in wanted


def _shown(logged: str, base: Path, log_folder: Path | None = None) -> str:
    """A logged path as the trend names it: relative to this checkout when inside it, else absolute.
    Older lines logged absolute paths, or paths relative to their run's folder: the same file, so the
    same group, named as newer lines name it."""
    resolved = logged_path(logged, base, log_folder)
    if resolved.is_relative_to(base):
        return str(resolved.relative_to(base))
    return str(resolved) if logged.startswith(LOG_RELATIVE) else logged


def _label(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def plot(values: Sequence[float | None], changes: Sequence[bool], height: int = 6,
         tool_changes: Sequence[bool] = (), content_changes: Sequence[bool] = ()) -> list[str]:
    """A dot plot: one column pair per run, `height` rows from the series' max (top) to min (bottom),
    a y label on the top, middle and bottom rows, "^" under the first run on each commit, "~" in that row
    under a run whose target's content changed on the same commit (`content_changes`), and, where
    the nvfp4ctl that timed them changed, "*" a row lower under each run timed by another than the run before."""
    present = [v for v in values if v is not None]
    if not present:
        return []
    high, low = max(present), min(present)
    span = high - low
    rows = [[" "] * (2 * len(values)) for _ in range(height)]
    for column, value in enumerate(values):
        if value is None:
            continue
        level = 0 if span == 0 else round((high - value) / span * (height - 1))
        rows[level][2 * column] = "●"
    labeled = (0, (height - 1) // 2, height - 1) if span else (0,)
    labels = {row: _label(high - row * span / (height - 1)) for row in labeled}
    width = max(len(text) for text in labels.values())
    lines = [(f"{labels[i]:>{width}} ┤ " if i in labels else f"{'':>{width}} │ ") + "".join(row)
             for i, row in enumerate(rows)]
    lines = [line.rstrip() for line in lines]
    lines.append(f"{'':>{width}} └─" + "─" * (2 * len(values)))
    edited = list(content_changes) + [False] * (len(changes) - len(content_changes))
    marks = "".join((COMMIT_MARK if changed else CONTENT_MARK if edit else " ") + " "
                    for changed, edit in zip(changes, edited)).rstrip()
    lines.append(f"{'':>{width}}   {marks}")
    if any(tool_changes):
        lines.append(f"{'':>{width}}   " + "".join(("*" if changed else " ") + " " for changed in tool_changes).rstrip())
    return lines


def summary(values: Sequence[float | None], with_change: bool = True, runs: Sequence[Run] = ()) -> str:
    """"53.68 -> 53.21 µs (-0.9 %) over 7 runs, best 53.21": first and last run that timed the shape;
    without `with_change` (CPU runs) no percentage. With `runs` (one per value) the best is named, so the try
    can be found: "best 53.21 (run 6, 2026-11-26 05:40:27, @a7cbea65)", its number as the legends count,
    its time and the target's content hash as `log` shows them."""
    present = [v for v in values if v is not None]
    if not present:
        return "no run timed this shape"
    first, last = present[0], present[-1]
    change = f" ({100.0 * (last - first) / first:+.1f} %)" if len(present) > 1 and with_change else ""
    best = min(present)
    return f"{first:.2f} -> {last:.2f} µs{change} over {plural(len(present), 'run')}, best {best:.2f}{_which(values, best, runs)}"


def _which(values: Sequence[float | None], best: float, runs: Sequence[Run]) -> str:
    """" (run 6, 2026-11-26 05:40:27, @a7cbea65)": the first run of the best value; "" without the runs."""
    if len(runs) != len(values):
        return ""
    index = values.index(best)
    run = runs[index]
    digest = f", @{run.digest[:8]}" if run.digest else ""
    return f" (run {index + 1}, {time_shown(run.time)}{digest})"


_RUNS_NAMED = 3  # a log of many ad-hoc benches: the first ones, then a count


def geomean_note(trend: Trend) -> str | None:
    """Under the geomean's summary, where runs were left out of it: how many and why, naming each (its number,
    as the legends count, and the shapes it timed, by their labels as the summaries above name them); None where
    none was."""
    left_out = trend.geomean_left_out()
    if not left_out:
        return None
    compared = trend.geomean_shapes()
    named = "; ".join(f"run {index + 1}: {', '.join(shown_key(trend.problem, key) for key in trend.runs[index].bench.shapes)}"
                      for index in left_out[:_RUNS_NAMED])
    more = f"; and {len(left_out) - _RUNS_NAMED} more" if len(left_out) > _RUNS_NAMED else ""
    count = len(left_out)
    return (f"{plural(count, 'run')} left out of the geomean, as {'it' if count == 1 else 'they'}"
            f" timed other shapes than the {len(compared)} that most runs timed ({named}{more})")


COMMIT_MARK, CONTENT_MARK = "^", "~"  # one row: a new commit, or new content of the target on the same commit


def commit_legend(trend: Trend) -> list[str]:
    """One line per mark of the commits' row, in run order: "^", the run's number (1 = the oldest shown), its
    time and commit; "~", the run's number, the content hash it names as `log` does, and its commit as logged,
    "+dirty" kept (", as run 1": content an earlier run shown had, an edit undone)."""
    lines = []
    for index, (run, changed, edited) in enumerate(zip(trend.runs, trend.changes(), trend.content_changes())):
        if changed:
            lines.append(f"{COMMIT_MARK} run {index + 1}: {run.commit.removesuffix(commit_stamp.DIRTY)}"
                         f" ({time_shown(run.time)})")
        elif edited:
            earlier = [number for number, before in enumerate(trend.runs[:index], 1) if before.digest == run.digest]
            again = f", as run {earlier[-1]}," if earlier else ""
            lines.append(f"{CONTENT_MARK} run {index + 1}: content @{run.digest[:8]}{again} on {run.commit}"
                         f" ({time_shown(run.time)})")
    return lines


def tool_legend(trend: Trend) -> list[str]:
    """One line per "*": the run's number, the nvfp4ctl that timed it and the one that timed the run before,
    and its time."""
    return [f"* run {index + 1}: timed by {tool_named(run.tool)},"
            f" the run before by {tool_named(trend.runs[index - 1].tool)}"
            f" ({time_shown(run.time)})"
            for index, (run, changed) in enumerate(zip(trend.runs, trend.tool_changes())) if changed]
