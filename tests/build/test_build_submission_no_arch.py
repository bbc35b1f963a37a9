"""A submission whose plain CUDA names no arch (no -gencode/-arch, no TORCH_CUDA_ARCH_LIST, no tcgen05 or wgmma):
torch compiles it for the GPU it runs on (10.0+PTX on the B200), so build compiles it for sm_100, as it does
-arch=native, where it said "cannot tell the arch ...; pass --arch", exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import submission_build
from nvfp4ctl.build.submission_sources import Extension, SubmissionSources
from nvfp4ctl.cli import app

from plain_gemv import PORTABLE

runner = CliRunner()


def _build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *options: str) -> tuple[int, str, list[str]]:
    """build submission.py, each extension's compile a stand-in that records the arch it was asked for."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text(PORTABLE + "\n\ndef custom_kernel(data):\n    return data[0]\n")
    archs: list[str] = []

    def build_extension(sources: SubmissionSources, extension: Extension, arch: str) -> list[object]:
        archs.append(arch)
        return []

    monkeypatch.setattr(submission_build, "build_extension", build_extension)
    result = runner.invoke(app, ["build", "submission.py", *options])
    return result.exit_code, " ".join(result.output.split()), archs


def test_portable_code_naming_no_arch_is_built_for_the_b200s_sm_100(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    code, said, archs = _build(tmp_path, monkeypatch)
    assert code == 0, said
    assert archs == ["sm_100"]
    assert "submission.py: 1 extension (scaled), arch sm_100 (no arch named: the GPU it runs on, the B200's)" in said
    assert "cannot tell the arch" not in said and "warning:" not in said


def test_portable_code_built_with_arch_sm_100a_gets_no_warning_of_arch_specific_instructions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was warned that torch's sm_100 is where "arch-specific (a) instructions do not assemble" and told to
    name compute_100a, for code that holds none (lint's NV005 says nothing of it either)."""
    code, said, archs = _build(tmp_path, monkeypatch, "--arch", "sm_100a")
    assert code == 0, said
    assert archs == ["sm_100a"]
    assert "submission.py: 1 extension (scaled), arch sm_100a (--arch)" in said
    assert "warning:" not in said and "do not assemble" not in said and "compute_100a" not in said
