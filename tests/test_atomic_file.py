"""write_text_atomic: the old file or the new one, its mode kept, nothing left behind on failure."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from nvfp4ctl import atomic_file
from nvfp4ctl.atomic_file import write_bytes_atomic, write_text_atomic


def test_a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "state.json"
    write_text_atomic(path, "één\n")
    assert path.read_text(encoding="utf-8") == "één\n" and (path.stat().st_mode & 0o777) == atomic_file.under_umask(0o666)
    path.chmod(0o600)
    write_text_atomic(path, "two\n")
    assert path.read_text() == "two\n" and (path.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["state.json"]


def test_a_failed_move_leaves_the_old_file_and_no_staging_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "state.json"
    path.write_text("old\n")

    def fail(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_file.os, "replace", fail)
    with pytest.raises(OSError):
        write_text_atomic(path, "new\n")
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_device_is_written_to_not_replaced(tmp_path: Path) -> None:
    before = os.stat(os.devnull)
    write_bytes_atomic(Path(os.devnull), b"gone")
    (tmp_path / "null").symlink_to(os.devnull)
    write_text_atomic(tmp_path / "null", "gone too")
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert not list(Path(os.devnull).parent.glob(".null.*.tmp"))


def test_a_read_only_target_is_kept_where_the_caller_asks_and_replaced_where_not(tmp_path: Path) -> None:
    """os.replace over a chmod a-w file succeeds wherever the folder is writable (and root opens any file):
    the user's outputs (keep_read_only) are refused before anything is written; caches are replaced."""
    path = tmp_path / "submission.py"
    path.write_text("mine\n")
    path.chmod(0o444)
    link = tmp_path / "link.py"
    link.symlink_to(path)
    for named in (path, link):
        with pytest.raises(atomic_file.ReadOnlyTarget, match=f"^{named} is read-only$") as refused:
            write_text_atomic(named, "new\n", keep_read_only=True)
        assert refused.value.exit_code == 2
    assert path.read_text() == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "submission.py"]
    write_text_atomic(path, "cache\n")
    assert path.read_text() == "cache\n" and stat.S_IMODE(path.stat().st_mode) == 0o444
    path.chmod(0o644)
    write_text_atomic(path, "again\n", keep_read_only=True)
    assert path.read_text() == "again\n"


def _umask_must_not_change(*_: object) -> int:
    raise AssertionError("os.umask called: a file another thread makes meanwhile would get mode 666/777")


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the umask from Linux's /proc")
def test_the_umask_is_read_without_setting_it(monkeypatch: pytest.MonkeyPatch) -> None:
    before = os.umask(0o027)
    try:
        monkeypatch.setattr(os, "umask", _umask_must_not_change)
        assert atomic_file.under_umask(0o666) == 0o640 and atomic_file.under_umask(0o777) == 0o750
    finally:
        monkeypatch.undo()
        os.umask(before)


def test_without_proc_the_umask_read_at_import_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = open

    def no_proc(file: object, *args: object, **kwargs: object) -> object:
        if str(file).startswith("/proc/"):
            raise FileNotFoundError(2, "No such file or directory", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_proc)
    monkeypatch.setattr(atomic_file, "_UMASK_AT_IMPORT", 0o077)
    monkeypatch.setattr(os, "umask", _umask_must_not_change)
    assert atomic_file.under_umask(0o666) == 0o600


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_fifo_no_process_reads_is_an_error_not_a_wait_for_ever(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`export -o fifo` with no reader, a run log set to one: open() for writing waited for a reader for ever."""
    import errno
    import threading

    monkeypatch.setattr(atomic_file, "FIFO_READER_WAIT_S", 0.2)
    fifo = tmp_path / "out.py"
    os.mkfifo(fifo)
    raised: list[BaseException] = []

    def write() -> None:
        try:
            write_bytes_atomic(fifo, b"x = 1\n")
        except OSError as error:
            raised.append(error)

    worker = threading.Thread(target=write, daemon=True)  # a blocked open stays in its daemon thread
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "the write waited for a reader"
    assert [(error.errno, error.strerror) for error in raised] == [(errno.ENXIO, "a FIFO that no process reads")]
    assert fifo.is_fifo()  # never replaced by a file


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="Unix sockets are POSIX")
def test_a_socket_is_refused_at_once_named_a_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a Unix socket fails as opening a FIFO with no reader does (ENXIO): `export -o SOCK` waited the
    FIFO's 2 s, then said "a FIFO that no process reads" of it."""
    import errno
    import socket
    import time

    monkeypatch.chdir(tmp_path)  # a short relative name: a socket's path is limited to about 100 bytes
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind("out.sock")
        started = time.monotonic()
        with pytest.raises(OSError) as raised:
            write_bytes_atomic(Path("out.sock"), b"x = 1\n")
        assert time.monotonic() - started < atomic_file.FIFO_READER_WAIT_S / 2
        assert (raised.value.errno, raised.value.strerror, raised.value.filename) == (
            errno.ENXIO, "a socket, which cannot be opened as a file", "out.sock")
        assert stat.S_ISSOCK(os.stat("out.sock").st_mode)  # never replaced by a file
