"""Appending a run's line under the run-log section, never touching the notes around it.

Appends take a file lock (in nvfp4ctl's cache, and a flock on MEMORY.md itself for writers whose caches
differ), so concurrent runs interleave whole lines. A line that goes at the end of the file is appended to
the file itself in one write; one that goes before a section of the user's replaces the file in one step (a
new copy moved over it) while it is still the file read (placing says why). A run killed before its write
leaves nothing; only one killed inside the write() itself may leave part of its line, which `log` names as a
line it could not read.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from filelock import FileLock

from nvfp4ctl.atomic_file import made_read_only, write_bytes_atomic
from nvfp4ctl.errors import UsageError
from nvfp4ctl.project import cache_root
from nvfp4ctl.runlog.entry import RunEntry
from nvfp4ctl.runlog.files import (MARKDOWN_SUFFIXES, _as_utf8, _decoded, _strict_utf8, _wide_encoding,
                                   device_or_fifo_mode, file_in_the_way, is_null_device)
from nvfp4ctl.runlog.fences import with_an_open_fence_closed
from nvfp4ctl.runlog.placing import ChangedWhileWritten, append_in_place, read_whole, still_the_file_read
from nvfp4ctl.runlog.section import (_LINE_BREAK, HEADING, PREAMBLE, _joins_an_html_block, _log_section, _LogEnd,
                                     _text_follows)
from nvfp4ctl.words import seconds_text

LOCK_TIMEOUT_S = 30.0


class ReadOnlyRunLog(Exception):
    """MEMORY.md made read-only (chmod a-w): the user's way to stop the logging. The line is not written;
    the command warns with this message and ends as it would have."""


def lock_path(memory: Path, kind: str = "runlog") -> Path:
    """The lock lives in nvfp4ctl's cache, not beside MEMORY.md: the user's folder gets no stray file.
    A cache whose lock cannot be made there (NVFP4CTL_CACHE naming a file; a shared cache's locks/ that
    another user made and this one may not write, or their lock file of mode 644) must not cost the log
    its line: the system's temporary folder holds the lock then. `kind` names what the lock guards
    (tune's dispatch table locks `path` the same way)."""
    key = hashlib.sha256(os.fsencode(memory.resolve())).hexdigest()[:16]  # bytes: a path not UTF-8 has no UTF-8 text
    # per user, private: a shared temporary folder made by someone else would refuse this user's lock
    fallback = Path(tempfile.gettempdir()) / f"nvfp4ctl-locks-{os.getuid()}"
    for folder, mode in ((cache_root() / "locks", 0o777), (fallback, 0o700)):
        lock = folder / f"{kind}-{key}.lock"
        try:
            folder.mkdir(mode=mode, parents=True, exist_ok=True)
            _open_lock_file(lock)
        except OSError:
            continue
        return lock
    raise NoLockFolder(f"no folder for the run log's lock ({cache_root() / 'locks'}, {fallback})")


class NoLockFolder(OSError):
    """Neither the cache's locks/ nor the temporary folder can hold the run log's lock: the cache setting
    (NVFP4CTL_CACHE) is what to change, not the run log's path, whose lock it would be all the same."""


def _open_lock_file(lock: Path) -> None:
    """Makes `lock` (or opens it, where it is there) for writing, as filelock will; OSError where this user
    cannot. Made with the umask's mode, not filelock's 644, so that in a group's shared cache (umask 002)
    the next member can take it too; left in place, as filelock leaves its lock files."""
    os.close(os.open(lock, os.O_RDWR | os.O_CREAT, 0o666))


@contextmanager
def _file_itself_locked(memory: Path, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """An exclusive flock on MEMORY.md itself, held on the file the path names when the lock is won.

    The cache-folder lock only orders writers that share NVFP4CTL_CACHE; two shells with different
    settings (an editor's lint hook beside a bench) took different locks and lost each other's lines.
    A writer replaces the file, so a lock won on a file that has since been replaced is let go and
    taken again on the new one. Where the file cannot be opened or flock is refused (a file system
    without it), only the cache lock orders the writers, as before. filelock cannot take this lock:
    it opens the file it locks with O_TRUNC."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the cache lock alone
        yield
        return
    if _device_or_fifo(memory):  # no lines in it to keep whole, and a FIFO opened here would have this
        yield  # process read it: the line written into a pipe that no one reads, lost without a word
        return
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fd, created = _open_for_lock(memory)
        except OSError:
            yield
            return
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(f"another nvfp4ctl held {memory} for {seconds_text(timeout_s)}") from None
                    time.sleep(0.01)
                except OSError:  # ENOLCK, EBADF (NFS wants a writable file): no lock on the file itself
                    with _removed_if_left_empty(memory, fd, created):
                        yield
                    return
            try:
                current = os.stat(memory)
            except OSError:
                current = None
            if current is not None and os.path.samestat(current, os.fstat(fd)):
                with _removed_if_left_empty(memory, fd, created):
                    yield
                return
        finally:
            os.close(fd)  # releases the flock


def _device_or_fifo(memory: Path) -> bool:
    try:
        mode = memory.stat().st_mode
    except (OSError, ValueError):
        return False
    return device_or_fifo_mode(mode)


def _open_for_lock(memory: Path) -> tuple[int, bool]:
    """MEMORY.md opened for its lock, and whether this call made it (empty: the append writes it at
    once); read-only when the user made it so (the append replaces it, which needs the folder's
    permission only)."""
    try:
        return os.open(memory, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666), True
    except FileExistsError:  # the usual case; also a symlink, which O_EXCL never follows
        pass
    try:
        return os.open(memory, os.O_RDWR | os.O_CREAT, 0o666), False
    except PermissionError:
        return os.open(memory, os.O_RDONLY), False


@contextmanager
def _removed_if_left_empty(memory: Path, fd: int, created: bool) -> Iterator[None]:
    """A MEMORY.md made only to be locked goes again when the append fails (a full disk, Ctrl-C): the
    user must not find an empty file where there was none. Removed only while it is still the file
    made here and still empty, so no line another writer appended is lost."""
    try:
        yield
    except BaseException:
        if created:
            with suppress(OSError):
                if os.fstat(fd).st_size == 0 and os.path.samestat(os.stat(memory), os.fstat(fd)):
                    os.unlink(memory)
        raise


def not_a_run_log(memory: Path) -> str | None:
    """Why the run log must not go into `memory`, or None. Appending puts a Markdown section at the end
    of the file: into anything but Markdown notes (NVFP4CTL_MEMORY naming submission.py, say) that breaks
    the file. So a file takes the log only when its name ends in .md or it has the run-log section
    already; any other name is refused whether or not the file exists: a new or empty one became a run
    log, a submission.py of Markdown that the next command then refused. A folder (named .md or not) can
    hold no run log: lint ran and warned, `log` failed. A device or a FIFO (/dev/null, /dev/stderr) takes
    the lines."""
    try:
        mode: int | None = memory.stat().st_mode
    except OSError as error:
        if error.errno not in _ABSENT_ERRNOS:
            return None  # unreadable: the append's own error names the reason
        mode = None  # not there yet (or a link in a loop): judged by its name
    except ValueError:  # a NUL in the path: no file is there
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        return "a folder, not a run log file"
    if not _judged_by_its_text(memory, mode):
        return None
    try:
        text = _decoded(memory.read_bytes()) if mode is not None else ""
    except OSError:
        return None  # unreadable: the append's own error names the reason
    return _why_not_a_run_log(text)


def _judged_by_its_text(memory: Path, mode: int | None) -> bool:
    """Whether `memory` (its st_mode, None where it is not there) takes the run log only where its text has the
    run-log section: a name not ending in .md, and a regular file or none (a device or a FIFO takes the lines)."""
    return memory.suffix.lower() not in MARKDOWN_SUFFIXES and (mode is None or stat.S_ISREG(mode))


# What pathlib's is_dir() and is_file() take for "no such file" rather than an error to report
_ABSENT_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _why_not_a_run_log(text: str) -> str | None:
    """not_a_run_log of a file not named .md, a regular one or none, holding `text` (append judges the bytes it
    read, not a second read)."""
    # Only the heading as nvfp4ctl writes it: a hand-typed variant (_is_heading) is a Markdown file's, and a
    # `## Run Log` comment in a Python file must not make it one.
    if any(line.lstrip("\ufeff").rstrip() == HEADING for line in text.splitlines()):
        return None
    if not text:
        return "not a run log (its name does not end in .md, and a new run log's name must)"
    return f'not a run log (its name does not end in .md and it has no "{HEADING}" section)'


def append(entry: RunEntry, memory: Path) -> None:
    """Append `entry` under the run-log section (made at the end when missing); a UsageError, the file
    untouched, when `memory` holds something other than a run log (not_a_run_log). ChangedWhileWritten,
    the line not written, where MEMORY.md changed under every try (an editor saving it again and again).
    The null device is no run log kept (NVFP4CTL_MEMORY=/dev/null in CI): nothing is written, no lock made."""
    if is_null_device(memory):
        return
    if (blocker := file_in_the_way(memory)) is not None:  # mkdir's own error names neither the file nor why
        raise NotADirectoryError(errno.ENOTDIR, f"{blocker} is not a folder")
    memory.parent.mkdir(parents=True, exist_ok=True)
    lock = lock_path(memory)
    with FileLock(str(lock), timeout=LOCK_TIMEOUT_S), _file_itself_locked(memory):
        for attempt in range(PLACING_TRIES):
            try:
                _put_in(entry, memory)
                return
            except ChangedWhileWritten:  # an editor saved it meanwhile: read it again
                if attempt == PLACING_TRIES - 1:
                    raise ChangedWhileWritten(f"{memory} changed while it was written") from None
                time.sleep(PLACING_PAUSE_S)


PLACING_TRIES = 3
PLACING_PAUSE_S = 0.05


def _put_in(entry: RunEntry, memory: Path) -> None:
    """One try of append's, under its locks."""
    read = read_whole(memory)
    existing = read.data
    if (wide := _wide_encoding(existing)) is not None:  # worked on as UTF-8, written back as it was saved
        existing = _as_utf8(memory, existing, *wide)
        text = existing.decode("utf-8")
    else:
        text = _strict_utf8(memory, existing)
    if _judged_by_its_text(memory, read.mode) and (why := _why_not_a_run_log(text)) is not None:
        # judged under the lock, on what is replaced
        raise UsageError(f"{memory}: {why}; the run log was not appended to it")
    if made_read_only(memory):  # also judged under the lock, on what would be replaced
        raise ReadOnlyRunLog(f"{memory} is read-only")
    end = _log_end_of(existing)
    if (closed := with_an_open_fence_closed(existing, end, _line_break_of(existing).encode())) is not None:
        # a fence the user left open where the line goes: closed first, once, so the runs are no code
        existing = closed
        end = _log_end_of(existing)
    at = end.at if end is not None else len(existing)
    chunk = ""
    if at == len(existing) and existing and not existing.endswith((b"\n", b"\r")):
        chunk += "\n"
    if end is None:
        chunk += ("\n" if existing else "") + f"{HEADING}\n\n{PREAMBLE}\n\n"
    elif _joins_an_html_block(existing, end, entry.to_line().encode()):
        # `<div>` ... `</div>` right above: only a blank line ends such a block, and the line (every later one
        # too) would be the block's raw text, no list item
        chunk += "\n"
    chunk += entry.to_line()
    if _text_follows(existing, at):
        # A heading of the user's right below: Markdown reads a line of text right after a list item as
        # that item's text, so `Ideas` over `-----` would no longer be a heading, and the next run would go under it
        chunk += "\n"
    # a file saved with Windows (\r\n) or old Mac (\r) line breaks keeps them: no mixed endings
    chunk = chunk.replace("\n", _line_break_of(existing))
    updated = existing[:at] + chunk.encode() + existing[at:]
    if wide is not None:
        bom, codec = wide
        updated = bom + updated.decode("utf-8").encode(codec)
    if read.status is not None and updated.startswith(read.data):
        # The line goes at the end (the usual case): written to the file itself, not a copy moved over it, so
        # an editor saving in place at the same time overwrites the line at worst, never the notes
        try:
            append_in_place(memory, read, updated[len(read.data):])
            return
        except PermissionError:  # a file of another user's, in a folder shared with them: replaced, as before
            pass
    # Before a section of the user's: a new copy moved over the old one, only while the file is still the one
    # read (an editor's save in between would be lost with it)
    write_bytes_atomic(memory, updated, before_replace=lambda: still_the_file_read(memory, read))


def _log_end_of(existing: bytes) -> _LogEnd | None:
    """Where the run log's section of `existing` ends, as the readers find it (_log_section); None where it has no
    run log's heading."""
    section = _log_section(existing)
    return section.end if section is not None else None


def _line_break_of(existing: bytes) -> str:
    """The line break the file's first line ends with, \\n for none (an editor that writes one kind writes them all)."""
    found = _LINE_BREAK.search(existing)
    return found[0].decode() if found is not None else "\n"
