"""A bench report as table rows and plain sentences (strings only; the command prints them)."""

from __future__ import annotations

from collections.abc import Mapping

from nvfp4ctl.bench.call_progress import duration_text
from nvfp4ctl.bench.history import Comparison, tool_named
from nvfp4ctl.bench.results import SOL_LABEL, STEP_WORDS, BenchReport
from nvfp4ctl.bench.stopping import CONVERGED
from nvfp4ctl.words import plural, seconds_text

Rows = list[list[str]]
IDLE_SHARE = 0.1  # idle GPU time above this share of the leaderboard time is worth a sentence


def _us(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.2f}" if abs(value) < 1000 else f"{value:.0f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


# NVFP4CTL_DEVICE=cpu: said once, in place of the comparison with earlier runs
CPU_CAVEAT = ("CPU times (NVFP4CTL_DEVICE=cpu) say nothing of the leaderboard's: no speed-of-light or TFLOP/s"
              " figures, and no faster/slower against earlier benches")


def timing_table(report: BenchReport) -> tuple[list[str], Rows]:
    if report.on_cpu:  # a GPU's rates and ceilings beside a CPU time would read as a measurement of the kernel
        rows = [[s.shown, _us(s.stats.mean), _us(s.stats.err), _us(s.stats.best), _us(s.stats.worst), str(s.stats.runs)]
                for s in report.shapes]
        return ["shape", "CPU mean µs", "± err", "best", "worst", "runs"], rows + _last_rows(report, 6)
    roofline = report.roofline
    columns = ["shape", "mean µs", "± err", "best", "worst", "runs", "TFLOP/s", "TB/s", f"% SOL {SOL_LABEL}",
               "% this GPU"]
    rows = [
        [s.shown, _us(s.stats.mean), _us(s.stats.err), _us(s.stats.best), _us(s.stats.worst), str(s.stats.runs),
         f"{s.tflops:.0f}", f"{s.tbps:.2f}", _pct(s.pct_sol),
         _pct(s.pct_ceiling(roofline)) + f" ({s.floor_us(roofline)[1]})" if roofline else "-"]
        for s in report.shapes
    ]
    return columns, rows + _last_rows(report, len(columns))


def _last_rows(report: BenchReport, width: int) -> Rows:
    """The geomean row, or for a bench stopped at a shape, that shape marked with its verdict where it has
    no row of its own, and the geomean only over the whole set."""
    rows = []
    stopped = report.stopped
    if stopped is not None and stopped.key not in {s.key for s in report.shapes}:
        rows.append([stopped.shown, stopped.verdict, *[""] * (width - 2)])
    if report.partial or not report.shapes:
        return rows
    mean, err = _us(report.geomean_us), _us(report.geomean_err_us)
    if report.on_cpu:
        return [*rows, ["geomean", mean, err, *[""] * (width - 3)]]
    sol = report.sol_geomean_us
    return [*rows, ["geomean", mean, err, "", "", "", "", "", _pct(100.0 * sol / report.geomean_us if sol else None), ""]]


def stopped_line(report: BenchReport) -> str:
    """What a bench stopped by an error kept (`report`, BenchStopped's, names the shape it stopped at): the
    shapes timed before it and why there is no geomean, or, stopped while profiling after every shape was
    timed, that the device times end there."""
    stopped = report.stopped
    assert stopped is not None, "only a stopped bench's report has a stopped line"
    doing = f"{STEP_WORDS[stopped.step]} it"
    timed = f"{len(report.shapes)} of {plural(stopped.planned, 'shape')} timed"
    if report.partial:
        return f"stopped at {stopped.shown} ({stopped.verdict} while {doing}): {timed}, no geomean over a partial set"
    return f"stopped at {stopped.shown} ({stopped.verdict} while {doing}): {timed}; no device time from there on"


def device_table(report: BenchReport) -> tuple[list[str], Rows]:
    columns = ["shape", "leaderboard µs", "device µs", "idle µs", "CPU issue µs", "kernels/call", "main kernel"]
    rows = []
    for s in report.shapes:
        device = s.device
        main = device.top_kernels[0][0] if device and device.top_kernels else "-"
        rows.append([s.shown, _us(s.stats.mean), _us(device.us_per_call if device else None), _us(s.gap_us),
                     _us(s.issue_us), f"{device.kernels_per_call:g}" if device else "-", _short(main)])
    return columns, rows


def comparison_title(comparison: Comparison) -> str:
    entry = comparison.entry
    code = "same code" if comparison.same_code else "code changed since"
    return f"vs the previous bench of this target on this GPU ({entry.time}, commit {entry.commit}, {code}{_tools(comparison)})"


def _tools(comparison: Comparison) -> str:
    """Where another nvfp4ctl timed the previous bench, which: a change may be the tool's, not the code's."""
    if not comparison.by_another_tool:
        return ""
    now = f", this one by {comparison.tool}" if comparison.tool else ""
    return f"; previous run by {tool_named(comparison.entry.tool)}{now}"


def comparison_table(comparison: Comparison, labels: Mapping[str, str] | None = None) -> tuple[list[str], Rows]:
    """`labels`: shape key -> how the timing table names it (BenchReport.labels), the deltas being by key."""
    columns = ["shape", "before µs", "now µs", "change", "noise", "verdict"]
    rows = [[(labels or {}).get(d.name, d.name), _us(d.before.mean), _us(d.after.mean), f"{d.pct:+.2f}%",
             f"±{100.0 * d.noise / d.before.mean:.2f}%", d.verdict] for d in comparison.deltas]
    return columns, rows


def notes(report: BenchReport) -> list[str]:
    """Plain sentences about what the numbers mean; one per finding."""
    lines = [f"no ceilings for this GPU: {report.calibration_error}"] if report.calibration_error else []
    if report.ceilings is not None and report.ceilings.roofline_withheld and report.shapes:
        lines.append(report.ceilings.roofline_withheld)
    for s in report.shapes:
        if s.raw.get("profiler_error"):
            lines.append(f"{s.shown}: no device time, the profiler failed: {s.raw['profiler_error']}")
        if s.raw.get("host_stalls"):
            lines.append(f"{s.shown}: {s.raw['host_stalls']} repeat(s) timed again: the CPU paused while issuing the "
                         "batch, longer than the hold before the clock started (the leaderboard's L2 clear hides "
                         "such pauses).")
        if s.device is None or s.gap_us is None:
            continue
        idle = s.gap_us > IDLE_SHARE * s.stats.mean
        if s.host_bound:
            shown = (f"and it shows: the GPU idles {s.gap_us:.2f} µs per call in the timed window" if idle else
                     "the leaderboard hides it (its 64 GB L2 clear lets the CPU queue all 50 calls before the "
                     "clock starts), but called in a loop, as in a model, it runs at the CPU's pace")
            lines.append(f"{s.shown} is host-bound: the CPU needs {s.issue_us:.2f} µs to issue a call the GPU runs "
                         f"in {s.device.us_per_call:.2f} µs; {shown}. Make the Python wrapper thinner.")
        elif idle:
            lines.append(f"{s.shown}: the GPU idles {s.gap_us:.2f} µs per call between kernels in the timed window "
                         f"({100 * s.gap_us / s.stats.mean:.0f}% of it): launch gaps or a synchronizing wrapper.")
        if s.device.approximate:
            lines.append(f"{s.shown}: device time found by kernel names (the profiler did not attribute the L2 clear).")
    return lines


def stop_notes(report: BenchReport, max_noise: float) -> list[str]:
    return [f"{s.shown}: stopped on {s.reason} after {s.stats.runs} repeats, err {100 * s.stats.rel_err:.3f}% "
            f"(target {100 * max_noise:g}%)" for s in report.shapes if s.reason != CONVERGED]


def past_whole_run_limit(report: BenchReport, limit_s: float, source: str) -> str | None:
    """The line for a bench whose wall time passed GPU MODE's limit on a whole run of its mode; None within it
    or on the CPU, whose times say nothing of the leaderboard's."""
    if report.on_cpu or report.wall_s <= limit_s:
        return None
    return (f"this bench ran {duration_text(report.wall_s)}, past the {seconds_text(limit_s)} GPU MODE gives a whole {report.mode} run"
            f" ({source}): the leaderboard may stop it before its last shape (the calibration, settling and profiling"
            " counted here are nvfp4ctl's own)")


def ceilings_line(report: BenchReport) -> str | None:
    c = report.ceilings
    if c is None:
        return None
    origin = "cached" if c.cached else "just measured"
    return (f"this GPU's ceilings ({origin}, {c.measured_at}): {c.tflops:.0f} TFLOP/s fp16 cuBLAS, "
            f"{c.tbps:.2f} TB/s device copy; --recalibrate measures again")


def _short(name: str, width: int = 48) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"
