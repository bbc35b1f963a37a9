"""Tables keep every character: piped output gets the table's own width, a narrow terminal folds."""

from __future__ import annotations

import io

from rich.console import Console as RichConsole

from nvfp4ctl.console import Console

NAMES = [f"nvfp4_gemm_sm90_variant_{i}.cu@0123456789ab" for i in range(3)]
COLUMNS = ["target", "tensor op", "regs", "spills", "shared memory", "compile time", "cached"]


def rows() -> list[list[str]]:
    return [[name, "UTCOMMA.2CTA.MXF4NVF4", "168", "0", "227 KB", "140.2 s", "no"] for name in NAMES]


def test_a_piped_table_is_printed_whole(capsys) -> None:
    Console().table(COLUMNS, rows())
    out = capsys.readouterr().out
    assert "…" not in out
    for name in NAMES:
        assert name in out
    assert "UTCOMMA.2CTA.MXF4NVF4" in out and "140.2 s" in out


def test_a_narrow_terminal_folds_cells_instead_of_cutting_them() -> None:
    console = Console()
    buffer = io.StringIO()
    console.out = RichConsole(file=buffer, force_terminal=True, width=60, color_system=None, highlight=False)
    console.table(COLUMNS, rows())
    out = buffer.getvalue()
    assert "…" not in out
    assert "nvfp4" in out and max(len(line) for line in out.splitlines()) <= 60
