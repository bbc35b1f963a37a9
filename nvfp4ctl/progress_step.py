"""The step a command shows while it runs: on its progress bar and, where no bar is drawn, in its plain
lines (progress_lines.py), with the news a running job sends (check's test phase, bench's calls returned)
after the step's name. When a step is done, and so when the bar advances, is each command's own rule."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nvfp4ctl.progress_lines import ProgressLines


class ProgressStep:
    """`show` a step as it starts, `advance` as work finishes, `news` while it runs: on the bar at once,
    in the heartbeat's next plain line."""

    def __init__(self, progress: Any, total: int, lines: ProgressLines, description: str) -> None:
        self._progress, self._lines = progress, lines
        self._task_id = progress.add_task(description, total=total)
        self.step = description
        self._started = False  # news is a shown step's: the description given here (a load) reports none

    def show(self, step: str, line: str | None = None) -> None:
        """`step` starts: the bar's description, and the plain line (`line` where its words differ)."""
        self.step, self._started = step, True
        self._progress.update(self._task_id, description=step)
        self._lines.show(step if line is None else line)

    @property
    def started(self) -> bool:
        """Whether a step has been shown (`show`): the description given at the start names none."""
        return self._started

    def show_line(self) -> None:
        """The plain line of the step under way, said now where its words changed (or the step was not said)."""
        self._lines.show(self.step)

    def advance(self) -> None:
        self._progress.advance(self._task_id)
        self._lines.advance()

    def news(self, value: Any) -> None:
        """What the running job reported (anything with `describe()`), after the step's name."""
        describe = getattr(value, "describe", None)
        if not self._started or describe is None:
            return
        text = f"{self.step} ({describe()})"
        self._progress.update(self._task_id, description=text)
        self._lines.update(text)
