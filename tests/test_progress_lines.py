"""Plain progress lines where no bar is drawn: each step as it starts, then at most every 30 s."""

from __future__ import annotations

import threading

import pytest

from nvfp4ctl.console import Console
from nvfp4ctl.progress_lines import PLAIN_LINE_EVERY_S, ProgressLines, progress_lines


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_each_step_is_said_as_it_starts_and_a_long_one_every_30_s() -> None:
    said: list[str] = []
    clock = FakeClock()
    lines = ProgressLines(said.append, 3, clock=clock)
    lines.show("loading the target")
    clock.now += 12
    lines.show("test 1 (m=128 n=256 k=256)", 0)
    assert said == ["loading the target: 0 of 3, 0 s", "test 1 (m=128 n=256 k=256): 0 of 3, 12 s"]
    clock.now += PLAIN_LINE_EVERY_S - 1
    lines.tick()  # 29 s into the test: not yet
    assert len(said) == 2
    clock.now += 1
    lines.tick()
    assert said[-1] == "test 1 (m=128 n=256 k=256): 0 of 3, 42 s"
    clock.now += 10
    lines.tick()  # 10 s after the last line
    lines.show("test 1 (m=128 n=256 k=256)")  # the same step again says nothing new either
    assert len(said) == 3
    lines.advance()
    lines.show("test 2 (m=256 n=128 k=32)")
    assert said[-1] == "test 2 (m=256 n=128 k=32): 1 of 3, 52 s"


def test_a_step_of_unknown_length_and_one_said_in_the_commands_own_words() -> None:
    said: list[str] = []
    clock = FakeClock()
    lines = ProgressLines(said.append, clock=clock)
    lines.said_elsewhere("compiling CuTe's host proof")  # its note said it: no line at once
    assert said == []
    clock.now += PLAIN_LINE_EVERY_S
    lines.tick()
    assert said == ["compiling CuTe's host proof: 30 s"]


def test_nothing_is_said_before_a_step_starts() -> None:
    said: list[str] = []
    clock = FakeClock()
    lines = ProgressLines(said.append, 2, clock=clock)
    clock.now += 100
    lines.tick()
    assert said == []


def test_the_heartbeat_says_a_blocked_step_again_and_stops_with_the_block() -> None:
    said: list[str] = []
    two = threading.Event()

    def say(line: str) -> None:
        said.append(line)
        if len(said) >= 2:
            two.set()

    with ProgressLines(say, 1, every_s=0.05) as lines:
        lines.show("compiling k.cu (sm_100a)")  # then the step blocks: only the heartbeat can speak
        assert two.wait(10.0), said
    count = len(said)
    threading.Event().wait(0.2)
    assert len(said) == count  # ended with the block
    assert all(line.startswith("compiling k.cu (sm_100a): 0 of 1, ") for line in said)


def test_without_say_no_line_and_no_thread() -> None:
    before = threading.active_count()
    with ProgressLines(None, 3, every_s=0.01) as lines:
        lines.show("building")
        assert threading.active_count() == before


@pytest.mark.parametrize(("verbosity", "terminal", "speaks"), [(0, False, True), (-1, False, False), (0, True, False)])
def test_progress_lines_speak_only_where_no_bar_is_drawn(monkeypatch: pytest.MonkeyPatch, verbosity: int,
                                                         terminal: bool, speaks: bool) -> None:
    console = Console(verbosity)
    monkeypatch.setattr(type(console.err), "is_terminal", property(lambda self: terminal))
    monkeypatch.setattr(console.err, "is_interactive", terminal)  # as rich finds a terminal that is not dumb
    monkeypatch.setenv("TERM", "xterm-256color")
    printed: list[str] = []
    monkeypatch.setattr(console.err, "print", lambda text: printed.append(str(text)))
    with progress_lines(console, 2) as lines:
        lines.show("building")
    assert printed == (["building: 0 of 2, 0 s"] if speaks else [])
