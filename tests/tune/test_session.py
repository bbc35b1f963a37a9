"""A whole tune with fake pools on the tiny fixture's knobs: winners written into its dispatch table
(plan entries per shape, the kernel set in its block or else as the declared defaults), then the
shipped build timed again with the new table."""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from pathlib import Path

import pytest

from nvfp4ctl.task import Case
from nvfp4ctl.tune.compile_pool import CompilePool
from nvfp4ctl.tune.gpu_pool import GpuPool, NamedWorker
from nvfp4ctl.tune.knobs import discover
from nvfp4ctl.tune.results import OK, UNSUPPORTED, BuildResult, Measurement
from nvfp4ctl.tune.search import SearchSettings, start_configs
from nvfp4ctl.tune.session import Evaluator, TuneReport, tune
from nvfp4ctl.tune.state import TuneState
from nvfp4ctl.tune.table import read_table

from tune_fakes import FakeWorker, fake_compile

SHORT_K, LONG_K = (128, 256, 256, 1), (128, 7168, 16384, 1)
SHAPES = [SHORT_K, LONG_K]


def timing(values: dict, case: Case) -> dict:
    live = int(values.get("TINY_LIVE", 8))
    split = int(values.get("TINY_SPLIT", 2 if case.k == 256 else 1))  # the shipped table: SPLIT 2 for 128x256x256
    us = 10.0 * (0.7 if live == 256 else 1.0) * (0.8 if split == 2 and case.k > 1000 else 1.0)
    us *= 1.1 if split == 2 and case.k <= 1000 else 1.0
    return {"status": OK, "us": us, "err_us": 0.01, "runs": 20}


def _tune(kernel: Path, tmp_path: Path, write: bool = True, timing: Callable[[dict, Case], dict] = timing,
          shapes: list[tuple[int, ...]] = SHAPES) -> TuneReport:
    knobs = discover(kernel)
    table = read_table(knobs.dispatch, knobs)
    report = TuneReport(knobs=knobs, shapes=list(shapes), compile_only=False)
    cases = {s: Case(*s, seed=1111) for s in shapes}
    with CompilePool(kernel, "sm_90a", compile_fn=fake_compile, executor=ThreadPoolExecutor(2)) as builds, \
            GpuPool([NamedWorker("GPU 0", FakeWorker(timing))], {}, timeout_s=10) as gpus:
        evaluator = Evaluator(builds, gpus, TuneState(tmp_path / "state.json", "k"), cases, report, lambda *_: None)
        return tune(knobs, start_configs(knobs, list(shapes), table), table, evaluator, SearchSettings(), write=write)


def test_winners_go_into_the_table_and_the_shipped_build_is_timed_again(tiny_copy: Path, tmp_path: Path) -> None:
    report = _tune(tiny_copy, tmp_path)
    knobs = discover(tiny_copy)
    table = read_table(knobs.dispatch, knobs)
    assert table.plan == {SHORT_K: {"TINY_SPLIT": 1}, LONG_K: {"TINY_SPLIT": 2}}
    assert table.kernel == {"TINY_LIVE": 256}
    assert report.written == [knobs.dispatch]
    assert set(report.new_table) == set(SHAPES) and all(r.ok for r in report.new_table.values())
    assert report.current(SHORT_K).us == 11.0  # the old table's SPLIT 2 on the short shape


REFUSED = (96, 256, 256, 1)  # an m the tiny kernel does not take, whatever its knobs


def _refusing(values: dict, case: Case) -> dict:
    """Every candidate refuses m=96, as a binding refuses what its kernel's _unsupported names."""
    if case.m == 96:
        return {"status": UNSUPPORTED, "message": "m must be a multiple of 128 (the kernel's tile M)"}
    return timing(values, case)


def test_a_shape_every_candidate_refuses_is_said_once_and_the_others_are_tuned(tiny_copy: Path, tmp_path: Path) -> None:
    """Every candidate was thrown out on such a shape ("rejected: wrong (custom_kernel raised ValueError: unsupported
    shape ...)" on each), and a kernel knob's value, judged by its geomean over every shape, could never win."""
    from nvfp4ctl.tune import render

    report = _tune(tiny_copy, tmp_path, timing=_refusing, shapes=[*SHAPES, REFUSED])
    assert report.shapes == SHAPES and report.unsupported == {REFUSED: "m must be a multiple of 128 (the kernel's tile M)"}
    assert report.notes == ["the kernel does not take 96x256x256 (m must be a multiple of 128 (the kernel's tile M)):"
                            " left out, the other 2 shapes tuned"]
    knobs = discover(tiny_copy)
    table = read_table(knobs.dispatch, knobs)
    assert table.kernel == {"TINY_LIVE": 256}  # the kernel knob still won over the shapes the kernel takes
    assert REFUSED not in table.plan and set(report.new_table) == set(SHAPES)
    line = render.result_line(report)
    assert line.startswith("2 shapes (1 more left out: the kernel does not take 96x256x256), ") and "(0 rejected" in line
    assert render.to_dict(report)["unsupported_shapes"] == [
        {"shape": [96, 256, 256, 1], "key": "96x256x256", "label": "96x256x256", "constraint": "m must be a multiple of 128 (the kernel's tile M)"}]


def test_a_tune_whose_every_shape_is_refused_is_an_input_error(tiny_copy: Path, tmp_path: Path) -> None:
    from nvfp4ctl.errors import UsageError

    with pytest.raises(UsageError, match=r"^the kernel does not take any shape to tune: 96x256x256 \(m must be"):
        _tune(tiny_copy, tmp_path, timing=_refusing, shapes=[REFUSED])


def test_without_a_kernel_block_the_kernel_set_becomes_the_defaults(tiny_copy: Path, tmp_path: Path) -> None:
    dispatch = tiny_copy.with_name("tiny_dispatch.cuh")
    dispatch.write_text("\n".join(line for line in dispatch.read_text().splitlines() if "kernel-knobs" not in line) + "\n")
    report = _tune(tiny_copy, tmp_path)
    config = tiny_copy.with_name("tiny_config.cuh")
    assert "#define TINY_LIVE 256" in config.read_text() and "#define TINY_SPLIT 1" in config.read_text()
    assert report.written == [dispatch, config]
    assert discover(tiny_copy).by_name("LIVE").default == 256


def test_no_write_leaves_the_files(tiny_copy: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_text() for p in tiny_copy.parent.iterdir()}
    report = _tune(tiny_copy, tmp_path, write=False)
    assert report.written == [] and "--no-write" in report.table_note
    assert {p.name: p.read_text() for p in tiny_copy.parent.iterdir() if p.name in before} == before


def test_the_dispatch_file_is_found_by_its_marker(tiny_copy: Path) -> None:
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_text(config.read_text().replace("// nvfp4ctl:dispatch file=tiny_dispatch.cuh\n", ""))
    assert discover(tiny_copy).dispatch == tiny_copy.with_name("tiny_dispatch.cuh").resolve()


def test_real_builds_in_the_process_pool_feed_the_gpu_pool(tiny_copy: Path, tmp_path: Path) -> None:
    """The tiny kernel really compiled (spawned pool, build cache, -D defines); the spilling candidate
    never reaches a GPU; the others arrive with the artifact a worker would load."""
    seen: list[dict] = []

    def from_defines(values: dict, case: Case) -> dict:
        return {"status": OK, "us": 5.0, "err_us": 0.0, "runs": 3}

    class Recording(FakeWorker):
        def call(self, job, *, label, timeout_s=None, **payload):
            seen.append(payload["artifact"])
            return from_defines({}, payload["case"])

    knobs = discover(tiny_copy)
    table = read_table(knobs.dispatch, knobs)
    report = TuneReport(knobs=knobs, shapes=[SHORT_K], compile_only=False)
    with CompilePool(tiny_copy, "sm_90a", jobs=2) as builds, GpuPool([NamedWorker("GPU 0", Recording(timing))], {}, 10) as gpus:
        evaluator = Evaluator(builds, gpus, TuneState(tmp_path / "state.json", "k"), {SHORT_K: Case(*SHORT_K, seed=1111)},
                              report, lambda *_: None)
        tune(knobs, start_configs(knobs, [SHORT_K], table), table, evaluator, SearchSettings(), write=False)
    spilled = [cid for cid, build in report.builds.items() if build.status == "spills"]
    assert len(spilled) == 1 and "TINY_LIVE=256" in spilled[0]
    assert all(a["kind"] == "kernel" and a["arch"] == "sm_90a" and len(a["key"]) == 64 for a in seen)
    assert sorted(len(a["defines"]) for a in seen) == [0, 3, 3]  # the shipped build, the start, SPLIT=2
    assert not any("TINY_LIVE=256" in a["defines"] for a in seen)


def test_winners_merge_into_the_table_as_it_is_when_written(tiny_copy: Path, tmp_path: Path) -> None:
    """Another tune of the kernel writes its shape's entry while this one runs: this tune's winners
    go into the table as it is then (re-read under the lock), so that entry stays."""
    dispatch = tiny_copy.with_name("tiny_dispatch.cuh")
    theirs = "    {512, 512, 7168, 1, PlanKnob::SPLIT, 2},\n"
    written = []

    def other_tune_writes_meanwhile(values: dict, case: Case) -> dict:
        if not written:  # once, while this tune times its first candidate
            text = dispatch.read_text()
            dispatch.write_text(text.replace("    // nvfp4ctl:dispatch end", theirs + "    // nvfp4ctl:dispatch end"))
            written.append(True)
        return timing(values, case)

    _tune(tiny_copy, tmp_path, timing=other_tune_writes_meanwhile)
    knobs = discover(tiny_copy)
    assert read_table(knobs.dispatch, knobs).plan == {
        SHORT_K: {"TINY_SPLIT": 1}, LONG_K: {"TINY_SPLIT": 2}, (512, 512, 7168, 1): {"TINY_SPLIT": 2}}


def test_a_transient_build_failure_is_built_again_on_resume_a_source_error_is_not(tmp_path: Path) -> None:
    """The build cache deleted mid-run is no verdict on the candidate: a resumed tune rebuilds it;
    a compiler diagnostic about the source is, and is answered from the resume state."""
    from nvfp4ctl.tune.knobs import Config
    from nvfp4ctl.tune.results import COMPILE_ERROR, BuildResult

    from tune_fakes import make_knobs

    knobs = make_knobs(("K_A", (0, 1), 0, "kernel"))
    flaky, broken = Config.of({"K_A": 0}, knobs), Config.of({"K_A": 1}, knobs)
    errors = {flaky.defines(): "Fatal error: can't create /cache/tmp/x.o: No such file or directory",
              broken.defines(): "fake.cu:12: static assertion failed: K_A=1 is not supported"}
    built: list[tuple[str, ...]] = []

    def run(failing: bool) -> dict:
        def compile_fn(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
            built.append(defines)
            if failing or defines == broken.defines():
                return BuildResult(COMPILE_ERROR, message=errors[defines])
            return fake_compile(source, arch, defines)

        report = TuneReport(knobs=knobs, shapes=[SHORT_K], compile_only=False)
        with CompilePool(Path("fake.cu"), "sm_90a", compile_fn=compile_fn, executor=ThreadPoolExecutor(2)) as builds, \
                GpuPool([NamedWorker("GPU 0", FakeWorker(timing))], {}, timeout_s=10) as gpus:
            evaluator = Evaluator(builds, gpus, TuneState(tmp_path / "state.json", "k"),
                                  {SHORT_K: Case(*SHORT_K, seed=1111)}, report, lambda *_: None)
            found = evaluator([(flaky, SHORT_K), (broken, SHORT_K)], "step")
        return {config.id: found[(config.id, SHORT_K)].status for config in (flaky, broken)}

    assert run(failing=True) == {flaky.id: COMPILE_ERROR, broken.id: COMPILE_ERROR}
    built.clear()
    assert run(failing=False) == {flaky.id: OK, broken.id: COMPILE_ERROR}  # resumed
    assert built == [flaky.defines()]  # the source error came from the resume state


def test_what_counts_as_the_sources_own_failure() -> None:
    from nvfp4ctl.tune.results import COMPILE_ERROR, BuildResult

    def lasting(message: str) -> bool:
        return BuildResult(COMPILE_ERROR, message=message).lasting

    assert lasting('k.cu:88: error: identifier "signal_done" is undefined')  # a quoted name is the source's
    assert lasting('k.cu:3: catastrophic error: cannot open source file "missing.cuh"')  # a missing #include
    assert lasting("ptxas error: Entry function 'k' uses too much shared data")
    assert not lasting("Fatal error: can't create /cache/tmp/x.o: No such file or directory")
    assert not lasting("k.cu:1: nvcc was killed by signal 9")


def test_a_compile_only_progress_total_is_the_builds_it_makes(tiny_copy: Path, tmp_path: Path) -> None:
    """Its bar advances once per build; its total counted (candidate, shape) pairs, so a tiny tune's bar
    stopped at 4/10 (shapes with one start share their builds)."""
    knobs = discover(tiny_copy)
    shapes = [SHORT_K, LONG_K, (256, 7168, 16384, 1)]  # the third has no table entry: the declared defaults
    table = read_table(knobs.dispatch, knobs)
    run, report, steps = _compile_only(tiny_copy, knobs, shapes, table, fake_compile, tmp_path)
    assert run.progress_total() == sum(steps) == len(report.builds)


def _compile_only(source: Path, knobs, shapes, table, compile_fn, tmp_path: Path):
    """(the run, its report, the progress steps) of a compile-only tune of `source` from its start."""
    from nvfp4ctl.tune.session import compile_only
    from nvfp4ctl.tune.setup import TuneRun

    cases = {s: Case(*s, seed=1111) for s in shapes}
    run = TuneRun(source=source, label=source.name, chosen_by="--kernel", arch="sm_90a", knobs=knobs,
                  table=table, task=None, cases=cases, device="cpu", gpus=[], compile_only=True, timeout_s=10,
                  gpu_name="none")
    steps: list[int] = []
    report = TuneReport(knobs=knobs, shapes=shapes, compile_only=True)
    with CompilePool(source, "sm_90a", compile_fn=compile_fn, executor=ThreadPoolExecutor(2)) as builds:
        evaluator = Evaluator(builds, None, TuneState(tmp_path / "state.json", "k"), cases, report,
                              lambda _, done: steps.append(done))
        compile_only(knobs, start_configs(knobs, shapes, table), evaluator)
    return run, report, steps


def test_a_spilling_build_says_its_spills_as_the_spills_column_counts_them(monkeypatch) -> None:
    """The column shows a build's stores plus loads (build's spill_bytes: 4.5 KiB) and the reason line said
    "2.2 KiB stored / 2.2 KiB loaded": one number now means the same in both, its parts after it."""
    from nvfp4ctl.build import builder
    from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck
    from nvfp4ctl.kernel_cells import byte_size
    from nvfp4ctl.tune.compile_pool import compile_candidate

    functions = (FunctionUsage("_Z5chainv", True, registers=255, spill_stores=2304, spill_loads=2304),
                 FunctionUsage("_Z6helperv", False, spill_stores=1024, spill_loads=512))
    report = BuildReport(Path("k.cu"), "sm_90a", "key", Path("entry"), None, functions,
                         TensorOpCheck("HGMMA", (), None, checked=False), compile_s=1.0)
    monkeypatch.setattr(builder, "build_kernel", lambda source, arch, defines=(): report)
    built = compile_candidate("k.cu", "sm_90a", ())
    assert built.status == "spills" and byte_size(built.spill_bytes) == "6.0 KiB"
    assert built.message == ("chain spills 4.5 KiB (2.2 KiB stored, 2.2 KiB loaded),"
                             " helper spills 1.5 KiB (1.0 KiB stored, 512 B loaded)")


def test_a_build_keeps_each_kernel_and_names_its_heaviest(monkeypatch) -> None:
    """Its registers and smem were the heaviest kernel's with no name, and its other kernels were lost:
    candidates could not be compared kernel by kernel (render.compile_table)."""
    from nvfp4ctl.build import builder
    from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck
    from nvfp4ctl.tune.compile_pool import compile_candidate
    from nvfp4ctl.tune.results import BuildResult

    functions = (FunctionUsage("_Z5wgmmav", True, registers=168), FunctionUsage("_Z6helperv", False, registers=30),
                 FunctionUsage("_Z6directv", True, registers=208, shared_bytes=32768))
    report = BuildReport(Path("k.cu"), "sm_90a", "key", Path("entry"), None, functions,
                         TensorOpCheck("HGMMA", (), None, checked=False), compile_s=1.0)
    monkeypatch.setattr(builder, "build_kernel", lambda source, arch, defines=(): report)
    built = compile_candidate("k.cu", "sm_90a", ())
    assert (built.kernel, built.registers, built.shared_bytes) == ("direct", 208, 32768)
    assert built.kernels == (("wgmma", 168, 0), ("direct", 208, 32768))
    assert BuildResult.from_dict(json.loads(json.dumps(built.to_dict()))) == built  # as a resume state keeps it


def test_the_headline_says_no_dispatch_table_once(tiny_copy: Path) -> None:
    """A kernel without a table was headed "· table no dispatch table"."""
    from dataclasses import replace

    from nvfp4ctl.tune.setup import TuneRun

    knobs = discover(tiny_copy)
    run = TuneRun(source=tiny_copy, label="tiny_knobs.cu", chosen_by="--kernel", arch="sm_90a", knobs=knobs,
                  table=None, task=None, cases={SHORT_K: Case(*SHORT_K, seed=1111)}, device="cpu", gpus=[],
                  compile_only=True, timeout_s=10, gpu_name="none")
    assert run.headline().endswith(" · compile-only · table tiny_dispatch.cuh")
    run.knobs = replace(knobs, dispatch=None)
    assert run.headline().endswith(" · compile-only · no dispatch table")


def test_a_timed_tune_without_a_table_says_at_the_start_that_no_winners_will_be_written(tiny_copy: Path) -> None:
    """A kernel without a dispatch table ran a whole timed tune to end with "names no dispatch file: winners not
    written"; its headline said only "no dispatch table"."""
    from dataclasses import replace

    from nvfp4ctl.tune.setup import TuneRun

    knobs = replace(discover(tiny_copy), dispatch=None)
    run = TuneRun(source=tiny_copy, label="tiny_knobs.cu", chosen_by="--kernel", arch="sm_90a", knobs=knobs,
                  table=None, task=None, cases={SHORT_K: Case(*SHORT_K, seed=1111)}, device="cuda", gpus=["0"],
                  compile_only=False, timeout_s=10, gpu_name="H100")
    from nvfp4ctl.project import shipped

    assert (" · no dispatch table, so no winners written (declare one: `// nvfp4ctl:dispatch file=NAME` in the"
            f" kernel, {shipped('docs') / 'tune.md'}) · timeout ") in run.headline()
    assert " · no dispatch table · timeout " in replace(run, write=False).headline()  # --no-write: nothing to say


def test_a_spill_resumed_from_an_older_state_is_worded_as_now(tmp_path: Path) -> None:
    """A spilling candidate's (candidate, shape) result was saved with its reason as a sentence, and a
    resumed tune showed an older nvfp4ctl's wording ("2.2 KiB stored / 2.2 KiB loaded") in its ranking."""
    import json

    from nvfp4ctl.tune.knobs import Config
    from nvfp4ctl.tune.results import SPILLS, BuildResult, spill_reason

    from tune_fakes import make_knobs

    knobs = make_knobs(("K_A", (0, 1), 0, "kernel"))
    spilling = Config.of({"K_A": 1}, knobs)
    spilled = (("chain", 2304, 2304),)
    built: list[tuple[str, ...]] = []

    def compile_fn(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
        built.append(defines)
        return BuildResult(SPILLS, registers=255, spill_bytes=4608, spilled=spilled, message=spill_reason(spilled))

    def run() -> str:
        report = TuneReport(knobs=knobs, shapes=[SHORT_K], compile_only=False)
        with CompilePool(Path("fake.cu"), "sm_90a", compile_fn=compile_fn, executor=ThreadPoolExecutor(2)) as builds, \
                GpuPool([NamedWorker("GPU 0", FakeWorker(timing))], {}, timeout_s=10) as gpus:
            evaluator = Evaluator(builds, gpus, TuneState(tmp_path / "state.json", "k"),
                                  {SHORT_K: Case(*SHORT_K, seed=1111)}, report, lambda *_: None)
            return evaluator([(spilling, SHORT_K)], "step")[(spilling.id, SHORT_K)].message

    def saved_as_before(keep_spills: bool) -> None:
        state = json.loads((tmp_path / "state.json").read_text())
        for build in state["builds"].values():
            build["message"] = "chain spills 2.2 KiB stored / 2.2 KiB loaded"
            if not keep_spills:
                del build["spilled"]
        for result in state["measurements"].values():
            result["message"] = "chain spills 2.2 KiB stored / 2.2 KiB loaded"
        (tmp_path / "state.json").write_text(json.dumps(state))

    now = "chain spills 4.5 KiB (2.2 KiB stored, 2.2 KiB loaded)"
    assert run() == now
    saved_as_before(keep_spills=True)  # the spills kept: the reason rendered from them, nothing rebuilt
    built.clear()
    assert run() == now and built == []
    saved_as_before(keep_spills=False)  # a sentence alone: built again
    assert run() == now and built == [spilling.defines()]


def test_a_kernel_without_a_table_builds_and_times_its_defaults_once(tiny_without_table: Path, tmp_path: Path) -> None:
    """Its build without -D ("kernel's defaults") and the start (the same values as -D) were built,
    timed and listed apart: one compile and one row too many, where nothing tells them apart."""
    from nvfp4ctl.tune.render import compile_table, ranked_table
    from nvfp4ctl.tune.session import CURRENT

    knobs = discover(tiny_without_table)
    cases = {s: Case(*s, seed=1111) for s in SHAPES}
    start = start_configs(knobs, SHAPES, None)
    built: list[tuple[str, ...]] = []

    def recording_compile(source: str, arch: str, defines: tuple[str, ...]):
        built.append(defines)
        return fake_compile(source, arch, defines)

    run, report, steps = _compile_only(tiny_without_table, knobs, SHAPES, None, recording_compile, tmp_path)
    assert sorted(built) == sorted([(), start[SHORT_K].with_value("TINY_SPLIT", 2).defines(),
                                    start[SHORT_K].with_value("TINY_LIVE", 256).defines()])
    assert [row[:2] for row in compile_table(report)[1]] == [
        ["kernel's defaults = start", "every shape"], ["SPLIT=2", "every shape"], ["LIVE=256", "every shape"]]
    assert run.progress_total() == sum(steps) == 3

    built.clear()
    report = TuneReport(knobs=knobs, shapes=SHAPES, compile_only=False)
    with CompilePool(tiny_without_table, "sm_90a", compile_fn=recording_compile, executor=ThreadPoolExecutor(2)) as builds, \
            GpuPool([NamedWorker("GPU 0", FakeWorker(lambda values, case: timing({"TINY_SPLIT": 1, **values}, case)))],
                    {}, timeout_s=10) as gpus:
        evaluator = Evaluator(builds, gpus, TuneState(tmp_path / "t.json", "k"), cases, report,
                              lambda _, done: steps.append(done))
        steps.clear()
        tune(knobs, start, None, evaluator, SearchSettings())
    assert built.count(()) == 1 and start[SHORT_K].defines() not in built
    assert {cid for cid, _ in report.measurements} == {CURRENT, *(c.id for c in report.configs.values() if c)}
    assert start[SHORT_K].id not in report.configs
    assert {s: report.search.best[s]["TINY_SPLIT"] for s in SHAPES} == {SHORT_K: 1, LONG_K: 2}  # searched from it
    assert report.current(SHORT_K).us == 10.0  # the declared defaults (no table's SPLIT 2)
    labels = [row[1] for row in ranked_table(report, SHORT_K)[1]]
    assert labels.count("kernel's defaults = start") == 1 and "start" not in labels
    run.compile_only = False
    assert run.progress_total() == sum(steps)  # no table written: none timed again


class _RecordingBar:
    """Stands in for rich's Progress: the bar's total and completed count after each update."""

    def __init__(self) -> None:
        self.total, self.completed, self.seen = 0, 0, []

    def add_task(self, description: str, total: int) -> int:
        self.total = total
        return 0

    def update(self, task: int, description: str | None = None, advance: int = 0, total: int | None = None) -> None:
        self.completed += advance
        self.total = self.total if total is None else total
        self.seen.append((self.completed, self.total))


@pytest.mark.parametrize("rounds, write, budget_s", [(1, False, None), (1, True, None), (3, True, None),
                                                     (3, False, None), (1, True, 1e-9)])
def test_a_timed_tunes_progress_ends_with_its_total_its_work(tiny_copy: Path, tmp_path: Path, rounds: int,
                                                              write: bool, budget_s: float | None) -> None:
    """The total counted every round of --rounds N, its start again each round, and a new table whether or
    not one was written: a tiny tune ended at 8 of 10 with --no-write, at 12 of 22 with --rounds 3. It is the
    first round's work, grown as a later round or the new table adds some, and what was done once the search
    stops."""
    settings = SearchSettings(rounds=rounds, budget_s=budget_s)
    run, progress, bar, report = _timed_tune_with_a_bar(tiny_copy, tmp_path, settings, write, fake_compile)
    assert all(completed <= total for completed, total in progress.seen)
    work = len(report.measurements) + len(report.new_table)
    before_end = progress.total
    bar.end()
    assert progress.completed == progress.total == work
    if budget_s is None:
        assert before_end == work  # the total was the work, not grown past it and cut back at the end
    if rounds == 1 and not write:  # the first round's count is exact: it never moved
        assert {total for _, total in progress.seen} == {run.progress_total()}


def test_a_new_table_that_does_not_build_still_ends_the_progress(tiny_copy: Path, tmp_path: Path) -> None:
    """The shipped build with the new table rejected: its shapes were counted but never advanced."""
    from nvfp4ctl.tune.results import COMPILE_ERROR, BuildResult

    shipped_builds: list[int] = []

    def new_table_breaks(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
        if not defines:
            shipped_builds.append(1)
            if len(shipped_builds) > 1:
                return BuildResult(COMPILE_ERROR, message="tiny_dispatch.cuh:3: error: expected a '}'")
        return fake_compile(source, arch, defines)

    _, progress, bar, report = _timed_tune_with_a_bar(tiny_copy, tmp_path, SearchSettings(), True, new_table_breaks)
    assert report.new_table and not any(r.ok for r in report.new_table.values())
    assert progress.completed == progress.total == len(report.measurements) + len(report.new_table)


def _timed_tune_with_a_bar(tiny_copy: Path, tmp_path: Path, settings: SearchSettings, write: bool, compile_fn):
    """(the run, the recorded bar, the WorkBar, the report) of a timed tune of the tiny kernel on fake pools."""
    from nvfp4ctl.tune.progress import WorkBar
    from nvfp4ctl.tune.setup import TuneRun

    knobs = discover(tiny_copy)
    table = read_table(knobs.dispatch, knobs)
    cases = {s: Case(*s, seed=1111) for s in SHAPES}
    run = TuneRun(source=tiny_copy, label=tiny_copy.name, chosen_by="--kernel", arch="sm_90a", knobs=knobs,
                  table=table, task=None, cases=cases, device="cuda", gpus=["0"], compile_only=False, timeout_s=10,
                  gpu_name="Fake H100")
    progress = _RecordingBar()
    bar = WorkBar(progress, run.progress_total())
    report = TuneReport(knobs=knobs, shapes=SHAPES, compile_only=False)
    with CompilePool(tiny_copy, "sm_90a", compile_fn=compile_fn, executor=ThreadPoolExecutor(2)) as builds, \
            GpuPool([NamedWorker("GPU 0", FakeWorker(timing))], {}, timeout_s=10) as gpus:
        evaluator = Evaluator(builds, gpus, TuneState(tmp_path / "state.json", "k"), cases, report, bar.step,
                              bar.expect)
        tune(knobs, start_configs(knobs, SHAPES, table), table, evaluator, settings, write=write)
    return run, progress, bar, report


def test_without_a_bar_the_progress_is_a_plain_line_per_step_and_now_and_then() -> None:
    """With stderr not a terminal the bar is not drawn, and a compile-only round of 13 builds printed
    nothing for ten minutes: each step's start gets a line, then one at most every PLAIN_LINE_EVERY_S."""
    from nvfp4ctl.progress_lines import PLAIN_LINE_EVERY_S
    from nvfp4ctl.tune.progress import WorkBar

    said: list[str] = []
    now = [100.0]
    bar = WorkBar(_RecordingBar(), 13, say=said.append, clock=lambda: now[0])
    for _ in range(4):  # a build every 20 s
        now[0] += 20.0
        bar.step("compiling", 1)
    assert PLAIN_LINE_EVERY_S == 30.0
    assert said == ["compiling: 1 of 13, 20 s", "compiling: 3 of 13, 60 s"]
    bar.step("K", 0)  # a new step says so at once
    assert said[-1] == "K: 4 of 13, 80 s"


def test_inside_with_a_step_that_blocks_is_said_again_without_a_new_step(monkeypatch) -> None:
    """The bar said a step only when the next one was reported: one long build (or a GPU worker that
    hangs until its watchdog) was silent however long it took. Inside `with` the heartbeat says it again."""
    import time

    from nvfp4ctl import progress_lines
    from nvfp4ctl.tune.progress import WorkBar

    monkeypatch.setattr(progress_lines, "_TICK_S", 0.01)
    said: list[str] = []
    now = [100.0]
    with WorkBar(_RecordingBar(), 13, say=said.append, clock=lambda: now[0]) as bar:
        bar.step("compiling", 0)
        now[0] += progress_lines.PLAIN_LINE_EVERY_S + 1  # no step reported since
        deadline = time.monotonic() + 5
        while len(said) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert said == ["compiling: 0 of 13, 0 s", "compiling: 0 of 13, 31 s"]


@pytest.mark.parametrize("compile_only_round", [True, False])
def test_a_step_is_said_as_it_starts_not_when_its_first_build_lands(tmp_path: Path, compile_only_round: bool) -> None:
    """The step was first reported when a build landed, and the heartbeat says nothing before a step: after the
    headline nothing came until `compiling: 1 of 9, 55 s`. Its line comes as it starts, with nothing done yet."""
    from nvfp4ctl.tune.progress import WorkBar
    from nvfp4ctl.tune.session import compile_only
    from nvfp4ctl.tune.table import DispatchTable

    from tune_fakes import make_knobs

    knobs = make_knobs(("X_K", (1, 2, 3), 1, "kernel"))
    shapes = [(128, 256, 256, 1)]
    said: list[str] = []
    bar = WorkBar(_RecordingBar(), 3, say=said.append, clock=lambda: 100.0)
    report = TuneReport(knobs=knobs, shapes=shapes, compile_only=compile_only_round)
    cases = {s: Case(*s, seed=1111) for s in shapes}
    table = DispatchTable(plan={}, kernel={}, has_kernel_block=True)
    with CompilePool(Path("fake.cu"), "sm_90a", compile_fn=fake_compile, executor=ThreadPoolExecutor(2)) as pool, \
            GpuPool([NamedWorker("GPU 0", FakeWorker(timing))], {}, timeout_s=10) as gpus:
        evaluator = Evaluator(pool, None if compile_only_round else gpus, TuneState(tmp_path / "state.json", "k"),
                              cases, report, bar.step, bar.expect)
        start = start_configs(knobs, shapes, table)
        if compile_only_round:
            compile_only(knobs, start, evaluator)
        else:
            tune(knobs, start, table, evaluator, SearchSettings(), write=False)
    assert re.fullmatch(r"[^:]+: 0 of \d+, 0 s", said[0]), said


def test_a_progress_line_goes_to_stderr_where_no_bar_is_drawn_and_not_under_q(monkeypatch) -> None:
    from nvfp4ctl.console import Console

    console = Console()
    assert console.draws_no_bar  # pytest's stderr is no terminal
    lines: list[str] = []
    monkeypatch.setattr(console.err, "print", lambda text: lines.append(str(text)))
    console.progress_line("compiling: 1 of 13, 45 s")
    assert lines == ["compiling: 1 of 13, 45 s"]
    assert not Console(verbosity=-1).draws_no_bar  # -q: no progress at all


@pytest.mark.parametrize("compile_only_round", [False, True])
def test_a_kernel_knobs_values_are_built_once_per_distinct_start(tmp_path: Path, compile_only_round: bool) -> None:
    """A candidate sets every knob as -D, the plan knobs of its shape's start too, so a kernel knob's value is
    one build per distinct start (docs/tune.md: 19 builds for 3 values over 13 shapes of 6 starts), and
    never one set of defines twice; over shapes that share one start, one build per value."""
    from nvfp4ctl.tune.session import compile_only
    from nvfp4ctl.tune.table import DispatchTable

    from tune_fakes import make_knobs

    knobs = make_knobs(("X_K", (1, 2, 3), 1, "kernel"), ("X_P", (0, 1, 2, 3, 4, 5), 0, "plan"))
    shapes = [(128 * (i + 1), 256, 256, 1) for i in range(13)]
    compiled: list[tuple[str, ...]] = []

    def counted(source: str, arch: str, defines: tuple[str, ...]):
        compiled.append(defines)
        return fake_compile(source, arch, defines)

    for plans, builds in ((6, 19), (1, 4)):
        compiled.clear()
        table = DispatchTable(plan={s: {"X_P": i % plans} for i, s in enumerate(shapes)}, kernel={}, has_kernel_block=True)
        report = TuneReport(knobs=knobs, shapes=shapes, compile_only=compile_only_round)
        cases = {s: Case(*s, seed=1111) for s in shapes}
        with CompilePool(Path("fake.cu"), "sm_90a", compile_fn=counted, executor=ThreadPoolExecutor(2)) as pool, \
                GpuPool([NamedWorker("GPU 0", FakeWorker(timing))], {}, timeout_s=10) as gpus:
            evaluator = Evaluator(pool, None if compile_only_round else gpus, TuneState(tmp_path / f"{plans}.json", "k"),
                                  cases, report, lambda *_: None)
            start = start_configs(knobs, shapes, table)
            if compile_only_round:
                compile_only(knobs, start, evaluator, only=frozenset({"X_K"}))
            else:
                tune(knobs, start, table, evaluator, SearchSettings(only=frozenset({"X_K"})), write=False)
        assert len(compiled) == len(set(compiled)) == len(report.builds) == builds


# P's values as built: 1 and 2 the same program (SASS and host code); 3 the SASS of 0 with other host code,
# as a knob only the host code reads (a split count) builds
_PROGRAMS = {0: ("sass-a", "host-0"), 1: ("sass-b", "host-1"), 2: ("sass-b", "host-1"), 3: ("sass-a", "host-3")}


def _twin_compile(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
    from dataclasses import replace

    build = fake_compile(source, arch, defines)
    sass, host = _PROGRAMS[int(build.artifact["values"].get("P", 0))]
    return replace(build, code_digest=sass, host_digest=host, data_digest="data")


def _twin_run(tmp_path: Path, worker: FakeWorker, state: TuneState | None = None,
              compile_fn: Callable[[str, str, tuple[str, ...]], BuildResult] = _twin_compile) -> tuple[object, TuneReport]:
    from nvfp4ctl.tune.search import coordinate_descent

    from tune_fakes import make_knobs

    knobs = make_knobs(("P", (0, 1, 2, 3), 0, "plan"))
    report = TuneReport(knobs=knobs, shapes=[SHORT_K], compile_only=False)
    with CompilePool(Path("fake.cu"), "sm_90a", compile_fn=compile_fn, executor=ThreadPoolExecutor(2)) as builds, \
            GpuPool([NamedWorker("GPU 0", worker)], {}, timeout_s=10) as gpus:
        evaluator = Evaluator(builds, gpus, state or TuneState(tmp_path / "state.json", "k"),
                              {SHORT_K: Case(*SHORT_K, seed=1111)}, report, lambda *_: None)
        report.search = coordinate_descent(knobs, start_configs(knobs, [SHORT_K], None), evaluator,
                                           rematch=evaluator.rematch)
    return knobs, report


class _LuckyTwice(FakeWorker):
    """P=1 and P=2 (one program) lead the sweep by noise alone, 9.5 against 10 us; back to back with the
    start they are 10 at the first rematch and 9.0 at a second: a second draw of the noise for one program
    would hold. `timed`: each P run alone, then ("pair", P) for each rematch."""

    def __init__(self) -> None:
        super().__init__(timing=lambda values, case: {})
        self.timed: list[object] = []
        self._rematches = iter([10.0, 9.0])

    def call(self, job: str, *, label: str, timeout_s: float | None = None, **payload: object) -> object:
        from nvfp4ctl.tune.gpu_pool import PAIR_JOB

        def answer(us: float) -> dict:
            return {"status": OK, "us": us, "err_us": 0.01, "runs": 20}

        p = int(payload["artifact"]["values"].get("P", 0))
        if job != PAIR_JOB:
            self.timed.append(p)
            return answer(9.5 if p in (1, 2) else 10.0)
        self.timed.append(("pair", int(payload["challenger"]["values"]["P"])))
        return {"status": OK, "current": answer(10.0), "challenger": answer(next(self._rematches))}


def test_a_candidate_building_the_same_program_as_one_timed_gets_its_result(tmp_path: Path) -> None:
    """P=2 builds P=1's SASS and host code: it is not timed, and takes P=1's result, marked as such; P=3, the
    SASS of P=0 with other host code (a launch of its own), is timed."""
    from nvfp4ctl.tune import render

    worker = _LuckyTwice()
    knobs, report = _twin_run(tmp_path, worker)
    alone = [p for p in worker.timed if isinstance(p, int)]
    assert sorted(alone) == sorted([0, 3, 1 if 1 in alone else 2])  # one of the twins, whichever built first; P=3 too
    ran, twin = "P=1", "P=2"  # shown as the first in the sweep's order, whichever ran
    ids = {f"P={p}": report.search.start[SHORT_K].with_value("P", p).id for p in (1, 2)}
    assert report.measurements[(ids[twin], SHORT_K)] == _given(report.measurements[(ids[ran], SHORT_K)], ids[ran])
    _, rows, _ = render.ranked_table(report, SHORT_K, limit=None)
    verdicts = {row[1]: row[-1] for row in rows}
    assert verdicts[twin] == f"ok, same device code as {ran} (host code too): its result"
    assert verdicts[ran] == "ok" and verdicts["P=3"] == "ok"
    cells = {row[1]: (row[3], row[5]) for row in rows}  # ± and the GPU: the run's, shown on its own row alone
    assert cells[twin] == ("-", "-") and cells[ran] == ("0.01", "GPU 0")
    assert [row[1] for row in rows][:2] == [ran, twin]  # the one timed first, the same time
    ranked = {e["candidate"]: e for e in render.to_dict(report)["shapes"][0]["ranked"]}
    assert ranked[twin]["same_code_as"] == ran and ranked[ran]["same_code_as"] is None


def _given(result: Measurement, twin: str) -> Measurement:
    from dataclasses import replace

    return replace(result, same_code_as=twin)


def test_one_program_is_rematched_once_so_its_twin_never_wins_by_noise(tmp_path: Path) -> None:
    """P=1's sweep lead does not hold back to back; P=2, the same program, had a lead of its own in the sweep
    and a lucky rematch as the runner-up, and won: a second draw of the noise for one build."""
    worker = _LuckyTwice()
    _, report = _twin_run(tmp_path, worker)
    assert report.search.best == report.search.start  # nothing held
    assert [(r.challenger_id, r.kept) for r in report.search.rematches] == [("P=1", False)]  # the first in the sweep
    assert [p for p in worker.timed if isinstance(p, tuple)] == [("pair", 1)]


def test_a_resumed_run_gives_a_twin_the_result_it_was_given(tmp_path: Path) -> None:
    """The mark is saved with the result, so the rerun's table says the same as the run's."""
    _, first = _twin_run(tmp_path, _LuckyTwice())
    again = _LuckyTwice()
    _, report = _twin_run(tmp_path, again)
    assert again.timed == []  # every pair and rematch from the resume state
    assert report.measurements == first.measurements
    assert sum(bool(m.same_code_as) for m in report.measurements.values()) == 1


DEVICE_DATA = "device-data"  # the device data digest an entry's module stands for (_read_device_data)


def _read_device_data(module: Path) -> str:
    """compile_pool.device_data_digest_of for _entry_compile's entries, whose modules (built with the C compiler)
    hold no device image: the digest the entry stands for."""
    held = module.parent / DEVICE_DATA
    return held.read_text() if held.is_file() else ""


def _entry_compile(libraries: dict[str, Path], device_data: Callable[[str], str] = lambda p: "data"
                   ) -> Callable[[str, str, tuple[str, ...]], BuildResult]:
    """_twin_compile's programs as build cache entries: each a SASS listing (its source's path on an
    identifier line), a module, and the device data digest of P's value its module stands for, whose digests
    are worked out from the entry as compile_candidate does."""
    import hashlib
    import shutil
    from dataclasses import replace

    from nvfp4ctl.build import cache
    from nvfp4ctl.build.builder import module_name
    from nvfp4ctl.build.resources import save_sass
    from nvfp4ctl.tune.compile_pool import kernel_artifact, with_current_digests

    def compile_fn(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
        build = _twin_compile(source, arch, defines)
        sass, host = build.code_digest, build.host_digest
        key = hashlib.sha256(" ".join(defines).encode()).hexdigest()
        entry = cache.entry_dir(Path(source), arch, key)
        entry.mkdir(parents=True, exist_ok=True)
        save_sass(entry, f"\tcode for sm_90a\n\tidentifier = /src/{key[:8]}/fake.cu\n\t\tFunction : k\n\t/*0000*/ {sass} ;\n")
        (entry / DEVICE_DATA).write_text(device_data(build.artifact["values"].get("P", "0")))
        shutil.copy(libraries[host], entry / f"{module_name(Path(source), arch, key)}.so")
        artifact = kernel_artifact(source, arch, defines, key) | {"values": build.artifact["values"]}
        return with_current_digests(replace(build, artifact=artifact))

    return compile_fn


def _host_libraries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """_PROGRAMS' host codes as shared libraries (the cache in tmp_path, entries' device data as _read_device_data)."""
    import shutil
    import subprocess

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("needs a C compiler")
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("nvfp4ctl.tune.compile_pool.device_data_digest_of",
                        lambda module, sections: _read_device_data(module))
    (tmp_path / "host.c").write_text("int split_of(int k) { return k >= 1024 ? SPLIT : 1; }\n")
    libraries = {}
    for host in {host for _, host in _PROGRAMS.values()}:
        libraries[host] = tmp_path / f"{host}.so"
        subprocess.run([compiler, "-shared", "-fPIC", f"-DSPLIT={host[-1]}", str(tmp_path / "host.c"), "-o",
                        str(libraries[host])], check=True)
    return libraries


def test_a_run_resumed_from_an_earlier_format_finds_the_twins_a_fresh_run_finds(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An nvfp4ctl of format 2 saved each build's code digest as the SASS listing hashed less its identifier
    lines, and no host digest: resumed from its file, the twin built in the new run was timed, and its row
    lost the "same device code as" a fresh run gives it."""
    import hashlib

    from nvfp4ctl.build import cache
    from nvfp4ctl.build.resources import saved_sass

    compile_fn = _entry_compile(_host_libraries(tmp_path, monkeypatch))
    _, fresh = _twin_run(tmp_path, _LuckyTwice(), compile_fn=compile_fn)
    [(twin, ran)] = [(cid, m.same_code_as) for (cid, _), m in fresh.measurements.items() if m.same_code_as]

    # what an interrupted run of the format-2 nvfp4ctl left: the one twin timed, the other not reached
    saved = json.loads((tmp_path / "state.json").read_text())
    for build in saved["builds"].values():
        listing = saved_sass(cache.entry_dir(Path(build["artifact"]["source"]), "sm_90a", build["artifact"]["key"]))
        code = "\n".join(line for line in listing.splitlines() if not line.strip().startswith("identifier ="))
        build["code_digest"] = hashlib.sha256(code.encode()).hexdigest()
        del build["host_digest"]
    saved["measurements"] = {pair: found for pair, found in saved["measurements"].items()
                             if not pair.startswith((twin + "|", "P=3|"))}
    (tmp_path / "old.json").write_text(json.dumps(saved | {"format": 2, "key": "k2", "rematches": {}, "finished": False}))

    worker = _LuckyTwice()
    state = TuneState(tmp_path / "new.json", "k", earlier=[(tmp_path / "old.json", "k2")])
    _, resumed = _twin_run(tmp_path, worker, state=state, compile_fn=compile_fn)
    assert state.resumed == 2 and worker.timed == [3, ("pair", 1)]  # the twin not timed again
    assert resumed.measurements[(twin, SHORT_K)] == fresh.measurements[(twin, SHORT_K)]
    assert resumed.measurements[(twin, SHORT_K)].same_code_as == ran


def test_a_knob_held_in_the_device_images_data_makes_another_program(tmp_path: Path) -> None:
    """P=2 builds P=1's SASS and host code, but its device image holds other data (a `__constant__` table's
    values, a `__shared__` array's size: build.device_data): each is timed, neither given the other's result."""
    from dataclasses import replace

    def compile_fn(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
        build = _twin_compile(source, arch, defines)
        return replace(build, data_digest="data-2") if build.artifact["values"].get("P") == "2" else build

    worker = _LuckyTwice()
    _, report = _twin_run(tmp_path, worker, compile_fn=compile_fn)
    assert sorted(p for p in worker.timed if isinstance(p, int)) == [0, 1, 2, 3]
    assert not any(m.same_code_as for m in report.measurements.values())


def test_a_resumed_twin_that_only_an_earlier_nvfp4ctl_took_for_one_program_runs_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A format-3 file written before the device data digest: P=1 and P=2 were twins by their SASS and host
    code, while their device images hold other data. Resumed, the twin's saved result (the other's) is not
    taken: it is timed."""
    libraries = _host_libraries(tmp_path, monkeypatch)
    _twin_run(tmp_path, _LuckyTwice(), compile_fn=_entry_compile(libraries))
    saved = json.loads((tmp_path / "state.json").read_text())
    [twin] = [pair.split("|")[0] for pair, m in saved["measurements"].items() if m["same_code_as"]]
    for build in saved["builds"].values():  # as the earlier nvfp4ctl saved them
        del build["data_digest"]
    (tmp_path / "state.json").write_text(json.dumps(saved))

    from nvfp4ctl.build import cache

    for build in saved["builds"].values():  # the entries as they are: their images' data differs
        artifact = build["artifact"]
        entry = cache.entry_dir(Path(artifact["source"]), "sm_90a", artifact["key"])
        (entry / DEVICE_DATA).write_text(f"data-{artifact['values'].get('P', '0')}")

    worker = _LuckyTwice()
    _, resumed = _twin_run(tmp_path, worker, compile_fn=_entry_compile(libraries, lambda p: f"data-{p}"))
    assert [p for p in worker.timed if isinstance(p, int)] == [int(twin[-1])]
    assert resumed.measurements[(twin, SHORT_K)].same_code_as == ""


class _CrashOnce(FakeWorker):
    """The first run of program b (P=1, 2 and 3: one program) crashes, as a machine's hiccup may; every later
    run is ok. `timed`: each P run alone, then ("pair", P) for each rematch."""

    def __init__(self) -> None:
        super().__init__(timing=lambda values, case: {}, delay_s=0.3)
        self.timed: list[object] = []
        self.crashed = False

    def call(self, job: str, *, label: str, timeout_s: float | None = None, **payload: object) -> object:
        from nvfp4ctl.errors import KernelCrash
        from nvfp4ctl.tune.gpu_pool import PAIR_JOB

        def answer(us: float) -> dict:
            return {"status": OK, "us": us, "err_us": 0.01, "runs": 20}

        time.sleep(self.delay_s)
        if job == PAIR_JOB:
            self.timed.append(("pair", int(payload["challenger"]["values"]["P"])))
            return {"status": OK, "current": answer(10.0), "challenger": answer(10.0)}
        p = int(payload["artifact"]["values"].get("P", 0))
        self.timed.append(p)
        if p and not self.crashed:
            self.crashed = True
            raise KernelCrash("illegal memory access")
        return answer({0: 10.0, 1: 9.5, 2: 9.4, 3: 9.3}[p])


def _one_program_b(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
    """P=0 one program, P=1, 2 and 3 another."""
    from dataclasses import replace

    build = fake_compile(source, arch, defines)
    p = int(build.artifact["values"].get("P", 0))
    return replace(build, code_digest="sass-a" if p == 0 else "sass-b", host_digest="host", data_digest="data")


def test_twins_waiting_on_a_crashed_result_wait_on_one_rerun(tmp_path: Path) -> None:
    """The first of P=1, 2, 3 to run crashes: one twin runs again and the other takes its result, where each
    waiting twin was timed (one program timed twice more, each draw of the noise a lead of its own)."""
    worker = _CrashOnce()
    _, report = _twin_run(tmp_path, worker, compile_fn=_one_program_b)
    assert len([p for p in worker.timed if isinstance(p, int) and p]) == 2  # the crash and one rerun
    given = [m for (cid, _), m in report.measurements.items() if m.same_code_as]
    assert len(given) == 1 and given[0].ok
    assert len(report.search.rematches) <= 1


def test_the_first_twin_in_the_sweeps_order_is_shown_as_timed_whichever_built_first(tmp_path: Path) -> None:
    """P=1's build lands after P=2's, its twin: P=2 goes to the GPU (the builds are not waited for), and the
    result is shown as P=1's, P=2 given it, as when P=1 built first: the table, --json and the saved state
    read the same in every run."""
    import time as clock

    def slow_first_twin(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
        build = _twin_compile(source, arch, defines)
        if build.artifact["values"].get("P") == "1":
            clock.sleep(0.5)
        return build

    worker = _LuckyTwice()
    knobs, report = _twin_run(tmp_path, worker, compile_fn=slow_first_twin)
    assert 2 in worker.timed and 1 not in worker.timed  # what ran
    ids = {p: report.search.start[SHORT_K].with_value("P", p).id for p in (1, 2)}
    assert report.measurements[(ids[1], SHORT_K)].same_code_as == ""
    assert report.measurements[(ids[2], SHORT_K)] == _given(report.measurements[(ids[1], SHORT_K)], ids[1])
    saved = json.loads((tmp_path / "state.json").read_text())["measurements"]
    assert saved[f"{ids[2]}|128x256x256"]["same_code_as"] == ids[1] and not saved[f"{ids[1]}|128x256x256"]["same_code_as"]


def test_a_run_resumed_from_an_earlier_format_with_both_twins_timed_takes_the_first_ones_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Format 2 timed each twin itself: P=1 drew 9.5 us and P=2, its twin, 9.4. Resumed, both separate times
    were kept, and P=2's lucky draw could lead where a fresh run has one result for both: the saved results
    of one program fold into the first's in the candidates' order (not the fastest)."""
    compile_fn = _entry_compile(_host_libraries(tmp_path, monkeypatch))
    _, fresh = _twin_run(tmp_path, _LuckyTwice(), compile_fn=compile_fn)
    saved = json.loads((tmp_path / "state.json").read_text())
    ids = {p: fresh.search.start[SHORT_K].with_value("P", p).id for p in (1, 2)}
    for pair, found in saved["measurements"].items():  # each twin timed itself, as format 2 did
        if found.pop("same_code_as"):
            found["us"] = 9.4
    for build in saved["builds"].values():
        del build["host_digest"], build["data_digest"]
    (tmp_path / "old.json").write_text(json.dumps(saved | {"format": 2, "key": "k2", "rematches": {}, "finished": False}))

    worker = _LuckyTwice()
    state = TuneState(tmp_path / "new.json", "k", earlier=[(tmp_path / "old.json", "k2")])
    _, resumed = _twin_run(tmp_path, worker, state=state, compile_fn=compile_fn)
    assert resumed.measurements[(ids[2], SHORT_K)] == _given(resumed.measurements[(ids[1], SHORT_K)], ids[1])
    assert resumed.measurements[(ids[1], SHORT_K)].us == 9.5
    assert resumed.search.best == fresh.search.best
    assert [(r.challenger_id, r.kept) for r in resumed.search.rematches] == \
        [(r.challenger_id, r.kept) for r in fresh.search.rematches]
