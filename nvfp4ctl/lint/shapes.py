"""Does a set of integer literals pin one of the benchmark shapes? (NV702, Python and C++ alike).

A shape is the problem's benchmark_dims in order (the GEMM's m, n, k; the GEMV's m, k, l). A dimension of 1
(the GEMV's l of its first benchmark) counts for none: `stride == 1`, `l == 1` are compared everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

GEMM_DIMS = ("m", "n", "k")


def pinned_shape(values: Iterable[int], shapes: Iterable[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The benchmark shape of which the most dimensions, at least two, appear among the literals
    (the first of equals): a branch on 128, 4096, 7168 names 128x4096x7168, not another shape that
    also has 128 and 7168."""
    found = list(values)
    best, best_hits = None, 1
    for shape in shapes:
        remaining = list(found)
        hits = 0
        for dim in shape:
            if dim != 1 and dim in remaining:
                remaining.remove(dim)
                hits += 1
        if hits > best_hits:
            best, best_hits = shape, hits
    return best


def describe(shape: tuple[int, ...], values: Iterable[int] | None = None, dims: Sequence[str] = GEMM_DIMS) -> str:
    """m=128 n=4096 k=7168 (the GEMV's m=4096 k=7168 l=8); given the literals a branch compares, only the
    dimensions among them (n=4096 k=7168 for a branch on n and k alone): the others are not what the code tests."""
    remaining = None if values is None else list(values)
    named = []
    for label, dim in zip(dims, shape):
        if remaining is not None:
            if dim == 1 or dim not in remaining:
                continue
            remaining.remove(dim)
        named.append(f"{label}={dim}")
    return " ".join(named)
