"""Where the run log's section lies in MEMORY.md, read as CommonMark reads it (markdown-it-py): after its first
`## Run log` heading, up to a section of the user's below it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from itertools import islice
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from markdown_it import MarkdownIt
    from markdown_it.token import Token

HEADING = "## Run log"
PREAMBLE = ("<!-- nvfp4ctl appends one line per command below; keep your notes above this section,"
            " or below it under a heading of your own. -->")
# The heading as a user may type it: any case, a note in parentheses or after a colon, ATX closing #s, or the
# same h2 underlined (`Run log` over `-------`). "## Run logs" or "## Run log ideas" are headings of their own.
_HEADING_TEXT = r"run log(?:[ \t]*\([^()]*\)|[ \t]*:.*)?"
_HEADING_LINE = re.compile(rf"##[ \t]+{_HEADING_TEXT}(?:[ \t]+#+)?", re.IGNORECASE)
_SETEXT_TEXT = re.compile(rf" {{0,3}}{_HEADING_TEXT}", re.IGNORECASE)
_SETEXT_H2_UNDERLINE = re.compile(rb" {0,3}-+[ \t]*")


def _joins_an_html_block(existing: bytes, end: _LogEnd, line: bytes) -> bool:
    """Whether Markdown reads `line`, written at `end.at`, as part of an HTML block above it that a blank line
    before it would end (`<div>`, `<details>`: only a blank line ends those; a `<!-- -->` comment ends at its `-->`)."""
    if end.parsed_from is None or end.at <= end.parsed_from:
        return False
    piece = existing[end.parsed_from : end.at]
    if not piece.endswith((b"\n", b"\r")):
        piece += b"\n"
    after = _top_level_blocks(piece + line)
    if not after or after[-1].type != "html_block" or (after[-1].map or [0, 0])[1] < _line_count(piece + line):
        return False
    return _top_level_blocks(piece + b"\n" + line)[-1].type != "html_block"


@dataclass(frozen=True)
class _LogSection:
    """The run-log section of a file as byte offsets (_log_section): from `start`, just after its heading, to
    `end.at`, with the closed fenced code blocks inside it (`end.fenced`)."""

    start: int
    end: _LogEnd


def _log_section(existing: bytes) -> _LogSection | None:
    """The run-log section of `existing`: from just after its first heading to where a section of the user's below
    it starts (_log_end), else the end of the file, with the closed fenced code blocks inside it (a run's line the
    user quoted in one is their text, no run; found among the pieces the search for the section's end parses
    anyway); None without the heading. One rule for the append, whose line goes at its end, and the readers,
    which read no further: a line written there is read back, and no note of the user's below it is taken for a run."""
    start = _after_the_first_heading(existing)
    if start is None:
        return None
    return _LogSection(start, _log_end(existing, start))


# Markdown is read as CommonMark (markdown-it-py): a heading in an HTML comment, a fence or indented code is
# none. Parsing a log of years of runs (tens of MB) whole takes seconds, so only pieces are parsed: the notes
# above a line that may be the run log's heading, and below it the stretches of lines between runs' lines that
# may hold a heading of the user's or open a block (_NOTABLE_LINE), each from the run's line before it. A run's
# line as nvfp4ctl writes it (_RUN_LINE: `- ` and the time, in the first column) is a list item of one line of
# text, which closes whatever block the lines before it left open but a fence or an HTML block of the top level;
# the runs' lines between two such stretches are never parsed.
_NOTABLE_LINE = re.compile(rb"\n {0,3}(?:#{1,6}(?=[ \t\r\n]|\Z)|=|```|~~~|<|-(?![ \t]*[^ \t\r\n-]))")
_RUN_LINE = re.compile(rb"\n- \d{4}-\d\d-\d\dT\d\d:\d\d")
_LONE_CR = re.compile(rb"\r(?!\n)")
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_MAYBE_THE_HEADING = re.compile(rb"(?<![^\r\n])(?:\xef\xbb\xbf)*(?:##| {0,3}run log)", re.IGNORECASE)
# A notable line this close after a window's end joins it: one parse of a few more runs' lines costs less than
# a parse of its own (markdown-it's fixed cost per parse is that of about ten lines).
_JOINED_WITHIN_BYTES = 1 << 10


def _after_the_first_heading(existing: bytes) -> int | None:
    """The offset just after the line of the run log's first heading (_is_heading) in `existing` that
    Markdown reads as a heading; None without one. The first: the runs follow it, and a `## Run log` further
    down (quoted in a code block of the user's) is the user's text."""
    at = 0
    while (found := _MAYBE_THE_HEADING.search(existing, at)) is not None:
        line_start = found.start()
        line_end = _after_the_line(existing, line_start)
        if _is_heading_line(existing[line_start:line_end]):
            heading_end: int | None = line_end
        else:
            heading_end = _after_a_setext_h2(existing, line_start)
        if heading_end is not None:
            number = len(_LINE_BREAK.findall(existing, 0, line_start))
            if any(block.map[0] == number and block.tag == "h2"
                   for block in _headings(_top_level_blocks(existing[:heading_end]))):
                return heading_end
        at = line_end if line_end > line_start else line_start + 1
    return None


def _after_the_line(existing: bytes, line_start: int) -> int:
    """The offset just after the line starting at `line_start`, its line break included."""
    line = _LINE.match(existing, line_start)
    assert line is not None  # _LINE matches any text, even none
    line_end = line.end()
    if existing[line_end : line_end + 2] == b"\r\n":
        return line_end + 2
    return line_end + 1 if line_end < len(existing) else line_end


def _after_a_setext_h2(existing: bytes, line_start: int) -> int | None:
    """The offset just after the underline of the run log's heading written as a setext h2 (`Run log` over
    `-------`) whose text line starts at `line_start`; None where that line and the next are not one."""
    text_end = _after_the_line(existing, line_start)
    if text_end == line_start or not _is_setext_text(existing[line_start:text_end]):
        return None
    underline = _LINE.match(existing, text_end)
    if underline is None or not _SETEXT_H2_UNDERLINE.fullmatch(underline[0]):
        return None
    return _after_the_line(existing, text_end)


def _is_setext_text(line: bytes) -> bool:
    """Whether `line` is the text line of the run log's heading written as a setext h2 (`Run log`)."""
    return _SETEXT_TEXT.fullmatch(line.lstrip(b"\xef\xbb\xbf").decode("utf-8", errors="replace").rstrip()) is not None


def _names_the_log(line: bytes, heading: Token) -> bool:
    """Whether `heading`, a heading_open token whose first line is `line`, is the run log's: as ATX
    (`## Run log`) or as a setext h2 (`Run log` underlined with `-`)."""
    if heading.markup == "-":
        return _is_setext_text(line)
    return _is_heading_line(line)


@dataclass(frozen=True)
class _LogEnd:
    """Where the run log's section ends (_log_end), and where before it a piece of the file that ends
    there can be parsed from (no block is open there); None where no fence or HTML block can be open at `at`
    (below the last piece parsed, only runs' lines and lines that open no block)."""

    at: int
    parsed_from: int | None
    # the closed fenced code blocks above `at`, each from its opening line to past its closing one
    fenced: tuple[tuple[int, int], ...] = ()


def _log_end(existing: bytes, start: int) -> _LogEnd:
    """Where in `existing` a section of the user's below the run log's heading (whose line ends at `start`)
    begins, the new line's place: after the last line that is not blank before the first heading Markdown
    reads below the log's (`## Ideas`, `### Tuning TODO`, `Ideas` underlined with `===`, never one in a fenced
    or indented code block or an HTML comment: the runs must not land under it), or before a rule (`---`,
    `***`) that only blank lines part from that heading, the separator the user drew above it; else the end of
    the file. A `## Run log` heading again below the first keeps the log going. Judged on the bytes, which
    are kept as they are. With where a piece of the file ending there can be parsed from, and the closed
    fenced code blocks above it."""
    below = max(start - 1, 0)  # from the heading's own line break, so the first line below it is seen
    if _LONE_CR.search(existing, below) is not None:  # an old Mac editor's breaks, which the searches miss: all parsed
        window = existing[start:]
        tokens = _block_tokens(window)
        found = _section_in_window(window, tokens)
        at = start + found if found is not None else len(existing)
        return _LogEnd(at, start, _fences_in(window, tokens, start, at))
    at = below  # a line break after which no block is open
    fenced: list[tuple[int, int]] = []
    while (notable := _NOTABLE_LINE.search(existing, at)) is not None:
        window_start = _run_line_before(existing, at, notable.start(), start)
        reach = notable.end()
        while True:
            window_end, last_run = _window_end(existing, reach)
            window = existing[window_start:window_end]
            tokens = _block_tokens(window)
            if (found := _section_in_window(window, tokens)) is not None:
                fenced += _fences_in(window, tokens, window_start, window_start + found)
                return _LogEnd(window_start + found, window_start, tuple(fenced))
            if window_end == len(existing):
                fenced += _fences_in(window, tokens, window_start, window_end)
                return _LogEnd(len(existing), window_start, tuple(fenced))
            if not _left_open_at_its_end(window, tokens):
                fenced += _fences_in(window, tokens, window_start, window_end)
                break
            # a fence or HTML block swallowed the run's line that ended the window: twice as far, so a fence
            # holding thousands of pasted runs is parsed a few times, not once for each of them
            reach = window_end + (window_end - window_start)
        at = last_run
    return _LogEnd(len(existing), None, tuple(fenced))


def _fences_in(window: bytes, tokens: list[Token], window_start: int, before: int) -> tuple[tuple[int, int], ...]:
    """The fenced code blocks among `window`'s block `tokens` that a closing fence ends before `before`, as byte
    ranges of the file (`window` starts at `window_start`), each from its opening line to past its closing one.
    One never closed runs on to the end of the file, over every run written below it: it is left out."""
    fences = [token for token in tokens if token.type == "fence" and token.map is not None]
    if not fences:
        return ()
    line_starts = [0]
    for line in _lines_with_breaks(window):
        line_starts.append(line_starts[-1] + len(line))
    found = []
    for fence in fences:
        first, past = fence.map
        if past - first < 2 or past >= len(line_starts) or window_start + line_starts[past] > before:
            continue
        if _closes(window[line_starts[past - 1] : line_starts[past]], fence):
            found.append((window_start + line_starts[first], window_start + line_starts[past]))
    return tuple(found)


def _closes(line: bytes, fence: Token) -> bool:
    """Whether `line`, the last line of the fenced code block `fence`, is its closing fence (its character, at least
    as many of it, nothing else) rather than text of a fence that runs on to the end of what was parsed."""
    closing = line.strip()
    mark = fence.markup.encode()
    return len(closing) >= len(mark) and closing == mark[:1] * len(closing)


def _run_line_before(existing: bytes, at: int, before: int, start: int) -> int:
    """The start of the last run's line (_RUN_LINE) whose line break lies in existing[at:before]; where there is
    none, the line after `at` (or `start`, the first line below the log's heading)."""
    end = before
    while (found := existing.rfind(b"\n- ", at, end)) >= 0:
        if _RUN_LINE.match(existing, found) is not None:
            return found + 1
        end = found + 2  # "\n- " ending before this one's "- "
    return at + 1 if at >= start else start


def _window_end(existing: bytes, reach: int) -> tuple[int, int]:
    """The end of the first run's line (_RUN_LINE) starting after `reach`, and that line's own line break before
    it; where a notable line follows within _JOINED_WITHIN_BYTES, the run's line after that one instead. The end
    of the file (twice) where no run's line follows."""
    while (run := _RUN_LINE.search(existing, reach)) is not None:
        line_end = existing.find(b"\n", run.end())
        end = line_end + 1 if line_end >= 0 else len(existing)
        joined = _NOTABLE_LINE.search(existing, end - 1, min(end + _JOINED_WITHIN_BYTES, len(existing)))
        if joined is None or end == len(existing):
            return end, run.start()
        reach = joined.end()
    return len(existing), len(existing)


def _section_in_window(window: bytes, tokens: list[Token]) -> int | None:
    """_log_end's offset in `window`, a piece of the file that begins where no block is open, of a heading
    among its block `tokens`; None where the window has no heading of the user's. A heading in a list item (`- run`,
    a blank line, `   ### Ideas`) counts, as the user meant it; one quoted (`> ## x`) is the quote's."""
    quoted = 0
    for token in tokens:
        quoted += token.nesting if token.type in ("blockquote_open", "blockquote_close") else 0
        if token.type != "heading_open" or quoted or _names_the_log(_line_at(window, token.map[0]), token):
            continue
        blocks = [block for block in tokens if block.level == 0 and block.nesting >= 0 and block.map is not None]
        first = blocks.index(token) if token.level == 0 else None
        while first and blocks[first - 1].type == "hr":  # rules only blank lines part from the heading
            first -= 1
        return _after_text_before(window, blocks[first].map[0] if first is not None else token.map[0])
    return None


def _left_open_at_its_end(window: bytes, tokens: list[Token]) -> bool:
    """Whether a fence or HTML block of the top level among `window`'s block `tokens` reaches its last line (the
    run's line that ends it, which such a block takes in: the window was cut short)."""
    lines = _line_count(window)
    return any(token.type in ("fence", "html_block") and token.level == 0 and token.map is not None
               and token.map[1] >= lines for token in tokens)


def _line_count(data: bytes) -> int:
    """How many lines Markdown reads in `data` (a last one without its line break counts)."""
    return len(_LINE_BREAK.findall(data)) + (0 if not data or data.endswith((b"\n", b"\r")) else 1)


def _after_text_before(window: bytes, line_number: int) -> int:
    """The offset in `window` just after the last line before `line_number` that is not blank; 0 for none."""
    offset, after_text = 0, 0
    for number, line in enumerate(_lines_with_breaks(window)):
        if number >= line_number:
            break
        offset += len(line)
        if line.strip():
            after_text = offset
    return after_text


def _lines_with_breaks(data: bytes) -> Iterator[bytes]:
    """data's lines as Markdown splits them (at \\r\\n, \\r, \\n), each with its break."""
    at = 0
    for found in _LINE_BREAK.finditer(data):
        yield data[at : found.end()]
        at = found.end()
    if at < len(data):
        yield data[at:]


def _line_at(data: bytes, line_number: int) -> bytes:
    return next(islice(_lines_with_breaks(data), line_number, None), b"")


def _headings(blocks: list[Token]) -> list[Token]:
    return [block for block in blocks if block.type == "heading_open"]


def _top_level_blocks(data: bytes) -> list[Token]:
    """The blocks of the top level of Markdown `data` (headings, paragraphs, lists, rules, fences, HTML blocks,
    code), in order, each with its line range (.map, lines counted from 0 at \\r\\n, \\r and \\n). A byte order
    mark starting a line is left out: an editor's, before the run log's heading, is no text."""
    return [token for token in _block_tokens(data) if token.level == 0 and token.nesting >= 0 and token.map is not None]


def _block_tokens(data: bytes) -> list[Token]:
    """markdown-it's block tokens of `data`, opening and closing ones, at every level."""
    return _markdown_parser().parse(_BOM_AT_LINE_START.sub("", data.decode("utf-8", errors="replace")))


_BOM_AT_LINE_START = re.compile("(?<![^\r\n])\ufeff+")


@cache
def _markdown_parser() -> MarkdownIt:
    """CommonMark's block structure only: the text inside blocks is never parsed (the log's lines are many)."""
    from markdown_it import MarkdownIt  # here: only the run log's readers and the append need it

    return MarkdownIt("commonmark").disable("inline")


def _is_heading_line(line: bytes) -> bool:
    """_is_heading of a line of bytes, decoded only where it can be the heading: appends read big logs."""
    return line.lstrip(b"\xef\xbb\xbf").startswith(b"##") and _is_heading(line.decode("utf-8", errors="replace"))


def _text_follows(existing: bytes, at: int) -> bool:
    """Whether the line starting at `at` in `existing` is there and not blank."""
    line = _LINE.match(existing, at)
    return line is not None and bool(line[0].strip())


_LINE = re.compile(rb"[^\r\n]*")


def _is_heading(line: str) -> bool:
    """Whether `line` is the run log's heading, as written or typed by hand (`## Run Log`, `## Run log
    (nvfp4ctl)`): the whole line, since notes may quote it inside one. A byte order mark before it (an
    editor's UTF-8 with BOM, where the heading is the file's first line) counts as nothing, or a second
    section would be made and the runs above it no longer read."""
    line = line.lstrip("\ufeff")
    return line.startswith("##") and _HEADING_LINE.fullmatch(line.rstrip()) is not None
