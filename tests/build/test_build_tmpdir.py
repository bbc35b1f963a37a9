"""A TMPDIR the compilers cannot write in is the user's setting (one line, exit 2), said before anything
compiles: nvcc takes it as it is and failed every compile alike, which read as the kernel's compile error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import builder
from nvfp4ctl.build.compile import run_compiler
from nvfp4ctl.build.temporary_folder import require_usable_tmpdir
from nvfp4ctl.cli import app
from nvfp4ctl.errors import UsageError

KERNEL = "__global__ void k(float* p) { p[0] = 1.f; }\n"
SUBMISSION = ('from torch.utils.cpp_extension import load_inline\n'
              'CUDA = "__global__ void k(float* p) { p[0] = 1.f; }\\n"\n'
              'mod = load_inline(name="one", cpp_sources="", cuda_sources=CUDA)\n'
              'def custom_kernel(data):\n    return data[-1]\n')


def _missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    missing = tmp_path / "missing"
    monkeypatch.setenv("TMPDIR", str(missing))
    return missing


def test_a_tmpdir_that_is_no_writable_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = _missing(tmp_path, monkeypatch)
    with pytest.raises(UsageError, match=rf"^TMPDIR={missing}: No such file or directory; .* point TMPDIR at a writable"):
        require_usable_tmpdir()
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "file"))
    with pytest.raises(UsageError, match="^TMPDIR=.*/file: not a folder;"):
        require_usable_tmpdir()


@pytest.mark.parametrize("setting", [None, "", "."])
def test_an_unset_empty_or_usable_tmpdir_passes(setting: str | None, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if setting is None:
        monkeypatch.delenv("TMPDIR", raising=False)
    else:
        monkeypatch.setenv("TMPDIR", setting)
    require_usable_tmpdir(tmp_path)


def test_a_relative_tmpdir_is_read_from_the_compilers_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.setenv("TMPDIR", "here")
    require_usable_tmpdir(tmp_path)
    with pytest.raises(UsageError, match="^TMPDIR=here: No such file"):
        require_usable_tmpdir(tmp_path / "here")


def test_no_compiler_runs_under_a_missing_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _missing(tmp_path, monkeypatch)
    ran = tmp_path / "ran"
    with pytest.raises(UsageError, match="^TMPDIR="):
        run_compiler([sys.executable, "-c", f"open({str(ran)!r}, 'w')"], None, {})
    assert not ran.exists()


def test_building_a_kernel_under_a_missing_tmpdir_blames_tmpdir_not_the_kernel(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    missing = _missing(tmp_path, monkeypatch)
    monkeypatch.setattr(builder, "has_build", lambda source, arch: False)  # whether nvcc is here or not
    kernel = tmp_path / "k.cu"
    kernel.write_text(KERNEL)
    result = CliRunner().invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert result.exit_code == 2, result.output
    assert f"error: TMPDIR={missing}: No such file or directory;" in result.output
    assert "compile error" not in result.output and "compiling k.cu" not in result.output


def test_building_a_submission_under_a_missing_tmpdir_blames_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    compiles: list[str]) -> None:
    missing = _missing(tmp_path, monkeypatch)
    (tmp_path / "submission.py").write_text(SUBMISSION)
    result = CliRunner().invoke(app, ["build", str(tmp_path / "submission.py"), "--arch", "sm_100a"])
    assert result.exit_code == 2, result.output
    assert f"error: TMPDIR={missing}: No such file or directory;" in result.output
    assert "compile error" not in result.output


def test_a_submission_under_a_missing_tmpdir_is_refused_before_its_progress_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiles: list[str]) -> None:
    """`compiling one (sm_100a): 0 of 1, 0 s` came before the TMPDIR error, as if a compile had begun."""
    missing = _missing(tmp_path, monkeypatch)
    (tmp_path / "submission.py").write_text(SUBMISSION)
    result = CliRunner().invoke(app, ["build", str(tmp_path / "submission.py"), "--arch", "sm_100a"])
    assert result.exit_code == 2, result.output
    assert f"error: TMPDIR={missing}: No such file or directory;" in result.output
    assert "compiling one" not in result.output and compiles == []
    monkeypatch.delenv("TMPDIR")
    first = CliRunner().invoke(app, ["build", str(tmp_path / "submission.py"), "--arch", "sm_100a"])
    monkeypatch.setenv("TMPDIR", str(missing))  # a build the cache holds compiles nothing: TMPDIR is not read
    again = CliRunner().invoke(app, ["build", str(tmp_path / "submission.py"), "--arch", "sm_100a"])
    assert again.exit_code == first.exit_code and "TMPDIR" not in again.output, again.output
    assert "taken from nvfp4ctl's build cache" in again.output and len(compiles) == 1, again.output


def test_check_of_a_submission_that_compiles_refuses_a_missing_tmpdir_before_its_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = _missing(tmp_path, monkeypatch)
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    (tmp_path / "submission.py").write_text(SUBMISSION)
    result = CliRunner().invoke(app, ["check", "--submission", str(tmp_path / "submission.py"), "--only", "1"])
    assert result.exit_code == 2, result.output
    assert f"error: TMPDIR={missing}: No such file or directory;" in result.output
