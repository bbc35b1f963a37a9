"""`build` of an export compiles with the C++ standard the installed torch appends: the export's CUDA_FLAGS name
none. With -std=c++17 there torch appended none of its own, and torch 2.14, whose headers need C++20, failed every
export (ATen.h: "#error C++20 or later compatible compiler is required to use ATen"). Real nvcc builds of the
probe kernel and its export, torch's load_inline prelude included; no GPU."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import BuildReport, submission_build, torch_nvcc
from nvfp4ctl.build.arch_names import gencode_flag
from nvfp4ctl.cli import app
from nvfp4ctl.export import export_submission

HGMMA_PROBE = Path(__file__).parent / "fixtures" / "hgmma_probe.cu"
NVCC_COMMAND = submission_build._command  # the real one, recorded below
runner = CliRunner()
pytest.importorskip("torch.utils.cpp_extension")


def test_an_export_builds_with_the_standard_the_installed_torch_appends(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    submission = tmp_path / "submission.py"
    export_submission(HGMMA_PROBE, submission)
    commands: list[list[str]] = []

    def recorded(*arguments: object) -> list[str]:
        command = NVCC_COMMAND(*arguments)  # type: ignore[arg-type]
        commands.append(command)
        return command

    monkeypatch.setattr(submission_build, "_command", recorded)
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    torch_standard = torch_nvcc.appended_standard((), gencode_flag("sm_90a"))
    assert torch_standard and len(commands) == 1
    assert [word for word in commands[0] if word.startswith(("-std", "--std"))] == list(torch_standard)


def test_a_kernels_device_code_build_gives_the_standard_torch_appends(hgmma_report: BuildReport) -> None:
    """Without CUDA torch the kernel is compiled by nvcc alone, as the module build would compile it: with the
    standard torch appends to the build's flags, which name none, where it gave -std=c++17."""
    if hgmma_report.module_name is not None:
        pytest.skip("torch has CUDA here: cpp_extension itself appends its standard to the module build")
    command = shlex.split((hgmma_report.entry / "build.log").read_text().splitlines()[0])
    torch_standard = torch_nvcc.appended_standard((), gencode_flag("sm_90a"))
    assert torch_standard and [word for word in command if word.startswith(("-std", "--std"))] == list(torch_standard)
