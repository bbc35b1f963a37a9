"""A build cache shared by a group (one NVFP4CTL_CACHE folder, umask 002): a part of it that another user
made and this one may not write (locks/, tmp/, a lock file, an entry) is one line naming that part, exit 2,
where it was a traceback (exit 1). The other user is a stand-in: os calls that refuse as the file system
refuses a user who is not the owner (these tests may run as root, whom no mode bit stops)."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import builder, cache
from nvfp4ctl.cli import app
from nvfp4ctl.errors import ExitCode
from stand_in_units import KERNEL, flat


@pytest.fixture()
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    (tmp_path / "cache").mkdir()
    (tmp_path / "k.cu").write_text(KERNEL)
    return tmp_path


def _refused(path: Path) -> PermissionError:
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))


def _build(shared: Path):
    return CliRunner().invoke(app, ["build", "--arch", "sm_90a", str(shared / "k.cu")])


def _said_refused(result, shared: Path, refused: str) -> None:
    assert result.exit_code == ExitCode.USAGE, result.output
    said = flat(result.output)
    assert f"error: cannot use the cache folder {shared / 'cache'} (NVFP4CTL_CACHE): {refused}" in said, said
    assert "Traceback" not in said and result.exception is None or isinstance(result.exception, SystemExit)


def test_another_users_lock_file_is_named_not_a_traceback(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Refusing:  # filelock opening a 644 lock file of another user's
        def __init__(self, path: str, **_: object) -> None:
            self.path = path

        def acquire(self, **_: object) -> None:
            raise _refused(Path(self.path))

        def release(self) -> None:
            return None

    monkeypatch.setattr(cache, "FileLock", Refusing)
    result = _build(shared)
    _said_refused(result, shared, str(shared / "cache" / "locks"))
    assert ".lock: Permission denied" in flat(result.output)


def test_an_unwritable_tmp_folder_is_named_not_a_traceback(shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refusing(prefix: str, dir: Path) -> str:
        raise _refused(Path(dir) / f"{prefix}abc")

    monkeypatch.setattr(tempfile, "mkdtemp", refusing)
    _said_refused(_build(shared), shared, str(shared / "cache" / "tmp"))


def test_an_entry_that_cannot_be_removed_is_named_not_directory_not_empty(shared: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def compiled(folder: Path, *_: object, **__: object) -> None:
        (folder / "kernel.cubin").write_text("x")

    monkeypatch.setattr(builder, "_compile_and_inspect", compiled)
    real_rmtree = shutil.rmtree
    monkeypatch.setattr(cache.shutil, "rmtree",  # another user's entry: its files stay
                        lambda path, ignore_errors=False: None if Path(path).parent == shared / "cache"
                        else real_rmtree(path, ignore_errors=ignore_errors))
    plan = builder._planned(shared / "k.cu", "sm_90a", ())
    plan.entry.mkdir(parents=True)
    (plan.entry / "kernel.sass").write_text("another user's")
    result = _build(shared)
    _said_refused(result, shared, f"{plan.entry}: an entry already there cannot be replaced")


def test_lock_files_follow_the_umask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    entry = tmp_path / "k-sm_90a-0123"
    before = os.umask(0o002)
    try:
        with cache.locked(entry):
            pass
    finally:
        os.umask(before)
    mode = (tmp_path / "locks" / f"{entry.name}.lock").stat().st_mode & 0o777
    assert mode == 0o664  # the group's next member can open it, where filelock's default was 644


def test_a_cache_removed_during_the_compile_is_said_not_a_compile_error(shared: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl import runlog
    from nvfp4ctl.build import compile

    def removing(command, cwd, env, timeout_s=compile.BUILD_TIMEOUT_S):  # `rm -rf` of the cache meanwhile
        shutil.rmtree(shared / "cache")
        return 1, f"Fatal error: can't create {cwd}/k.cuda.o: No such file or directory\n"

    monkeypatch.setattr(compile, "run_compiler", removing)
    result = _build(shared)
    assert result.exit_code == ExitCode.USAGE, result.output
    said = flat(result.output)
    assert (f"error: the cache folder {shared / 'cache'} was removed during the build; run it again") in said, said
    assert "compile error" not in said
    assert runlog.read(shared / "MEMORY.md")[-1].result.startswith("error: the cache folder")


def test_a_staging_folder_removed_under_the_compiler_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.build.compile import CompileError

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    with pytest.raises(cache.CacheFolderRemoved, match="the build's folder in the cache .* was removed during"):
        with cache.staging(tmp_path / "k-sm_90a-0123") as folder:
            shutil.rmtree(folder)
            raise CompileError("can't create k.cuda.o", "")
    with pytest.raises(CompileError):  # a failure in a folder still there is the failure it is
        with cache.staging(tmp_path / "k-sm_90a-0123"):
            raise CompileError("error: identifier x is undefined", "")
