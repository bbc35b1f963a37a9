"""The rematch table and counts: kept, dropped and failed leads; a kernel knob's value judged once
over all shapes (its verdict says by how much), counted as one lead."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from nvfp4ctl.tune.render import leads_held, rematch_table, to_dict
from nvfp4ctl.tune.results import OK, WRONG, Measurement
from nvfp4ctl.tune.search import RematchResult, SearchOutcome, start_configs
from nvfp4ctl.tune.session import TuneReport

from tune_fakes import make_knobs

A, B = (128, 256, 256, 1), (512, 512, 7168, 1)
KNOBS = make_knobs(("R_K", (1, 2), 1, "kernel"), ("R_P", (0, 1), 0, "plan"))


def _report() -> TuneReport:
    start = start_configs(KNOBS, [A, B], None)
    report = TuneReport(knobs=KNOBS, shapes=[A, B], compile_only=False)
    report.search = SearchOutcome(start=dict(start), best=dict(start),
                                  best_result={s: Measurement(OK, us=10.0) for s in (A, B)})
    k2 = {s: c.with_value("R_K", 2) for s, c in start.items()}
    p1 = start[A].with_value("R_P", 1)
    for config in [*start.values(), *k2.values(), p1]:
        report.configs[config.id] = config
    timed = lambda us: Measurement(OK, us=us)  # noqa: E731
    report.search.rematches = [
        RematchResult("K", A, start[A].id, k2[A].id, timed(10.0), timed(9.0), False, joint_gain=0.004),
        RematchResult("K", B, start[B].id, k2[B].id, timed(10.0), timed(10.9), False, joint_gain=0.004),
        RematchResult("P", A, start[A].id, p1.id, timed(10.0), timed(9.5), True),
        RematchResult("P", B, start[B].id, p1.id, timed(10.0), Measurement(WRONG, message="3 outputs wrong"), False),
        RematchResult("K", A, start[A].id, k2[A].id, Measurement(WRONG), timed(9.0), True, joint_gain=math.inf),
    ]
    return report


def test_every_lead_its_times_gain_and_verdict() -> None:
    columns, rows = rematch_table(_report())
    assert columns[-2:] == ["gain", "verdict"]
    assert [row[5:] for row in rows] == [
        ["+11.1%", "dropped: the lead did not hold (all shapes: +0.4%)"],
        ["-8.3%", "dropped: the lead did not hold (all shapes: +0.4%)"],
        ["+5.3%", "kept"],
        ["-", "dropped: wrong (3 outputs wrong)"],
        ["-", "kept (all shapes)"],
    ]
    assert rows[2][2] == "P=1" and rows[0][2] == "K=2"


def test_a_kernel_value_counts_as_one_lead_and_json_has_no_infinity() -> None:
    report = _report()
    assert leads_held(report) == (2, 3)  # K=2 once however many shapes (the later verdict), P=1 on A and on B
    payload = to_dict(report)
    assert [r["kept"] for r in payload["rematches"]] == [False, False, True, False, True]
    assert payload["rematches"][-1]["all_shapes_gain"] is None
    json.dumps(payload, allow_nan=False)


def test_a_runner_up_is_named_and_counts_as_a_lead_of_its_own() -> None:
    report = _report()
    start = report.search.start
    k2 = {s: c.with_value("R_K", 2) for s, c in start.items()}
    timed = lambda us: Measurement(OK, us=us)  # noqa: E731
    report.search.rematches = [  # the kernel step's leader lost, its runner-up held
        RematchResult("K", A, start[A].id, k2[A].id, timed(10.0), timed(10.0), False, joint_gain=0.0),
        RematchResult("K", A, start[A].id, k2[A].id, timed(10.0), timed(9.0), True, joint_gain=0.11, attempt=2),
        RematchResult("P", B, start[B].id, start[B].with_value("R_P", 1).id, timed(10.0), timed(10.0), False, attempt=3),
    ]
    rows = rematch_table(report)[1]
    assert rows[1][-1] == "kept (all shapes: +11.0%); runner-up 1, after the faster lead lost"
    assert rows[2][-1] == "dropped: the lead did not hold; runner-up 2, after the faster leads lost"
    assert leads_held(report) == (1, 3)
    assert [r["attempt"] for r in to_dict(report)["rematches"]] == [1, 2, 3]


def test_a_compile_only_candidate_names_the_shapes_it_was_built_for() -> None:
    """A shape's start is its dispatch-table entry: "P=1" alone would not say it is one shape's start."""
    from nvfp4ctl.tune.render import compile_table
    from nvfp4ctl.tune.results import BuildResult

    report = TuneReport(knobs=KNOBS, shapes=[A, B], compile_only=True)
    start = start_configs(KNOBS, [A, B], None)
    only_b = start[B].with_value("R_P", 1)
    for config, shapes in ((start[A], [A, B]), (only_b, [B])):
        report.configs[config.id] = config
        report.built_for[config.id] = shapes
        report.builds[config.id] = BuildResult(OK, registers=40, shared_bytes=0, stack_bytes=0,
                                               spill_bytes=0, compile_s=1.0)
    columns, rows = compile_table(report)
    assert columns[:2] == ["candidate", "for"]
    assert [row[:2] for row in rows] == [["start", "every shape"], ["P=1", "512x512x7168"]]


def test_every_shapes_start_is_labelled_start_in_the_compile_table() -> None:
    """A shape whose dispatch-table entry differs from the declared defaults had its start row read
    "MAX_CLUSTER_K=4", as if a candidate of a knob not asked for; only the defaults read "start"."""
    from nvfp4ctl.tune.render import compile_table
    from nvfp4ctl.tune.results import BuildResult

    report = TuneReport(knobs=KNOBS, shapes=[A, B], compile_only=True)
    defaults = KNOBS.defaults()
    report.starts = {A: defaults, B: defaults.with_value("R_P", 1)}  # B's table entry: P=1
    for config, shapes in ((defaults, [A]), (report.starts[B], [B]), (defaults.with_value("R_K", 2), [A]),
                           (report.starts[B].with_value("R_K", 2), [B])):
        report.configs[config.id] = config
        report.built_for[config.id] = shapes
        report.builds[config.id] = BuildResult(OK, registers=40, compile_s=1.0)
    _, rows = compile_table(report)
    assert [row[:2] for row in rows] == [["start", "128x256x256"], ["start (P=1)", "512x512x7168"],
                                        ["K=2", "128x256x256"], ["K=2 P=1", "512x512x7168"]]


def test_compile_table_spells_bytes_as_builds_tables_do() -> None:
    """Spills, stack and smem switch to KiB from 1 KiB on, spills red where there are any, through the one
    formatter build's tables use (tune's said "2048 B" for spills and stack, and "0.0 KiB" for no smem)."""
    from rich.text import Text

    from nvfp4ctl.kernel_cells import spills_text
    from nvfp4ctl.tune.render import compile_table
    from nvfp4ctl.tune.results import BuildResult

    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    config = start_configs(KNOBS, [A], None)[A]
    report.configs[config.id] = config
    report.builds[config.id] = BuildResult(OK, registers=255, shared_bytes=0, stack_bytes=1536, spill_bytes=2048,
                                           compile_s=1.0)
    columns, rows = compile_table(report)
    cells = dict(zip(columns, rows[0]))
    assert [str(cells[name]) for name in ("static smem", "stack", "spills")] == ["0 B", "1.5 KiB", "2.0 KiB"]
    assert isinstance(cells["spills"], Text) and cells["spills"].style == spills_text(2048).style == "bold red"


def test_a_compile_only_result_line_says_when_the_current_table_build_is_rejected() -> None:
    """Its exit 1 (the shipped build does not compile or spills) had a result line, in the console and the
    run log, that read like any other ("compile-only: 2 builds, 2 rejected")."""
    from nvfp4ctl.tune.render import result_line
    from nvfp4ctl.tune.results import COMPILE_ERROR, BuildResult
    from nvfp4ctl.tune.session import CURRENT

    report = TuneReport(knobs=replace(KNOBS, dispatch=Path("r_dispatch.cuh")), shapes=[A], compile_only=True)
    report.builds[CURRENT] = BuildResult(COMPILE_ERROR, message="k.cu:3: #error")
    report.builds["R_K=2,R_P=0"] = BuildResult(OK)
    assert result_line(report) == "compile-only: 2 builds, 1 rejected; the current table's own build is rejected (compile error)"
    report.builds[CURRENT] = BuildResult(OK)
    assert result_line(report) == "compile-only: 2 builds, 0 rejected"


def test_a_kernel_without_a_dispatch_table_calls_its_shipped_build_the_kernels_defaults() -> None:
    """It has no table: its shipped build's row read "current table", its rejection "the current table's own
    build", its gain "over the current table"."""
    from nvfp4ctl.tune.render import compile_table, result_line, summary_rows
    from nvfp4ctl.tune.results import COMPILE_ERROR, BuildResult
    from nvfp4ctl.tune.session import CURRENT

    assert KNOBS.dispatch is None
    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    report.configs[CURRENT] = None
    report.builds[CURRENT] = BuildResult(COMPILE_ERROR, message="k.cu:3: #error")
    _, rows = compile_table(report)
    assert rows[0][0] == "kernel's defaults"
    assert result_line(report) == ("compile-only: 1 build, 1 rejected;"
                                   " the kernel's own build (its defaults) is rejected (compile error)")
    timed = _report()
    timed.measurements[(CURRENT, A)] = timed.measurements[(CURRENT, B)] = Measurement(OK, us=10.0)
    timed.search.best = {A: timed.search.best[A].with_value("R_K", 2), B: timed.search.best[B]}
    timed.search.best_result = {A: Measurement(OK, us=8.0), B: Measurement(OK, us=10.0)}
    assert summary_rows(timed)[2] is not None and "over the kernel's defaults" in result_line(timed)


def test_json_carries_the_dispatch_table_note() -> None:
    """The console prints why the table was or was not written; --json dropped it."""
    report = _report()
    report.table_note = "r_dispatch.cuh left as it was: compile-only times nothing, so it has no winners to write"
    assert to_dict(report)["table_note"] == report.table_note
    report.table_note = None
    assert json.loads(json.dumps(to_dict(report)))["table_note"] is None


def test_the_resumed_line_names_the_run_the_results_came_from() -> None:
    """A finished run's results were said to be "resumed ... from the interrupted run"."""
    from nvfp4ctl.tune.render import resumed_line
    from nvfp4ctl.tune.state import SavedRun

    stamp = "2026-11-26T14:03:00Z"
    report = replace(_report(), resumed=12)
    assert resumed_line(replace(report, resumed=0)) is None
    assert resumed_line(replace(report, resumed_from=SavedRun(True, stamp))) == (
        "reused: 12 (candidate, shape) results from a finished run, saved 2026-11-26 14:03 UTC (--fresh times them again)")
    assert resumed_line(replace(report, resumed_from=SavedRun(False, stamp))) == (
        "resumed: 12 (candidate, shape) results from an interrupted run, saved 2026-11-26 14:03 UTC")
    assert resumed_line(replace(report, resumed_from=SavedRun(None, None))) == (
        "reused: 12 (candidate, shape) results from an earlier run of this tune")
    assert to_dict(replace(report, resumed_from=SavedRun(False, stamp)))["resumed_from"] == {
        "finished": False, "saved_at": stamp, "stopped_by_budget_s": None}


def test_a_run_its_budget_stopped_is_named_as_such_not_as_finished() -> None:
    """A run stopped by --budget was marked finished, so its rerun said "reused ... from a finished run"
    and then carried on searching where the budget had stopped it."""
    from nvfp4ctl.tune.render import resumed_line
    from nvfp4ctl.tune.state import SavedRun

    stamp = "2026-11-26T14:03:00Z"
    report = replace(_report(), resumed=12, resumed_from=SavedRun(True, stamp, stopped_by_budget_s=60.0))
    assert resumed_line(report) == ("resumed: 12 (candidate, shape) results from a run stopped by its --budget of"
                                    " 60 s, saved 2026-11-26 14:03 UTC (--fresh times them again)")
    assert to_dict(report)["resumed_from"] == {"finished": True, "saved_at": stamp, "stopped_by_budget_s": 60.0}


def test_a_build_that_did_not_compile_has_no_resources_in_json_or_the_table() -> None:
    """--json gave "registers": 0 (smem, stack and spills too) for a candidate that failed to compile, as
    if it used none; a build that compiled keeps its numbers, a 0 of its own included."""
    from nvfp4ctl.tune.render import compile_table
    from nvfp4ctl.tune.results import COMPILE_ERROR, BuildResult

    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    start = start_configs(KNOBS, [A], None)[A]
    broken = start.with_value("R_K", 2)
    report.builds[start.id] = BuildResult(OK, registers=40, stack_bytes=0, compile_s=1.0)
    report.builds[broken.id] = BuildResult(COMPILE_ERROR, compile_s=0.5, message="k.cu:3: #error R_K=2")
    for config in (start, broken):
        report.configs[config.id] = config
        report.built_for[config.id] = [A]
    builds = {build["candidate"]: build for build in json.loads(json.dumps(to_dict(report)))["builds"]}
    resources = ("registers", "shared_bytes", "stack_bytes", "spill_bytes")
    assert [builds["K=2"][name] for name in resources] == [None] * 4
    assert builds["K=2"]["status"] == COMPILE_ERROR and builds["K=2"]["compile_s"] == 0.5
    assert [builds["start"][name] for name in resources] == [40, 0, 0, 0]
    columns, rows = compile_table(report)
    cells = dict(zip(columns, rows[1]))
    assert [cells[name] for name in ("regs", "static smem", "stack", "spills")] == ["-"] * 4
    assert cells["verdict"] == "rejected: compile error"


def test_json_says_why_the_kernels_defaults_were_built_apart_from_the_start() -> None:
    """The line under the table said why (a kernel without a table whose build without -D is not the
    start's); --json left it out."""
    from nvfp4ctl.tune.render import apart_line
    from nvfp4ctl.tune.results import BuildResult
    from nvfp4ctl.tune.session import CURRENT

    reason = "k.cu:4 names R_K before config.cuh:6 defines its default, so the build without -DR_K sees it undefined"
    start = start_configs(KNOBS, [A], None)[A]

    def shipped_entry(knobs) -> dict:
        report = TuneReport(knobs=knobs, shapes=[A], compile_only=True)
        report.configs[CURRENT], report.configs[start.id] = None, start
        report.builds[CURRENT] = report.builds[start.id] = BuildResult(OK)
        builds = json.loads(json.dumps(to_dict(report)))["builds"]
        assert next(b for b in builds if b["candidate"] == "start")["built_apart"] is None  # a candidate's: none
        return next(b for b in builds if b["candidate"] != "start")

    apart = replace(KNOBS, shipped_differs=reason)
    assert shipped_entry(apart)["built_apart"] == reason
    assert apart_line(TuneReport(knobs=apart, shapes=[A], compile_only=True)).endswith(f"built apart: {reason}")
    assert shipped_entry(replace(KNOBS, shipped_differs=None))["built_apart"] is None  # one build: no second row
    with_table = replace(KNOBS, shipped_differs="it reads its dispatch table", dispatch=Path("r_dispatch.cuh"))
    assert shipped_entry(with_table)["built_apart"] is None  # "current table" is no start: nothing to explain


def test_compile_only_says_its_smem_column_cannot_show_dynamic_shared_memory(capsys, monkeypatch) -> None:
    """STAGES_SHARED_A sizes the stages' dynamic shared memory (about 41 KB each): every row read static
    smem 32.0 KiB, and nothing said that the compiler's report cannot show what the knob changes."""
    from nvfp4ctl.commands.tune import show
    from nvfp4ctl.tune.render import smem_note
    from nvfp4ctl.tune.results import BuildResult

    monkeypatch.setenv("COLUMNS", "200")
    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    start = start_configs(KNOBS, [A], None)[A]
    for config in (start, start.with_value("R_K", 2)):
        report.configs[config.id] = config
        report.built_for[config.id] = [A]
        report.builds[config.id] = BuildResult(OK, registers=40, shared_bytes=32 * 1024, compile_s=1.0)
    note = smem_note(report)
    assert note is not None and note.startswith("every build's static smem is 32.0 KiB; ")
    assert "dynamic shared memory" in note and "no compiler report shows it" in note
    show(report, "k.cu", verbose=False)
    assert "no compiler report shows it" in capsys.readouterr().out
    assert to_dict(report)["smem_note"] == note


WGMMA, DIRECT_41, DIRECT_21 = ("nvfp4_sm90::nvfp4_gemm_sm90_kernel<1, true, false, false, true, 128>",
                               "nvfp4_sm90::nvfp4_gemm_sm90_direct_kernel<4, 1>", "nvfp4_sm90::nvfp4_gemm_sm90_direct_kernel<2, 1>")


def _sm90_like(direct_regs: tuple[int, int], drop: bool = False):
    """A build of the sm_90a file as compile_candidate summarises it (three of its kernels, after a real
    build's report): the heaviest kernel's figures, and each kernel's."""
    from nvfp4ctl.tune.results import BuildResult

    kernels = ((WGMMA, 168, 0), (DIRECT_21, direct_regs[1], 16384), (DIRECT_41, direct_regs[0], 32768))
    kernels = kernels[:2] if drop else kernels
    heaviest = max(kernels, key=lambda k: (k[1], k[2]))
    return BuildResult(OK, registers=heaviest[1], shared_bytes=heaviest[2], compile_s=1.0, kernel=heaviest[0],
                       kernels=kernels)


def test_compile_only_rows_show_one_named_kernel_and_count_the_kernels_changed(capsys, monkeypatch) -> None:
    """Each row showed its build's heaviest kernel, unnamed: the current table's 208 regs and 32.0 KiB were
    the direct mma.sync kernel's, and a candidate that took that kernel to 64 registers read 168 and 0 B,
    a wgmma kernel's, as if one kernel had changed. Now every row is the same kernel's, named under the
    table, and a column counts the kernels whose regs or static smem differ from the first build's."""
    from nvfp4ctl.commands.tune import show
    from nvfp4ctl.tune.render import compile_table, kernel_changes, kernel_note, smem_note

    monkeypatch.setenv("COLUMNS", "160")
    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    start = start_configs(KNOBS, [A], None)[A]
    builds = {start: _sm90_like((208, 148)), start.with_value("R_K", 2): _sm90_like((64, 64)),
              start.with_value("R_P", 1): _sm90_like((208, 148), drop=True)}
    for config, build in builds.items():
        report.configs[config.id] = config
        report.built_for[config.id] = [A]
        report.builds[config.id] = build
    columns, rows = compile_table(report)
    assert columns[2:5] == ["regs", "static smem", "kernels changed"]
    assert [[str(cell) for cell in row[2:5]] for row in rows] == [
        ["208", "32.0 KiB", "-"], ["64", "32.0 KiB", "2 of 3"], ["-", "-", "1 gone"]]
    assert kernel_note(report) == (
        f"regs and static smem are those of {DIRECT_41} in every row, the most registers of the 3 kernels of start's"
        " build ('-' where a build has no such kernel); kernels changed: how many of them have other regs or static"
        " smem in that row's build")
    assert kernel_changes(report) == [f"K=2 vs start: {DIRECT_21} 148 -> 64 regs; {DIRECT_41} 208 -> 64 regs",
                                      f"P=1 vs start: {DIRECT_41} not in this build"]
    assert smem_note(report).startswith(f"the static smem of {DIRECT_41} is 32.0 KiB in every build that has it; ")

    show(report, "nvfp4_gemm_sm90.cu", verbose=False)
    out = capsys.readouterr().out
    assert "the most registers of the 3 kernels" in out and f"K=2 vs start: {DIRECT_21} 148 -> 64 regs" in out
    assert max(len(line) for line in out.splitlines() if "│" in line) <= 160
    payload = json.loads(json.dumps(to_dict(report)))
    assert payload["kernel_note"] == kernel_note(report)
    assert payload["builds"][1]["kernel"] == WGMMA and payload["builds"][1]["kernels"][2] == [DIRECT_41, 64, 32768]


def _two_compiled_candidates() -> TuneReport:
    """A compile-only report of the start and one other candidate, each built for shape A."""
    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    start = start_configs(KNOBS, [A], None)[A]
    for config, build in {start: _sm90_like((208, 148)), start.with_value("R_K", 2): _sm90_like((64, 64))}.items():
        report.configs[config.id] = config
        report.built_for[config.id] = [A]
        report.builds[config.id] = build
    return report


@pytest.mark.parametrize("columns", [40, 10])
def test_a_narrow_terminal_gets_the_compile_tables_values_whole(columns: int, capsys, monkeypatch) -> None:
    """At COLUMNS=40 the candidates table of tune --compile-only printed its candidate column one character
    a line over ~130 lines; now it is one record per candidate, every name and figure whole."""
    from table_words import has_a_table, missing_words, printed_at

    from nvfp4ctl.commands.tune import show

    report = _two_compiled_candidates()
    wide, narrow = (printed_at(width, lambda: show(report, "k.cu", verbose=False), monkeypatch, capsys)
                    for width in (400, columns))
    assert has_a_table(wide) and not has_a_table(narrow)
    assert missing_words(narrow, wide) == []


T128_6, T128_4, T64_8 = ("nvfp4_sm100_tc::nvfp4_gemm_sm100_tc_kernel<TileConfig<128, 6>>",
                         "nvfp4_sm100_tc::nvfp4_gemm_sm100_tc_kernel<TileConfig<128, 4>>",
                         "nvfp4_sm100_tc::nvfp4_gemm_sm100_tc_kernel<TileConfig<64, 8>>")


def test_a_knob_that_renames_the_shown_kernel_shows_its_new_kernels_figures(capsys, monkeypatch) -> None:
    """A knob passed as a template argument (TileConfig<128, TC_STAGES128>) builds the reference's kernel under
    another name: its row read '-' for regs and static smem though the new kernel's 240 registers were in
    --json. The row shows the new kernel with the most registers, marked, and the note says so."""
    from nvfp4ctl.commands.tune import show
    from nvfp4ctl.tune.render import compile_table, kernel_note
    from nvfp4ctl.tune.results import BuildResult

    monkeypatch.setenv("COLUMNS", "160")
    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    start = start_configs(KNOBS, [A], None)[A]
    builds = {start: BuildResult(OK, registers=254, compile_s=1.0, kernel=T128_6,
                                 kernels=((T128_6, 254, 0), (T64_8, 168, 0))),
              start.with_value("R_K", 2): BuildResult(OK, registers=240, shared_bytes=1024, compile_s=1.0,
                                                      kernel=T128_4, kernels=((T128_4, 240, 1024), (T64_8, 168, 0)))}
    for config, build in builds.items():
        report.configs[config.id] = config
        report.built_for[config.id] = [A]
        report.builds[config.id] = build
    _, rows = compile_table(report)
    assert [[str(cell) for cell in row[2:5]] for row in rows] == [
        ["254", "0 B", "-"], ["240 (new)", "1.0 KiB (new)", "1 gone, 1 new"]]
    note = kernel_note(report)
    assert note is not None and "('(new)' where a build has no such kernel but new ones: the new one with the most" \
        " registers)" in note and "'-' where" not in note
    payload = json.loads(json.dumps(to_dict(report)))
    assert payload["builds"][1]["registers"] == 240 and payload["kernel_note"] == note
    show(report, "nvfp4_gemm_sm100_tc.cu", verbose=False)
    assert "240 (new)" in capsys.readouterr().out


def test_the_compile_table_and_its_notes_find_their_reference_build_once(capsys, monkeypatch) -> None:
    """The table, the kernel note, the change lines and the smem note each looked the reference build up
    again over every build: four times for one report shown, twice more for --json."""
    from nvfp4ctl.commands.tune import show
    from nvfp4ctl.tune import kernel_compare

    report = _two_compiled_candidates()
    looked_up = []
    found = kernel_compare.reference
    monkeypatch.setattr(kernel_compare, "reference", lambda builds: looked_up.append(1) or found(builds))
    show(report, "nvfp4_gemm_sm90.cu", verbose=False)
    assert "kernels changed" in capsys.readouterr().out and len(looked_up) == 1
    assert to_dict(report)["kernel_note"] is not None and len(looked_up) == 2


def test_a_file_of_one_kernel_keeps_its_table_and_notes() -> None:
    from nvfp4ctl.tune.render import compile_table, kernel_note
    from nvfp4ctl.tune.results import BuildResult

    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    config = start_configs(KNOBS, [A], None)[A]
    report.configs[config.id] = config
    report.builds[config.id] = BuildResult(OK, registers=40, compile_s=1.0, kernel="k", kernels=(("k", 40, 0),))
    columns, rows = compile_table(report)
    assert "kernels changed" not in columns and rows[0][2] == 40
    assert kernel_note(report) is None


def test_a_candidates_changes_are_named_three_at_a_time_unless_verbose() -> None:
    from nvfp4ctl.tune.kernel_compare import KernelChanges

    changes = KernelChanges(changed=("a 1 -> 2 regs", "b 1 -> 2 regs"), gone=("c",), new=("d",), of=3)
    assert changes.cell() == "2 of 3, 1 gone, 1 new"
    assert changes.line() == "a 1 -> 2 regs; b 1 -> 2 regs; c not in this build; +1 more (-v: all)"
    assert changes.line(None).endswith("; d new in this build")


def test_a_candidate_whose_sass_is_the_starts_says_it_builds_the_same_code(capsys, monkeypatch) -> None:
    """A knob the source never reads was built for every start and shown "kernels changed none · ok", as a
    knob whose change no compiler report shows; a timed tune then spent GPU time on it."""
    from nvfp4ctl.commands.tune import show
    from nvfp4ctl.tune.render import compile_table, same_code_lines
    from nvfp4ctl.tune.results import BuildResult

    monkeypatch.setenv("COLUMNS", "160")
    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    start = start_configs(KNOBS, [A], None)[A]
    report.starts = {A: start}
    built = lambda digest: BuildResult(OK, registers=40, compile_s=1.0, code_digest=digest)  # noqa: E731
    for config, build in {start: built("same"), start.with_value("R_K", 2): built("same"),
                          start.with_value("R_P", 1): built("other")}.items():
        report.configs[config.id] = config
        report.built_for[config.id] = [A]
        report.builds[config.id] = build
    _, rows = compile_table(report)
    assert [row[-1] for row in rows] == ["ok", "ok, same code as start", "ok"]
    assert same_code_lines(report) == ["K=2 builds the same device code (the same SASS) as the start: a knob only"
                                       " the host code reads still changes the launch, so it is timed"]
    assert [b["same_code_as_start"] for b in json.loads(json.dumps(to_dict(report)))["builds"]] == [False, True, False]
    show(report, "k.cu", verbose=False)
    assert "K=2 builds the same device code (the same SASS) as the start" in capsys.readouterr().out
    from nvfp4ctl.tune import render
    calls = []
    monkeypatch.setattr(render, "same_code_as_start", lambda r: calls.append(r) or {"x"})
    same_code_lines(report)
    assert len(calls) == 1  # once per report, not once per candidate


def test_the_code_digest_is_the_sass_without_the_source_path(tmp_path: Path) -> None:
    from nvfp4ctl.build.resources import save_sass
    from nvfp4ctl.tune.compile_pool import code_digest

    sass = "Fatbin elf code:\narch = sm_90a\nidentifier = {}\n\tFunction : k\n        /*0000*/ LDC R1, c[0x0][0x28] ;\n"
    for name, path in (("a", "/x/k.cu"), ("b", "/y/k.cu")):
        (tmp_path / name).mkdir()
        save_sass(tmp_path / name, sass.format(path))
    (tmp_path / "c").mkdir()
    save_sass(tmp_path / "c", sass.format("/x/k.cu").replace("R1", "R2"))
    assert code_digest(tmp_path / "a") == code_digest(tmp_path / "b") != code_digest(tmp_path / "c")
    assert code_digest(tmp_path) == ""  # no SASS kept: nothing claimed


def test_rejections_and_json_builds_follow_the_candidates_order_not_the_order_they_compiled() -> None:
    """A slow build landing last put its rejection line, and its JSON entry, after candidates asked for later."""
    from nvfp4ctl.tune.render import rejections
    from nvfp4ctl.tune.results import COMPILE_ERROR, BuildResult

    report = TuneReport(knobs=KNOBS, shapes=[A], compile_only=True)
    start = start_configs(KNOBS, [A], None)[A]
    asked = [start.with_value("R_K", 2), start.with_value("R_P", 1), start.with_value("R_K", 2).with_value("R_P", 1)]
    for config in asked:
        report.configs[config.id] = config
    for config in reversed(asked):  # the last asked compiled first
        report.builds[config.id] = BuildResult(COMPILE_ERROR, message=f"k.cu:1: {config.id}")
    assert [line.rsplit(": ", 1)[1] for line in rejections(report)] == [config.id for config in asked]
    assert [entry["config"] for entry in to_dict(report)["builds"]] == [
        {"R_K": 2, "R_P": 0}, {"R_K": 1, "R_P": 1}, {"R_K": 2, "R_P": 1}]
