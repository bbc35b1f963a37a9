"""Tables keep every character: piped output gets the table's own width, a terminal too narrow for a
table's words gets its rows as records."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console as RichConsole

from nvfp4ctl.console import Console

NAMES = [f"nvfp4_gemm_sm90_variant_{i}.cu@0123456789ab" for i in range(3)]
COLUMNS = ["target", "tensor op", "regs", "spills", "shared memory", "compile time", "cached"]


def rows() -> list[list[str]]:
    return [[name, "UTCOMMA.2CTA.MXF4NVF4", "168", "0", "227 KB", "140.2 s", "no"] for name in NAMES]


def test_a_piped_table_is_printed_whole(capsys, monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # pytest-xdist sets 80
    Console().table(COLUMNS, rows())
    out = capsys.readouterr().out
    assert "…" not in out
    for name in NAMES:
        assert name in out
    assert "UTCOMMA.2CTA.MXF4NVF4" in out and "140.2 s" in out


def test_a_narrow_terminal_cuts_no_cell(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a terminal's own width wins over $COLUMNS
    console = Console()
    buffer = io.StringIO()
    console.out = RichConsole(file=buffer, force_terminal=True, width=60, color_system=None, highlight=False)
    console.table(COLUMNS, rows())
    out = buffer.getvalue()
    assert "…" not in out
    assert "nvfp4" in out and max(len(line) for line in out.splitlines()) <= 60


PROSE = ("The server rejects any file where the word appears in its text, whatever the case and wherever it"
         " stands, so the submission is refused unread before a single test runs on it. ") * 3


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_a_piped_table_of_long_prose_wraps_at_a_readable_width(capsys, monkeypatch) -> None:
    """lint --list-rules to a file was 1386 columns wide: its rule texts on one line each."""
    from nvfp4ctl.console import PIPED_TABLE_WIDTH

    monkeypatch.delenv("COLUMNS", raising=False)
    rule_rows = [["NV101", "stream-word", PROSE]] + [[f"NV10{i}", NAMES[0], "x"] for i in range(2)]
    Console().table(["id", "rule", "why"], rule_rows)
    out = capsys.readouterr().out
    assert _widest(out) <= PIPED_TABLE_WIDTH
    assert NAMES[0] in out  # the short cells stay whole; the prose wraps, every word kept
    assert out.count("unread") == 3 and "…" not in out


def test_a_piped_table_respects_columns(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    console = Console()
    console.table(["id", "rule", "why"], [["NV101", "stream-word", PROSE]])
    assert _widest(capsys.readouterr().out) == 100
    console.table(COLUMNS, rows())  # wider than COLUMNS: folded into it, as in a terminal that wide
    assert _widest(capsys.readouterr().out) <= 100


def test_lint_list_rules_piped_is_readable(monkeypatch) -> None:
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app
    from nvfp4ctl.console import PIPED_TABLE_WIDTH

    monkeypatch.delenv("COLUMNS", raising=False)
    result = CliRunner().invoke(app, ["lint", "--list-rules"])
    assert result.exit_code == 0, result.output
    assert "stream-word" in result.output and _widest(result.output) <= PIPED_TABLE_WIDTH


LAYOUT_COLUMNS = ["tensor", "row", "offset", "ref", "status"]
LAYOUT_ROWS = [["sfa", 0, 0, "0x44", "ok"], ["sfb", 1, 16, "0x00", "ok"]]


@pytest.mark.parametrize(("columns", "printed"), [
    # a table that holds every word is drawn as it was
    ("80", "┏━━━━━━━━┳━━━━━┳━━━━━━━━┳━━━━━━┳━━━━━━━━┓\n"
           "┃ tensor ┃ row ┃ offset ┃  ref ┃ status ┃\n"
           "┡━━━━━━━━╇━━━━━╇━━━━━━━━╇━━━━━━╇━━━━━━━━┩\n"
           "│ sfa    │   0 │      0 │ 0x44 │     ok │\n"
           "│ sfb    │   1 │     16 │ 0x00 │     ok │\n"
           "└────────┴─────┴────────┴──────┴────────┘\n"),
    # any command's table folded `0x44` into `0x`/`44` at COLUMNS=40; log alone printed records there. Now every
    # table does: each value whole, named by its column
    ("34", "tensor: sfa · row: 0 · offset: 0\n"
           "    ref: 0x44 · status: ok\n"
           "tensor: sfb · row: 1 · offset: 16\n"
           "    ref: 0x00 · status: ok\n"),
])
def test_a_table_is_drawn_where_it_holds_its_words_else_one_record_per_row(columns: str, printed: str, capsys,
                                                                          monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    Console().table(LAYOUT_COLUMNS, LAYOUT_ROWS, title="scale layout")
    assert capsys.readouterr().out == "scale layout\n" + printed


def test_a_table_at_ten_columns_keeps_every_value_and_escapes_its_title(capsys, monkeypatch) -> None:
    """At COLUMNS=10 a table drew every cell empty."""
    monkeypatch.setenv("COLUMNS", "10")
    Console().table(LAYOUT_COLUMNS, LAYOUT_ROWS, title="k\x1b[31m.cu")
    out = capsys.readouterr().out
    assert "│" not in out and all(value in out.split() for value in ("0x44", "0x00", "16", "ok"))
    assert out.startswith("k\\x1b[31m.cu\n")  # the title escaped as the table's is


def test_a_piped_table_that_would_break_a_word_flows_its_records_at_its_own_width(capsys, monkeypatch) -> None:
    """A record to a pipe is one line for grep; a table's rows there keep the table's readable width."""
    from nvfp4ctl.console import PIPED_TABLE_WIDTH

    monkeypatch.delenv("COLUMNS", raising=False)
    code = "load_inline(" + "x" * 200 + ")"  # one word wider than a piped table
    Console().table(["id", "why", "bad"], [["NV101", PROSE, code]])
    out = capsys.readouterr().out
    assert code in out.split() and out.count("unread") == 3
    assert _widest(out.replace(code, "")) <= PIPED_TABLE_WIDTH


def test_a_status_spins_on_a_terminal_only() -> None:
    """A wait of unknown length (dump's first compile) spins where someone watches; a pipe or a log
    file, and -q, get no frames."""
    from contextlib import nullcontext

    from rich.status import Status

    from nvfp4ctl.console import QUIET

    for verbosity, terminal, spins in ((None, True, True), (None, False, False), (QUIET, True, False)):
        console = Console() if verbosity is None else Console(verbosity)
        console.err = RichConsole(file=io.StringIO(), force_terminal=terminal, color_system=None)
        waiting = console.status("compiling")
        assert isinstance(waiting, Status if spins else nullcontext), (verbosity, terminal)
        with waiting:
            pass


def test_a_note_goes_to_stderr_and_q_drops_it(capsys) -> None:
    from nvfp4ctl.console import QUIET

    Console().note("compiling once")
    Console(QUIET).note("not shown")
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "compiling once\n")


def test_a_bar_not_drawn_writes_nothing_when_it_ends() -> None:
    """-q, a pipe or a log file draw no bar; rich 13 still ended it with a blank line on stderr, and a
    quiet `nvfp4ctl -q bench` that went well left that line behind."""
    from nvfp4ctl.console import QUIET

    for verbosity, terminal in ((QUIET, True), (QUIET, False), (None, False)):
        console = Console() if verbosity is None else Console(verbosity)
        stderr = io.StringIO()
        console.err = RichConsole(file=stderr, force_terminal=terminal, force_interactive=False, color_system=None)
        with console.progress() as progress:
            progress.update(progress.add_task("timing", total=2), advance=2)
        assert stderr.getvalue() == "", (verbosity, terminal, stderr.getvalue())


def test_columns_that_are_no_width_leave_every_line_in(capsys, monkeypatch) -> None:
    """rich took COLUMNS=0 (Docker's and other 0x0 ptys') as a width of 0: errors, results and progress
    printed nothing at all. 0, a negative or an unreadable $COLUMNS is no width: as though it were unset."""
    for columns in ("0", "-5", "abc", ""):
        monkeypatch.setenv("COLUMNS", columns)
        console = Console()
        console.error("--only: x is not an integer")
        console.info("0/1 pass")
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("0/1 pass\n", "error: --only: x is not an integer\n"), columns


def test_a_usable_columns_still_sets_the_width(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", " 50 ")
    assert Console().out.width == 50


def test_columns_zero_keeps_a_commands_error_line(monkeypatch) -> None:
    from cli_streams import separate_streams_runner

    from nvfp4ctl.cli import app

    result = separate_streams_runner().invoke(app, ["bench", "--only", "x"], env={"COLUMNS": "0"})
    assert result.exit_code == 2
    assert result.stderr == "error: --only: x is not an integer\n"


def test_a_dumb_terminal_gets_the_plain_progress_lines_and_no_bar(monkeypatch) -> None:
    """TERM=dumb on a terminal (Emacs's shell, some CI ptys): rich draws no bar there, and the plain
    lines were kept for a stderr that is no terminal, so a run was silent until its end."""
    from rich.progress import Progress

    from nvfp4ctl.progress_lines import progress_lines

    for term, draws_live in (("dumb", False), ("xterm-256color", True)):
        monkeypatch.setenv("TERM", term)
        monkeypatch.delenv("TTY_INTERACTIVE", raising=False)
        console = Console()
        stderr = io.StringIO()
        console.err = RichConsole(file=stderr, force_terminal=True, color_system=None)
        assert console.draws_live is draws_live and console.draws_no_bar is not draws_live, term
        with console.progress() as progress:
            assert isinstance(progress, Progress) and progress.disable is not draws_live, term
        with progress_lines(console, 2) as lines:
            lines.show("test 1 (m=128 n=256 k=256)")
        said = stderr.getvalue()
        assert ("test 1 (m=128 n=256 k=256): 0 of 2, 0 s\n" in said) is not draws_live, (term, said)


def test_an_escape_in_a_cell_or_title_is_shown_not_sent(capsys, monkeypatch) -> None:
    """rich strips BEL, BS, VT, FF and CR from a cell but passes ESC on: a kernel named with an escape
    sequence recoloured the terminal. Every cell, plain or styled, and the title show it as \\x1b."""
    monkeypatch.delenv("COLUMNS", raising=False)
    from rich.text import Text

    styled = Text.assemble(("ok ", "green"), "bad\x1b[2Jname\u202e")
    Console().table(["kernel", "why"], [["gemm\x1b[31m.cu", styled]], title="runs in /tmp/\x1b]0;x\x07")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "gemm\\x1b[31m.cu" in out and "ok bad\\x1b[2Jname\\u202e" in out and "/tmp/\\x1b]0;x" in out


def test_a_styled_cell_keeps_its_style_over_the_escaped_text() -> None:
    from rich.text import Text

    from nvfp4ctl.console import _cell

    cell = _cell(Text.assemble("a\x1b", ("red part", "red")))
    assert cell.plain == "a\\x1bred part"
    assert [(cell.plain[s.start:s.end], s.style) for s in cell.spans] == [("red part", "red")]


def test_a_cell_of_several_lines_keeps_its_line_breaks(capsys, monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    Console().table(["bad"], [["def f():\n    return 1"]])
    out = capsys.readouterr().out
    assert "\\x0a" not in out and "def f():" in out and "return 1" in out


def test_a_title_with_brackets_prints_as_written(capsys, monkeypatch) -> None:
    """The title went through rich's markup: `k[sm100].cu` printed `k.cu`, and `k[/].cu` raised MarkupError."""
    monkeypatch.delenv("COLUMNS", raising=False)
    for title in ("configs of k[sm100].cu", "k[/].cu", "[bold]not bold[/bold]"):
        Console().table(["config"], [["0"]], title=title)
        assert capsys.readouterr().out.splitlines()[0].strip() == title


def test_a_tab_in_a_cell_is_whitespace(capsys, monkeypatch) -> None:
    """Since cells were escaped a tab showed as `\\x09`, where rich had expanded it."""
    monkeypatch.delenv("COLUMNS", raising=False)
    from rich.text import Text

    Console().table(["kernel", "why"], [["a\tb", Text.assemble(("x\ty", "red"))]], title="t\tt")
    out = capsys.readouterr().out
    assert "\\x09" not in out and "\t" not in out
    assert "a       b" in out and "x       y" in out and "t       t" in out


def test_a_byte_that_is_not_utf8_shows_as_the_run_log_writes_it(capsys, monkeypatch) -> None:
    """Python holds b"\\xff" of a file's name as the lone surrogate \\udcff: messages and tables showed
    `sub\\udcff.py` where the run log writes `sub\\xff.py`. A UTF-8 name shows as it is."""
    from nvfp4ctl.printable import escape, escaped, escaped_bytes

    assert escape("\udcff") == escaped_bytes("\udcff") == "\\xff" and escaped("a\udcfeb") == "a\\xfeb"
    assert escape("\ud800") == escaped_bytes("\ud800") == "\\ud800"  # no byte decodes to it: its code
    monkeypatch.delenv("COLUMNS", raising=False)
    console = Console()
    console.error("no such file or folder: sub\udcff.py")
    console.info("target sub\udcff.py · sübmission.py")
    console.table(["target"], [["k\udcff.cu"]], title="runs of sub\udcff.py")
    captured = capsys.readouterr()
    assert captured.err == "error: no such file or folder: sub\\xff.py\n"
    assert "target sub\\xff.py · sübmission.py" in captured.out
    assert "k\\xff.cu" in captured.out and "runs of sub\\xff.py" in captured.out and "udcff" not in captured.out


NAME = "k\x1b[31m[/][bold]\u202e\x07\r.cu"
NAME_SHOWN = "k\\x1b[31m[/][bold]\\u202e.cu"  # BEL and CR stripped, as rich strips them from a cell


def _to_terminals(console: Console) -> tuple[io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    console.out = RichConsole(file=out, force_terminal=True, color_system="standard", highlight=False, width=200)
    console.err = RichConsole(file=err, force_terminal=True, color_system="standard", highlight=False, width=200)
    return out, err


def _unstyled(stream: io.StringIO) -> str:
    """What a terminal shows of `stream`, its SGR codes (colours, bold) left out."""
    return re.sub(r"\x1b\[[0-9;]*m", "", stream.getvalue())


def test_every_message_line_shows_a_name_as_a_table_does(monkeypatch) -> None:
    """A name's ESC and U+202E reached the terminal in every line but a table's (recolouring, reordering);
    rich's markup in it prints literally. The command's own styles, line breaks and tabs stay."""
    from nvfp4ctl.console import VERBOSE

    monkeypatch.setenv("TERM", "dumb")  # progress_line's plain lines, where no bar is drawn
    console = Console(VERBOSE)
    out, err = _to_terminals(console)
    console.error(f"no such file or folder: {NAME}")
    console.warn(f"{NAME}: broken link")
    console.note(f"waiting for {NAME}")
    console.progress_line(f"compiling {NAME}")
    console.ok(f"built {NAME}")
    console.fail(f"failed {NAME}")
    console.info(f"{NAME}:\n\tnext line", style="bold")
    console.detail(f"checked: {NAME}")
    said = out.getvalue() + err.getvalue()
    assert "\x1b[31m" not in said and "\u202e" not in said and "\x07" not in said and "\r" not in said, said
    assert said.count(NAME_SHOWN) == 8 and "\\x09" not in said and "\\x0a" not in said
    # rich expands the tab (how it styles the spaces differs between its versions)
    assert f"{NAME_SHOWN}:\n        next line" in _unstyled(out) + _unstyled(err), said
    # the command's own styles stay (rich's oldest allowed version splits a line's styled segments otherwise)
    assert err.getvalue().startswith("\x1b[1;31merror: ") and _unstyled(err).startswith(
        f"error: no such file or folder: {NAME_SHOWN}\n"), err.getvalue()
    assert out.getvalue().startswith("\x1b[1;32mbuilt ") and _unstyled(out).startswith(f"built {NAME_SHOWN}\n"), out.getvalue()


def test_a_status_or_a_bar_shows_its_step_as_written(monkeypatch) -> None:
    """A bar's step went through rich's markup: a kernel named `[/]` raised MarkupError mid-build, and its ESC
    reached the terminal; the spinner's line passed ESC on too."""
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)
    console = Console()
    _, err = _to_terminals(console)
    with console.status(f"compiling {NAME}"):
        pass
    with console.progress(transient=False) as progress:
        task = progress.add_task(f"compiling {NAME}", total=2)
        progress.update(task, description=f"linking {NAME}", advance=1)
    drawn = err.getvalue()
    assert "\x1b[31m" not in drawn and "\u202e" not in drawn and f"compiling {NAME_SHOWN}" in drawn, drawn
    assert f"linking {NAME_SHOWN}" in drawn, drawn


def test_raw_text_shows_a_name_as_a_message_line_does_and_escaped_text_once() -> None:
    """raw printed a compiler's log, a child's log tail or a traceback as written: a file named with ESC, or an
    exception's message holding U+202E, recoloured and reordered the terminal. Its lines and tabs stay; lint's
    findings, already escaped, print as they are, not escaped again."""
    console = Console()
    out, _ = _to_terminals(console)
    console.raw(f'  File "{NAME}", line 3\n\tRuntimeError: {NAME}\n')
    console.raw("sub.py:1:1: NV201 a\\x1b[31mb\n  |\n1 | x = '\\x1b[31m'")
    said = out.getvalue()
    assert "\x1b[31m" not in said and "\u202e" not in said and "\x07" not in said and "\r" not in said, said
    assert f'  File "{NAME_SHOWN}", line 3\n' in said and f"        RuntimeError: {NAME_SHOWN}\n" in said, said
    assert "sub.py:1:1: NV201 a\\x1b[31mb\n  |\n1 | x = '\\x1b[31m'\n" in said and "\\\\x1b" not in said, said
