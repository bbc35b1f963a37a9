"""The words of a command's tables, to tell that a narrow terminal's output kept every one of them whole:
those of a table drawn wide (its header and cells), looked for among the words of the narrow output."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BOX_DRAWING = "│┃┏┓┗┛┡┩└┘┳┻╇┼─━┬┴"  # rich's table borders, heavy header and light body


def table_words(wide: str) -> list[str]:
    """Every word of the tables in `wide`, output whose tables were drawn at a width that holds them."""
    drawn = [line for line in wide.splitlines() if line.startswith(("│", "┃"))]
    assert drawn, f"no table drawn in:\n{wide}"
    return [word for line in drawn for word in _words(line)]


def missing_words(narrow: str, wide: str) -> list[str]:
    """The words of `wide`'s tables that `narrow` does not hold whole: split between lines, or gone."""
    found = set(_words(narrow))
    return [word for word in table_words(wide) if word not in found]


def has_a_table(text: str) -> bool:
    return any(line.startswith(("│", "┃")) for line in text.splitlines())


def _words(text: str) -> list[str]:
    """A record names a cell by its column, `offset: 0`: the colon is the record's, not the word's."""
    for border in BOX_DRAWING:
        text = text.replace(border, " ")
    return [word.removesuffix(":") for word in text.split() if word.removesuffix(":") and word != "·"]


def printed_at(columns: int, show: Callable[[], object], monkeypatch: Any, capsys: Any) -> str:
    """What `show` prints on stdout through the shared console at COLUMNS=`columns` (stdout not a
    terminal, as under pytest: $COLUMNS is the width)."""
    from nvfp4ctl import console

    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(console, "_console", console.Console())  # it reads $COLUMNS when it is made
    capsys.readouterr()
    show()
    return capsys.readouterr().out
