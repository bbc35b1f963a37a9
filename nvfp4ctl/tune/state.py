"""Resume state: every measurement and build result of a tune, saved as it arrives.

One JSON file in the cache per (kernel content, shapes, GPU, timing settings): the key hashes the
bytes of every file of the build (kernel, local headers with the dispatch table, binding). A rerun
of an interrupted tune with the same key answers the finished (candidate, shape) pairs and the
rematches from here, and because the search depends only on these answers it retraces the same
path to where it stopped. A finished run's file is kept too (its results are cheap to reuse) and
says so, with when its results were saved and whether its --budget cut the search short: a rerun
tells the user which kind of run they came from.
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

STATE_FORMAT = 1  # of the key's material: a change orphans every saved state


def state_key(files: Sequence[Path], shapes: Sequence[Any], gpu: str, settings: dict[str, Any]) -> str:
    material = {
        "format": STATE_FORMAT,
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


class TuneState:
    def __init__(self, path: Path, key: str, fresh: bool = False) -> None:
        self.path = path
        self.key = key
        self._lock = threading.Lock()  # GPU threads record results concurrently
        self.measurements: dict[str, dict] = {}
        self.builds: dict[str, dict] = {}
        self.rematches: dict[str, list[dict]] = {}  # "current|challenger|shape": [current, challenger]
        self.resumed = 0  # measurements found (what a timed tune takes from here)
        self.saved_run: SavedRun | None = None  # the run the results found came from
        self._recorded = False  # this run saved a result of its own
        if not fresh and path.is_file():
            try:
                saved = json.loads(path.read_text())
            except (OSError, ValueError):
                saved = {}
            if isinstance(saved, dict) and saved.get("key") == key:
                self._load(saved)

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
    def in_cache(cls, cache: Path, key: str, fresh: bool = False) -> TuneState:
        return cls(cache / "tune" / f"{key[:24]}.json", key, fresh)

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
            if self._recorded:
                self._write(finished=True, saved_at=_now(), stopped_by_budget_s=stopped_by_budget_s)
            elif self.saved_run is not None and (not self.saved_run.finished
                                                 or self.saved_run.stopped_by_budget_s != stopped_by_budget_s):
                self._write(finished=True, saved_at=self.saved_run.saved_at, stopped_by_budget_s=stopped_by_budget_s)

    def _save(self) -> None:
        # a result saved unmarks the file: this run left it, and may yet be interrupted
        self._recorded = True
        self._write(finished=False, saved_at=_now())

    def _write(self, finished: bool, saved_at: str | None, stopped_by_budget_s: float | None = None) -> None:
        write_text_atomic(self.path, json.dumps({"key": self.key, "measurements": self.measurements,
                                                 "builds": self.builds, "rematches": self.rematches,
                                                 "finished": finished, "saved_at": saved_at,
                                                 "stopped_by_budget_s": stopped_by_budget_s}))
