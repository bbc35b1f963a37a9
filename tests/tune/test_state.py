"""The resume state file: what a rerun finds in it, from a file written now or by an older nvfp4ctl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4ctl.tune.results import OK, SPILLS, BuildResult, Measurement
from nvfp4ctl.tune.state import STATE_FORMAT, SavedRun, TuneState

SHAPE = (128, 256, 256, 1)
SPILLED = (("tiny::chain", 2304, 2304),)
CURRENT_REASON = "tiny::chain spills 4.5 KiB (2.2 KiB stored, 2.2 KiB loaded)"
OLD_REASON = "tiny::chain spills 2.2 KiB stored / 2.2 KiB loaded"  # an older nvfp4ctl's wording


def _saved(path: Path, builds: dict, measurements: dict, **more: object) -> None:
    path.write_text(json.dumps({"key": "k", "builds": builds, "measurements": measurements, "rematches": {}, **more}))


def _spill_build(**fields: object) -> dict:
    return BuildResult(SPILLS, registers=255, spill_bytes=4608, message=OLD_REASON, **fields).to_dict()


def test_a_spill_reason_is_rendered_from_its_spills_in_the_current_wording(tmp_path: Path) -> None:
    """The reason was stored as a sentence: a build resumed from a state kept the wording of the
    nvfp4ctl that saved it, and so did the (candidate, shape) results of that build."""
    _saved(tmp_path / "state.json", {"LIVE=256": _spill_build(spilled=SPILLED)},
           {"LIVE=256|128x256x256": Measurement(SPILLS, message=OLD_REASON).to_dict()})
    state = TuneState(tmp_path / "state.json", "k")
    assert state.build("LIVE=256").message == CURRENT_REASON
    assert state.measurement("LIVE=256", SHAPE).message == CURRENT_REASON


def test_a_spill_saved_without_its_spills_is_built_again(tmp_path: Path) -> None:
    """A state written before the spills were kept per function has only the old sentence: that build
    and its results are left to the rerun (a build-cache hit); everything else loads as it was."""
    ok = BuildResult(OK, registers=100, message="").to_dict()
    ok.pop("spilled")  # as an older nvfp4ctl wrote it
    spilled = _spill_build()
    spilled.pop("spilled")
    timed = Measurement(OK, us=10.0, runs=20).to_dict()
    _saved(tmp_path / "state.json", {"current table": ok, "LIVE=256": spilled},
           {"current table|128x256x256": timed, "LIVE=256|128x256x256": Measurement(SPILLS, message=OLD_REASON).to_dict()})
    state = TuneState(tmp_path / "state.json", "k")
    assert state.build("LIVE=256") is None and state.measurement("LIVE=256", SHAPE) is None
    assert state.build("current table") == BuildResult(OK, registers=100)
    assert state.measurement("current table", SHAPE) == Measurement.from_dict(timed)
    assert state.resumed == 1 and list(state.builds) == ["current table"]


def _reloaded(path: Path) -> TuneState:
    return TuneState(path, "k")


def test_the_file_says_whether_the_run_that_left_it_finished(tmp_path: Path) -> None:
    """A finished run's file was kept as it was, so a rerun could not tell it from an interrupted run's
    and said it "resumed" what nothing had interrupted."""
    path = tmp_path / "state.json"
    first = TuneState(path, "k")
    first.record("LIVE=8", SHAPE, Measurement(OK, us=10.0))
    interrupted = _reloaded(path).saved_run
    assert interrupted is not None and interrupted.finished is False and interrupted.saved_at
    first.finish()
    finished = _reloaded(path).saved_run
    assert finished is not None and finished.finished is True


def test_a_rerun_that_saves_nothing_keeps_the_time_of_the_results(tmp_path: Path) -> None:
    """Reused results date from the run that measured them, however often they are reused after."""
    path, stamp = tmp_path / "state.json", "2026-11-26T14:03:00Z"
    _saved(path, {}, {"LIVE=8|128x256x256": Measurement(OK, us=10.0).to_dict()}, finished=False, saved_at=stamp)
    _reloaded(path).finish()  # resumed everything, measured nothing, then finished
    assert _reloaded(path).saved_run == SavedRun(finished=True, saved_at=stamp)
    _reloaded(path).finish()  # reused, nothing measured
    assert _reloaded(path).saved_run == SavedRun(finished=True, saved_at=stamp)
    rerun = _reloaded(path)
    rerun.record("LIVE=256", SHAPE, Measurement(OK, us=9.0))  # a rerun measuring more, then interrupted
    saved = _reloaded(path).saved_run
    assert saved is not None and saved.finished is False and saved.saved_at != stamp


def test_a_state_written_before_runs_were_marked_loads(tmp_path: Path) -> None:
    """No "finished", no "saved_at": its results load, from a run that may have finished or not."""
    path = tmp_path / "state.json"
    _saved(path, {}, {"LIVE=8|128x256x256": Measurement(OK, us=10.0).to_dict()})
    state = _reloaded(path)
    assert state.resumed == 1 and state.saved_run is not None
    assert (state.saved_run.finished, state.saved_run.saved_at) == (None, None)
    state.finish()  # nothing of its own saved: finished now, still of no known time
    assert (_reloaded(path).saved_run.finished, _reloaded(path).saved_run.saved_at) == (True, None)


def test_nothing_saved_and_nothing_found_writes_no_file(tmp_path: Path) -> None:
    TuneState(tmp_path / "state.json", "k").finish()
    assert not (tmp_path / "state.json").exists()


def test_a_run_its_budget_stopped_says_so_and_a_later_whole_run_clears_it(tmp_path: Path) -> None:
    """It was marked finished like a run whose search was done: a rerun could not tell the two apart."""
    path, stamp = tmp_path / "state.json", "2026-11-26T14:03:00Z"
    first = TuneState(path, "k")
    first.record("LIVE=8", SHAPE, Measurement(OK, us=10.0))
    first.finish(stopped_by_budget_s=60.0)
    saved = _reloaded(path).saved_run
    assert saved is not None and saved.finished is True and saved.stopped_by_budget_s == 60.0
    _reloaded(path).finish()  # a rerun whose search got to its end from the results it found
    assert _reloaded(path).saved_run.stopped_by_budget_s is None
    _saved(path, {}, {"LIVE=8|128x256x256": Measurement(OK, us=10.0).to_dict()}, finished=True, saved_at=stamp)
    assert _reloaded(path).saved_run == SavedRun(finished=True, saved_at=stamp)  # a file from before: not stopped


def _keys(tmp_path: Path) -> tuple[Path, str, str]:
    """A cache, and one tune's key in the current format and in format 1."""
    from nvfp4ctl.tune.state import state_key

    kernel = tmp_path / "kernel.cu"
    kernel.write_text("__global__ void k() {}\n")
    material = ([kernel], [(*SHAPE, 1111)], "Fake H100", {"mode": "timed"})
    return tmp_path / "cache", state_key(*material), state_key(*material, state_format=1)


def _load_as_format_1_did(cache: Path, key: str) -> list[tuple]:
    """An nvfp4ctl of format 1 (5331d05) reading its state: the file its key names, loaded when its key
    matches, each build passed whole to its BuildResult, which had no `spilled`."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class OldBuildResult:
        status: str
        registers: int = 0
        shared_bytes: int = 0
        stack_bytes: int = 0
        spill_bytes: int = 0
        compile_s: float = 0.0
        cache_hit: bool = False
        message: str = ""
        artifact: dict | None = None

    path = cache / "tune" / f"{key[:24]}.json"
    if not path.is_file():
        return []
    saved = json.loads(path.read_text())
    if saved.get("key") != key:
        return []
    return [OldBuildResult(**found) for found in saved.get("builds", {}).values()]


def test_a_state_written_now_is_never_opened_by_a_format_1_nvfp4ctl(tmp_path: Path) -> None:
    """Every build gained "spilled" while the format stayed 1: an older nvfp4ctl on the same machine (the
    cache is shared) found the file and crashed, BuildResult.__init__() got an unexpected keyword
    argument 'spilled'. The format is in the key, so the new one is written where an older one never looks."""
    cache, key, key_1 = _keys(tmp_path)
    state = TuneState.in_cache(cache, key, earlier_keys=[key_1])
    state.record_build("LIVE=256", BuildResult.from_dict(_spill_build(spilled=SPILLED)))
    state.finish()
    [written] = (cache / "tune").glob("*.json")
    assert json.loads(written.read_text())["format"] == STATE_FORMAT
    assert _load_as_format_1_did(cache, key_1) == []  # found nothing: no crash
    # as format 1 wrote it, the same file is what crashed it
    (cache / "tune" / f"{key_1[:24]}.json").write_text(json.dumps(json.loads(written.read_text()) | {"key": key_1}))
    with pytest.raises(TypeError, match="spilled"):
        _load_as_format_1_did(cache, key_1)


def test_a_format_1_state_loads_and_is_carried_on_in_the_current_format(tmp_path: Path) -> None:
    cache, key, key_1 = _keys(tmp_path)
    old = cache / "tune" / f"{key_1[:24]}.json"
    old.parent.mkdir(parents=True)
    stamp = "2026-11-26T14:03:00Z"
    _saved(old, {"LIVE=256": _spill_build(spilled=SPILLED)},
           {"LIVE=8|128x256x256": Measurement(OK, us=10.0).to_dict()}, finished=False, saved_at=stamp)
    text = old.read_text().replace('"key": "k"', f'"key": "{key_1}"')
    old.write_text(text)
    state = TuneState.in_cache(cache, key, earlier_keys=[key_1])
    assert state.resumed == 1 and state.measurement("LIVE=8", SHAPE) == Measurement(OK, us=10.0)
    assert state.build("LIVE=256").message == CURRENT_REASON and state.note is None
    assert state.saved_run == SavedRun(finished=False, saved_at=stamp)  # an interrupted run's, as it says
    state.finish()  # nothing measured: the results found are written in the current format, still of their time
    new = json.loads(TuneState.file_in(cache, key).read_text())
    assert (new["format"], new["key"], new["finished"], new["saved_at"]) == (STATE_FORMAT, key, True, stamp)
    assert old.read_text() == text  # an older nvfp4ctl's file is left to it
    assert TuneState.in_cache(cache, key, earlier_keys=[key_1]).saved_run == SavedRun(finished=True, saved_at=stamp)
    assert TuneState.in_cache(cache, key, fresh=True, earlier_keys=[key_1]).resumed == 0


@pytest.mark.parametrize("where", ["current", "earlier"])
def test_a_state_of_a_newer_format_is_left_alone_with_a_note(tmp_path: Path, where: str) -> None:
    cache, key, key_1 = _keys(tmp_path)
    path = TuneState.file_in(cache, key if where == "current" else key_1)
    path.parent.mkdir(parents=True)
    newer = json.dumps({"format": STATE_FORMAT + 1, "key": key, "measurements": [["a shape unlike any", 1]], "builds": None})
    path.write_text(newer)
    state = TuneState.in_cache(cache, key, earlier_keys=[key_1])
    assert state.resumed == 0 and state.saved_run is None and not state.builds
    assert state.note is not None and f"newer nvfp4ctl (format {STATE_FORMAT + 1}" in state.note and "left as it is" in state.note
    state.record("LIVE=8", SHAPE, Measurement(OK, us=10.0))
    state.finish()
    assert path.read_text() == newer  # not this nvfp4ctl's to replace
    if where == "current":
        assert "not saved for a resume" in state.note
    else:  # this run's own file is its own
        assert TuneState.in_cache(cache, key).resumed == 1


def test_a_result_saved_after_the_run_was_marked_finished_keeps_the_mark(tmp_path: Path) -> None:
    """The shipped build, built again to time the new table after the search, unmarked the file."""
    path = tmp_path / "state.json"
    state = TuneState(path, "k")
    state.record("LIVE=8", SHAPE, Measurement(OK, us=10.0))
    state.finish(stopped_by_budget_s=60.0)
    state.record_build("current table", BuildResult(OK, registers=100))
    saved = _reloaded(path).saved_run
    assert saved is not None and saved.finished is True and saved.stopped_by_budget_s == 60.0
