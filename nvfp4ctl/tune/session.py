"""The parent's side of a tune: candidates through the compile pool, then the GPU pool, into the
search, the dispatch table and a report. Compiling and timing overlap: a candidate's shapes go to
the GPUs as soon as its build lands. Every answer is saved in the resume state as it arrives.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, as_completed, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from nvfp4ctl.tune.compile_pool import CompilePool, with_current_digests
from nvfp4ctl.tune.gpu_pool import GpuPool
from nvfp4ctl.tune.knobs import Config, KernelKnobs
from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.results import ERROR, UNSUPPORTED, BuildResult, Measurement, shape_key
from nvfp4ctl.tune.search import Duel, DuelKey, Request, SearchOutcome, SearchSettings, compile_only_builds, coordinate_descent, one_round
from nvfp4ctl.tune.state import SavedRun, TuneState
from nvfp4ctl.tune.table import DispatchTable, Shape, locked, read_table, write_table

CURRENT = "current table"  # the shipped build: no defines, the kernel reads its dispatch table
DEFAULTS = "kernel's defaults"  # the shipped build of a kernel without a dispatch table: its macros' defaults
NEW_TABLE = "new table"  # the shipped build again, after the winners were written

Progress = Callable[[str, int], None]  # (what is happening, pairs finished since the last call)
Work = Callable[[int], None]  # pairs (compile-only: builds) a step is about to answer, as it begins


def config_id(config: Config | None) -> str:
    return CURRENT if config is None else config.id


def shipped_label(knobs: KernelKnobs) -> str:
    """What the shipped build is called where it is shown: a kernel without a table has no "current table"."""
    return CURRENT if knobs.dispatch is not None else DEFAULTS


def shipped_row(knobs: KernelKnobs) -> str:
    """The shipped build's row: "kernel's defaults = start" where it is the start's build too."""
    return f"{DEFAULTS} = start" if knobs.shipped_is_start else shipped_label(knobs)


@dataclass
class TuneReport:
    knobs: KernelKnobs
    shapes: list[Shape]
    compile_only: bool
    configs: dict[str, Config | None] = field(default_factory=dict)
    builds: dict[str, BuildResult] = field(default_factory=dict)
    # the builds of candidates answered from the resume state alone, as that run saved them (not built here)
    resumed_builds: dict[str, BuildResult] = field(default_factory=dict)
    measurements: dict[tuple[str, Shape], Measurement] = field(default_factory=dict)
    search: SearchOutcome | None = None
    new_table: dict[Shape, Measurement] = field(default_factory=dict)
    # a changed shape's old shipped build, timed back to back with the new one (new_table)
    old_table: dict[Shape, Measurement] = field(default_factory=dict)
    written: list[Path] = field(default_factory=list)
    table_note: str | None = None  # why no table was written, or what to keep in mind
    resumed: int = 0  # (candidate, shape) results taken from the resume state (compile-only has none)
    resumed_from: SavedRun | None = None  # the run that saved them: finished, interrupted, or unknown
    notes: list[str] = field(default_factory=list)  # warnings about the run's setup (a resume state left alone)
    wall_s: float = 0.0
    gpu: str | None = None
    gpu_busy_s: dict[str, float] = field(default_factory=dict)
    stolen: int = 0  # tasks timed away from their shape's home GPU (balance at the end of a step)
    # compile-only: the shapes each candidate was built for (a shape's start is its dispatch-table entry)
    built_for: dict[str, list[Shape]] = field(default_factory=dict)
    starts: dict[Shape, Config] = field(default_factory=dict)  # compile-only: each shape's start
    # shapes the shipped build and the start both refused (the bindings' "unsupported shape"): left out of the
    # search and of `shapes`, each with the constraint it names
    unsupported: dict[Shape, str] = field(default_factory=dict)
    task: str | None = None  # the task.yml the shapes came from and why, as the headline names it
    # how each shape is shown (its problem's label, as bench's tables name it); the resume state and --json's
    # "key" keep shape_key, and the dispatch table its own entries
    labels: dict[Shape, str] = field(default_factory=dict)

    def current(self, shape: Shape) -> Measurement | None:
        return self.measurements.get((CURRENT, shape))

    def shown(self, shape: Shape) -> str:
        """The shape as tables and lines name it: the GEMV's "4096x7168 l=8", where shape_key's "4096x1x7168x8"
        read as a GEMM's M×N×K×L; shape_key where the problem's label is not known."""
        return self.labels.get(shape) or shape_key(shape)

    @property
    def shipped_build_rejected(self) -> bool:
        """Compile-only: the shipped build does not compile or spills (what makes such a run exit 1)."""
        shipped = self.builds.get(CURRENT)
        return shipped is not None and not shipped.usable


class Evaluator:
    """Answers (candidate, shape) requests: from the resume state, else build, check and time."""

    def __init__(self, compile_pool: CompilePool, gpu_pool: GpuPool | None, state: TuneState,
                 cases: dict[Shape, Any], report: TuneReport, on_progress: Progress,
                 on_work: Work = lambda count: None) -> None:
        self.compile_pool, self.gpu_pool, self.state = compile_pool, gpu_pool, state
        self.cases, self.report, self.on_progress, self.on_work = cases, report, on_progress, on_work
        # the configuration whose build is the shipped one (KernelKnobs.shipped_is_start): built and
        # timed once, as the shipped build
        self._shipped_start = report.knobs.defaults() if report.knobs.shipped_is_start else None
        # (program, shape) -> the candidate that ran it there, whose result its twins are given (BuildResult.same_program)
        self._ran: dict[tuple[tuple[str, str, str], Shape], str] = {}
        self._saved_builds: dict[str, BuildResult | None] = {}  # the resume state's builds, as _saved_build gives them

    def shipped(self, config: Config | None) -> Config | None:
        """The configuration as built: None (the shipped build) for the one whose build it is."""
        return None if config is not None and config == self._shipped_start else config

    def id_of(self, config: Config | None) -> str:
        return config_id(self.shipped(config))

    def build_all(self, configs: Sequence[Config | None], label: str) -> dict[str, BuildResult]:
        configs = [self.shipped(config) for config in configs]
        for config in configs:  # tables list candidates in the order asked, not the order built
            self.report.configs.setdefault(config_id(config), config)
        futures = {self.compile_pool.submit(config): config for config in dict.fromkeys(configs)}
        self.on_work(len(futures))
        self.on_progress(label, 0)  # the step starts now, so its heartbeat runs while the first build compiles
        for future in as_completed(futures):
            self._landed(futures[future], future.result())
            self.on_progress(label, 1)
        return {config_id(c): self.report.builds[config_id(c)] for c in futures.values()}

    def __call__(self, requests: list[Request] | list[tuple[Config | None, Shape]], label: str
                 ) -> dict[tuple[str, Shape], Measurement]:
        found: dict[tuple[str, Shape], Measurement] = {}
        todo: dict[str, list[Shape]] = {}
        configs: dict[str, Config | None] = {}
        asked: list[tuple[tuple[str, Shape], tuple[str, Shape]]] = []  # (as asked, as built)
        # what this step advances the progress by: each pair this run has no answer to yet, once
        self.on_work(len({(self.id_of(config), shape) for config, shape in requests} - self.report.measurements.keys()))
        self.on_progress(label, 0)  # the step starts now, not when its first build lands or its first shape is timed
        for asked_config, shape in requests:
            config = self.shipped(asked_config)
            key = (config_id(config), shape)
            asked.append(((config_id(asked_config), shape), key))
            self.report.configs.setdefault(key[0], config)
            if key in self.report.measurements:
                found[key] = self.report.measurements[key]
                continue
            saved = self.state.measurement(*key)
            if saved is not None and saved.same_code_as and not self._still_one_program(key[0], saved.same_code_as):
                saved = None  # given another's result where this nvfp4ctl tells the two builds apart: run itself
            if saved is not None:
                build = self._build_of(key[0])
                if key[0] not in self.report.builds and build is not None:
                    self.report.resumed_builds.setdefault(key[0], build)
                twin = self._ran_as(build, shape) if build is not None and not saved.same_code_as else None
                if twin is not None and twin != key[0] and saved.lasting and (twin, shape) in self.report.measurements:
                    # both timed by an nvfp4ctl that timed twins apart (formats 1 and 2): one program's results
                    # fold into the first's in the candidates' order, not the fastest draw of the noise
                    saved = replace(self.report.measurements[(twin, shape)], same_code_as=twin)
                found[key] = self.report.measurements[key] = saved
                self._remember_ran(key[0], shape, saved, build)
                self.on_progress(label, 1)
                continue
            if shape not in todo.setdefault(key[0], []):
                todo[key[0]].append(shape)
            configs[key[0]] = config
        builds = {self.compile_pool.submit(configs[cid]): cid for cid in todo}
        timing: dict[Future[Measurement], tuple[str, Shape]] = {}
        waiting: dict[tuple[str, Shape], list[str]] = {}  # a pair being timed: its twins, given its result
        for future in as_completed(builds):
            cid = builds[future]
            build = self._landed(configs[cid], future.result())
            for shape in todo[cid]:
                if build.usable and self.gpu_pool is not None:
                    twin = self._ran_as(build, shape)
                    if twin is None:
                        timing[self._time(cid, build, shape, label)] = (cid, shape)
                    elif (twin, shape) in self.report.measurements:
                        found[(cid, shape)] = self._as_twin(cid, twin, shape, label)
                    else:
                        waiting.setdefault((twin, shape), []).append(cid)
                else:  # a transient build failure is not saved: a resumed tune builds it again
                    found[(cid, shape)] = self._record(cid, shape, Measurement(build.status, message=build.message),
                                                       label, save=build.lasting)
        ran_here: list[tuple[str, Shape]] = []  # pairs timed in this step, each a program's on its shape
        while timing:
            done, _ = wait(timing, return_when=FIRST_COMPLETED)
            for future in done:
                cid, shape = timing.pop(future)
                found[(cid, shape)] = result = self._record(cid, shape, future.result(), label)
                ran_here.append((cid, shape))
                twins = waiting.pop((cid, shape), [])
                if result.lasting:
                    for other in twins:
                        found[(other, shape)] = self._as_twin(other, cid, shape, label)
                elif twins:  # a crash or a hang may be the machine's: one twin runs itself, the others wait on it
                    first, *rest = twins
                    timing[self._time(first, self.report.builds[first], shape, label)] = (first, shape)
                    if rest:
                        waiting[(first, shape)] = rest
        for cid, shape in ran_here:
            self._shown_as_first(cid, shape, list(todo), found)
        return found | {question: found[key] for question, key in asked}

    def _shown_as_first(self, ran: str, shape: Shape, order: list[str],
                        found: dict[tuple[str, Shape], Measurement]) -> None:
        """Which twin is timed is whichever build landed first; the result is shown, returned and saved as the
        first twin's in the step's order (they are one program), so the table, --json and the resume state
        read the same in every run, and the builds still go to the GPUs as they land."""
        result = self.report.measurements[(ran, shape)]
        twins = [cid for cid in order if cid != ran and (cid, shape) in found
                 and found[(cid, shape)].same_code_as == ran]
        if not result.lasting or not twins or order.index(twins[0]) > order.index(ran):
            return
        first = twins[0]
        self._ran[(self.report.builds[ran].same_program, shape)] = first
        for cid in [ran, *twins]:
            shown = replace(result, same_code_as="" if cid == first else first)
            found[(cid, shape)] = self.report.measurements[(cid, shape)] = shown
            self.state.record(cid, shape, shown)

    def _time(self, cid: str, build: BuildResult, shape: Shape, label: str) -> Future[Measurement]:
        """Checked and timed on the GPUs; the first candidate of its program to run on this shape."""
        if (program := build.same_program) is not None and self._ran_as(build, shape) is None:
            self._ran[(program, shape)] = cid
        assert self.gpu_pool is not None
        return self.gpu_pool.submit(build.artifact, self.cases[shape], f"{label}: {self.report.shown(shape)}", home=self.home(shape))

    def _ran_as(self, build: BuildResult, shape: Shape) -> str | None:
        """The candidate of the same program (BuildResult.same_program) that ran on this shape, or runs now, and
        whose result stands; None where there is none: this build runs itself."""
        twin = self._ran.get((build.same_program, shape)) if build.same_program is not None else None
        result = self.report.measurements.get((twin, shape)) if twin is not None else None
        if twin is None or (result is not None and not result.lasting):
            return None
        return twin

    def _as_twin(self, cid: str, twin: str, shape: Shape, label: str) -> Measurement:
        """`twin`'s result given to `cid`, which builds the same program: timed again it could differ by noise
        alone, and a lead won by noise is what the rematches exist to catch."""
        return self._record(cid, shape, replace(self.report.measurements[(twin, shape)], same_code_as=twin), label)

    def _build_of(self, cid: str) -> BuildResult | None:
        """`cid`'s build: this run's, else the resume state's."""
        return self.report.builds.get(cid) or self._saved_build(cid)

    def _saved_build(self, cid: str) -> BuildResult | None:
        """The build the resume state holds for `cid`, with its digests as this nvfp4ctl works them out: an
        earlier one's (an earlier format, or format 3 before the device data digest) worked out again from
        its build cache entry."""
        if cid not in self._saved_builds:
            build = self.state.build(cid)
            if build is not None and not (self.state.digests_current and build.data_digest):
                build = with_current_digests(build)
            self._saved_builds[cid] = build
        return self._saved_builds[cid]

    def _still_one_program(self, cid: str, twin: str) -> bool:
        """Whether a saved result `cid` was given from `twin` still stands: both builds are the same program
        as BuildResult.same_program tells now (an earlier nvfp4ctl compared the SASS and host code alone)."""
        builds = [self._build_of(c) for c in (cid, twin)]
        programs = [b.same_program if b is not None else None for b in builds]
        return programs[0] is not None and programs[0] == programs[1]

    def _remember_ran(self, cid: str, shape: Shape, result: Measurement, build: BuildResult | None) -> None:
        """A result this run did not make (the resume state's) that ran itself: its program's on this shape."""
        if build is not None and build.same_program is not None and not result.same_code_as and result.lasting:
            self._ran.setdefault((build.same_program, shape), cid)

    def rematch(self, duels: list[Duel], label: str) -> dict[DuelKey, tuple[Measurement, Measurement]]:
        """Each (current best, challenger, shape) timed back to back in one worker; saved for a resume.
        Both builds were timed before, so they are in this run's report or, resumed, cache hits."""
        if self.gpu_pool is None:
            raise RuntimeError("a rematch needs the GPU pool")
        found: dict[DuelKey, tuple[Measurement, Measurement]] = {}
        self.on_progress(label, 0)
        todo = []
        for current, challenger, shape in duels:
            saved = self.state.rematch(current.id, challenger.id, shape)
            if saved is not None:
                found[(current.id, challenger.id, shape)] = saved
            else:
                todo.append((current, challenger, shape))
        missing = {self.id_of(c): self.shipped(c) for duel in todo for c in duel[:2]
                   if self.id_of(c) not in self.report.builds}
        for future, config in [(self.compile_pool.submit(c), c) for c in missing.values()]:  # all at once
            self._landed(config, future.result())
        futures: dict[Future[tuple[Measurement, Measurement]], DuelKey] = {}
        for current, challenger, shape in todo:
            key = (current.id, challenger.id, shape)
            builds = [self.report.builds[self.id_of(current)], self.report.builds[self.id_of(challenger)]]
            if all(b.usable for b in builds):
                futures[self.gpu_pool.submit_pair(builds[0].artifact, builds[1].artifact, self.cases[shape],
                                                  f"{label}: {self.report.shown(shape)}", home=self.home(shape))] = key
            else:  # a build cache cleared and rebuilt differently meanwhile, say: nothing to time back to back
                bad = next(b for b in builds if not b.usable)
                failed = Measurement(ERROR, message=f"not timed: a build is now rejected ({bad.status}: {bad.message})")
                found[key] = (failed, failed)
                if bad.lasting:
                    self.state.record_rematch(*key, found[key])
        for future in as_completed(futures):
            key = futures[future]
            found[key] = future.result()
            self.state.record_rematch(*key, found[key])
        return found

    def home(self, shape: Shape) -> int:
        """The shape's home GPU index (its place among the tuned shapes; the pool takes it modulo)."""
        return list(self.cases).index(shape)

    def build(self, config: Config | None) -> BuildResult:
        """A candidate's build (the shipped one for None): this run's, else from the compile pool
        (a cache hit where it was built before, e.g. by the run this one resumes)."""
        config = self.shipped(config)
        return self.report.builds.get(config_id(config)) or self._landed(config, self.compile_pool.submit(config).result())

    def measure_shipped(self, shapes: Sequence[Shape], label: str, changed: frozenset[Shape] = frozenset(),
                        old: BuildResult | None = None) -> dict[Shape, Measurement]:
        """The shipped build compiled again (its table changed) and timed on every shape; not saved
        in the resume state, whose key was made from the old table. On a changed shape it is timed
        back to back with `old`, the shipped build of the old table (report.old_table), as a rematch:
        the speed-up the summary shows is then free of the clocks' drift since the current table was
        timed."""
        self.on_work(len(shapes))
        self.on_progress(label, 0)  # said before the shipped build compiles again
        self.compile_pool.forget(None)
        build = self.compile_pool.submit(None).result()
        results: dict[Shape, Measurement] = {}
        if not build.usable or self.gpu_pool is None:
            self.on_progress(label, len(shapes))
            return {shape: Measurement(build.status, message=build.message) for shape in shapes}
        futures: dict[Future[Any], Shape] = {}
        for s in shapes:
            task = f"{label}: {self.report.shown(s)}"
            if old is not None and old.usable and s in changed:
                futures[self.gpu_pool.submit_pair(old.artifact, build.artifact, self.cases[s], task, home=self.home(s))] = s
            else:
                futures[self.gpu_pool.submit(build.artifact, self.cases[s], task, home=self.home(s))] = s
        for future in as_completed(futures):
            shape, result = futures[future], future.result()
            if isinstance(result, tuple):
                self.report.old_table[shape], result = result
            results[shape] = result
            self.on_progress(label, 1)
        return results

    def _landed(self, config: Config | None, build: BuildResult) -> BuildResult:
        cid = config_id(config)
        self.report.configs.setdefault(cid, config)
        self.report.builds[cid] = build
        if build.lasting:
            self.state.record_build(cid, build)
        return build

    def _record(self, cid: str, shape: Shape, result: Measurement, label: str, save: bool = True) -> Measurement:
        self.report.measurements[(cid, shape)] = result
        if save:
            self.state.record(cid, shape, result)
        self.on_progress(label, 1)
        return result


def compile_only(knobs: KernelKnobs, start: dict[Shape, Config], evaluator: Evaluator,
                 only: frozenset[str] | None = None, arch: str | None = None) -> TuneReport:
    """Every candidate of one round, built and inspected (regs, smem, spills); nothing timed. The shapes the
    kernel's own `_unsupported` refuses (asked on the host, where `arch` is given) are named, as a timed tune
    marks them unsupported."""
    from nvfp4ctl.build.read_once import reading_once
    from nvfp4ctl.tune.host_refusals import host_refusals, refusal_notes, unsupported_function

    started = time.perf_counter()
    if arch is not None:
        with reading_once():  # the kernel and its headers, read for its API, its build inputs and its function once
            found = host_refusals(knobs.source, arch, list(start))
            evaluator.report.unsupported.update(found.refused)
            evaluator.report.notes += refusal_notes(found, unsupported_function(knobs.source), evaluator.report.shown)
    requests = one_round(knobs, start, only)
    configs = compile_only_builds(requests, evaluator.shipped)
    report = evaluator.report
    report.built_for[config_id(None)] = list(start)
    report.starts = dict(start)
    for config, shape in requests:
        report.built_for.setdefault(evaluator.id_of(config), []).append(shape)
    evaluator.build_all(configs, "compiling")
    if knobs.dispatch is not None:  # the table is never written here: say so, as a timed tune says why not
        report.table_note = f"{knobs.dispatch.name} left as it was: compile-only times nothing, so it has no winners to write"
    evaluator.report.wall_s = time.perf_counter() - started
    return evaluator.report


def tune(knobs: KernelKnobs, start: dict[Shape, Config], table: DispatchTable | None, evaluator: Evaluator,
         settings: SearchSettings, write: bool = True) -> TuneReport:
    started = time.perf_counter()
    report = evaluator.report
    # the shipped build and the start in one step, so the GPUs share both (the search finds the start done)
    found = evaluator([*((None, shape) for shape in start), *((config, shape) for shape, config in start.items())],
                      shipped_row(knobs) if knobs.shipped_is_start else f"{shipped_label(knobs)} and start")
    start = leave_out_unsupported(report, start, found)
    shapes = list(start)
    report.search = coordinate_descent(knobs, start, evaluator, settings,
                                       rematch=evaluator.rematch if evaluator.gpu_pool is not None else None)
    # finished before the table is written: a table that cannot be written (made read-only meanwhile, its
    # lock held) ends the run with the search done, and a rerun reuses it rather than "resumes" it
    evaluator.state.finish(stopped_by_budget_s=settings.budget_s if report.search.stopped else None)
    if knobs.dispatch is None or table is None:
        report.table_note = f"{knobs.source.name} names no dispatch file (`// nvfp4ctl:dispatch file=NAME`): winners not written"
    else:
        new = winners_table(knobs, table, report.search)
        if new.plan == table.plan and new.kernel == table.kernel:
            report.table_note = f"{knobs.dispatch.name} unchanged: the current table won everywhere"
        elif not write:
            report.table_note = f"--no-write: {knobs.dispatch.name} left as it was"
        else:
            old = evaluator.build(None)  # the shipped build of the old table, before the table changes
            with locked(knobs.dispatch):  # merged into the table as it is now: another tune may have written since
                now = read_table(knobs.dispatch, knobs)
                report.written = write_table(knobs.dispatch, winners_table(knobs, now, report.search), knobs)
            changed = frozenset(s for s in shapes if report.search.best[s] != report.search.start[s])
            report.new_table = evaluator.measure_shipped(shapes, NEW_TABLE, changed, old)
    report.wall_s = time.perf_counter() - started
    return report


def leave_out_unsupported(report: TuneReport, start: dict[Shape, Config],
                          found: dict[tuple[str, Shape], Measurement]) -> dict[Shape, Config]:
    """The starts of the shapes the kernel takes. A shape the shipped build and the start both refuse is one
    the kernel does not take (the constraint comes from its own `_unsupported`, not from a knob the search
    varies): every candidate would be thrown out there, and a kernel-scope value, judged by its geomean over
    every shape, could never win. Such a shape is said once (report.notes) and the others are tuned; where
    none is left, there is nothing to tune (UsageError)."""
    for shape, config in start.items():
        shipped, started = found[(CURRENT, shape)], found[(config.id, shape)]
        if shipped.status == UNSUPPORTED and started.status == UNSUPPORTED:
            report.unsupported[shape] = shipped.message
    if not report.unsupported:
        return start
    kept = {shape: config for shape, config in start.items() if shape not in report.unsupported}
    refused = "; ".join(f"{report.shown(shape)} ({why})" for shape, why in report.unsupported.items())
    if not kept:
        raise UsageError(f"the kernel does not take any shape to tune: {refused}")
    report.shapes = list(kept)
    report.notes += [f"the kernel does not take {report.shown(shape)} ({why}): left out, the other "
                     f"{'shape' if len(kept) == 1 else f'{len(kept)} shapes'} tuned"
                     for shape, why in report.unsupported.items()]
    return kept


def winners_table(knobs: KernelKnobs, table: DispatchTable, search: SearchOutcome) -> DispatchTable:
    """`table` with every tuned shape's plan knobs replaced and the kernel-scope knobs the search
    changed set; the rest stays as in `table`, which is the file as it is when the winners are
    written (another tune's entries, its kernel knobs included, are kept)."""
    shapes = [s for s in search.best if search.best_result[s].ok]
    new = DispatchTable(plan={s: dict(v) for s, v in table.plan.items()}, kernel=dict(table.kernel),
                        has_kernel_block=table.has_kernel_block, kernel_comments=dict(table.kernel_comments),
                        entry_names=dict(table.entry_names))
    if not shapes:
        return new
    first, start = search.best[shapes[0]], search.start[shapes[0]]  # one kernel set for every shape
    for knob in knobs.of_scope("kernel"):
        if first[knob.name] != start[knob.name]:
            new.kernel[knob.name] = first[knob.name]
    new.kernel = {name: value for name, value in new.kernel.items() if value != knobs.by_name(name).default}
    for shape in shapes:
        new.plan[shape] = {knob.name: search.best[shape][knob.name] for knob in knobs.of_scope("plan")}
    return new
