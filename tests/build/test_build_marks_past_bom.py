"""Every `// nvfp4ctl:` mark nvfp4ctl reads is read past a UTF-8 byte order mark that an editor saved
before the first line: the mark on that line is still a comment line of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import sources
from nvfp4ctl.build.knobs import read_knobs
from nvfp4ctl.cli import app
from cli_streams import separate_streams_runner

BOM = "\ufeff"


def _with_bom(path: Path, text: str) -> Path:
    path.write_text(BOM + text, encoding="utf-8")
    return path


def test_an_arch_line_after_a_byte_order_mark_declares_the_arch(tmp_path: Path) -> None:
    kernel = _with_bom(tmp_path / "k.cu", "// nvfp4ctl: arch=sm_90a\n__global__ void k() {}\n")
    assert sources.declared_arch(kernel) == "sm_90a"
    assert sources.written_for(kernel) == ("sm_90a", "its `// nvfp4ctl: arch=sm_90a` line")
    assert sources.resolve_arch(kernel, None) == "sm_90a"


@pytest.mark.parametrize("mark, name, values", [("// nvfp4ctl: no-tensor-op\n", sources.NO_TENSOR_OP, ("",)),
                                                 ("// nvfp4ctl: never-run-on sm_100a\n", "never-run-on", ("sm_100a",))])
def test_a_first_line_mark_after_a_byte_order_mark_is_read(tmp_path: Path, mark: str, name: str,
                                                          values: tuple[str, ...]) -> None:
    kernel = _with_bom(tmp_path / "k.cu", mark)
    assert sources.source_marks(kernel, name) == values
    assert sources.marks_in(BOM + mark, name) == values


def test_a_knob_declared_on_the_first_line_after_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    header = _with_bom(tmp_path / "config.cuh", "// nvfp4ctl:knob STAGES values=2,4 scope=kernel: pipeline depth\n"
                                                "#ifndef STAGES\n#define STAGES 4\n#endif\n")
    knobs = read_knobs(header)
    assert [(knob.name, knob.values, knob.line) for knob in knobs] == [("STAGES", (2, 4), 1)]


def test_a_mistyped_knob_on_the_first_line_after_a_byte_order_mark_is_named(tmp_path: Path) -> None:
    from nvfp4ctl.errors import UsageError

    header = _with_bom(tmp_path / "config.cuh", "// nvfp4ctl: knob STAGES values=2,4 scope=kernel: depth\n")
    with pytest.raises(UsageError, match="remove the space after the colon"):
        read_knobs(header)


def test_build_of_a_kernel_saved_with_a_byte_order_mark_takes_its_arch_line(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """build said "cannot tell which arch k.cu is for: ... add a line `// nvfp4ctl: arch=sm_90a`" (exit 2)
    with that very line at the top of the file."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    _with_bom(tmp_path / "k.cu", "// nvfp4ctl: arch=sm_90a\n__global__ void k() {}\n")
    result = separate_streams_runner().invoke(app, ["build", "k.cu"])
    assert "cannot tell which arch" not in result.stdout + result.stderr


def test_export_of_a_kernel_saved_with_a_byte_order_mark_exports_it_for_its_arch_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    zero_gemm = Path(__file__).parent / "fixtures" / "zero_gemm.cu"
    _with_bom(tmp_path / "k.cu", "// nvfp4ctl: arch=sm_90a\n" + zero_gemm.read_text())
    result = separate_streams_runner().invoke(app, ["export", "--kernel", "k.cu", "-o", "out.py"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "k.cu for sm_90a" in (tmp_path / "out.py").read_text()
