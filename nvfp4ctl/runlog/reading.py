"""Reading the runs back: all of them with their lines, the last ones from the end of a log of tens of MB, and
the runs an older version left below the log."""

from __future__ import annotations

import heapq
from collections.abc import Generator, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from nvfp4ctl.runlog.entry import SEPARATOR, RunEntry, looks_like_a_run, time_order
from nvfp4ctl.runlog.files import _decoded, _previous_bytes, _wide_encoding
from nvfp4ctl.runlog.section import _block_tokens, _lines_with_breaks, _log_section, _LogSection, _names_the_log

if TYPE_CHECKING:
    from markdown_it.token import Token

@dataclass
class RunLogBytes:
    """A run log read once for its readers, as UTF-8 (a file saved as UTF-16 or UTF-32 converted: the section
    is found in UTF-8, as the append finds it), and its section (_log_section), found once: `log` reads the runs,
    then the section of the user's below them, from the same bytes."""

    data: bytes

    @cached_property
    def section(self) -> _LogSection | None:
        return _log_section(self.data)

    def unfenced(self) -> list[tuple[int, int]] | None:
        """The section's byte ranges (start, end) outside its fenced code blocks, whose lines are no runs (a run's
        line the user quoted in one is their text), oldest first; None without the section."""
        if (section := self.section) is None:
            return None
        pieces, at = [], section.start
        for fence_start, fence_end in section.end.fenced:
            pieces.append((at, fence_start))
            at = fence_end
        pieces.append((at, section.end.at))
        return [(start, end) for start, end in pieces if end > start]


def read_log(memory: Path) -> RunLogBytes:
    """`memory` read once for the readers (_previous_bytes: nothing for a file not there yet, a device or a FIFO);
    OSError for a folder."""
    data = _previous_bytes(memory)
    if _wide_encoding(data) is not None:
        data = _decoded(data).encode("utf-8")
    return RunLogBytes(data)


def _section_texts(log: RunLogBytes) -> Iterator[tuple[str, int]]:
    """The text of the run-log section (_log_section) of a run log outside its fenced code blocks, piece by piece,
    each with the number of the file's line it starts on (as an editor numbers them: from 1, at each \\n);
    nothing without the heading."""
    number, counted_to = 1, 0
    for start, end in log.unfenced() or []:
        number += log.data.count(b"\n", counted_to, start)
        counted_to = start
        yield log.data[start:end].decode("utf-8", errors="replace"), number


def read(memory: Path, last: int | None = None) -> list[RunEntry]:
    """The run log's entries, oldest first: those of its section (_log_section); the `last` latest only (by their
    logged time: latest_by_time), parsed from the end of the section (a log of years of runs is tens of MB, and
    `log -n 2` needs two lines where the log is in time order)."""
    if last:  # from the end back to the earliest of the `last` latest (numbered_runs_in)
        return numbered_runs_in(read_log(memory), last).entries
    return [e for text, _ in _section_texts(read_log(memory))
            for e in (RunEntry.from_line(line) for line in text.splitlines()) if e is not None]


@dataclass(frozen=True)
class NumberedRuns:
    """The entries read() gives, each with its line in the file, and the lines that were meant as runs
    but do not read as one (a cell lost to a hand edit): those `log` says it left out. Lines are numbered
    as an editor numbers them (from 1, at each \\n)."""

    entries: list[RunEntry]
    lines: list[int]
    unread: list[int]


def read_numbered(memory: Path, last: int | None = None) -> NumberedRuns:
    """read(memory, last) with line numbers; `unread`: the lines meant as runs among those read, which
    for the `last` entries are the lines after the oldest of them (any before it would not have been
    shown either). Read from the end as read() is; the whole section only where such a line is there."""
    return numbered_runs_in(read_log(memory), last)


def numbered_runs_in(log: RunLogBytes, last: int | None = None) -> NumberedRuns:
    """read_numbered of a run log already read (read_log), in file order; with `last`, the `last` latest runs by
    their logged time (latest_by_time), in time order, as `log --trend` and bench's previous run take them."""
    if last:
        passed_over: list[str] = []
        floor = TimeFloor()
        with closing(newest_first_in(log, passed_over, floor)) as newest:
            entries = _latest_from_the_end(newest, last, floor)
        if not passed_over:  # the usual case: no line numbers needed but the entries', which the table never shows
            return NumberedRuns(entries, [], [])
    whole = _numbered_runs(log)
    return picked_by_time(whole, [True] * len(whole.entries), last) if last else whole


def latest_by_time(entries: Sequence[RunEntry], last: int | None = None) -> list[int]:
    """The places in `entries` (file order) of the `last` latest runs (all without it), in time order: by the
    time logged (time_order), of one second the later line the later run, so a log merged by hand lists the
    same runs under -n as its trend and bench's previous run (a stable sort keeps one second's in file order)."""
    order = sorted(range(len(entries)), key=lambda place: time_order(entries[place].time))
    return order[-last:] if last else order


def picked_by_time(whole: NumberedRuns, kept: Sequence[bool], last: int | None) -> NumberedRuns:
    """The `last` latest of `whole`'s runs that are `kept` (latest_by_time), with their lines; `unread`: the lines
    meant as runs after the first line shown, which might have been among them (all of them where fewer runs are
    kept than `last`)."""
    candidates = [place for place, keep in enumerate(kept) if keep]
    chosen = [candidates[index] for index in latest_by_time([whole.entries[place] for place in candidates], last)]
    lines = [whole.lines[place] for place in chosen]
    if not last or len(candidates) < last:  # all shown, room to spare: a line meant as a run anywhere would have been
        return NumberedRuns([whole.entries[place] for place in chosen], lines, list(whole.unread))
    first_shown = min(lines, default=0)
    return NumberedRuns([whole.entries[place] for place in chosen], lines,
                        [number for number in whole.unread if number > first_shown])


def _latest_from_the_end(newest_first: Iterator[RunEntry], last: int, floor: TimeFloor) -> list[RunEntry]:
    """The `last` latest runs (latest_by_time) of a log read from its end, in time order. Once `last` are held, the
    floor is the earliest of them: a log in time order is parsed back to it alone, a hand-merged one read on for the
    later runs above it."""
    held: list[tuple[str, int, RunEntry]] = []  # a heap, its first the earliest held: (time_order, -place, entry)
    for place, entry in enumerate(newest_first):
        when = (time_order(entry.time), -place, entry)
        if len(held) < last:
            heapq.heappush(held, when)
        elif when[:2] > held[0][:2]:
            heapq.heapreplace(held, when)
        else:
            continue
        if len(held) == last:
            floor.time = held[0][2].time
    return [entry for _, _, entry in sorted(held, key=lambda when: when[:2])]


def _numbered_runs(log: RunLogBytes) -> NumberedRuns:
    entries: list[RunEntry] = []
    lines: list[int] = []
    unread: list[int] = []
    for text, first in _section_texts(log):
        for number, piece in enumerate(text.split("\n"), first):
            for line in piece.splitlines():  # as read() splits them: \r, \u2028 ... break a line too
                if (entry := RunEntry.from_line(line)) is not None:
                    entries.append(entry)
                    lines.append(number)
                elif looks_like_a_run(line):
                    unread.append(number)
    return NumberedRuns(entries, lines, unread)


@dataclass(frozen=True)
class RunsBelowTheLog:
    """Runs' lines in the section of the user's that follows the run log, where older versions appended them
    (under a heading the user wrote after the log): no reader counts them, as the log ends at that heading.
    Lines are numbered as an editor numbers them (from 1, at each \\n)."""

    heading: str  # the heading's first line, as written (`### B200 session`)
    heading_line: int
    lines: list[int]


def runs_below_the_log(memory: Path) -> RunsBelowTheLog | None:
    """The list items of the user's section after the run log (_log_section's end) that read as runs, and that
    section's heading; None where there is no such section or no run in it. Only the section is parsed, as
    CommonMark reads it: a run's line quoted in a fence, an indented code block or an HTML block is no list
    item. `log` alone asks (a note of what it does not count), never the append or bench's comparison."""
    try:
        log = read_log(memory)
    except OSError:  # a folder: the read before this said so
        return None
    return runs_below_the_log_in(log)


def runs_below_the_log_in(log: RunLogBytes) -> RunsBelowTheLog | None:
    """runs_below_the_log of a run log already read (read_log)."""
    data = log.data
    if (log_section := log.section) is None or log_section.end.at >= len(data):
        return None
    end = log_section.end.at
    section = data[end:]
    pieces = list(_lines_with_breaks(section))
    numbers: list[int] = []  # each Markdown line's number in the file (a lone \r starts no line in an editor)
    number = data.count(b"\n", 0, end) + 1
    for piece in pieces:
        numbers.append(number)
        number += piece.count(b"\n")
    tokens = _block_tokens(section)
    heading = next((token for token in tokens if token.type == "heading_open" and token.map is not None
                    and not _quoted(tokens, token) and not _names_the_log(pieces[token.map[0]], token)), None)
    runs = [numbers[token.map[0]] for token in tokens
            if token.type == "list_item_open" and token.map is not None and token.map[0] < len(pieces)
            and RunEntry.from_line(_text_of(pieces[token.map[0]])) is not None]
    if heading is None or heading.map is None or not runs:
        return None
    return RunsBelowTheLog(_text_of(pieces[heading.map[0]]).strip(), numbers[heading.map[0]], runs)


def _quoted(tokens: list[Token], token: Token) -> bool:
    """Whether `token` lies inside a block quote (`> ## x` is the quote's heading, no section's)."""
    depth = 0
    for each in tokens:
        if each is token:
            return depth > 0
        if each.type in ("blockquote_open", "blockquote_close"):
            depth += each.nesting
    return False


def _text_of(piece: bytes) -> str:
    """A line of bytes as text, its line break left out."""
    return piece.decode("utf-8", errors="replace").rstrip("\r\n")


_BLOCK_BYTES = 1 << 16


@dataclass
class TimeFloor:
    """The logged time of the run a reader of the log from its end has found, set by that reader: no run logged
    at or before it (time_order; of the same second, an earlier line) can be a later one. newest_first passes
    such lines over unparsed, so a log in time order is parsed only back to that run, and a log merged by hand,
    later runs above earlier ones, is still read whole for them."""

    time: str = ""

    def passes_over(self, line: str) -> bool:
        if not self.time or not line.startswith("- "):
            return False
        logged = line[2:].split(SEPARATOR, 1)[0]  # the time cell, as RunEntry.from_line cuts it
        return time_order(logged) <= time_order(self.time)


def newest_first(memory: Path, unread: list[str] | None = None,
                 floor: TimeFloor | None = None) -> Generator[RunEntry, None, None]:
    """read(memory) newest first, parsed from the end of the run-log section only as far as the caller goes
    (a log of years of runs is tens of MB) and, with a `floor`, none logged at or before it (TimeFloor).
    The file is read whole, once, for where its section ends (_log_section, which the append also reads
    it for): the runs are the section's, never a line of a section of the user's below it. `unread`
    receives the lines passed over that were meant as runs but do not read as one (looks_like_a_run)."""
    yield from newest_first_in(read_log(memory), unread, floor)  # a folder fails here, saying so


def newest_first_in(log: RunLogBytes, unread: list[str] | None = None,
                    floor: TimeFloor | None = None) -> Generator[RunEntry, None, None]:
    """newest_first of a run log already read (read_log)."""
    for start, end in reversed(log.unfenced() or []):
        for line in _lines_from_the_end(log.data, start, end):
            if floor is not None and floor.passes_over(line):
                continue
            if (entry := RunEntry.from_line(line)) is not None:
                yield entry
            elif unread is not None and looks_like_a_run(line):
                unread.append(line)


def _lines_from_the_end(data: bytes, start: int, end: int) -> Iterator[str]:
    """The lines of data[start:end], last first, as read() splits them: the bytes are decoded from just
    after a b"\n" (never inside a UTF-8 character), so every piece decodes as it does within the whole."""
    later: list[bytes] = []  # blocks of a line whose start lies further back, the latest first
    while end > start:
        block_start = max(start, end - _BLOCK_BYTES)
        block = data[block_start:end]
        end = block_start
        cut = block.find(b"\n") + 1 if block_start > start else 0
        if block_start > start and cut == 0:  # one long line: its start is further back still (joined once, when found)
            later.append(block)
            continue
        piece = block[cut:] + b"".join(reversed(later))
        later = [block[:cut]]
        yield from reversed(piece.decode("utf-8", errors="replace").splitlines())
