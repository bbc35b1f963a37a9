"""The run log's content hash of a build's target is that of the bytes the build read, where it was the file's as
it was when the build ended: a file overwritten during a 50 s compile (another export written over it) logged the
new file's hash beside the old file's results. The compilers are stand-ins that rewrite the file meanwhile."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import content_digest, runlog
from nvfp4ctl.build import builder, submission_build
from nvfp4ctl.build.report import BuildReport
from nvfp4ctl.build.submission_sources import Extension
from nvfp4ctl.cli import app
from nvfp4ctl.errors import ExitCode
from stand_in_units import KERNEL, SUBMISSION, saved_report

runner = CliRunner()
OVERWRITTEN = "# another export, written over the file while it compiled\n"


def _logged_digest(memory: Path) -> str:
    return runlog.split_target(runlog.read(memory)[-1].target)[1]


@pytest.fixture()
def memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "MEMORY.md"


def test_a_submission_overwritten_while_it_compiles_logs_what_was_built(tmp_path: Path, memory: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(SUBMISSION)

    def overwriting(extension: Extension, unit: Path, arch: str, code: str, folder: Path) -> list[str]:
        submission.write_text(OVERWRITTEN)
        return [sys.executable, "-c", "pass"]

    monkeypatch.setattr(submission_build, "_command", overwriting)
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: None)
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    assert submission.read_text() == OVERWRITTEN
    assert _logged_digest(memory) == hashlib.sha256(SUBMISSION.encode()).hexdigest()[:12]


def test_a_kernel_overwritten_while_it_compiles_logs_what_was_built(tmp_path: Path, memory: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text(KERNEL)
    built = runlog.file_digest(kernel)

    def overwriting(folder: Path, inputs, arch: str, key: str, mode: str, defines=()) -> BuildReport:
        kernel.write_text(KERNEL + "// another kernel, written over the file while it compiled\n")
        return saved_report(inputs.kernel, arch, key, folder)

    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    monkeypatch.setattr(builder, "_compile_and_inspect", overwriting)
    result = runner.invoke(app, ["build", str(kernel)])
    assert result.exit_code == 0, result.output
    assert runlog.file_digest(kernel) != built
    assert _logged_digest(memory) == built



def test_a_kernel_overwritten_and_interrupted_while_it_compiles_logs_what_was_read(
        tmp_path: Path, memory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C during the compile logged the hash of the file as it was when the line was written (another kernel
    saved over it meanwhile), where a finished build logs the bytes it read."""
    kernel = tmp_path / "k.cu"
    kernel.write_text(KERNEL)
    read = runlog.file_digest(kernel)

    def overwritten_then_interrupted(folder: Path, inputs, arch: str, key: str, mode: str, defines=()) -> BuildReport:
        kernel.write_text(KERNEL + "// another kernel, written over the file while it compiled\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    monkeypatch.setattr(builder, "_compile_and_inspect", overwritten_then_interrupted)
    result = runner.invoke(app, ["build", str(kernel)])
    assert result.exit_code == ExitCode.INTERRUPTED, result.output
    assert runlog.read(memory)[-1].result == "interrupted"
    assert runlog.file_digest(kernel) != read
    assert _logged_digest(memory) == read


def test_a_submission_overwritten_and_interrupted_while_it_compiles_logs_what_was_read(
        tmp_path: Path, memory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(SUBMISSION)

    def overwritten_then_interrupted(extension: Extension, unit: Path, arch: str, code: str, folder: Path) -> list[str]:
        submission.write_text(OVERWRITTEN)
        raise KeyboardInterrupt

    monkeypatch.setattr(submission_build, "_command", overwritten_then_interrupted)
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == ExitCode.INTERRUPTED, result.output
    assert runlog.read(memory)[-1].result == "interrupted"
    assert _logged_digest(memory) == hashlib.sha256(SUBMISSION.encode()).hexdigest()[:12]


def _counting_digests(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    hashed: list[bytes] = []
    real = content_digest.content_digest

    def counted(data: bytes, headers=()) -> str:
        hashed.append(data)
        return real(data, headers)

    monkeypatch.setattr(content_digest, "content_digest", counted)
    monkeypatch.setattr(builder, "content_digest", counted)
    return hashed


def test_a_submissions_build_hashes_its_bytes_once(tmp_path: Path, memory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hash noted before the compile (a Ctrl-C's line) and the one logged after it are of the same bytes kept: made
    once, where both were made."""
    submission = tmp_path / "submission.py"
    submission.write_text(SUBMISSION)
    hashed = _counting_digests(monkeypatch)
    monkeypatch.setattr(submission_build, "_command", lambda *args: [sys.executable, "-c", "pass"])
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: None)
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    assert hashed == [SUBMISSION.encode()]
    assert _logged_digest(memory) == hashlib.sha256(SUBMISSION.encode()).hexdigest()[:12]


def test_a_kernels_build_hashes_its_bytes_once(tmp_path: Path, memory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text(KERNEL)
    hashed = _counting_digests(monkeypatch)
    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    monkeypatch.setattr(builder, "_compile_and_inspect",
                        lambda folder, inputs, arch, key, mode, defines=(): saved_report(inputs.kernel, arch, key, folder))
    result = runner.invoke(app, ["build", str(kernel)])
    assert result.exit_code == 0, result.output
    assert hashed == [KERNEL.encode()]
    assert _logged_digest(memory) == runlog.file_digest(kernel)
