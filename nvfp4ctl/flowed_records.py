"""A table's rows as plain records, for where the table cannot be drawn well: one record per row,
its cells on one line where they fit, never broken inside a cell's word (a time stamp, a hash, a shape)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len  # columns on screen: a CJK character in a path takes two
from nvfp4ctl.printable import shown

SEPARATOR = " · "  # the run log's own, between the cells of its lines
INDENT = "    "  # a record's later lines; its first line, unindented, tells where it starts


def flow(cells: Sequence[str], width: int | None) -> list[str]:
    """The record's lines at `width` columns (None: no limit, one line): whole cells side by side while
    they fit, a cell too long for a line of its own wrapped between its words, a word longer than a
    line left whole (the terminal wraps it; nothing is cut). Cells are written as shown_cell makes them."""
    cells = [shown_cell(cell) for cell in cells]
    if width is None:
        return [SEPARATOR.join(cells)]
    lines: list[str] = []
    line = ""
    for cell in cells:
        if line and cell_len(line) + len(SEPARATOR) + cell_len(cell) <= width:
            line += SEPARATOR + cell
            continue
        if line:
            lines.append(line)
            line = INDENT
        for word in cell.split(" "):
            if line.strip() and cell_len(line) + 1 + cell_len(word) > width:
                lines.append(line)
                line = INDENT + word
            else:
                line += f" {word}" if line.strip() else word
    lines.append(line)
    return lines


def shown_cell(cell: str) -> str:
    """A cell as the terminal gets it: the control characters rich's table strips (BEL, backspace, CR, form
    and line tabulations) stripped as it strips them, any other character that is not printable (ESC, DEL,
    U+202E) written as its escape (\\x1b), so a run log's cell cannot ring, move the cursor, recolour or
    reorder the terminal's text."""
    return shown(cell)
