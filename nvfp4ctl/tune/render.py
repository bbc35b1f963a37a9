"""Tables and lines for `tune` as plain rows (the command prints them through the console)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from nvfp4ctl.kernel_cells import byte_size, spills_text
from nvfp4ctl.tune import kernel_compare
from nvfp4ctl.tune.knobs import Config
from nvfp4ctl.tune.results import COMPILE_ERROR, BuildResult, Measurement, Ranked, geomean, rank, shape_key
from nvfp4ctl.tune.session import CURRENT, TuneReport, shipped_label, shipped_row
from nvfp4ctl.tune.table import Shape
from nvfp4ctl.words import plural, seconds_text

TOP = 5  # candidates shown per shape unless -v


def _label(report: TuneReport, cid: str, base: Config) -> str:
    config = report.configs.get(cid)
    return shipped_row(report.knobs) if config is None else config.diff(base, report.knobs)


def _compile_label(report: TuneReport, cid: str, base: Config) -> str:
    """A shape's start reads "start", with its dispatch-table entry where that differs from the declared
    defaults ("start (MAX_CLUSTER_K=4)"): alone, "MAX_CLUSTER_K=4" read as a candidate of a knob not asked for."""
    label = _label(report, cid, base)
    if report.configs.get(cid) not in report.starts.values() or label == "start":
        return label
    return f"start ({label})"


@dataclass(frozen=True)
class CompiledBuilds:
    """A compile-only report's builds in the order they were asked for (the current table, the start, one
    knob at a time) and the build every row is compared with: worked out once for the table and its notes."""

    listed: list[tuple[str, BuildResult]]
    ref: kernel_compare.Reference | None


def compiled_builds(report: TuneReport) -> CompiledBuilds:
    listed = [(cid, build) for cid in report.configs if (build := report.builds.get(cid)) is not None]
    return CompiledBuilds(listed, kernel_compare.reference(listed))


def compile_table(report: TuneReport, compiled: CompiledBuilds | None = None) -> tuple[list[str], list[list[object]]]:
    """One row per build. Where builds hold several kernels, regs and static smem are one kernel's in
    every row (kernel_note names it), and "kernels changed" counts those that differ from its build."""
    base = report.knobs.defaults()
    compiled = compiled or compiled_builds(report)
    ref = compiled.ref
    columns = ["candidate", "for", "regs", "static smem", "stack", "spills", "compile", "verdict"]
    if ref is not None:
        columns.insert(4, "kernels changed")
    rows = []
    same = same_code_as_start(report)
    for cid, build in compiled.listed:
        compile_text = "cached" if build.cache_hit else f"{build.compile_s:.1f} s"
        built = build.status != COMPILE_ERROR  # a failed compile has no resources to show
        figures, marked = _figures(ref, build)
        row: list[object] = [_compile_label(report, cid, base), _shapes_text(report, report.built_for.get(cid, [])),
                             (f"{figures[0]}{marked}" if marked else figures[0]) if built and figures else "-",
                             f"{byte_size(figures[1])}{marked}" if built and figures else "-",
                             byte_size(build.stack_bytes) if built else "-",
                             spills_text(build.spill_bytes) if built else "-", compile_text,
                             ("ok, same code as start" if cid in same else "ok") if build.usable
                             else f"rejected: {build.status}"]
        if ref is not None:
            found = kernel_compare.changes(ref, build)
            row.insert(4, "-" if cid == ref.config_id or found is None else found.cell())
        rows.append(row)
    return columns, rows


NEW_MARK = " (new)"  # a row's figures are its new kernel's: the reference's kernel is not in that build


def _figures(ref: kernel_compare.Reference | None, build: BuildResult) -> tuple[tuple[int, int] | None, str]:
    """(registers, static smem) a row shows and its mark: the build's own where builds hold one kernel, else
    the reference's kernel's, else, where a knob renamed it (a template argument), the build's new kernel
    with the most registers, marked NEW_MARK; the row read '-' though --json gave that kernel's 254 regs."""
    if ref is None:
        return (build.registers, build.shared_bytes), ""
    found = kernel_compare.shown(ref, build)
    if found is not None:
        return found, ""
    new = kernel_compare.new_heaviest(ref, build)
    return (None, "") if new is None else ((new[1], new[2]), NEW_MARK)


def kernel_note(report: TuneReport, compiled: CompiledBuilds | None = None) -> str | None:
    """Whose regs and static smem the compile table shows, where builds hold several kernels: the sm_90a
    file's row read 208 and 32.0 KiB (its direct mma.sync kernel's) until a candidate changed that
    kernel, then 168 and 0 B (a wgmma kernel's), as if one kernel had changed. None: one kernel each."""
    compiled = compiled or compiled_builds(report)
    ref = compiled.ref
    if ref is None:
        return None
    label = _compile_label(report, ref.config_id, report.knobs.defaults())
    rows = [_figures(ref, build) for _, build in compiled.listed if build.status != COMPILE_ERROR]
    absent = (["'-' where a build has no such kernel"] if any(figures is None for figures, _ in rows) else []) + (
        [f"'{NEW_MARK.strip()}' where a build has no such kernel but new ones: the new one with the most registers"]
        if any(marked for _, marked in rows) else [])
    absent_text = f" ({'; '.join(absent)})" if absent else ""
    return (f"regs and static smem are those of {ref.kernel} in every row, the most registers of the"
            f" {len(ref.kernels)} kernels of {label}'s build{absent_text}; kernels changed: how many of them have"
            " other regs or static smem in that row's build")


def kernel_changes(report: TuneReport, limit: int | None = kernel_compare.NAMES_SHOWN,
                   compiled: CompiledBuilds | None = None) -> list[str]:
    """One line per build whose kernels differ from the reference build's: which, and how."""
    compiled = compiled or compiled_builds(report)
    ref = compiled.ref
    if ref is None:
        return []
    base = report.knobs.defaults()
    against = _compile_label(report, ref.config_id, base)
    lines = []
    for cid, build in compiled.listed:
        found = kernel_compare.changes(ref, build)
        if cid != ref.config_id and found:
            lines.append(f"{_compile_label(report, cid, base)} vs {against}: {found.line(limit)}")
    return lines


def smem_note(report: TuneReport, compiled: CompiledBuilds | None = None) -> str | None:
    """What the static smem column cannot show: ptxas -v and cuobjdump count a kernel's __shared__ arrays
    alone, never the dynamic shared memory it asks for at launch (cudaFuncSetAttribute, the launch's third
    argument). A knob sizing pipeline stages there (STAGES_SHARED_A: about 41 KB a stage) left every row
    at the same static 32.0 KiB, as if it changed nothing. None where no candidate built."""
    ref = (compiled or compiled_builds(report)).ref
    if ref is None:
        sizes = {build.shared_bytes for build in report.builds.values() if build.status != COMPILE_ERROR}
        whose, where = "every build's static smem is", ""
    else:  # the table's column: one kernel's in every row
        found = [kernel_compare.shown(ref, build) for build in report.builds.values() if build.status != COMPILE_ERROR]
        sizes = {figures[1] for figures in found if figures is not None}
        whose = f"the static smem of {ref.kernel} is"
        where = " in every build that has it" if None in found else " in every build"
    if not sizes:
        return None
    one = len(sizes) == 1 and len(report.builds) > 1
    same = f"{whose} {byte_size(next(iter(sizes)))}{where}; " if one else ""
    return (f"{same}static smem is the __shared__ arrays ptxas counts; the dynamic shared memory a kernel asks for"
            " at launch (its pipeline stages, say) is set at run time and no compiler report shows it,"
            " so a knob that sizes it changes no column here")


def _shapes_text(report: TuneReport, shapes: list[Shape]) -> str:
    """Which shapes a compile-only candidate stands for: a label of declared defaults plus a shape's
    dispatch-table entry ("DIRECT_MAX_UNITS=512") means nothing without them."""
    distinct = list(dict.fromkeys(shapes))
    if len(distinct) == len(report.shapes) > 1:
        return "every shape"
    return ", ".join(report.shown(s) for s in distinct[:2]) + (f" +{len(distinct) - 2}" if len(distinct) > 2 else "")


def built_apart(report: TuneReport) -> str | None:
    """Why a kernel without a table has two rows for one configuration, its build without -D and the start
    (KernelKnobs.shipped_differs); None where they are one build, or the kernel reads a table."""
    knobs = report.knobs
    if knobs.dispatch is not None or knobs.shipped_is_start:
        return None
    return knobs.shipped_differs


def apart_line(report: TuneReport) -> str | None:
    reason = built_apart(report)
    return None if reason is None else f"{shipped_label(report.knobs)} and start are built apart: {reason}"


SAME_CODE = ("builds the same device code (the same SASS) as the start: a knob only the host code reads still"
             " changes the launch, so it is timed")


def same_code_as_start(report: TuneReport) -> set[str]:
    """Compile-only candidates whose SASS is byte for byte their start's (BuildResult.code_digest), for each
    shape they were built for. The digest covers device code only: a knob only the host code reads (a grid
    size, a split count, the dynamic smem asked at launch, which of the kernels compiled anyway to launch)
    builds the same SASS and may still run faster, so this says what was built, not that timing is useless."""
    starts = {shape: (CURRENT if config.id not in report.builds else config.id) for shape, config in report.starts.items()}
    same = set()
    for cid, build in report.builds.items():
        shapes = report.built_for.get(cid, [])
        if cid in starts.values() or cid == CURRENT or not build.code_digest or not shapes:
            continue
        start_builds = [report.builds.get(starts[shape]) for shape in shapes if shape in starts]
        if start_builds and all(b is not None and b.code_digest == build.code_digest for b in start_builds):
            same.add(cid)
    return same


def same_code_lines(report: TuneReport) -> list[str]:
    """One line per candidate that builds its start's device code."""
    base = report.knobs.defaults()
    same = same_code_as_start(report)
    return [f"{_compile_label(report, cid, base)} {SAME_CODE}" for cid in report.configs if cid in same]


def rejections(report: TuneReport) -> list[str]:
    """One line per rejected build: the candidate and the compiler's reason."""
    base = report.knobs.defaults()
    return [f"{_compile_label(report, cid, base)}: {build.status}: {build.message.splitlines()[0]}"
            for cid, build in _in_candidate_order(report, report.builds).items() if not build.usable and build.message]


def ranked(report: TuneReport, shape: Shape) -> list[Ranked]:
    assert report.search is not None
    base = report.search.start[shape]
    entries = [Ranked(_label(report, cid, base), cid, result)
               for (cid, s), result in report.measurements.items() if s == shape]
    return rank(entries)


def ranked_table(report: TuneReport, shape: Shape, limit: int | None = TOP) -> tuple[list[str], list[list[object]], int]:
    """The shape's candidates, fastest first; returns the rows shown and how many were left out."""
    assert report.search is not None
    current = report.current(shape)
    entries = ranked(report, shape)
    shown = entries if limit is None else entries[:limit] + [e for e in entries[limit:] if e.config_id == CURRENT]
    columns = ["#", "candidate", "µs", "±", "vs current", "on", "verdict"]
    rows = []
    for position, entry in enumerate(entries, start=1):
        if entry not in shown:
            continue
        result = entry.result
        timed = result.ok
        speed = f"{current.us / result.us:.3f}x" if timed and current and current.ok else ""
        verdict = "ok" if timed else f"rejected: {result.status}" + (f" ({result.message})" if result.message else "")
        given = bool(result.same_code_as)  # not run itself: its spread and GPU are the other's run, not its own
        if given:  # the table says whose result it shows
            verdict += f", {twin_note(report, result, report.search.start[shape])}"
        rows.append([position if timed else "-", entry.label, f"{result.us:.2f}" if timed else "",
                     ("-" if given else f"{result.err_us:.2f}") if timed else "", speed,
                     "-" if given else result.gpu, verdict])
    return columns, rows, len(entries) - len(shown)


def twin_note(report: TuneReport, result: Measurement, base: Config) -> str:
    """Where a candidate was given the result of another building the same program (the same SASS, device
    image data and host code: BuildResult.same_program), rather than timed apart by noise: says whose result it is."""
    return f"same device code as {_label(report, result.same_code_as, base)} (host code too): its result"


def summary_rows(report: TuneReport) -> tuple[list[str], list[list[object]], float | None]:
    """Per shape: the current table, the winner, the shipped build with the new table; geomean speed-up.
    A shape whose winner is the start (its current table entry) has gained nothing: 1.000x, however
    far apart its two builds were timed (1-3 % by the clocks' drift alone). A changed shape's speed-up
    is the old shipped build against the new one, timed back to back, where that pair was timed."""
    assert report.search is not None
    columns = ["shape", "current µs", "winner µs", "new table µs", "speed-up", "winner"]
    rows, ratios = [], []
    for shape in report.shapes:
        current = report.current(shape)
        best = report.search.best_result[shape]
        after = report.new_table.get(shape)
        final = after if after is not None else best
        unchanged = report.search.best[shape] == report.search.start[shape]
        before = report.old_table.get(shape) or current
        ratio = (1.0 if unchanged else before.us / final.us) if before and before.ok and final.ok else None
        if ratio is not None:
            ratios.append(ratio)
        rows.append([report.shown(shape), _us(current), _us(best), _us(after) if after is not None else "-",
                     f"{ratio:.3f}x" if ratio else "-",
                     report.search.best[shape].diff(report.search.start[shape], report.knobs) if best.ok else "none passed"])
    return columns, rows, geomean(ratios) if ratios else None


def rematch_table(report: TuneReport) -> tuple[list[str], list[list[object]]]:
    """Every first-pass lead timed again back to back against the current best, and whether it held
    (a kernel knob's value once for all shapes: by the geomean of its rows, shown in the verdict)."""
    assert report.search is not None
    columns = ["step", "shape", "challenger", "current µs", "challenger µs", "gain", "verdict"]
    rows = []
    for r in report.search.rematches:
        timed = r.current.ok and r.challenger.ok
        gain = f"{r.current.us / r.challenger.us - 1:+.1%}" if timed else "-"
        if r.kept:
            verdict = "kept"
        elif not r.challenger.ok:
            verdict = f"dropped: {r.challenger.status}" + (f" ({r.challenger.message})" if r.challenger.message else "")
        else:
            verdict = "dropped: the lead did not hold"
        if r.joint_gain is not None:
            verdict += f" (all shapes: {r.joint_gain:+.1%})" if math.isfinite(r.joint_gain) else " (all shapes)"
        if r.attempt > 1:
            verdict += f"; runner-up {r.attempt - 1}, after the faster lead{'s' if r.attempt > 2 else ''} lost"
        rows.append([r.step, report.shown(r.shape), _label(report, r.challenger_id, report.search.start[r.shape]),
                     _us(r.current), _us(r.challenger), gain, verdict])
    return columns, rows


def leads_held(report: TuneReport) -> tuple[int, int]:
    """(leads kept, leads rematched): a plan knob's lead per shape, a kernel knob's once for all shapes."""
    if report.search is None:
        return 0, 0
    leads: dict[tuple[str, ...], bool] = {}
    for r in report.search.rematches:
        # a kernel step rematches one value per attempt, over every shape (their configs differ where
        # plan entries do)
        key = (r.step, str(r.attempt)) if r.joint_gain is not None else (r.step, r.challenger_id, shape_key(r.shape))
        leads[key] = r.kept
    return sum(leads.values()), len(leads)


def _us(result: Measurement | None) -> str:
    if result is None:
        return "-"
    return f"{result.us:.2f}" if result.ok and not math.isinf(result.us) else result.status


def counts(report: TuneReport) -> tuple[int, int]:
    """(candidate builds, of which rejected or failing somewhere): those built in this run and those whose
    results came from the resume state."""
    builds = _all_builds(report)
    # a shape the kernel does not take (left out of the search) rejects no candidate: none takes it
    failing = {cid for (cid, shape), result in report.measurements.items()
               if not result.ok and shape not in report.unsupported}
    failing |= {cid for cid, build in builds.items() if not build.usable}
    return len(builds.keys() | {cid for cid, _ in report.measurements}), len(failing)


def _all_builds(report: TuneReport) -> dict[str, BuildResult]:
    return _in_candidate_order(report, {**report.resumed_builds, **report.builds})


def _in_candidate_order(report: TuneReport, builds: dict[str, BuildResult]) -> dict[str, BuildResult]:
    """`builds` in the order the candidates were asked for (report.configs), as the tables list them: builds land
    in the order they finish compiling."""
    asked = {cid: builds[cid] for cid in report.configs if cid in builds}
    return asked | builds


def result_line(report: TuneReport) -> str:
    """One line for the console and the run log."""
    if report.compile_only:
        rejected = sum(not b.usable for b in report.builds.values())
        line = f"compile-only: {plural(len(report.builds), 'build')}, {rejected} rejected"
        if report.shipped_build_rejected:  # what makes the exit 1 (commands/tune.outcome_of)
            line += f"; {_shipped_build(report)} is rejected ({report.builds[CURRENT].status})"
        return line
    builds, failing = counts(report)
    _, _, speedup = summary_rows(report)
    where = f", written to {', '.join(p.name for p in report.written)}" if report.written else ""
    gain = f"geomean {speedup:.3f}x over the {shipped_label(report.knobs)}{where}" if speedup else "no speed-up measured"
    kept, leads = leads_held(report)
    held = f"; {kept} of {leads} leads held in rematches" if leads else ""
    refused = (f" ({len(report.unsupported)} more left out: the kernel does not take"
               f" {', '.join(report.shown(s) for s in report.unsupported)})" if report.unsupported else "")
    return (f"{plural(len(report.shapes), 'shape')}{refused}, {plural(builds, 'build')} ({failing} rejected somewhere):"
            f" {gain}{held}")


def resumed_line(report: TuneReport) -> str | None:
    """Where the results taken from the resume state came from: a finished run's are reused, an
    interrupted run's resumed; never "resumed" where nothing was interrupted. Compile-only takes
    nothing from there: it builds every candidate again, and says how many the build cache had."""
    if report.compile_only:
        cached = sum(build.cache_hit for build in report.builds.values())
        return (f"{cached} of {plural(len(report.builds), 'build')} from the build cache"
                " (built before with the same sources and -D values)") if cached else None
    if not report.resumed:
        return None
    found = f"{report.resumed} (candidate, shape) results"
    saved = report.resumed_from
    when = f", saved {_when(saved.saved_at)}" if saved is not None and saved.saved_at else ""
    if saved is None or saved.finished is None:  # a state written before runs were marked finished
        return f"reused: {found} from an earlier run of this tune{when}"
    if not saved.finished:
        return f"resumed: {found} from an interrupted run{when}"
    if saved.stopped_by_budget_s is not None:  # it ended, but its search did not: this run carries it on
        return f"resumed: {found} from a run stopped by its --budget of {seconds_text(saved.stopped_by_budget_s)}{when} (--fresh times them again)"
    return f"reused: {found} from a finished run{when} (--fresh times them again)"


def _when(stamp: str) -> str:
    """"2026-11-26T14:03:00Z" -> "2026-11-26 14:03 UTC" (the run log's stamps, as `log` shows them)."""
    return stamp.replace("T", " ")[:16] + " UTC"


def _shipped_build(report: TuneReport) -> str:
    return "the kernel's own build (its defaults)" if report.knobs.dispatch is None else f"the {CURRENT}'s own build"


# --json's "version", as lint's and dump's documents carry one: raised when a key changes meaning or goes away
JSON_VERSION = 1


def to_dict(report: TuneReport) -> dict:
    """The report as JSON-ready data (--json): builds, and per shape the ranking and the winner."""
    base = report.knobs.defaults()
    compiled = compiled_builds(report) if report.compile_only else None
    same = same_code_as_start(report)
    payload: dict = {
        "version": JSON_VERSION, "kernel": str(report.knobs.source), "task": report.task, "compile_only": report.compile_only, "gpu": report.gpu,
        "wall_s": report.wall_s, "gpu_busy_s": report.gpu_busy_s, "stolen": report.stolen, "resumed": report.resumed,
        "resumed_from": _resumed_from(report),
        "result": result_line(report), "written": [str(p) for p in report.written], "table_note": report.table_note,
        "smem_note": smem_note(report, compiled) if compiled else None,
        "kernel_note": kernel_note(report, compiled) if compiled else None,
        "builds": [{"candidate": _compile_label(report, cid, base), "config": _values(report, cid),
                    "built_apart": built_apart(report) if cid == CURRENT else None,
                    "resumed": cid not in report.builds,
                    "same_code_as_start": cid in same if report.compile_only else None} | _build(build)
                   for cid, build in _all_builds(report).items()],
    }
    if report.search is None:
        return payload
    payload["stopped"] = report.search.stopped
    payload["unsupported_shapes"] = [{"shape": list(shape), "key": shape_key(shape), "label": report.shown(shape),
                                      "constraint": why}
                                     for shape, why in report.unsupported.items()]
    shapes = []
    for shape in report.shapes:
        after = report.new_table.get(shape)
        shapes.append({
            "shape": list(shape), "key": shape_key(shape), "label": report.shown(shape),
            "current": _result(report.current(shape)), "winner": dict(report.search.best[shape].items),
            "winner_result": _result(report.search.best_result[shape]), "new_table": _result(after),
            "old_table_back_to_back": _result(report.old_table.get(shape)),
            "ranked": [{"candidate": e.label, "config": _values(report, e.config_id)} | e.result.to_dict()
                       | {"same_code_as": _label(report, e.result.same_code_as, report.search.start[shape])
                          if e.result.same_code_as else None}
                       for e in ranked(report, shape)],
        })
    payload["shapes"] = shapes
    payload["rematches"] = [{"step": r.step, "shape": list(r.shape), "current": _values(report, r.current_id),
                             "challenger": _values(report, r.challenger_id), "current_result": r.current.to_dict(),
                             "challenger_result": r.challenger.to_dict(), "kept": r.kept, "attempt": r.attempt,
                             "all_shapes_gain": r.joint_gain if r.joint_gain is not None and math.isfinite(r.joint_gain)
                             else None}
                            for r in report.search.rematches]
    return payload


def _resumed_from(report: TuneReport) -> dict | None:
    """The run the resumed results came from: finished true/false (null: not recorded), saved_at (UTC),
    stopped_by_budget_s (the --budget that stopped its search before it was done, else null)."""
    saved = report.resumed_from
    return None if not report.resumed or saved is None else {
        "finished": saved.finished, "saved_at": saved.saved_at, "stopped_by_budget_s": saved.stopped_by_budget_s}


# what a build that did not compile has no value for: null, not the 0 a build using none would show
_RESOURCES = ("registers", "shared_bytes", "stack_bytes", "spill_bytes", "kernel")


def _build(build: BuildResult) -> dict:
    found = build.to_dict()
    return found if build.status != COMPILE_ERROR else found | dict.fromkeys(_RESOURCES)


def _values(report: TuneReport, cid: str) -> dict | None:
    config = report.configs.get(cid)
    return None if config is None else dict(config.items)


def _result(result: Measurement | None) -> dict | None:
    return None if result is None else result.to_dict()
