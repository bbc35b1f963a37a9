"""`build a.cu a.cu`, or a kernel and a link to it: each kernel is built once and a note says it was named again,
where it was built twice and read "2 kernels built". The compiler is a stand-in that counts its builds."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import builder
from nvfp4ctl.build.report import BuildReport
from nvfp4ctl.cli import app
from stand_in_units import KERNEL, flat, saved_report

runner = CliRunner()


@pytest.fixture()
def compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kernels compiled, a.cu in the current folder and l.cu a link to it."""
    compiled: list[str] = []

    def compile_and_inspect(folder: Path, inputs, arch: str, key: str, mode: str, defines=()) -> BuildReport:
        compiled.append(inputs.kernel.name)
        return saved_report(inputs.kernel, arch, key, folder)

    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    monkeypatch.setattr(builder, "_compile_and_inspect", compile_and_inspect)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.cu").write_text(KERNEL)
    (tmp_path / "l.cu").symlink_to("a.cu")
    return compiled


@pytest.mark.parametrize("named, note", [
    (["a.cu", "a.cu"], "note: a.cu is named twice: built once"),
    (["a.cu", "l.cu"], "note: l.cu leads to a.cu, named too: built once"),
])
def test_a_kernel_named_twice_is_built_once(compiled: list[str], named: list[str], note: str) -> None:
    result = runner.invoke(app, ["build", *named])
    said = flat(result.output)
    assert result.exit_code == 0 and compiled == ["a.cu"], said
    assert note in said and said.endswith("1 kernel built (sm_90a), 0 B of spills"), said
    assert said.count("a.cu (given)") == 1, said  # one header line


def test_a_kernel_spelt_two_ways_is_named_twice_not_a_link(compiled: list[str], tmp_path: Path) -> None:
    """a.cu and its absolute path: the note named nobody (`note:  lead to a.cu, named too`)."""
    said = flat(runner.invoke(app, ["build", "a.cu", str(tmp_path / "a.cu")]).output)
    assert compiled == ["a.cu"] and f"note: a.cu is named twice (a.cu, {tmp_path / 'a.cu'}): built once" in said, said


def test_two_kernels_are_two(compiled: list[str], tmp_path: Path) -> None:
    (tmp_path / "b.cu").write_text(KERNEL.replace("p[0] = 1.0f", "p[0] = 2.0f"))
    said = flat(runner.invoke(app, ["build", "a.cu", "b.cu"]).output)
    assert compiled == ["a.cu", "b.cu"] and "note:" not in said and "2 kernels built" in said, said
