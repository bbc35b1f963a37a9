"""A cache entry whose report.json is no report (cut short by a full disk or a killed write, `{}` from a hand
edit) is a cache miss: the build compiles again and lands over the entry, as the calibration and tune-state
caches take a damaged file. It was a JSONDecodeError or KeyError traceback on every later build."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import builder
from nvfp4ctl.build.report import REPORT_FILE, BuildReport, TensorOpCheck
from nvfp4ctl.cli import app
from stand_in_units import KERNEL, SUBMISSION

runner = CliRunner()
DAMAGED = ['{"arch": ', "{}", "[]", '{"arch": "sm_90a", "functions": 3}']


@pytest.fixture()
def kernel_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kernels compiled, by a stand-in that saves a report as a compile that found no tensor op would."""
    compiled: list[str] = []

    def compile_and_inspect(folder: Path, inputs, arch: str, key: str, mode: str, defines=()) -> BuildReport:
        compiled.append(inputs.kernel.name)
        report = BuildReport(source=inputs.kernel, arch=arch, key=key, entry=folder, module_name=None, functions=(),
                             tensor_op=TensorOpCheck(expected="HGMMA", found=(), match=None, checked=True),
                             compile_s=1.0)
        report.save()
        return report

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    monkeypatch.setattr(builder, "_compile_and_inspect", compile_and_inspect)
    monkeypatch.setenv("COLUMNS", "200")
    return compiled


def _reports(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").glob(f"*/{REPORT_FILE}"))


@pytest.mark.parametrize("damaged", DAMAGED)
def test_a_kernels_damaged_report_is_built_again_and_replaced(tmp_path: Path, kernel_compiles: list[str],
                                                              damaged: str) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text(KERNEL)
    assert runner.invoke(app, ["build", str(kernel)]).exit_code == 0
    [report] = _reports(tmp_path)
    report.write_text(damaged)
    assert builder.has_build(kernel, "sm_90a") is False  # the progress line says it compiles, as it does
    result = runner.invoke(app, ["build", str(kernel)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert kernel_compiles == ["k.cu", "k.cu"]
    assert BuildReport.cached(report.parent, kernel) is not None  # overwritten: the next build is a hit
    assert runner.invoke(app, ["build", str(kernel)]).exit_code == 0 and kernel_compiles == ["k.cu", "k.cu"]


@pytest.mark.parametrize("damaged", DAMAGED)
def test_a_submission_units_damaged_report_is_built_again_and_replaced(tmp_path: Path, compiles: list[str],
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       damaged: str) -> None:
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    submission = tmp_path / "submission.py"
    submission.write_text(SUBMISSION)
    assert runner.invoke(app, ["build", str(submission)]).exit_code == 0
    [report] = _reports(tmp_path)
    report.write_text(damaged)
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert compiles == ["plain.cu", "plain.cu"]
    assert BuildReport.cached(report.parent, submission) is not None
    assert runner.invoke(app, ["build", str(submission)]).exit_code == 0 and compiles == ["plain.cu", "plain.cu"]
