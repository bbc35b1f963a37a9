"""A table's rows as plain records, for where the table cannot be drawn well: one record per row,
its cells on one line where they fit, never broken inside a cell's word (a time stamp, a hash, a shape)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len  # columns on screen: a CJK character in a path takes two
from nvfp4ctl.printable import shown

SEPARATOR = " · "  # the run log's own, between the cells of its lines
INDENT = "    "  # a record's later lines; its first line, unindented, tells where it starts
_NO_WIDTH = 1 << 30  # a pipe's: no line is ever full


def labelled(columns: Sequence[str], row: Sequence[str]) -> list[str]:
    """A table's row as a record, where no header stands above its cells: each cell named by its column
    (`offset: 0`, a cell of lines as `bad:` above them), a column with no header by its value alone.
    Empty cells are left out: they held nothing to show."""
    return [_labelled(column, value) for column, value in zip(columns, row) if value.strip()]


def _labelled(column: str, value: str) -> str:
    if not column.strip():
        return value
    return f"{column}:\n{value}" if "\n" in value else f"{column}: {value}"


def flow(cells: Sequence[str], width: int | None) -> list[str]:
    """The record's lines at `width` columns (None: no limit, one line): whole cells side by side while
    they fit, a cell too long for a line of its own wrapped between its words, a word longer than a
    line left whole (the terminal wraps it; nothing is cut). A cell of several lines (a code example)
    keeps them, each on a line of its own, as written, at any width. Cells are written as shown_cell
    makes them."""
    if width is None and not any("\n" in cell for cell in cells):
        return [SEPARATOR.join(shown_cell(cell) for cell in cells)]
    width = _NO_WIDTH if width is None else width
    lines: list[str] = []
    line = ""
    for cell in cells:
        if "\n" in cell:  # its line breaks are its own (indentation, statements): kept, not flowed
            if line.strip():
                lines.append(line)
            first, *rest = cell.split("\n")
            lines.append((INDENT if lines else "") + shown_cell(first))
            lines += [INDENT * 2 + shown_cell(part) for part in rest]
            line = INDENT
            continue
        cell = shown_cell(cell)
        if line.strip() and cell_len(line) + len(SEPARATOR) + cell_len(cell) <= width:
            line += SEPARATOR + cell
            continue
        if line.strip():
            lines.append(line)
        if lines:
            line = INDENT
        for word in cell.split(" "):
            if line.strip() and cell_len(line) + 1 + cell_len(word) > width:
                lines.append(line)
                line = INDENT + word
            else:
                line += f" {word}" if line.strip() else word
    if line.strip() or not lines:
        lines.append(line)
    return lines


def shown_cell(cell: str) -> str:
    """A cell as the terminal gets it: the control characters rich's table strips (BEL, backspace, CR, form
    and line tabulations) stripped as it strips them, any other character that is not printable (ESC, DEL,
    U+202E) written as its escape (\\x1b), so a run log's cell cannot ring, move the cursor, recolour or
    reorder the terminal's text."""
    return shown(cell)
