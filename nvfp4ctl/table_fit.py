"""Column widths for a table too wide for its width: values (numbers, times, shapes) stay whole, text folds.

A table narrows in steps, each column widest first (as rich narrows), and stops at the first step that
fits: text wraps between words and headers between words; then text folds inside its long words (a
path, a kernel's name), no narrower than its header's longest word; then headers fold too; then text
folds narrower still. A value is never broken: a table whose values alone need more is as wide as they
and its headers' words need.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

# One number: 7597, -0.91, 1,024, 2.5e-3, with an optional sign (the minus sign too)
_NUMBER = r"[+\-\u2212]?(?:\d+(?:[.,]\d+)*|\.\d+)(?:[eE][+\-]?\d+)?"
# What may follow a number: %, a ratio's x, or a unit (µs, s, KB, TFLOP/s)
_UNIT = r"(?: ?(?:%|x|\u00d7|[A-Za-z\u00b5]{1,6}(?:/[A-Za-z]{1,3})?))?"
_QUANTITY = rf"\u00b1? ?{_NUMBER}{_UNIT}"
_VALUE = re.compile(
    rf"{_QUANTITY}(?: ?\u00b1 ?{_NUMBER}{_UNIT})?"  # 25.01 µs, +4.20%, ±0.31%, 25.01 ± 0.30
    r"|\d+(?:x\d+)+"  # a shape: 128x7168x16384
    r"|[A-Za-z]\w*=\d+(?: [A-Za-z]\w*=\d+)*"  # a shape: m=128 n=256 k=256
    r"|[-\u2014\u2013]?"  # no value: empty, "-" or a dash
)


def is_value(line: str) -> bool:
    """Whether one line of a cell is a value (a number, a time, a shape), which a table keeps whole; any
    other text (a time stamp, a path, a GPU's name, a message) folds."""
    return _VALUE.fullmatch(line.strip()) is not None


@dataclass(frozen=True)
class ColumnText:
    """What a column holds, as plain text: its header and the lines of its cells."""

    header: str
    cells: Sequence[str]
    least: int = 0  # a width the column never goes below (a piped table's whole column)

    @property
    def natural(self) -> int:
        return max([cell_len(line) for line in self._lines(self.header)]
                   + [cell_len(line) for cell in self.cells for line in self._lines(cell)], default=0)

    @property
    def widest_value(self) -> int:
        """The widest value, a cell's line or a word of its text (45.1% in "45.1% (memory)")."""
        lines = [line.strip() for cell in self.cells for line in self._lines(cell)]
        return max((cell_len(part) for line in lines for part in ([line] if is_value(line) else line.split())
                    if is_value(part)), default=0)

    @property
    def header_word(self) -> int:
        return _longest_word(self.header)

    @property
    def text_word(self) -> int:
        return max((_longest_word(line) for cell in self.cells for line in self._lines(cell) if not is_value(line)),
                   default=0)

    def floors(self) -> tuple[int, int, int, int]:
        """The least width at each step: every word whole; long text words folded; headers folded too;
        text folded to a single column."""
        value = max(self.widest_value, self.least, 1)
        text_least = min(self.text_word, self.header_word)  # text folds no narrower than its header's word
        return (max(value, self.header_word, self.text_word), max(value, self.header_word),
                max(value, text_least), value)

    @staticmethod
    def _lines(text: str) -> list[str]:
        return text.splitlines() or [""]


def _longest_word(text: str) -> int:
    return max(map(cell_len, text.split()), default=0)


def fitted_widths(columns: Sequence[ColumnText], room: int) -> list[int]:
    """Each column's width for a table whose cells have `room` columns in all (its borders and padding
    taken off): the first step of ColumnText.floors at which the table fits, the columns narrowed widest
    first; where even the last does not fit, every value and header word whole and text folded to its
    header's longest word, wider than `room`."""
    widths = [column.natural for column in columns]
    steps = [column.floors() for column in columns]
    if sum(min(floors[-1], width) for floors, width in zip(steps, widths)) > room:
        return [max(min(floors[1], width), 1) for floors, width in zip(steps, widths)]
    for step in range(len(steps[0]) if steps else 0):
        widths = _narrowed(widths, [max(min(floors[step], width), 1) for floors, width in zip(steps, widths)], room)
        if sum(widths) <= room:
            break
    return widths


def _narrowed(widths: list[int], floors: list[int], room: int) -> list[int]:
    """`widths` narrowed a column at a time, the widest first, until they fit `room` or every one is at
    its floor."""
    widths = list(widths)
    excess = sum(widths) - room
    while excess > 0:
        shrinkable = [index for index, width in enumerate(widths) if width > floors[index]]
        if not shrinkable:
            break
        widths[max(shrinkable, key=lambda index: widths[index])] -= 1
        excess -= 1
    return widths
