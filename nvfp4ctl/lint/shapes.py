"""Does a set of integer literals pin one of the benchmark shapes? (NV702, Python and C++ alike)."""

from __future__ import annotations

from collections.abc import Iterable


def pinned_shape(values: Iterable[int], shapes: Iterable[tuple[int, int, int]]) -> tuple[int, int, int] | None:
    """The first benchmark (m, n, k) of which at least two dimensions appear among the literals."""
    found = list(values)
    for shape in shapes:
        remaining = list(found)
        hits = 0
        for dim in shape:
            if dim in remaining:
                remaining.remove(dim)
                hits += 1
        if hits >= 2:
            return shape
    return None


def describe(shape: tuple[int, int, int]) -> str:
    m, n, k = shape
    return f"m={m} n={n} k={k}"
