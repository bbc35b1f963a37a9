"""What the check job sends back to the parent: small frozen records, no tensors, no torch import.

The parent unpickles these, so this module must stay importable without torch.
"""

from __future__ import annotations

from dataclasses import dataclass

CHECK_JOB = "nvfp4ctl.check.job:check_case"
DEVICE_JOB = "nvfp4ctl.check.job:device_info"
FIRST_CALL = "first call"
PROBE_REFILLED = "probe: same tensors refilled with new data"
PROBE_FRESH = "probe: a fresh input tuple"
REUSED = "result reused across calls"

TILE = 128  # output tile edge for the "which tiles are wrong" map
FIRST_MISMATCHES = 5
LISTED_LINES = 8  # wrong rows / columns listed by index when there are few


@dataclass(frozen=True)
class Mismatch:
    index: tuple[int, ...]  # in the output's dimensions: (m, n, l); the GEMV's (m, 0, l)
    got: float
    want: float


@dataclass(frozen=True)
class Comparison:
    shape: tuple[int, ...]
    mismatched: int
    max_abs_err: float  # over elements where both sides are finite
    max_rel_err: float  # over those with want != 0
    nan_got: int
    inf_got: int
    nan_want: int
    inf_want: int
    unwritten: int | None  # elements still holding the poison; None when the output is not c
    first: tuple[Mismatch, ...]
    tile_wrong: tuple[tuple[int, ...], ...]  # wrong elements per 128x128 tile, [m tile][n tile]
    tile_size: tuple[tuple[int, ...], ...]  # elements per tile (edge tiles may be partial)
    wrong_rows: int = 0  # distinct m with a wrong element (any n, l)
    wrong_cols: int = 0  # distinct n with a wrong element (any m, l)
    first_rows: tuple[int, ...] = ()  # the first LISTED_LINES of them
    first_cols: tuple[int, ...] = ()
    output: str = "c"  # which output this is about ("c", "group 3 c")
    notes: tuple[str, ...] = ()  # the problem's own reading of the mismatch (dual: which product)
    parts: tuple[tuple[str, int, int], ...] = ()  # (output, mismatched, total) per output when several
    nonfinite_wrong: int = 0  # wrong elements where either side is NaN or Inf (max_abs_err cannot see them)
    dims: tuple[str, ...] = ("m", "n", "l")  # the problem's output_dims: a number is a dimension of that size (GEMV: 1)

    @property
    def total(self) -> int:
        total = 1
        for size in self.shape:
            total *= size
        return total

    @property
    def passed(self) -> bool:
        return self.mismatched == 0


def index_names(dims: tuple[str, ...]) -> tuple[str, ...]:
    """How an output's index reads, dimension by dimension: a dimension of fixed size 1 (the GEMV's c is
    (m, 1, l)) has the one index 0, so it is shown as such: ("m", "0", "l")."""
    return tuple("0" if name.isdigit() else name for name in dims)


@dataclass(frozen=True)
class CaseResult:
    passed: bool
    phase: str  # which call the verdict is about: FIRST_CALL or one of the probe phases
    problems: tuple[str, ...] = ()  # plain sentences: wrong dtype, exceptions, result reuse
    comparison: Comparison | None = None
    call_s: float | None = None  # the first call, synchronised
    probed: bool = False
    raised: tuple[str, ...] = ()  # the call of `phase` raised: its headline, then the target's traceback
    refused: str | None = None  # the first call refused the shape: the constraint it names ("m must be ...")
