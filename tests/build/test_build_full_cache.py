"""A full disk under the build cache (or the temporary folder nvcc writes into) is the user's to free: one line
naming the folder and what to do, exit 2, where it was the kernel's compile error (exit 1, "1 of 1 kernel
failed"). The compiler here is a stand-in that fails as a full disk makes nvcc and its assembler fail, and
statvfs a stand-in showing which disk is full: the words alone (a user's static_assert echoed under its
error) are the compile error they are."""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from typing import Any
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.build import builder, compile, full_disk, submission_build
from nvfp4ctl.build.submission_sources import Extension
from nvfp4ctl.cli import app
from nvfp4ctl.errors import ExitCode
from nvfp4ctl.workspace import memory_path
from stand_in_units import KERNEL, SUBMISSION, flat


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    return tmp_path


def _statvfs_showing_full(monkeypatch: pytest.MonkeyPatch, *full: Path) -> None:
    """os.statvfs as it is, except that a place under any of `full` has 1 MiB and no inode free."""
    real = os.statvfs

    def statvfs(place):
        disk = real(place)
        if not any(Path(place) == folder or folder in Path(place).parents for folder in full):
            return disk
        fields = list(disk)  # bsize, frsize, blocks, bfree, bavail, files, ffree, favail, flag, namemax
        fields[3] = fields[4] = 2**20 // disk.f_frsize
        fields[6] = fields[7] = 0
        return os.statvfs_result(fields)

    monkeypatch.setattr(os, "statvfs", statvfs)


@pytest.fixture()
def full_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _statvfs_showing_full(monkeypatch, cache / "cache")


def _full_cache_said(result, cache: Path) -> None:
    assert result.exit_code == ExitCode.USAGE, result.output
    said = flat(result.output)
    assert (f"error: the cache folder {cache / 'cache'} (NVFP4CTL_CACHE) is full (No space left on device): free"
            " space or point NVFP4CTL_CACHE elsewhere") in said
    assert "compile error" not in said and "Traceback" not in said
    assert runlog.read(memory_path())[-1].result.startswith("error: the cache folder")


def _build_kernel(cache: Path, monkeypatch: pytest.MonkeyPatch, compiler) -> Any:
    """`nvfp4ctl build` of the stand-in kernel in `cache`, compiled by `compiler` (run_compiler's stand-in)."""
    monkeypatch.setattr(compile, "run_compiler", compiler)
    kernel = cache / "k.cu"
    kernel.write_text(KERNEL)
    return CliRunner().invoke(app, ["build", str(kernel)])


@pytest.mark.usefixtures("full_cache")
def test_a_compiler_failing_on_a_full_cache_says_the_cache_is_full(cache: Path, monkeypatch) -> None:
    def full(command, cwd, env, timeout_s=compile.BUILD_TIMEOUT_S):
        return 1, f"/tmp/ccX.s: Fatal error: can't close {cwd}/k.cuda.o: No space left on device\n"

    _full_cache_said(_build_kernel(cache, monkeypatch, full), cache)


def test_a_build_step_failing_with_enospc_in_the_cache_says_the_cache_is_full(cache: Path, monkeypatch) -> None:
    def full(command, cwd, env, timeout_s=compile.BUILD_TIMEOUT_S):
        raise OSError(errno.ENOSPC, "No space left on device", str(Path(cwd) / "k.cuda.o"))

    _full_cache_said(_build_kernel(cache, monkeypatch, full), cache)


@pytest.mark.usefixtures("full_cache")
def test_a_submission_compile_failing_on_a_full_cache_says_the_cache_is_full(cache: Path, monkeypatch) -> None:
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: None)

    def command(extension: Extension, unit: Path, arch: str, code: str, folder: Path) -> list[str]:
        said = f"/tmp/ccX.s: Fatal error: can't close {folder}/plain.o: No space left on device"
        return [sys.executable, "-c", f"import sys; print({said!r}); sys.exit(1)"]

    monkeypatch.setattr(submission_build, "_command", command)
    submission = cache / "submission.py"
    submission.write_text(SUBMISSION)
    _full_cache_said(CliRunner().invoke(app, ["build", str(submission)]), cache)


def test_a_compiler_failing_on_a_full_temporary_folder_names_that_folder(cache: Path, monkeypatch) -> None:
    temporary = tempfile.gettempdir()
    _statvfs_showing_full(monkeypatch, Path(temporary))

    def full(command, cwd, env, timeout_s=compile.BUILD_TIMEOUT_S):
        return 1, f"cicc: error writing to {temporary}/tmpxft_0001_k.ptx: No space left on device\n"

    result = _build_kernel(cache, monkeypatch, full)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert (f"error: the temporary folder {temporary} is full (No space left on device): free space or"
            " point TMPDIR elsewhere") in flat(result.output)


def test_a_compile_error_that_says_nothing_of_space_stays_a_compile_error(cache: Path, monkeypatch) -> None:
    def failed(command, cwd, env, timeout_s=compile.BUILD_TIMEOUT_S):
        return 1, f"{cache}/k.cu(3): error: identifier \"x\" is undefined\n"

    result = _build_kernel(cache, monkeypatch, failed)
    assert result.exit_code == ExitCode.FAILURES, result.output
    assert "compile error" in result.output


STATIC_ASSERT = 'static_assert(SMEM_BYTES <= 232448, "No space left on device: tile too big for SMEM");'


def _static_assert_failing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kernel under the temporary folder whose static_assert fails, nvcc echoing its line under the error."""
    kernel = cache / "k.cu"
    kernel.write_text(KERNEL + STATIC_ASSERT + "\n")

    def failed(command, cwd, env, timeout_s=compile.BUILD_TIMEOUT_S):
        return 1, (f'{kernel}(4): error: static assertion failed with "No space left on device: tile too big for'
                   f' SMEM"\n  {STATIC_ASSERT}\n  ^\n\n1 error detected in the compilation of "{kernel}".\n')

    monkeypatch.setattr(compile, "run_compiler", failed)
    return kernel


def _compile_error_said(result) -> None:
    assert result.exit_code == ExitCode.FAILURES, result.output
    said = flat(result.output)
    assert "compile error" in said and "static assertion failed" in said
    assert "is full" not in said


def test_a_static_assert_saying_no_space_stays_a_compile_error(cache: Path, monkeypatch) -> None:
    _statvfs_showing_full(monkeypatch)  # every disk with the room it has, whatever this machine's
    kernel = _static_assert_failing(cache, monkeypatch)
    _compile_error_said(CliRunner().invoke(app, ["build", str(kernel)]))


def test_a_static_assert_saying_no_space_stays_a_compile_error_on_a_full_disk(cache: Path, monkeypatch) -> None:
    _statvfs_showing_full(monkeypatch, cache / "cache", Path(tempfile.gettempdir()))
    kernel = _static_assert_failing(cache, monkeypatch)
    _compile_error_said(CliRunner().invoke(app, ["build", str(kernel)]))


def test_a_tool_saying_no_space_on_a_disk_with_room_stays_a_compile_error(cache: Path, monkeypatch) -> None:
    _statvfs_showing_full(monkeypatch)

    def failed(command, cwd, env, timeout_s=compile.BUILD_TIMEOUT_S):
        return 1, f"/tmp/ccX.s: Fatal error: can't close {cwd}/k.cuda.o: No space left on device\n"

    result = _build_kernel(cache, monkeypatch, failed)
    assert result.exit_code == ExitCode.FAILURES, result.output
    assert "is full" not in flat(result.output)


@pytest.mark.usefixtures("full_cache")
def test_the_full_folder_is_the_one_statvfs_shows_full_not_the_one_a_line_names(cache: Path, monkeypatch) -> None:
    def full(command, cwd, env, timeout_s=compile.BUILD_TIMEOUT_S):
        return 1, f"cicc: error writing to {tempfile.gettempdir()}/tmpxft_0001_k.ptx: No space left on device\n"

    _full_cache_said(_build_kernel(cache, monkeypatch, full), cache)


def test_one_disk_under_both_folders_is_named_by_the_path_the_line_gives(tmp_path: Path, monkeypatch) -> None:
    temporary, staging = Path(tempfile.gettempdir()), tmp_path / "cache" / "tmp" / "stage"
    _statvfs_showing_full(monkeypatch, temporary, staging)
    said = f"cicc: error writing to {temporary}/tmpxft_0001_k.ptx: {full_disk.NO_SPACE}"
    assert full_disk.full_folder(staging, [said]) == temporary
    assert full_disk.full_folder(staging, [f"{said}, then {staging}/k.o"]) == staging
