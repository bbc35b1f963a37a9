"""A fenced code block the user left open where the run log's next line goes: closed once, the runs no code."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.cli import app
from nvfp4ctl.runlog.fences import with_an_open_fence_closed
from nvfp4ctl.runlog.section import _after_the_first_heading, _block_tokens, _log_end

LOG_START = f"# Notes\n\n{runlog.HEADING}\n\n{runlog.PREAMBLE}\n\n"
TRACEBACK = "Traceback (most recent call last):\n## not a heading\n# nor this\nRuntimeError: CUDA error\n"


def _line(result: str) -> str:
    return runlog.RunEntry("2026-11-25T10:00:00Z", "nvfp4ctl lint", "sub.py@abc", "1234567", "no GPU", "0",
                           result).to_line()


def _results(memory) -> list[str]:
    return [entry.result for entry in runlog.read(memory)]


def _append(memory, *results: str) -> None:
    for result in results:
        runlog.append(runlog.RunEntry("2026-11-25T10:00:00Z", "nvfp4ctl lint", "sub.py@abc", "1234567", "no GPU",
                                      "0", result), memory)


def _code_lines(text: str) -> list[str]:
    """The lines CommonMark reads as code (fenced or indented) in `text`."""
    lines = text.splitlines()
    return [line for token in _block_tokens(text.encode()) if token.type in ("fence", "code_block")
            for line in lines[token.map[0] : token.map[1]]]


@pytest.mark.parametrize(("opening", "closing"), [
    ("```", "```"), ("~~~~python", "~~~~"), ("`````", "`````"),
], ids=["backticks", "tildes and an info string", "five"])
def test_a_fence_left_open_in_the_log_is_closed_once_before_the_next_run(tmp_path, opening, closing):
    """A traceback pasted after ``` and never closed: every later run's line went into that code block."""
    memory = tmp_path / "MEMORY.md"
    before = LOG_START + _line("one") + f"\n{opening}\n{TRACEBACK}"
    memory.write_text(before)
    _append(memory, "two", "three")
    text = memory.read_text()
    assert text == before + f"{closing}\n" + _line("two") + _line("three")
    assert not any("- 2026" in line for line in _code_lines(text)), text
    assert _results(memory) == ["one", "two", "three"]
    assert [entry.result for entry in runlog.read(memory, 1)] == ["three"]


def test_a_fence_left_open_with_no_line_break_at_the_end_gets_its_closing_on_a_line_of_its_own(tmp_path):
    memory = tmp_path / "MEMORY.md"
    before = (LOG_START + _line("one") + "\n```\nRuntimeError").replace("\n", "\r\n")
    memory.write_bytes(before.encode())
    _append(memory, "two")
    assert memory.read_bytes() == (before + "\r\n```\r\n" + _line("two")).replace("\n", "\r\n").replace(
        "\r\r\n", "\r\n").encode()
    assert _results(memory) == ["one", "two"]


def test_a_fence_left_open_in_notes_with_no_run_log_yet_is_closed_above_its_heading(tmp_path):
    """The heading went into the code block too: no heading, so each run wrote the section again, and `log`
    read none of them."""
    memory = tmp_path / "MEMORY.md"
    notes = f"# Notes\n\n```\n{TRACEBACK}"
    memory.write_text(notes)
    _append(memory, "one", "two")
    text = memory.read_text()
    assert text == notes + f"```\n\n{runlog.HEADING}\n\n{runlog.PREAMBLE}\n\n" + _line("one") + _line("two")
    assert _results(memory) == ["one", "two"]


def test_runs_an_older_version_wrote_into_a_fence_left_open_are_moved_out_of_it(tmp_path):
    """The closing fence goes where the user's text in the block ends, so the runs already written into it (read
    by `log` while it was open) are still read, and the heading written into it is the log's."""
    memory = tmp_path / "MEMORY.md"
    in_the_log = LOG_START + _line("one") + f"```\n{TRACEBACK}\n" + _line("two") + _line("three")
    memory.write_text(in_the_log)
    assert _results(memory) == ["one", "two", "three"]
    _append(memory, "four")
    assert memory.read_text() == (LOG_START + _line("one") + f"```\n{TRACEBACK}```\n\n" + _line("two")
                                  + _line("three") + _line("four"))
    assert _results(memory) == ["one", "two", "three", "four"]

    section = f"\n{runlog.HEADING}\n\n{runlog.PREAMBLE}\n\n"
    notes = f"# Notes\n\n```\n{TRACEBACK}"
    memory.write_text(notes + section + _line("one") + section + _line("two"))  # a section made by each run
    assert _results(memory) == []
    _append(memory, "three")
    assert memory.read_text() == notes + "```\n" + section + _line("one") + section + _line("two") + _line("three")
    assert _results(memory) == ["one", "two", "three"]


@pytest.mark.parametrize("users", [
    "\n## Ideas\n\n- try 2-CTA\n",
    "\n## Ideas\n\n```\nstill open\n",
], ids=["a closed section", "a fence left open in it"])
def test_a_heading_inside_a_fence_is_none_and_the_run_still_goes_before_the_users_section(tmp_path, users):
    """Runs inserted before a section of the user's: a `## ` or `# ` line in a fence above it is no heading, and a
    fence left open below the log's end is the user's, left as it is."""
    memory = tmp_path / "MEMORY.md"
    log = LOG_START + _line("one") + f"```\n{TRACEBACK}```\n"
    memory.write_text(log + users)
    _append(memory, "two")
    assert memory.read_text() == log + _line("two") + users
    assert _results(memory) == ["one", "two"]


@pytest.mark.parametrize("container", ["- note:\n\n  ```\n  RuntimeError\n", "> ```\n> RuntimeError\n"],
                         ids=["list item", "block quote"])
def test_a_fence_left_open_in_a_list_item_or_a_quote_is_ended_by_the_run_itself(tmp_path, container):
    memory = tmp_path / "MEMORY.md"
    before = LOG_START + _line("one") + container
    memory.write_text(before)
    _append(memory, "two")
    text = memory.read_text()
    assert text == before + _line("two")
    assert not any("- 2026" in line for line in _code_lines(text)), text


_ONE = LOG_START + _line("one")


@pytest.mark.parametrize(("above", "below", "closing"), [
    (_ONE + "```\nx\n", "", b"```"),
    (_ONE + "```\nx\n", "\n" + _line("two"), b"```"),
    (_ONE + "```\n", "", b"```"),
    (_ONE + "```\nx\n```\n", "", None),
    (_ONE + "```\nx\n~~~\n", "", b"```"),
    (_ONE + "````\nx\n```\n", "", b"````"),
    (_ONE + "````\nx\n`````  \n", "", None),
    (_ONE + "\n## Ideas\n```\nx\n", "", None),
    ("# Notes\n\n~~~\nx\n", "", b"~~~"),
    ("# Notes\n\n   ~~~~ sh\nx\n", "", b"~~~~"),
    ("# Notes\n\n    ```\n    x\n", "", None),
    ("# Notes\n", "", None),
], ids=["open", "a run written into it", "just opened", "closed", "other character", "shorter",
        "longer, spaces after it", "in the user's section", "notes with no log", "indented", "indented code", "no fence"])
def test_where_the_closing_fence_goes(above, below, closing):
    existing = (above + below).encode()
    start = _after_the_first_heading(existing)
    end = _log_end(existing, start) if start is not None else None
    closed = with_an_open_fence_closed(existing, end, b"\n")
    assert closed == (None if closing is None else above.encode() + closing + b"\n" + below.encode())


def test_lint_closes_the_fence_left_open_in_a_hand_made_run_log_and_log_reads_its_runs(tmp_path, monkeypatch):
    (tmp_path / "clean.py").write_text("x = 1\n")
    memory = tmp_path / "MEMORY.md"
    before = f"# Notes\n\n{runlog.HEADING}\n\n" + _line("one") + f"\n~~~\n{TRACEBACK}"
    memory.write_text(before)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        result = CliRunner().invoke(app, ["lint", "clean.py"])
        assert result.exit_code == 0, result.output
        assert "warning" not in result.output, result.output
    text = memory.read_text()
    assert text.startswith(before + "~~~\n- ") and text.count("~~~") == 2, text
    assert len(text.splitlines()) == len(before.splitlines()) + 3
    assert not any("- 2026" in line for line in _code_lines(text)), text
    result = CliRunner().invoke(app, ["-q", "log"])
    assert result.exit_code == 0 and "3 most recent runs" in result.output, result.output
    assert result.output.count("0 errors, 0 warnings") == 2, result.output
