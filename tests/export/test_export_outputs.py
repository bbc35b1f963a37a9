"""`export -o` where the output is no plain file name: a device, a FIFO, a folder to be, a path through a file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import export
from nvfp4ctl.cli import app

HGMMA_PROBE = Path(__file__).parents[1] / "build" / "fixtures" / "hgmma_probe.cu"
runner = CliRunner()


def _export(*args: str):
    return runner.invoke(app, ["export", "--kernel", str(HGMMA_PROBE), *args])


def _flat(text: str) -> str:
    return " ".join(text.split())  # the console wraps long lines at the terminal's width


class _Blocked(Exception):
    """Raised by the alarm in the command's thread: no OSError, which the read's own handling would take."""


@contextmanager
def _within(seconds: int) -> Iterator[None]:
    def blocked(*_: object) -> None:
        raise _Blocked(f"still blocked after {seconds} s")

    before = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("force", [(), ("--force",)], ids=["plain", "force"])
def test_a_fifo_is_written_to_as_a_shell_redirect_writes_it(tmp_path: Path, force: tuple[str, ...]) -> None:
    """The text at -o was read first to judge it: a FIFO blocked the export for ever (/dev/stdout down a pipe too)."""
    pipe = tmp_path / "submission.py"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)  # the far end
    reader.start()
    try:
        with _within(30):
            result = _export("-o", str(pipe), *force)
    finally:
        # a reader still waiting (the export never opened the FIFO to write) sees an end of file, not a hang
        try:
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # no reader left: the export's write ended it
        reader.join(60)
    assert result.exit_code == 0, result.output
    assert not reader.is_alive() and export.EXPORT_MARK in received[0].decode()
    assert pipe.is_fifo() and sorted(tmp_path.iterdir()) == [pipe]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="Unix sockets are POSIX")
def test_a_socket_is_refused_at_once_named_a_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound AF_UNIX socket's open fails as a FIFO's with no reader does: export waited 2 s, then said
    "cannot write sock: a FIFO that no process reads"."""
    import socket
    import time

    monkeypatch.chdir(tmp_path)  # a short relative name: a socket's path is limited to about 100 bytes
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind("sock")
        started = time.monotonic()
        result = _export("-o", "sock")
        waited = time.monotonic() - started
        assert (result.exit_code, _flat(result.output)) == (
            2, "error: cannot write sock: a socket, which cannot be opened as a file")
        assert waited < 2.0  # the FIFO's wait for a reader was not waited
        assert sorted(tmp_path.iterdir()) == [tmp_path / "sock"]


@pytest.mark.parametrize("force", [(), ("--force",)], ids=["plain", "force"])
def test_dev_null_is_written_to_and_stays_the_device(force: tuple[str, ...]) -> None:
    with _within(30):
        result = _export("-o", "/dev/null", *force)
    assert result.exit_code == 0 and "wrote /dev/null" in _flat(result.output)
    assert Path("/dev/null").is_char_device()


def test_a_file_larger_than_any_export_is_not_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "_LARGEST_EXPORT_READ", 2**20)
    big = tmp_path / "submission.py"
    big.write_text("x" * (2**20 + 1))
    result = _export("-o", str(big))
    assert result.exit_code == 2
    assert _flat(result.output) == (f"error: {big} is not an earlier export (it holds over 1 MiB of text, which no"
                                    " export does): nothing was written (--force replaces it, or -o another path)")
    assert big.read_text() == "x" * (2**20 + 1)
    assert _export("-o", str(big), "--force").exit_code == 0 and export.EXPORT_MARK in big.read_text()


@pytest.mark.parametrize("option", ["-o", "--output"])
def test_a_path_ending_in_a_slash_is_a_folder_refused_as_one_that_is_there(tmp_path: Path, option: str) -> None:
    """`-o newdir/` (no such folder) wrote a file named newdir and exited 0."""
    folder = tmp_path / "newdir"
    result = _export(option, f"{folder}/")
    assert (result.exit_code, _flat(result.output)) == (
        2, f"error: {option}: {folder}/ ends in /, a folder; name the file to write, e.g. -o {folder}/submission.py")
    assert list(tmp_path.iterdir()) == []
    folder.mkdir()
    for given in (str(folder), f"{folder}/"):
        result = _export("-o", given)
        assert result.exit_code == 2 and "a folder; name the file to write, e.g. -o" in _flat(result.output)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("below", ["x.py", "d/x.py"])
def test_a_path_below_a_file_says_the_file_is_not_a_folder_as_init_does(tmp_path: Path, below: str) -> None:
    """`-o notes.txt/x.py` said "cannot write notes.txt/x.py: File exists (notes.txt)"; init says "not a folder"."""
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    result = _export("-o", str(notes / below))
    assert (result.exit_code, _flat(result.output)) == (
        2, f"error: {notes}: not a folder, so -o {notes / below} cannot be written: nothing was written")
    assert notes.read_text() == "mine\n" and list(tmp_path.iterdir()) == [notes]


@pytest.mark.parametrize("quiet", [(), ("-q",)], ids=["plain", "quiet"])
def test_dev_stdout_gets_the_submission_alone_its_lines_going_to_stderr(tmp_path: Path, quiet: tuple[str, ...]) -> None:
    """`export -o /dev/stdout > sub.py` gave the file with `wrote /dev/stdout (...)` and the next-step line after it."""
    import nvfp4ctl

    env = dict(os.environ, NVFP4CTL_MEMORY=str(tmp_path / "MEMORY.md"), NVFP4CTL_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(Path(nvfp4ctl.__file__).resolve().parents[1]), *sys.path]))
    as_file = tmp_path / "submission.py"
    assert _export("-o", str(as_file)).exit_code == 0
    done = subprocess.run([sys.executable, "-m", "nvfp4ctl", "export", "--kernel", str(HGMMA_PROBE), "-o", "/dev/stdout",
                           *quiet], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == as_file.read_bytes()
    assert "wrote /dev/stdout" in _flat(done.stderr.decode())
    assert "next:" not in done.stderr.decode()  # a stream has no path to lint or check
