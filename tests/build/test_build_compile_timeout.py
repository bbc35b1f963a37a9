"""A compile stopped at its limit is a timeout (exit 3) with one line naming what ran past how long, for a
kernel .cu, a submission's extension and check/bench's load, where it was a build failure (exit 1); tune still
reads it as the candidate's failed compile. The compiler here is a stand-in that sleeps past a tiny limit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import builder, compile, submission_build
from nvfp4ctl.build.submission_sources import Extension
from nvfp4ctl.cli import app
from nvfp4ctl.errors import ExitCode, ToolTimeout
from stand_in_units import KERNEL, SUBMISSION, flat

SLEEPS = "import time; time.sleep(60)"  # far past the limit below: only the stop ends it
LIMIT_S = 1.0


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "400")
    return tmp_path


def test_a_kernel_compile_past_its_limit_is_a_timeout_naming_the_kernel_and_the_limit(cache: Path, monkeypatch) -> None:
    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    monkeypatch.setattr(compile, "BUILD_TIMEOUT_S", LIMIT_S)
    real = compile.run_compiler
    monkeypatch.setattr(compile, "run_compiler", lambda command, cwd, env, timeout_s: real(
        [sys.executable, "-c", SLEEPS], cwd, env, timeout_s=timeout_s))
    kernel = cache / "k.cu"
    kernel.write_text(KERNEL)
    result = CliRunner().invoke(app, ["build", str(kernel)])
    assert result.exit_code == ExitCode.TIMEOUT, result.output
    said = flat(result.output)
    assert "k.cu (sm_90a): the compiler ran past 1 s and was stopped (the limit is fixed)" in said
    assert "compile timeout" in said and "Traceback" not in said


def test_a_submission_compile_past_its_limit_is_a_timeout_not_a_build_failure(cache: Path, monkeypatch) -> None:
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: None)
    monkeypatch.setattr(submission_build, "BUILD_TIMEOUT_S", LIMIT_S)

    def command(extension: Extension, unit: Path, arch: str, code: str, folder: Path) -> list[str]:
        return [sys.executable, "-c", SLEEPS]

    monkeypatch.setattr(submission_build, "_command", command)
    submission = cache / "submission.py"
    submission.write_text(SUBMISSION)
    result = CliRunner().invoke(app, ["build", str(submission)])
    assert result.exit_code == ExitCode.TIMEOUT, result.output
    said = flat(result.output)
    assert ": nvcc ran past 1 s and was stopped (the limit is fixed)" in said
    assert "plain: compile timeout" in said and "Traceback" not in said


def test_a_compile_timeout_is_still_a_compile_error_for_tune(monkeypatch) -> None:
    """tune reads each candidate's CompileError as its failed build: a timeout stays one, not the run's end."""
    from nvfp4ctl.tune.compile_pool import COMPILE_ERROR, compile_candidate

    def stopped(source: Path, arch: str, defines: tuple[str, ...] = ()):
        raise compile.CompileTimeout(compile.timeout_message("the compiler", 1800.0), "")

    # the builder's name, which nvfp4ctl.build's lazy attribute reads on every use: patching the package's own
    # attribute would stay behind it after the test and hide later tests' stand-ins
    monkeypatch.setattr(builder, "build_kernel", stopped)
    built = compile_candidate("k.cu", "sm_90a", ())
    assert built.status == COMPILE_ERROR and "ran past 1800 s" in built.message
    error = compile.CompileTimeout("x", "")
    assert isinstance(error, compile.CompileError) and isinstance(error, ToolTimeout)
    assert error.exit_code == ExitCode.TIMEOUT


def test_a_module_build_stopped_after_the_kernel_object_is_a_timeout_not_a_missing_c_abi(cache: Path,
                                                                                        monkeypatch) -> None:
    """The kernel's object was there when the build's next step ran past its limit: the C ABI check ran first
    and could turn the timeout (exit 3) into the kernel's missing C ABI (exit 1)."""
    from nvfp4ctl.build import abi

    def stopped(folder: Path, inputs, arch: str, name: str, defines: tuple[str, ...] = ()):
        compile.kernel_object(folder, inputs).write_bytes(b"")  # the kernel compiled; the link was stopped
        raise compile.CompileTimeout(compile.timeout_message("the compiler", LIMIT_S), "")

    monkeypatch.setattr(builder, "build_mode", lambda: builder.MODULE)
    monkeypatch.setattr(compile, "build_module", stopped)
    monkeypatch.setattr(abi, "missing_abi", lambda inputs, kernel_object: "k.cu defines no nvfp4_gemm_launch")
    kernel = cache / "k.cu"
    kernel.write_text(KERNEL)
    result = CliRunner().invoke(app, ["build", str(kernel)])
    assert result.exit_code == ExitCode.TIMEOUT, result.output
    said = flat(result.output)
    assert "the compiler ran past 1 s and was stopped" in said and "defines no" not in said
