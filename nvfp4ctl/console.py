"""The only printer: every command shows errors, warnings, results and tables through here."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from rich.console import Console as RichConsole
from rich.measure import Measurement
from rich.table import Table
from rich.text import Span, Text

from nvfp4ctl.printable import CELL_TAB_SIZE, shown, shown_in_cell

if TYPE_CHECKING:
    from rich.progress import Progress

QUIET, NORMAL, VERBOSE = -1, 0, 1
_UNBOUNDED_WIDTH = 10_000  # for measuring a table's natural width
# Widest a table gets where the output is not a terminal and COLUMNS is unset: room for whole paths
# and kernel names beside each other, while prose cells (lint's rule texts) wrap as in a terminal.
PIPED_TABLE_WIDTH = 160
# More rows than a table is read across: rich measures every cell of every row, ~1 ms a row, and took
# half a minute for `log -n 100000` over a log of 35,000 runs
MOST_ROWS_DRAWN = 500


def quiet_closed_stream(stream: Any) -> None:
    """Point the file descriptor under `stream`, whose reader has gone (`nvfp4ctl dump | head -1`), at
    /dev/null: what the command still writes there, and the interpreter's last flush, succeed unread.

    The command then runs on and ends with its own exit code, which the run log records. Not 1, which
    rich's default gave (SystemExit from the write: no run-log line, and "failures found" to a
    `set -o pipefail` script), nor 141, the exit of a process killed by SIGPIPE that `git log | head`
    gives: a reader that stops early (head, grep -q) has what it wanted, and the run's result, a lint
    or a check that passed, is what a script asks the exit code for."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor under it (a test's capture): nothing to point
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)


class _EnvironWithReadableColumns(Mapping[str, str]):
    """os.environ, read as it is now, with $COLUMNS only where it is a positive width (_columns_set).
    rich takes COLUMNS=0, which Docker and other 0x0 ptys set, as a width of 0, at which every line that
    is no table (errors included) printed nothing; a width it cannot read it drops, and so does this."""

    def __getitem__(self, name: str) -> str:
        if name != "COLUMNS":
            return os.environ[name]
        columns = _columns_set()
        if columns is None:
            raise KeyError(name)
        return str(columns)

    def __iter__(self) -> Iterator[str]:
        return (name for name in os.environ if name != "COLUMNS" or _columns_set() is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Printer(RichConsole):
    """rich's console, quiet where its reader has gone (quiet_closed_stream), not exiting with 1, and
    blind to a $COLUMNS that is no width."""

    def __init__(self, **options: Any) -> None:
        super().__init__(_environ=_EnvironWithReadableColumns(), **options)

    def on_broken_pipe(self) -> None:
        self.quiet = True
        quiet_closed_stream(self.file)


class Console:
    """Verbosity-gated output; markup off so user text (paths, messages) prints as written, and any character
    of it that is not printable shown as its escape (_said), as tables show it."""

    def __init__(self, verbosity: int = NORMAL) -> None:
        no_color = bool(os.environ.get("NO_COLOR"))
        self.verbosity = verbosity
        self.json_written = False  # a --json command's document is out: an error after it adds no second one
        self.out = _Printer(no_color=no_color, highlight=False, soft_wrap=True)
        self.err = _Printer(stderr=True, no_color=no_color, highlight=False, soft_wrap=True)

    def give_stdout_to_output(self) -> None:
        """stdout is the file the command writes (`export -o /dev/stdout > sub.py`): every line this console
        would print there (the `wrote` line, hints, tables) goes to stderr, so that stdout holds the file alone."""
        self.out = self.err

    def error(self, message: str) -> None:
        self.err.print(Text("error: ", style="bold red") + _said(message))

    def warn(self, message: str) -> None:
        if self.verbosity >= NORMAL:
            self.err.print(Text("warning: ", style="bold yellow") + _said(message))

    def note(self, message: str) -> None:
        """A line on stderr about the run itself (a long wait ahead, say), hidden by -q; stdout stays
        the command's output (--json's document)."""
        if self.verbosity >= NORMAL:
            self.err.print(_said(message, "dim"))

    def ok(self, message: str) -> None:
        if self.verbosity >= QUIET:
            self.out.print(_said(message, "bold green"))

    def fail(self, message: str) -> None:
        self.out.print(_said(message, "bold red"))

    def info(self, message: str, style: str | None = None, result: bool = False) -> None:
        """A line of the run's progress, hidden by -q; `result`: a line of what the command was asked to
        show (log's entries, say), which -q keeps, as it keeps the result lines of check or build."""
        if self.verbosity >= NORMAL or result:
            self.out.print(_said(message, style or ""))

    def detail(self, message: str) -> None:
        if self.verbosity >= VERBOSE:
            self.out.print(_said(message, "dim"))

    def raw(self, text: str) -> None:
        """Pre-formatted text (diagnostics, dumps, a compiler's log, a child's log tail, a traceback): printed
        as written, even under -q, its line breaks and tabs kept; what is not printable in it (a file named with
        ESC, an exception message holding U+202E) shows as every message line shows it (_said). Text already
        escaped (lint's findings) is printable, so it prints once as it is."""
        self.out.print(Text(_shown_lines(text)), end="" if text.endswith("\n") else "\n")

    def json(self, payload: Any) -> None:
        try:
            sys.stdout.write(json.dumps(payload, indent=2, default=str) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            quiet_closed_stream(sys.stdout)
        self.json_written = True

    def table(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        title: str | None = None,
        right_align_from: int = 1,
        result: bool = False,
        whole: Sequence[int] = (),
        records: Sequence[Sequence[str]] | None = None,
        left_aligned: Sequence[int] = (),
    ) -> None:
        """-q hides a table that a result line sums up (check's shapes, build's kernels); a `result`
        table is itself what the command was asked for (log's entries, lint's rules) and stays.
        `left_aligned`: the columns (by index) past `right_align_from` that hold words, not numbers or
        codes (log's notes), kept to the left as text reads.
        `whole`: the columns (by index) whose cells a pipe or file gets on one line each, kernel names
        and candidates: with no terminal's width to fit, the table grows rather than break them.
        Where the table would break a word inside a cell or a header (a hex value, a kernel's name, a
        shape), or leave a cell empty that held one, at the width it gets, its rows print as plain
        records instead (flowed_records), every value whole: `records`, each row's cells as they read with
        no header above them (log's "exit 0"), else each cell named by its column (`offset: 0`). Given
        `records` also stand in for a table of more than MOST_ROWS_DRAWN rows."""
        if self.verbosity < NORMAL and not result:
            return
        if records is not None and len(rows) > MOST_ROWS_DRAWN:
            self._records(title, records)
            return
        cells = [[_cell(value) for value in row] for row in rows]
        keep_whole = _has_no_width(self.out)
        # the title as Text, as the cells are: a str is read as rich markup (`k[sm100].cu` printed `k.cu`)
        shown_title = Text(shown_in_cell(title), style="table.title") if title else None
        table = Table(title=shown_title, title_justify="left", header_style="bold")
        for index, column in enumerate(columns):
            kept = keep_whole and index in whole
            # fold, not "…": a narrow terminal wraps a kernel's name instead of cutting it. Where the table
            # grows to keep its whole columns, no other column gets narrower than its longest word either:
            # rich narrows the widest columns to one width, and cut `UTCOMMA.4X` to make room
            right = index >= right_align_from and index not in left_aligned
            table.add_column(column, justify="right" if right else "left", overflow="fold",
                             no_wrap=kept, min_width=_cell_width(self.out, column, cells, index, whole=kept)
                             if keep_whole and whole else None)
        for row in cells:
            table.add_row(*row)
        table_width = _table_width(self.out, table)
        if _breaks_a_word(self.out, table, table_width):
            if records is not None:
                self._records(title, records)
                return
            from nvfp4ctl.flowed_records import labelled  # only a table too narrow for its words needs it

            # in a pipe too at the table's own width: a rule's prose on one line was hundreds of columns wide
            self._records(title, [labelled(columns, [_plain(value) for value in row]) for row in rows], table_width)
            return
        width = self.out.width
        self.out.width = table_width
        try:
            self.out.print(table)
        finally:
            self.out.width = width

    def _records(self, title: str | None, records: Sequence[Sequence[str]], width: int | None = None) -> None:
        """`records` one after the other, at `width`, else the width a table would have had: the terminal's,
        else $COLUMNS; in a pipe or a file with neither, one line each, for grep."""
        from nvfp4ctl.flowed_records import flow  # only a table too narrow for its words, or too long, needs it

        if width is None:
            width = self.out.width if self.out.is_terminal else _columns_set()
        lines = [shown_in_cell(title)] if title else []  # as the table writes it: a kernel's name may hold ESC
        for record in records:
            lines += flow(record, width)
        text = "\n".join(lines) + "\n"
        if self.out.quiet:
            return
        try:  # past rich, which took seconds to split into lines the text of a log of years of runs
            self.out.file.write(text)
            self.out.file.flush()
        except BrokenPipeError:
            self.out.on_broken_pipe()

    def status(self, message: str) -> AbstractContextManager[object]:
        """A spinner with `message` on stderr while a step of unknown length runs; nothing under -q or
        where no live display is drawn (draws_live: a pipe or a log file would keep every frame)."""
        if self.verbosity < NORMAL or not self.draws_live:
            return nullcontext()
        return self.err.status(_said(message))

    @property
    def draws_live(self) -> bool:
        """Whether rich draws a live bar or spinner on stderr: a terminal, not a dumb one (TERM=dumb:
        Emacs's shell, some CI ptys, where rich draws nothing at all), that rich takes as interactive
        (TTY_INTERACTIVE=0 says it is not)."""
        return self.err.is_terminal and not self.err.is_dumb_terminal and self.err.is_interactive

    @property
    def draws_no_bar(self) -> bool:
        """Where progress() draws nothing though progress is wanted: no live display on stderr (a log
        file, CI, `2>&1 | tee`, a TERM=dumb terminal), and not -q. A long command then says now and
        then how far it is (progress_line), or it would print nothing for minutes."""
        return self.verbosity >= NORMAL and not self.draws_live

    def progress_line(self, message: str) -> None:
        """A plain line of progress on stderr, where no bar is drawn (draws_no_bar)."""
        if self.draws_no_bar:
            self.err.print(_said(message))

    def progress(self, transient: bool = True) -> Progress:
        """A rich progress bar with ETA; disabled under -q or where no live display is drawn (draws_live)."""
        # Imported on first use: rich.progress costs ~10 ms that `nvfp4ctl --help` need not pay.
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            Task,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        class _ShownDescription(ProgressColumn):
            """The step's words as every line shows them (_said): rich's TextColumn reads them as markup, and a
            kernel's name `[/]` raised MarkupError mid-build, `[bold]` restyled the bar, ESC went through."""

            def render(self, task: Task) -> Text:
                return _said(task.description)

        disable = self.verbosity < NORMAL or not self.draws_live
        return Progress(
            SpinnerColumn(),
            _ShownDescription(),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            # older rich (13, the floor, among them) ends even a disabled bar with a blank line where the
            # console is not interactive: -q, a pipe or a log file got it on stderr. A bar not drawn has no
            # stream to write on
            console=RichConsole(quiet=True) if disable else self.err,
            transient=transient,
            disable=disable,
        )


def _columns_set() -> int | None:
    columns = os.environ.get("COLUMNS", "").strip()
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def _has_no_width(out: RichConsole) -> bool:
    """A pipe, a file, CI: no terminal and no $COLUMNS says how wide the output may be."""
    return not out.is_terminal and _columns_set() is None


def _cell_width(out: RichConsole, header: str, cells: Sequence[Sequence[Text]], index: int, whole: bool) -> int:
    """The column's widest cell (`whole`), else its longest word."""
    options = out.options.update(max_width=_UNBOUNDED_WIDTH)
    found = [Measurement.get(out, options, text) for text in [Text(header), *(row[index] for row in cells)]]
    return max(m.maximum if whole else m.minimum for m in found)


def _breaks_a_word(out: RichConsole, table: Table, width: int) -> bool:
    """Whether rich, drawing `table` at `width` columns, gives a column less room than its longest word
    (header or cell) and so folds a time stamp, a hash or a shape inside it. rich narrows the widest
    columns first, whatever their words, so a table can fold a word even at a width that holds all of
    them; its own column widths (private, and the same from rich 13 to 15) are the only sure answer."""
    widths = table._calculate_column_widths(out, out.options.update_width(width - table._extra_width))
    unbounded = out.options.update_width(_UNBOUNDED_WIDTH)
    return any(given < table._measure_column(out, unbounded, column).minimum
               for given, column in zip(widths, table.columns))


def _table_width(out: RichConsole, table: Table) -> int:
    """The width to print `table` at: the terminal's (rich reads $COLUMNS for it); else $COLUMNS, as set;
    else (a pipe, a file, CI, where rich assumes 80 columns and folded every kernel name) the table's
    natural width, between 80 and PIPED_TABLE_WIDTH, or wider where its whole columns (Console.table)
    and every other column's longest word need more: rich narrows the widest column first, and cut
    `TileConfig<128, 6>` after its 1 to fit 160 columns."""
    if out.is_terminal:
        return out.width
    columns = _columns_set()
    if columns is not None:
        return columns
    measured = Measurement.get(out, out.options.update(max_width=_UNBOUNDED_WIDTH), table)
    return max(out.width, min(measured.maximum, PIPED_TABLE_WIDTH),
               measured.minimum if any(column.no_wrap for column in table.columns) else 0)


_console = Console()


def get_console() -> Console:
    return _console


def set_verbosity(verbosity: int) -> None:
    global _console
    _console = Console(verbosity)


def _said(message: str, style: str = "") -> Text:
    """A line of the command's own words in `style`, what it names of the user's (a path, an argument, a kernel's
    or a test's name) as every table writes it: each character that is not printable as printable.shown writes it
    (ESC as `\\x1b`, U+202E as `\\u202e`, a byte that is not UTF-8 as `\\xff`, BEL and CR stripped), so a file
    named with an escape sequence cannot recolour or move the terminal's text. The line breaks and tabs between
    the command's own lines and columns stay as written; the style, the command's own, covers the whole line."""
    return Text(_shown_lines(message), style=style)


def _shown_lines(text: str) -> str:
    """`text` as printable.shown writes it, its line breaks and tabs kept."""
    if text.isprintable():
        return text
    return "\n".join("\t".join(shown(piece) for piece in line.split("\t")) for line in text.split("\n"))


def _plain(value: Any) -> str:
    """A cell's text as a record gives it, its styles dropped."""
    return value.plain if isinstance(value, Text) else str(value)


def _cell(value: Any) -> Text:
    """A table cell, its text as shown_in_cell writes it: a file name, a log's cell, a compiler's message or a
    test's name holding ESC shows `\\x1b` rather than move the cursor or recolour the terminal. A styled
    cell keeps its styles over the same characters."""
    if not isinstance(value, Text):
        return Text(shown_in_cell(str(value)))
    if value.plain.isprintable():
        return value
    if "\t" in value.plain:  # to the tab stops of its line, as a plain cell's are, its styles moved with them
        value = value.copy()
        value.expand_tabs(CELL_TAB_SIZE)
    starts = [0]  # where each character of the cell begins once shown, and where the last one ends
    pieces = [shown_in_cell(ch) for ch in value.plain]  # its escaping goes a character at a time
    for piece in pieces:
        starts.append(starts[-1] + len(piece))
    end = len(value.plain)
    spans = [Span(starts[min(span.start, end)], starts[min(span.end, end)], span.style) for span in value.spans]
    return Text("".join(pieces), style=value.style, justify=value.justify, overflow=value.overflow,
                no_wrap=value.no_wrap, end=value.end, tab_size=value.tab_size, spans=spans)
