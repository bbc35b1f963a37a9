"""A tune's progress bar, whose total is the work the run does: (candidate, shape) pairs answered,
or builds for a compile-only round."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from nvfp4ctl.progress_lines import ProgressLines


class WorkBar:
    """The total starts as the first round's work, known before it starts (TuneRun.progress_total). Each
    step says how much it will do (`expect`) as it begins, so a later round (`--rounds`), whose candidates
    depend on what the one before found, or the new table timed once the winners are written, grows the
    total by what it adds; counting them up front overshot a search that stops early. `end` makes the
    total the work done, where a `--budget` stopped the search before the first round was.

    `say`, where no bar is drawn (stderr not a terminal), gets a plain line ("compiling: 3 of 13, 412 s")
    when a step starts and then at most every PLAIN_LINE_EVERY_S (ProgressLines): a compile-only round
    of 45 s builds printed nothing for ten minutes."""

    def __init__(self, progress: Any, first_round: int, say: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._progress = progress
        self._first_round = first_round
        self._expected = 0  # what the steps so far said they would do
        self._done = 0
        self._task = progress.add_task("starting", total=first_round)
        self._lines = ProgressLines(say, first_round, clock=clock)

    def __enter__(self) -> WorkBar:
        """Inside `with`, a step that blocks in a compiler or a GPU worker is said again now and then
        (ProgressLines' heartbeat), not only when the next step is reported."""
        self._lines.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._lines.__exit__(None, None, None)

    def expect(self, count: int) -> None:
        self._expected += count
        self._progress.update(self._task, total=self._total())

    def step(self, description: str, finished: int) -> None:
        self._done += finished
        self._progress.update(self._task, description=description, advance=finished, total=self._total())
        self._lines.show(description, self._done, self._total())

    def end(self) -> None:
        self._progress.update(self._task, total=self._done)

    def _total(self) -> int:
        return max(self._first_round, self._expected, self._done)
