"""A file lint reads that is not UTF-8 text, or holds a NUL byte, is one NV004 error where it stops
being text (the leaderboard reads a submission as text; lint cannot judge bytes), and only the text
rules run on it. UTF-8 files, with or without a BOM, are judged as they always were."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.lint import LintConfig, lint_paths, lint_text
from nvfp4ctl.lint.source import SourceFile

FIXTURES = Path(__file__).parent / "fixtures"
runner = CliRunner()


def random_bytes(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def test_a_kernel_source_of_random_bytes_is_one_error_and_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = random_bytes(4_000, seed=25)
    (tmp_path / "kernel.cu").write_bytes(data)
    result = runner.invoke(app, ["lint", "kernel.cu"])
    assert result.exit_code == 1, result.output
    assert "All checks passed" not in result.output
    assert result.output.count("NV004") == 1
    with pytest.raises(UnicodeDecodeError) as raised:
        data.decode("utf-8")
    line, col = SourceFile(Path("kernel.cu"), data.decode("latin-1")).position(raised.value.start)
    assert f"kernel.cu:{line}:{col}: NV004 kernel.cu is not text (byte 0x{data[raised.value.start]:02x} here is not" \
           " UTF-8): the leaderboard reads a submission as UTF-8 text; only the text rules ran" in result.output


@pytest.mark.parametrize("name, data, where, why", [
    ("kernel.cu", 'int x;\n__global__ void k() { printf("caf\xe9"); }\n'.encode("latin-1"), (2, 34), "byte 0xe9 here is not UTF-8"),
    ("submission.py", "def custom_kernel(data):\n    return data[6]\x00\n".encode(), (2, 19), "a NUL byte here"),
    ("submission.py", "def custom_kernel(data):\n    return data[6]\n".encode("utf-16"), (1, 1), "byte 0xff here is not UTF-8"),
    ("notes.txt", b"\x00\x01\x02", (1, 1), "a NUL byte here"),
    ("kernel.cuh", b"\xef\xbb\xbfint x;\n\xc3(", (2, 1), "byte 0xc3 here is not UTF-8"),
])
def test_a_file_that_is_not_text_is_said_where_it_stops_being_text(tmp_path: Path, name: str, data: bytes,
                                                                    where: tuple[int, int], why: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    diagnostics = lint_paths([path], LintConfig()).diagnostics
    assert [(d.code, d.line, d.col) for d in diagnostics] == [("NV004", *where)]
    assert diagnostics[0].message.startswith(f"{name} is not text ({why}): ")
    assert diagnostics[0].severity.value == "error"


def test_the_text_rules_still_run_on_bytes(tmp_path: Path) -> None:
    path = tmp_path / "kernel.cu"
    path.write_bytes(b"\xff cudaStream_t s;\n")
    assert sorted(d.code for d in lint_paths([path], LintConfig()).diagnostics) == ["NV004", "NV101"]


def test_a_waiver_does_not_pass_a_file_that_is_not_text() -> None:
    found = lint_text("int x;  // nvfp4ctl: ignore[NV004]\x00\n", "kernel.cu")
    assert [d.code for d in found] == ["NV004"]


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["utf-8", "utf-8 with a bom"])
def test_utf8_files_are_judged_as_their_text(tmp_path: Path, bom: bytes) -> None:
    sources = sorted(p for p in FIXTURES.iterdir() if p.is_file())
    assert len(sources) > 10
    for source in sources:
        text = source.read_bytes().decode("utf-8")
        path = tmp_path / source.name
        path.write_bytes(bom + text.encode("utf-8"))
        found = [(d.line, d.col, d.code, d.message) for d in lint_paths([path], LintConfig()).diagnostics]
        assert "NV004" not in {code for _, _, code, _ in found}
        assert found == [(d.line, d.col, d.code, d.message) for d in lint_text(bom.decode("utf-8") + text, path)]
        # a byte order mark changes nothing, as python drops it: a .py with one was NV001 (invalid
        # non-printable character U+FEFF) where check and build ran it
        assert found == [(d.line, d.col, d.code, d.message) for d in lint_text(text, path)]


@pytest.mark.parametrize("options", [["--select", "NV8"], ["--select", "NV802"], ["--ignore", "NV8"]])
def test_no_selection_turns_the_not_text_error_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   options: list[str]) -> None:
    """A selection that leaves NV004 out made a latin-1 kernel "All checks passed", exit 0: its rules never
    ran, so nothing else could be said of it. Like NV101, NV004 always runs."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_bytes(b'__global__ void k() {\n  printf("caf\xe9");\n}\n')
    result = runner.invoke(app, ["lint", *options, "k.cu"])
    assert result.exit_code == 1, result.output
    assert "k.cu:2:14: NV004" in result.output and "All checks passed" not in result.output


@pytest.mark.parametrize("pattern", ["NV004", "NV0", "nv00"])
def test_the_not_text_error_cannot_be_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    result = runner.invoke(app, ["lint", "--ignore", pattern, "k.cu"])
    assert result.exit_code == 2, result.output
    assert f"{pattern.upper()} cannot be ignored: NV004" in " ".join(result.output.split())


@pytest.mark.parametrize("head, line, reason", [
    (b"# coding: nosuch\n", 1, "unknown encoding: nosuch"),
    (b"#!/usr/bin/env python\n# -*- coding: bogus -*-\n", 2, "unknown encoding: bogus"),
    (b"\xef\xbb\xbf# coding: latin-1\n", 1, "encoding problem: latin-1 with BOM"),
    (b"# coding: rot13\n", 1, "'rot13' is not a text encoding"),  # a codec tokenize finds, python refuses
])
def test_a_coding_line_python_refuses_is_nv001_as_check_and_build_say(tmp_path: Path, head: bytes, line: int,
                                                                      reason: str) -> None:
    """`python submission.py` stops at such a line, and check and build refuse the file; lint said "All
    checks passed"."""
    path = tmp_path / "submission.py"
    path.write_bytes(head + b"import torch\ndef custom_kernel(data):\n    return data\n")
    found = [(d.line, d.code, d.message) for d in lint_paths([path], LintConfig()).diagnostics]
    assert found == [(line, "NV001", f"not valid Python ({reason}); only the text rules ran")]
