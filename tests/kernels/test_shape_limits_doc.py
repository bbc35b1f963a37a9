"""docs/own_code.md's table of the shapes each shipped kernel takes holds the numbers of the kernels' own
checks: each `<name>_unsupported` taking (m, n, k, l) is asked, on the host (no GPU), about shapes on either
side of every number the table gives, and must answer as the table says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvfp4ctl.build import toolchain
from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.host_refusals import host_refusals

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "own_code.md"
Shape = tuple[int, int, int, int]


def _table() -> dict[str, list[str]]:
    """The table's rows by kernel path (under kernels/): the cells m, n, k and the joint limits."""
    section = DOC.read_text().split("## Shapes it takes", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        path = re.match(r"`([\w/.]+\.cu)`", cells[0]) if len(cells) == 5 else None
        if path:
            rows[path[1]] = cells[1:]
    return rows


def _multiple(cell: str) -> int:
    found = re.search(r"multiple of (\d+)", cell)
    return int(found[1]) if found else 1


def _takes(row: list[str], shape: Shape) -> bool:
    """What the table says of `shape`."""
    m_cell, n_cell, k_cell, joint = row
    m, n, k, l = shape
    if min(shape) < 1 or m % _multiple(m_cell) or k % _multiple(k_cell):
        return False
    alternative = re.search(r"of (\d+) where m = (\d+)", n_cell)
    if n % (int(alternative[1]) if alternative and m == int(alternative[2]) else _multiple(n_cell)):
        return False
    if (grid := re.search(r"m/(\d+) · l ≤ (\d+)", joint)) and m // int(grid[1]) * l > int(grid[2]):
        return False
    if (size := re.search(r"l·m and l·n ≤ 2\^(\d+) − 1", joint)) and max(l * m, l * n) > 2 ** int(size[1]) - 1:
        return False
    return True


def _probes(row: list[str]) -> list[Shape]:
    """Shapes on either side of each number in the row (and the smallest the naive kernels take)."""
    shapes: list[Shape] = [(128, 128, 256, 1), (256, 384, 512, 3), (1, 1, 16, 1), (0, 128, 256, 1),
                           (100, 128, 256, 1), (128, 100, 256, 1), (128, 128, 320, 1), (128, 128, 24, 1),
                           (128, 64, 256, 1), (256, 64, 256, 1), (128, 192, 256, 1), (256, 192, 256, 1)]
    if grid := re.search(r"m/(\d+) · l ≤ (\d+)", row[3]):
        rows, most = int(grid[1]), int(grid[2])
        shapes += [(rows, 128, 256, most), (rows, 128, 256, most + 1), (2 * rows, 128, 256, most // 2 + 1)]
    if size := re.search(r"2\^(\d+) − 1", row[3]):
        bits = int(size[1])
        shapes += [(128, 2 ** (bits - 1), 256, 2), (128, 2 ** (bits - 1) - 128, 256, 2)]
    return shapes


ROWS = _table()


def test_the_table_names_every_shipped_kernel() -> None:
    shipped = {path.relative_to(REPO / "kernels").as_posix() for path in (REPO / "kernels").glob("*/*.cu")}
    assert set(ROWS) == shipped


@pytest.mark.parametrize("kernel", ["sm90/nvfp4_gemm_sm90.cu", "sm100/nvfp4_gemm_sm100_tc.cu",
                                    "sm100/nvfp4_gemm_sm100.cu", "naive/nvfp4_dual_gemm_naive.cu"])
def test_the_kernels_own_check_answers_as_the_table_says(kernel: str, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    try:
        toolchain.nvcc_path()
    except UsageError:
        pytest.skip("no nvcc here")
    source = REPO / "kernels" / kernel
    if "cutlass" in source.read_text() and not toolchain.cutlass_include_dirs():
        pytest.skip("no CUTLASS headers here")
    monkeypatch.chdir(tmp_path)  # no kernels/ of the current folder's in the way
    row = ROWS[kernel]
    shapes = _probes(row)
    found = host_refusals(source, "sm_100a" if kernel.startswith("sm100") else "sm_90a", shapes)
    assert found.unknown is None, found.unknown
    said = {shape: shape not in found.refused for shape in shapes}
    assert said == {shape: _takes(row, shape) for shape in shapes}, found.refused
