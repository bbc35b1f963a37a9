"""The step a command shows on its bar and in its plain lines, with a running job's news after its name."""

from __future__ import annotations

from dataclasses import dataclass

from nvfp4ctl.progress_lines import ProgressLines
from nvfp4ctl.progress_step import ProgressStep


class Bar:
    def __init__(self) -> None:
        self.descriptions: list[str] = []
        self.advanced = 0

    def add_task(self, description: str, total: int) -> int:
        self.descriptions.append(description)
        return 0

    def update(self, task_id: int, description: str) -> None:
        self.descriptions.append(description)

    def advance(self, task_id: int) -> None:
        self.advanced += 1


@dataclass
class News:
    text: str

    def describe(self) -> str:
        return self.text


def test_news_follows_a_shown_step_on_the_bar_at_once_and_in_the_next_plain_line() -> None:
    bar, said, now = Bar(), [], [0.0]
    lines = ProgressLines(said.append, 2, clock=lambda: now[0], every_s=30.0)
    shown = ProgressStep(bar, 2, lines, "loading the target")
    shown.show_line()
    shown.news(News("ignored: no step shown yet"))
    shown.show("test 1", "test 1 (loading the target first)")
    shown.news(News("calling the kernel"))
    shown.news("no describe(): no news")
    assert bar.descriptions == ["loading the target", "test 1", "test 1 (calling the kernel)"]
    assert said == ["loading the target: 0 of 2, 0 s", "test 1 (loading the target first): 0 of 2, 0 s"]
    now[0] = 30.0
    lines.tick()
    assert said[-1] == "test 1 (calling the kernel): 0 of 2, 30 s"
    shown.advance()
    shown.show_line()  # new words (the news is gone): said at once, with the work done
    assert said[-1] == "test 1: 1 of 2, 30 s" and bar.advanced == 1


def test_a_step_has_started_once_one_is_shown_not_with_the_description_it_begins_with() -> None:
    shown = ProgressStep(Bar(), 1, ProgressLines(lambda line: None, 1), "starting")
    shown.show_line()
    assert not shown.started
    shown.show("timing 128x256x512")
    assert shown.started
