"""Resume state: every measurement and build result of a tune, saved as it arrives.

One JSON file in the cache per (kernel content, shapes, GPU, timing settings): the key hashes the
bytes of every file of the build (kernel, local headers with the dispatch table, binding). A rerun
of an interrupted tune with the same key answers the finished (candidate, shape) pairs and the
rematches from here, and because the search depends only on these answers it retraces the same
path to where it stopped. A finished run's file is kept too (its results are cheap to reuse) and
says so, with when its results were saved and whether its --budget cut the search short: a rerun
tells the user which kind of run they came from.

The file's format is in its key, so a new format gets a file of its own: an older nvfp4ctl on the
same machine (the cache is shared) looks up its own format's file and never opens this one's. This
one reads an earlier format's file where its own is missing (EARLIER_FORMATS) and always writes its
own; a file of a newer format is left alone.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from nvfp4ctl.atomic_file import write_text_atomic
from nvfp4ctl.tune.results import SPILLS, BuildResult, Measurement, shape_key

# Written into the file and hashed into its key, so a change gives every state a new file. 2: each build
# has "spilled", which an older nvfp4ctl passed to its BuildResult(**saved) as it was (a TypeError). 3: a
# measurement may have "same_code_as", which format 2 passed to its Measurement(**saved) as it was.
STATE_FORMAT = 3
# Formats read where the current one's file is missing: 1's and 2's builds load as format 3's (BuildResult.from_dict
# takes the fields it knows, a spill without its spills is built again), their measurements too (each ran
# itself), and their finished marks are the same.
EARLIER_FORMATS = (2, 1)
# The first format whose builds hold code_digest as compile_pool works it out now (an earlier nvfp4ctl hashed the
# SASS listing itself, less its identifier lines) and host_digest: an earlier one's are worked out again
# (compile_pool.with_current_digests), so that a resumed run finds the same twins as a fresh one; so is a build of
# this format saved before builds held data_digest (session.Evaluator._saved_build).
CURRENT_DIGESTS_SINCE = 3


def state_key(files: Sequence[Path], shapes: Sequence[Any], gpu: str, settings: dict[str, Any],
              state_format: int = STATE_FORMAT) -> str:
    material = {
        "format": state_format,
        "files": [[path.name, hashlib.sha256(path.read_bytes()).hexdigest()] for path in files],
        "shapes": [list(shape) for shape in shapes],
        "gpu": gpu,
        "settings": settings,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")  # as the run log stamps its entries


@dataclass(frozen=True)
class SavedRun:
    """The run whose results a state file holds, as far as the file tells."""
    finished: bool | None  # None: written before runs were marked finished, so either
    saved_at: str | None  # UTC, "2026-11-26T14:03:00Z": when its last result was saved
    # the --budget (seconds) spent before the search was done: the run ended, its search did not
    stopped_by_budget_s: float | None = None


def _saved_format(saved: dict) -> int | None:
    """The file's format; 1 where it names none (format 1 wrote none), None where it is no number."""
    found = saved.get("format", 1)
    return found if isinstance(found, int) and not isinstance(found, bool) else None


class TuneState:
    def __init__(self, path: Path | None, key: str, fresh: bool = False, earlier: Sequence[tuple[Path, str]] = ()) -> None:
        """`earlier`: the (file, key) of this tune in each earlier format, read where `path` has nothing;
        `path` None: a state kept in memory only (nowhere())."""
        self.path = path
        self.key = key
        self._lock = threading.Lock()  # GPU threads record results concurrently
        self.measurements: dict[str, dict] = {}
        self.builds: dict[str, dict] = {}
        self.rematches: dict[str, list[dict]] = {}  # "current|challenger|shape": [current, challenger]
        self.resumed = 0  # measurements found (what a timed tune takes from here)
        self.saved_run: SavedRun | None = None  # the run the results found came from
        self.note: str | None = None  # a state found and left alone, for a warning
        self._recorded = False  # this run saved a result of its own
        self._migrate = False  # the results found are in an earlier format's file: a finish writes them here
        # False over a newer nvfp4ctl's file, which is not this one's to replace, and for a state kept nowhere
        self._writable = path is not None
        self._finished = False  # finish() marked the run: its search was done
        self._stopped_by_budget_s: float | None = None  # finish()'s
        self.digests_current = True  # False: the builds found hold an earlier nvfp4ctl's digests (CURRENT_DIGESTS_SINCE)
        if fresh or path is None:
            return
        for found_at, found_key in ((path, key), *earlier):
            saved = _read(found_at)
            if saved is None:
                continue
            saved_format = _saved_format(saved)
            if saved_format is not None and saved_format > STATE_FORMAT:
                self.note = (f"{found_at}: resume state of a newer nvfp4ctl (format {saved_format}, this one reads"
                             f" {STATE_FORMAT} and earlier): not reused, and left as it is")
                self._writable = found_at != path
                if not self._writable:
                    self.note += "; this run's results are not saved for a resume"
                return
            if saved.get("key") == found_key and saved_format is not None:
                self._load(saved)
                self._migrate = found_at != path
                self.digests_current = saved_format >= CURRENT_DIGESTS_SINCE
                return

    def _load(self, saved: dict) -> None:
        # A spill's reason is rendered from its spills as it loads (BuildResult.from_dict), so it reads as
        # this nvfp4ctl words it. One saved before the spills were kept per function has only an older
        # sentence: it is left out with its results and built again (a build-cache hit).
        builds = {cid: BuildResult.from_dict(found) for cid, found in saved.get("builds", {}).items()}
        self.builds = {cid: build.to_dict() for cid, build in builds.items() if build.reason_is_current}
        self.measurements = {}
        for pair, found in saved.get("measurements", {}).items():
            cid = pair.rsplit("|", 1)[0]
            if found.get("status") != SPILLS:
                self.measurements[pair] = found
            elif cid in self.builds:  # the build's rejection, as the build words it now
                self.measurements[pair] = found | {"message": self.builds[cid]["message"]}
        self.rematches = saved.get("rematches", {})
        self.resumed = len(self.measurements)
        finished, budget = saved.get("finished"), saved.get("stopped_by_budget_s")
        self.saved_run = SavedRun(finished if isinstance(finished, bool) else None, saved.get("saved_at"),
                                  float(budget) if isinstance(budget, (int, float)) and finished is True else None)

    @classmethod
    def in_cache(cls, cache: Path, key: str, fresh: bool = False, earlier_keys: Sequence[str] = ()) -> TuneState:
        """`earlier_keys`: this tune's key in each earlier format (earlier_keys()), newest first."""
        return cls(cls.file_in(cache, key), key, fresh, [(cls.file_in(cache, k), k) for k in earlier_keys])

    @classmethod
    def nowhere(cls) -> TuneState:
        """A state that reads no file and writes none: a compile-only tune's, whose rerun needs nothing from
        one (every build it makes again is a build-cache hit) and so reads none."""
        return cls(None, "")

    @staticmethod
    def file_in(cache: Path, key: str) -> Path:
        return cache / "tune" / f"{key[:24]}.json"

    @staticmethod
    def _pair(config_id: str, shape: Sequence[int]) -> str:
        return f"{config_id}|{shape_key(shape)}"

    def measurement(self, config_id: str, shape: Sequence[int]) -> Measurement | None:
        found = self.measurements.get(self._pair(config_id, shape))
        return Measurement.from_dict(found) if found else None

    def rematch(self, current_id: str, challenger_id: str, shape: Sequence[int]) -> tuple[Measurement, Measurement] | None:
        found = self.rematches.get(f"{current_id}|{self._pair(challenger_id, shape)}")
        return (Measurement.from_dict(found[0]), Measurement.from_dict(found[1])) if found else None

    def record_rematch(self, current_id: str, challenger_id: str, shape: Sequence[int],
                       result: tuple[Measurement, Measurement]) -> None:
        with self._lock:
            self.rematches[f"{current_id}|{self._pair(challenger_id, shape)}"] = [r.to_dict() for r in result]
            self._save()

    def build(self, config_id: str) -> BuildResult | None:
        found = self.builds.get(config_id)
        return BuildResult.from_dict(found) if found else None

    def record(self, config_id: str, shape: Sequence[int], result: Measurement) -> None:
        with self._lock:
            self.measurements[self._pair(config_id, shape)] = result.to_dict()
            self._save()

    def record_build(self, config_id: str, result: BuildResult) -> None:
        with self._lock:
            self.builds[config_id] = result.to_dict()
            self._save()

    def finish(self, stopped_by_budget_s: float | None = None) -> None:
        """Mark the run finished, so a rerun says its results were reused, not resumed; with the
        --budget that stopped its search before it was done, if one did. A run that saved nothing of
        its own keeps the time of the results it found."""
        with self._lock:
            self._finished, self._stopped_by_budget_s = True, stopped_by_budget_s
            if self._recorded:
                self._write(finished=True, saved_at=_now(), stopped_by_budget_s=stopped_by_budget_s)
            elif self.saved_run is not None and (self._migrate or not self.saved_run.finished
                                                 or self.saved_run.stopped_by_budget_s != stopped_by_budget_s):
                self._write(finished=True, saved_at=self.saved_run.saved_at, stopped_by_budget_s=stopped_by_budget_s)

    def _save(self) -> None:
        # A result saved before the run is marked finished unmarks the file: this run left it, and may yet
        # be interrupted. One saved after (the shipped build, built again to time the new table) keeps the
        # mark: the search it belongs to was done.
        self._recorded = True
        self._write(finished=self._finished, saved_at=_now(),
                    stopped_by_budget_s=self._stopped_by_budget_s if self._finished else None)

    def _write(self, finished: bool, saved_at: str | None, stopped_by_budget_s: float | None = None) -> None:
        if not self._writable or self.path is None:
            return
        write_text_atomic(self.path, json.dumps({"format": STATE_FORMAT, "key": self.key,
                                                 "measurements": self.measurements,
                                                 "builds": self.builds, "rematches": self.rematches,
                                                 "finished": finished, "saved_at": saved_at,
                                                 "stopped_by_budget_s": stopped_by_budget_s}))


def earlier_keys(files: Sequence[Path], shapes: Sequence[Any], gpu: str, settings: dict[str, Any]) -> list[str]:
    """The key this tune had in each earlier format, newest first (TuneState.in_cache reads its file)."""
    return [state_key(files, shapes, gpu, settings, state_format=f) for f in sorted(EARLIER_FORMATS, reverse=True)]


def _read(path: Path) -> dict | None:
    """The file's JSON object; None where there is none, or it is not JSON (a file cut short, say)."""
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None
