"""`nvfp4ctl log`: the most recent run-log entries from MEMORY.md as a table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nvfp4ctl.console import get_console
from nvfp4ctl.env import Env, env_str
from nvfp4ctl.errors import ExitCode, UsageError, os_reason
from nvfp4ctl.options import count, path
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.printable import shown
from nvfp4ctl.workspace import memory_path
from nvfp4ctl.words import plural

if TYPE_CHECKING:  # `nvfp4ctl --help` need not load the run log's module
    from nvfp4ctl.bench.trend import Trend
    from nvfp4ctl.runlog import NumberedRuns, RunEntry, RunLogBytes


def _short_target(target: str) -> str:
    """The path as the log names it and a short hash, the reason left out (the full cell is in MEMORY.md).
    A "./" path is shown from the log's folder, where a log shared by several folders (NVFP4CTL_MEMORY)
    tells their submission.py files apart by it (nvfp4_gemv/submission.py), as `log --trend` does; an
    older line's path, relative to its run's folder, or an absolute one, as logged."""
    from nvfp4ctl.runlog import LOG_RELATIVE, split_target

    path, digest = split_target(target)
    if not path:  # "-" (nothing resolved) or a label such as "kernels": shown as logged
        return target
    shown = path.removeprefix(LOG_RELATIVE) or path
    return f"{shown}@{digest[:8]}" if digest else shown


def command(
    last: Annotated[int, typer.Option("-n", "--last", metavar="<int>", parser=count(1), help="How many entries to show (with --trend: runs per target).")] = 20,
    trend: Annotated[bool, typer.Option("--trend", help="Plot each target's bench times over the logged runs, commits and edits of the target marked.")] = False,
    target: Annotated[list[Path] | None, typer.Option("--target", metavar="PATH", parser=path(), help="Only the runs of this kernel or submission (with --trend: its benches); repeatable: the runs of each, a trend's in the order given.")] = None,
    shape: Annotated[list[str] | None, typer.Option("--shape", metavar="SHAPE", help="--trend: only this shape, in the problem's syntax: M,N,K[,L] (GEMV M,K[,L] or its label '256x512 l=2'; grouped M1,N1,K1;M2,N2,K2, or its logged key g2:m96+128:n128:k256), or 'geomean'; repeatable.")] = None,
    runs: Annotated[bool, typer.Option("--runs", help="Only the check and bench runs that ran the target: no other command's lines, none that stopped at a usage or input error (exit 2).")] = False,
) -> Outcome:
    """Show the most recent entries of the run log in MEMORY.md, or the bench times as a trend."""
    from nvfp4ctl import runlog  # here, not at the top: `nvfp4ctl --help` need not load it

    if not trend and shape:
        raise UsageError("--shape goes with --trend")
    if trend and runs:  # a trend draws successful benches alone: --runs would change nothing
        raise UsageError("--runs goes with the listing, not --trend (a trend is of successful benches only)")
    wanted = _wanted_shapes(shape or [])  # a malformed shape is one line before the log is read, benches or none
    memory = memory_path()
    if (blocker := runlog.file_in_the_way(memory)) is not None:  # not "no runs logged yet": none ever can be
        raise UsageError(f"{memory} cannot hold a run log: {blocker} is not a folder")
    if (missing := runlog.missing_folder(memory)) is not None:  # as a log never written: none is there to read
        get_console().info(f"no run log at {memory}{_memory_setting()}: there is no folder {missing}", result=True)
        return Outcome(result="empty")
    if (why := runlog.unreadable_kind(memory)) is not None:  # not "no runs logged yet": none can be read from it
        raise UsageError(f"cannot read the run log {memory}{_memory_setting()}: {why}")
    try:
        log = runlog.read_log(memory)  # once: the runs and the note of those below the log are read from it
    except OSError as error:  # NVFP4CTL_MEMORY naming a folder, say
        raise UsageError(f"cannot read the run log {memory}: {os_reason(error, memory)}") from None
    targets = list(dict.fromkeys(target or []))  # a file named twice is shown once
    if trend:
        return _show_trend(runlog.numbered_runs_in(log), last, targets, wanted, memory, log)
    numbered = runlog.numbered_runs_in(log, last) if not targets and not runs else _picked(log, last, targets, runs, memory)
    entries = numbered.entries
    console = get_console()
    if not entries:
        console.info(f"no {_runs_of(targets, runs)} logged yet in {memory}", result=True)
        _say_unread(numbered.unread, memory)
        _say_runs_below(log, memory)
        return Outcome(result="empty")
    problems = any(e.problem for e in entries)  # a column only once some run recorded its problem
    notes = any(e.note for e in entries)  # and one for the notes typed after it, where a run shown has one
    columns = ["time (UTC)", "command", "target", "commit", "gpu", "exit", "result"] + (["problem"] if problems else [])
    console.table(
        columns + (["note"] if notes else []),
        [[_time_shown(e.time), e.command, _short_target(e.target), e.commit, e.gpu,
          e.exit_code, e.result] + ([e.problem or "-"] if problems else []) + ([e.note or "-"] if notes else [])
         for e in entries],
        title=f"{_title(len(entries), targets, runs)} ({memory})",
        right_align_from=5,
        left_aligned=[len(columns)],  # a note is words the user typed, read from the left
        result=True,  # the entries are what `log` shows: -q keeps them
        records=[_record(e) for e in entries],  # where the table would break a time stamp, a hash or a shape
    )
    _say_tool_changes(entries)
    _say_unread(numbered.unread, memory)
    _say_runs_below(log, memory)
    return Outcome(result=plural(len(entries), 'entry', 'entries'))


RAN_THE_TARGET = ("check", "bench")  # --runs: the commands whose line says how the target did


def _picked(log: RunLogBytes, last: int, targets: list[Path], runs: bool, memory: Path) -> NumberedRuns:
    """The `last` latest runs (by their logged time, as a plain listing's) of any of `targets` (by any command;
    none: every run), or check and bench runs that got past the command line (--runs), or both; `unread`: the
    lines meant as runs after the oldest shown, which might have been among them (as for a plain listing's -n)."""
    from nvfp4ctl.bench import trend as trends
    from nvfp4ctl.runlog import log_folder_of, numbered_runs_in, picked_by_time

    whole = numbered_runs_in(log)
    root, log_project, log_folder = _reading_root(), _log_project(memory), log_folder_of(memory)
    had = [[trends.had_target(entry, root, target, log_project, log_folder) for entry in whole.entries]
           for target in targets]  # once per line and target: the check below and the filter both read it
    unmatched = [target for target, had_it in zip(targets, had) if not any(had_it)]
    if unmatched and (logged := trends.logged_targets(whole.entries, root, log_folder)):
        # a typo, or a file never run: as --trend says it, not an empty listing
        raise _never_logged(unmatched[0], logged)
    had_it = [any(column) for column in zip(*had)] if targets else [True] * len(whole.entries)
    kept = [had and (not runs or (entry.subcommand in RAN_THE_TARGET and entry.exit_code != str(int(ExitCode.USAGE))))
            for entry, had in zip(whole.entries, had_it)]
    return picked_by_time(whole, kept, last)


def _memory_setting() -> str:
    """" (NVFP4CTL_MEMORY)" where that variable chose the run log's path, so a message names what to change."""
    return f" ({Env.MEMORY})" if env_str(Env.MEMORY) else ""


def _never_logged(target: Path, logged: list[str]) -> UsageError:
    """A --target no logged run had (a typo, or a file never run), the listing's and the trend's alike."""
    return UsageError(f"--target {_named(target)}: no logged run had it; logged: {', '.join(logged)}")


def _runs_of(targets: list[Path], runs: bool, count: int = 2) -> str:
    """What the listing holds: "runs", "check or bench runs" (each run is one or the other: "1 most recent
    check or bench run"), "runs of submission.py", "runs of sub_v2.py, sub_v5.py"."""
    kind = plural(count, f"{' or '.join(RAN_THE_TARGET)} run" if runs else "run").split(" ", 1)[1]
    return f"{kind} of {', '.join(map(_named, targets))}" if targets else kind


def _named(target: Path) -> str:
    """The typed target as the run log writes a path (printable.shown: ESC as `\\x1b`, a byte that is not UTF-8
    as `\\xff`), as the log names it."""
    return shown(str(target))


def _title(count: int, targets: list[Path], runs: bool) -> str:
    """"20 most recent runs", as before any filter; "3 most recent check or bench runs of submission.py"."""
    return f"{count} most recent {_runs_of(targets, runs, count)}"


def _reading_root() -> Path:
    """The folder an older line's relative path starts from: the folder of the run that wrote it, which the
    line does not say; the task's folder, as every command but log finds it, whatever subfolder reads the log now."""
    from nvfp4ctl.workspace import find_task_upwards, user_folder

    task = find_task_upwards()
    return task.parent if task is not None else user_folder()


def _say_tool_changes(entries: list[RunEntry]) -> None:
    """After the table, where the nvfp4ctl that made the runs changed between consecutive ones: the first
    run's version, then a line at each change, from the time of the run that changed it (as the table shows
    it), so a step in the results can be told a change of the tool's from one of the kernel's; the first
    _LINES_NAMED lines, then a count (runs alternating between two installs change at every run). Part of
    what `log` shows, as the table is: -q keeps it."""
    firsts = [entry for before, entry in zip([None, *entries], entries) if before is None or before.tool != entry.tool]
    if len(firsts) < 2:
        return
    lines = [f"  from {_time_shown(entry.time)}: {entry.tool or 'one that logged no version'}"
             for entry in firsts[:_LINES_NAMED]]
    if len(firsts) > _LINES_NAMED:
        lines.append(f"  and {plural(len(firsts) - _LINES_NAMED, 'more change')}")
    get_console().info("\n".join(["nvfp4ctl changed between these runs:", *lines]), result=True)


def _record(entry: RunEntry) -> list[str]:
    """A run as the plain layout shows it: the table's cells, the exit code named, no problem where none
    was logged, the user's note named as one."""
    return [_time_shown(entry.time), entry.command, _short_target(entry.target), entry.commit,
            entry.gpu, f"exit {entry.exit_code}", entry.result] + ([entry.problem] if entry.problem else []) \
        + ([f"note: {entry.note}"] if entry.note else [])


_LINES_NAMED = 10  # a log edited by a script may have hundreds: the first ones, then a count


def _first_lines(lines: list[int]) -> str:
    """"5, 7", or the first _LINES_NAMED numbers "and N more"."""
    more = f" and {len(lines) - _LINES_NAMED} more" if len(lines) > _LINES_NAMED else ""
    return ", ".join(map(str, lines[:_LINES_NAMED])) + more


def _say_unread(lines: list[int], memory: Path) -> None:
    """One note after what `log` showed: the lines meant as runs that it could not read and left out
    (a cell lost to a hand edit, a bench time that is no number), so a missing run is not a mystery."""
    if not lines:
        return
    shown = _first_lines(lines)
    one = len(lines) == 1
    get_console().note(f"{plural(len(lines), 'line')} of the run log could not be read as {'a run' if one else 'runs'}"
                       f" and {'is' if one else 'are'} left out: {'line' if one else 'lines'} {shown} of {memory}")


def _say_runs_below(log: RunLogBytes, memory: Path) -> None:
    """One note after what `log` showed: the runs an older version appended under a heading the user wrote
    after the run log, which no reader counts (the log ends at that heading), so fewer runs are no mystery."""
    from nvfp4ctl.runlog import runs_below_the_log_in

    if (below := runs_below_the_log_in(log)) is None:
        return
    lines = below.lines
    shown = _first_lines(lines)
    one = len(lines) == 1
    move = "it above the heading to count it" if one else "them above it to count them"
    get_console().note(f"{plural(len(lines), 'run')} below your heading `{below.heading}` (line {below.heading_line})"
                       f" {'is' if one else 'are'} not read ({'line' if one else 'lines'} {shown} of {memory}):"
                       f" the run log ends there; move {move}")


def _wanted_shapes(shapes: list[str]) -> dict[str, str]:
    """--shape's texts by the log's key each names ("128,7168,16384" -> "128x7168x16384")."""
    if not shapes:
        return {}
    from nvfp4ctl.bench.trend import normalize_shape

    return {normalize_shape(text): text for text in shapes}


def _show_trend(numbered: NumberedRuns, last: int, targets: list[Path], wanted: dict[str, str],
                memory: Path, log: RunLogBytes) -> Outcome:
    """The trend, then the note of the lines of the runs asked for that could not be read."""
    from nvfp4ctl.bench import trend as trends
    from nvfp4ctl.runlog import log_folder_of

    log_project, log_folder = _log_project(memory), log_folder_of(memory)
    root = _reading_root()
    shown = _draw_trend(numbered.entries, last, targets, wanted, root, log_project, log_folder)
    broken = trends.unreadable_benches(numbered.entries, numbered.lines, root, targets, wanted, log_project, log_folder)
    _say_unread(sorted(numbered.unread + broken), memory)
    _say_runs_below(log, memory)
    return shown


def _trends_of(entries: list, last: int, targets: list[Path], root: Path, log_project: Path | None,
               log_folder: Path) -> tuple[list[Trend], list[Path]]:
    """Every target's trends, the targets' in the order given (none named: every target's, the latest run first),
    and the named targets that have no successful bench; a target no logged run had is a UsageError, raised
    before anything is drawn."""
    from nvfp4ctl.bench import trend as trends

    if not targets:
        return trends.collect(entries, root, None, last, log_project, log_folder), []
    found: dict[tuple[str, str, str, str], Trend] = {}  # two spellings of one file: its trends once
    unbenched: list[Path] = []
    for target in targets:
        of_target = trends.collect(entries, root, target, last, log_project, log_folder)
        if not of_target:
            logged = trends.logged_targets(entries, root, log_folder)  # a scan of every line: only where needed
            if logged and not trends.is_logged(entries, root, target, log_project, log_folder):
                # a typo, or a file never run: the same as an unknown --shape, not "run bench" for a file that may not exist
                raise _never_logged(target, logged)
            unbenched.append(target)
        for trend in of_target:
            found.setdefault((trend.target, trend.gpu, trend.problem, trend.settings), trend)
    return list(found.values()), unbenched


def _draw_trend(entries: list, last: int, targets: list[Path], wanted: dict[str, str], root: Path,
                log_project: Path | None, log_folder: Path) -> Outcome:
    from nvfp4ctl.bench import trend as trends

    console = get_console()
    found, unbenched = _trends_of(entries, last, targets, root, log_project, log_folder)
    if not found:
        for target in unbenched or [None]:
            _say_no_success(entries, target, root, log_project, log_folder)
        return Outcome(result="trend: no benches")
    asked_geomean = trends.GEOMEAN in wanted
    logged = {key: trends.shown_key(trend.problem, key) for trend in found for key in trend.keys(asked_geomean)}
    for key, text in wanted.items():
        if key not in logged:
            shown = sorted(set(logged.values()))  # as the series are titled: the GEMV's "4096x7168 l=8", not its key
            raise UsageError(f"--shape {text}: no logged bench timed it; logged: {', '.join(shown)}")
    several_problems = len({trend.problem for trend in found}) > 1  # then each title says whose times they are
    for trend in found:
        keys = [key for key in trend.keys(asked_geomean) if not wanted or key in wanted]
        if not keys:
            continue
        first, final = trend.runs[0].time, trend.runs[-1].time
        of = f" ({trend.problem})" if several_problems else ""
        timed_with = f" with {trend.settings}" if trend.settings else ""  # a quick --max-repeats 3 run is plotted apart
        console.info(f"{trend.target}{of} on {trend.gpu}{timed_with}: {plural(len(trend.runs), 'bench', 'benches')}, {_when(first)} to {_when(final)}",
                     style="bold", result=True)  # the plots below print under -q: so does what they are of
        if trend.on_cpu:
            console.info(f"  {CPU_TREND_NOTE}", result=True)
        for key in keys:
            values = trend.series(key)
            console.info(f"  {trends.shown_key(trend.problem, key)}: {trends.summary(values, with_change=not trend.on_cpu, runs=trend.runs)}", result=True)
            if key == trends.GEOMEAN and (left_out := trends.geomean_note(trend)) is not None:
                console.info(f"    {left_out}", result=True)
            console.raw("\n".join("    " + line for line in trends.plot(values, trend.changes(),
                                                                      tool_changes=trend.tool_changes(),
                                                                      content_changes=trend.content_changes())))
        console.raw("\n".join("  " + line for line in [*trends.commit_legend(trend), *trends.tool_legend(trend)]))
    for target in unbenched:  # named beside others that were benched: said, not left out without a word
        _say_no_success(entries, target, root, log_project, log_folder)
    _show_fastest(found, len(targets), wanted, asked_geomean, several_problems)
    return Outcome(result=f"trend of {plural(len(found), 'target')}")


def _say_no_success(entries: list, target: Path | None, root: Path, log_project: Path | None,
                    log_folder: Path | None) -> None:
    """No trend of `target` (None: of any target): why, the failed benches where some were logged, where "run
    nvfp4ctl bench" would have the user run again what failed."""
    from nvfp4ctl.bench import trend as trends

    where = f" of {_named(target)}" if target is not None else ""
    failed = trends.failed_benches(entries, root, target, log_project, log_folder)
    get_console().info(f"no successful bench{where} in the run log ({memory_path()}) yet: "
                       + (_failed_said(failed, target is None) if failed else "run nvfp4ctl bench"), result=True)


def _failed_said(failed: list[RunEntry], of_every_target: bool) -> str:
    """What the logged benches that all failed say, where "run nvfp4ctl bench" would have the user run them again:
    how many, and the last one's time, exit code and result cell, its cause ("error: bench 128x256x256:
    custom_kernel raised RuntimeError: ..."); its target too where the trend was of every target."""
    last = failed[-1]
    of = f"{_short_target(last.target)}, " if of_every_target else ""
    logged = f"{plural(len(failed), 'bench', 'benches')}{'' if of_every_target else ' of it'} logged"
    return f"{logged}, none successful; the last ({of}{_when(last.time)}, exit {last.exit_code}): {last.result}"


def _show_fastest(found: list[Trend], named: int, wanted: dict[str, str], asked_geomean: bool,
                  several_problems: bool) -> None:
    """Where the user named two or more targets (--target, `named` times) and the trend showed several: per shape,
    each one's best logged mean and its run, the fastest marked, one table per GPU, problem and timing settings
    they share (other cards' times are not compared). A trend of every target draws none: it ranked whatever the
    log held (copies of one kernel at other paths, files long replaced) against each other."""
    from nvfp4ctl.bench import trend as trends
    from nvfp4ctl.bench.fastest import standings

    if named < 2 or len({trend.target for trend in found}) < 2:
        return
    console = get_console()
    tables = standings(found, wanted, asked_geomean)
    if not tables:
        console.info("no table of the fastest: no two of these targets were benched on one GPU with the same"
                     " timing settings", result=True)
    for standing in tables:
        of = f" ({standing.problem})" if several_problems else ""
        timed_with = f" with {standing.settings}" if standing.settings else ""
        rows = [[trends.shown_key(standing.problem, row.key),
                 *("-" if best is None else f"{best.mean:.2f} (run {best.run}){FASTEST_MARK if best.fastest else ''}"
                   for best in row.bests)]
                for row in standing.rows]
        console.table(["shape", *standing.targets], rows, result=True,
                      title=f"best logged mean per shape, µs{of} on {standing.gpu}{timed_with}")
        if not all(row.compared for row in standing.rows):
            console.info("  geomeans over different sets of shapes are not compared", result=True)


FASTEST_MARK = " fastest"  # after the best mean of a row, where two or more targets timed the shape


CPU_TREND_NOTE = ("CPU times (NVFP4CTL_DEVICE=cpu): they say nothing of the leaderboard's, and runs of the same"
                  " code differ by tens of percent, so no change is given")


def _log_project(memory: Path) -> Path | None:
    """The project a run log lives in (NVFP4CTL_MEMORY may name another project's MEMORY.md)."""
    from nvfp4ctl.workspace import TASK_FILE

    return memory.parent if (memory.parent / TASK_FILE).is_file() else None


def _when(time: str) -> str:
    return _time_shown(time)[:16]


def _time_shown(time: str) -> str:
    from nvfp4ctl.runlog import time_shown  # here, not at the top: `nvfp4ctl --help` need not load it

    return time_shown(time)
