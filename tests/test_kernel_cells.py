"""Byte counts as table cells and in result lines: one spelling everywhere (kernel_cells.byte_size)."""

from __future__ import annotations

import pytest

from nvfp4ctl.kernel_cells import byte_size


@pytest.mark.parametrize(("count", "text"), [
    (0, "0 B"), (768, "768 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
    ((1 << 20) - 1, "1.0 MiB"), ((1 << 20) - 52 * 1024, "972.0 KiB"), (1 << 20, "1.0 MiB"), (300 << 20, "300.0 MiB"), (3 << 29, "1.5 GiB"),
])
def test_a_byte_count_takes_the_largest_unit_that_leaves_at_least_one(count: int, text: str) -> None:
    """1 MiB printed `1024.0 KiB` and 300 MiB `307200.0 KiB`: there was no unit past KiB."""
    assert byte_size(count) == text
