"""A tune's progress bar, whose total is the work the run does: (candidate, shape) pairs answered,
or builds for a compile-only round."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

PLAIN_LINE_EVERY_S = 30.0  # without a bar: a line per step, then at most one per this many seconds


class WorkBar:
    """The total starts as the first round's work, known before it starts (TuneRun.progress_total). Each
    step says how much it will do (`expect`) as it begins, so a later round (`--rounds`), whose candidates
    depend on what the one before found, or the new table timed once the winners are written, grows the
    total by what it adds; counting them up front overshot a search that stops early. `end` makes the
    total the work done, where a `--budget` stopped the search before the first round was.

    `say`, where no bar is drawn (stderr not a terminal), gets a plain line ("compiling: 3 of 13, 412 s")
    when a step starts and then at most every PLAIN_LINE_EVERY_S: a compile-only round of 45 s builds
    printed nothing for ten minutes."""

    def __init__(self, progress: Any, first_round: int, say: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._progress = progress
        self._first_round = first_round
        self._expected = 0  # what the steps so far said they would do
        self._done = 0
        self._task = progress.add_task("starting", total=first_round)
        self._say, self._clock = say, clock
        self._started = clock()
        self._said: tuple[str, float] | None = None  # the last plain line's step and time

    def expect(self, count: int) -> None:
        self._expected += count
        self._progress.update(self._task, total=self._total())

    def step(self, description: str, finished: int) -> None:
        self._done += finished
        self._progress.update(self._task, description=description, advance=finished, total=self._total())
        if self._say is not None:
            now = self._clock()
            if self._said is None or self._said[0] != description or now - self._said[1] >= PLAIN_LINE_EVERY_S:
                self._said = (description, now)
                self._say(f"{description}: {self._done} of {self._total()}, {now - self._started:.0f} s")

    def end(self) -> None:
        self._progress.update(self._task, total=self._done)

    def _total(self) -> int:
        return max(self._first_round, self._expected, self._done)
