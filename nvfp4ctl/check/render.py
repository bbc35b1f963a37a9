"""Diagnostics as plain text lines (the command prints them; no styling here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nvfp4ctl.bounded_text import shown_cause
from nvfp4ctl.check.result import FIRST_CALL, LISTED_LINES, REUSED, TILE, CaseResult, Comparison, index_names
from nvfp4ctl.words import plural

if TYPE_CHECKING:
    from nvfp4ctl.check.run import ItemOutcome

MAX_MAP_ROWS = 32
MAX_MAP_COLS = 64


def comparison_lines(comparison: Comparison, with_errors: bool = True) -> list[str]:
    """The comparison's lines; `with_errors`: whether its error sizes mean something (not where an old
    result was read against new data: the anti-cache probe's verdict is the reuse, not the values)."""
    c = comparison
    lines = _parts_lines(c)
    lines += [
        f"{'' if c.output == 'c' else c.output + ': '}{c.mismatched} of {c.total} outputs differ ({100.0 * c.mismatched / max(c.total, 1):.1f}%)"
        + (f"; {error_sizes(c)}" if with_errors else "")
    ]
    if c.nan_got or c.inf_got or c.nan_want or c.inf_want:
        lines.append(f"output has {c.nan_got} NaN, {c.inf_got} Inf; the reference has {c.nan_want} NaN, {c.inf_want} Inf")
    if c.unwritten:
        lines.append(f"{plural(c.unwritten, 'element')} never written (still NaN poison)")
    of = "" if c.output == "c" else f" of {c.output}"  # a grouped GEMM's lines name their group's c
    lines += _line_pattern(f"rows ({c.dims[0]}){of}", c.wrong_rows, c.shape[0], c.first_rows)
    if _has_columns(c):
        lines += _line_pattern(f"columns ({c.dims[1]}){of}", c.wrong_cols, c.shape[1] if len(c.shape) > 1 else 1,
                               c.first_cols)
    if c.first:
        names = ", ".join(index_names(c.dims))
        lines.append(f"first mismatches{of} ({names}): got vs want")
        width = max(len(str(m.index)) for m in c.first)
        lines += [f"  {str(m.index):<{width}}  got {m.got:<12.6g} want {m.want:.6g}" for m in c.first]
    lines += tile_map_lines(c)
    lines += list(c.notes)
    return lines


def error_sizes(c: Comparison) -> str:
    """How far off the wrong outputs are. The sizes cover finite pairs only, so where every wrong value
    is a NaN or Inf there is no size to give: "max abs err 0" would read as right."""
    if c.mismatched and c.nonfinite_wrong == c.mismatched:
        return f"{'the one wrong value is' if c.mismatched == 1 else f'all {c.mismatched} wrong are'} NaN or Inf"
    return (f"max abs err {c.max_abs_err:.4g}, max rel err {c.max_rel_err:.4g}"
            + (f" (over the finite ones; {c.nonfinite_wrong} wrong are NaN or Inf)" if c.nonfinite_wrong else ""))


def _parts_lines(c: Comparison) -> list[str]:
    """"wrong groups: 1 of 4: group 3 (120 of 32768 wrong)" when the problem has several outputs."""
    if not c.parts:
        return []
    wrong = [(name, bad, total) for name, bad, total in c.parts if bad]
    if not wrong:
        return []
    listed = ", ".join(f"{name.removesuffix(' c')} ({bad} of {total} wrong)" for name, bad, total in wrong)
    return [f"wrong outputs: {len(wrong)} of {len(c.parts)}: {listed}"]


def _line_pattern(what: str, wrong: int, size: int, first: tuple[int, ...]) -> list[str]:
    """"wrong rows (m): 2 of 256: 0, 33" when only some rows (or columns) are affected."""
    if wrong == 0 or wrong == size:
        return []
    listed = ", ".join(str(i) for i in first) + (", ..." if wrong > LISTED_LINES else "")
    return [f"wrong {what}: {wrong} of {size}: {listed}"]


def _has_columns(comparison: Comparison) -> bool:
    """Whether the output has an n: the GEMV's c is (m, 1, l), a column of rows."""
    return len(comparison.dims) > 1 and not comparison.dims[1].isdigit()


def tile_map_lines(comparison: Comparison) -> list[str]:
    """Which 128x128 output tiles hold wrong elements: rows are m tiles, columns n tiles; for an output
    without n (the GEMV's), which blocks of 128 rows, in one strip."""
    wrong, sizes = comparison.tile_wrong, comparison.tile_size
    if not wrong or comparison.mismatched == 0:
        return []
    cells = [[_cell(w, s) for w, s in zip(row_w, row_s)] for row_w, row_s in zip(wrong, sizes)]
    of = "" if comparison.output == "c" else f" of {comparison.output}"
    if not _has_columns(comparison):
        return _row_block_lines([row[0] for row in cells], comparison.dims[0], of)
    rows, cols = len(cells), len(cells[0])
    if all(cell == "X" for row in cells for cell in row):
        return [f"every {TILE}x{TILE} tile is wrong ({rows} x {cols} tiles)"]
    header = f"wrong {TILE}x{TILE} tiles{of} ({rows} m-tiles x {cols} n-tiles; X all wrong, x some, . ok)"
    lines = [header]
    for row in cells[:MAX_MAP_ROWS]:
        text = "".join(row[:MAX_MAP_COLS])
        lines.append("  " + text + (f" ... ({cols - MAX_MAP_COLS} more)" if cols > MAX_MAP_COLS else ""))
    if rows > MAX_MAP_ROWS:
        hidden = sum(1 for row in cells[MAX_MAP_ROWS:] if any(cell != "." for cell in row))
        lines.append(f"  ... {rows - MAX_MAP_ROWS} more m-tile rows, {hidden} of them with wrong tiles")
    return lines


def _row_block_lines(cells: list[str], rows_name: str, of: str) -> list[str]:
    """"wrong 128-row blocks (m): 3 blocks, m 0.. from the left" and the strip, MAX_MAP_COLS a line."""
    count = len(cells)
    if all(cell == "X" for cell in cells):
        return [f"every block of {TILE} rows ({rows_name}){of} is wrong ({plural(count, 'block')})"]
    lines = [f"wrong blocks of {TILE} rows ({rows_name}){of} ({plural(count, 'block')} from {rows_name} = 0;"
             " X all wrong, x some, . ok)"]
    for start in range(0, min(count, MAX_MAP_ROWS * MAX_MAP_COLS), MAX_MAP_COLS):
        lines.append(f"  {rows_name} {start * TILE:>{len(str((count - 1) * TILE))}}: " + "".join(cells[start:start + MAX_MAP_COLS]))
    if count > MAX_MAP_ROWS * MAX_MAP_COLS:
        hidden = sum(1 for cell in cells[MAX_MAP_ROWS * MAX_MAP_COLS:] if cell != ".")
        lines.append(f"  ... {count - MAX_MAP_ROWS * MAX_MAP_COLS} more blocks, {hidden} of them wrong")
    return lines


def _cell(wrong: int, size: int) -> str:
    if wrong == 0:
        return "."
    return "X" if wrong >= size else "x"


def crash_signature(message: str | None, log_tail: tuple[str, ...], label: str, shape: str) -> tuple[str, ...]:
    """What makes two crashes the same: the headline without the test's name, and the child's last lines."""
    headline = (message or "").replace(f"{label} ({shape})", "", 1).replace(label, "", 1).strip()
    return (headline, *log_tail)


def repeated_crashes(outcomes: Sequence[ItemOutcome]) -> dict[int, str]:
    """Index of each crash (or exception raised by the call) that repeats an earlier one -> the label of
    the first test that had it.

    A kernel that crashes on every test would otherwise print the same traceback once per test.
    """
    from nvfp4ctl.check.run import CRASHES  # run.py imports the worker; the child never needs this

    first_seen: dict[tuple[str, ...], str] = {}
    repeats: dict[int, str] = {}
    for index, outcome in enumerate(outcomes):
        if outcome.verdict not in CRASHES:
            continue
        key = (outcome.verdict,
               *crash_signature(outcome.message, outcome.log_tail, outcome.item.label, outcome.item.shape))
        if key in first_seen:
            repeats[index] = first_seen[key]
        else:
            first_seen[key] = outcome.item.label
    return repeats


def error_cell(c: Comparison) -> str:
    """check's "max abs err" column: NaN where every wrong element is a NaN or Inf, so that an output
    never written (all poison) does not read as an error of 0."""
    if c.mismatched and c.nonfinite_wrong == c.mismatched:
        return "nan"
    return f"{c.max_abs_err:.3g}"




def short_cause(result: CaseResult | None) -> str | None:
    """A failed test's evidence in a few words, for the summary line and the run log, where the details are
    gone once the terminal scrolls: "max abs err 0.0312, first wrong at (0, 17, 5)", "nan at (0, 0, 0)",
    "16384 elements never written, first at (0, 0, 0)", "result reused across calls", or the first of its
    sentences (a wrong dtype), cut to bounded_text.MAX_CAUSE characters. None where there is nothing to say."""
    if result is None:
        return None
    c = result.comparison
    if result.phase != FIRST_CALL and c is not None:  # an old result read against new data: no error size
        return REUSED
    if result.problems:
        return shown_cause(result.problems[0])
    if c is None or not c.mismatched:
        return None
    of = "" if c.output == "c" else f"{c.output}: "  # a grouped GEMM's first wrong group
    first = c.first[0] if c.first else None
    at = f" at {first.index}" if first else ""
    if c.unwritten and c.unwritten == c.mismatched:
        return shown_cause(f"{of}{plural(c.unwritten, 'element')} never written, first{at}")
    if c.nonfinite_wrong == c.mismatched:  # no finite pair to measure: the first wrong value says what it is
        return shown_cause(f"{of}{f'{first.got:g}' if first else 'NaN or Inf'}{at}")
    return shown_cause(f"{of}max abs err {error_cell(c)}, first wrong{at}")

