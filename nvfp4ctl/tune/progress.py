"""A tune's progress bar, whose total is the work the run does: (candidate, shape) pairs answered,
or builds for a compile-only round."""

from __future__ import annotations

from typing import Any


class WorkBar:
    """The total starts as the first round's work, known before it starts (TuneRun.progress_total). Each
    step says how much it will do (`expect`) as it begins, so a later round (`--rounds`), whose candidates
    depend on what the one before found, or the new table timed once the winners are written, grows the
    total by what it adds; counting them up front overshot a search that stops early. `end` makes the
    total the work done, where a `--budget` stopped the search before the first round was."""

    def __init__(self, progress: Any, first_round: int) -> None:
        self._progress = progress
        self._first_round = first_round
        self._expected = 0  # what the steps so far said they would do
        self._done = 0
        self._task = progress.add_task("starting", total=first_round)

    def expect(self, count: int) -> None:
        self._expected += count
        self._progress.update(self._task, total=self._total())

    def step(self, description: str, finished: int) -> None:
        self._done += finished
        self._progress.update(self._task, description=description, advance=finished, total=self._total())

    def end(self) -> None:
        self._progress.update(self._task, total=self._done)

    def _total(self) -> int:
        return max(self._first_round, self._expected, self._done)
