"""Plain progress lines on stderr where no bar or spinner is drawn (Console.draws_no_bar: stderr is a
log file, CI, `2>&1 | tee` or ssh without a tty, and not -q).

rich draws nothing there, and a step that runs for minutes (a test under its 180 s watchdog, a kernel
compiling, a shape settling) left the log silent until it ended. A line says each step as it starts,
then at most every PLAIN_LINE_EVERY_S while it runs: `compiling k.cu (sm_100a): 1 of 3, 95 s`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nvfp4ctl.console import Console

PLAIN_LINE_EVERY_S = 30.0  # a line per step as it starts, then at most one per this many seconds
_TICK_S = 1.0  # how often the heartbeat looks whether a line is due


class ProgressLines:
    """The lines of one run: `show` as a step starts (said at once when it is a new step), `advance` as
    work finishes, and, inside `with`, a heartbeat thread that says the step under way again once
    PLAIN_LINE_EVERY_S passed since the last line, for a step that blocks in a child or a compiler.

    Without `say` (a terminal draws the bar, or -q) it says nothing and starts no thread. A line reads
    `STEP: DONE of TOTAL, ELAPSED s` (the tune's bar words), `STEP: ELAPSED s` where the total is not
    known; ELAPSED counts from the run's start."""

    def __init__(self, say: Callable[[str], None] | None, total: int | None = None, *,
                 clock: Callable[[], float] = time.monotonic, every_s: float | None = None) -> None:
        self._say = say
        self._total = total
        self._done = 0
        self._clock = clock
        self._every_s = PLAIN_LINE_EVERY_S if every_s is None else every_s
        self._started = clock()
        self._step: str | None = None
        self._said: tuple[str, float] | None = None  # the last line's step and time
        self._lock = threading.Lock()  # the heartbeat and the run's own thread both say lines
        self._stopped = threading.Event()
        self._heartbeat: threading.Thread | None = None

    def show(self, step: str, done: int | None = None, total: int | None = None) -> None:
        """`step` is under way (with `done` of `total` where given): a line at once where it is a new
        step, else where PLAIN_LINE_EVERY_S passed since the last line."""
        with self._lock:
            self._step = step
            self._done = self._done if done is None else done
            self._total = self._total if total is None else total
            now = self._clock()
            if self._said is None or self._said[0] != step or now - self._said[1] >= self._every_s:
                self._say_now(now)

    def update(self, step: str) -> None:
        """The step under way now reads `step` (news within it, e.g. calls returned): no line at once,
        the heartbeat's next one says it."""
        with self._lock:
            self._step = step

    def said_elsewhere(self, step: str) -> None:
        """`step` starts and the command said so in its own words (a note): the heartbeat alone follows."""
        with self._lock:
            self._step = step
            self._said = (step, self._clock())

    def advance(self, count: int = 1) -> None:
        """Work finished: counted in the next line, which the next step's start says."""
        with self._lock:
            self._done += count

    def tick(self) -> None:
        """The heartbeat: the step under way again where PLAIN_LINE_EVERY_S passed since the last line."""
        with self._lock:
            now = self._clock()
            if self._step is not None and self._said is not None and now - self._said[1] >= self._every_s:
                self._say_now(now)

    def __enter__(self) -> ProgressLines:
        if self._say is not None:
            # a daemon: an interrupt ends the run whatever the heartbeat is doing
            self._heartbeat = threading.Thread(target=self._beat, name="nvfp4ctl-progress-lines", daemon=True)
            self._heartbeat.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._stopped.set()
        if self._heartbeat is not None:
            self._heartbeat.join(timeout=2 * _TICK_S)

    def _beat(self) -> None:
        while not self._stopped.wait(min(_TICK_S, self._every_s)):
            self.tick()

    def _say_now(self, now: float) -> None:
        if self._say is None or self._step is None:
            return
        self._said = (self._step, now)
        counted = f"{self._done} of {self._total}, " if self._total is not None else ""
        self._say(f"{self._step}: {counted}{now - self._started:.0f} s")


def progress_lines(console: Console, total: int | None = None) -> ProgressLines:
    """The run's lines on `console`'s stderr where it draws no bar (Console.draws_no_bar), else silent."""
    return ProgressLines(console.progress_line if console.draws_no_bar else None, total)
