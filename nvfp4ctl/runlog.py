"""The run log: one line per command added to MEMORY.md's run-log section, never touching the notes around it.

Appends take a file lock (in nvfp4ctl's cache, and a flock on MEMORY.md itself for writers whose caches
differ) and replace the file in one step (a new copy moved over it), so concurrent runs interleave
whole lines and a run killed mid-way leaves either its full line or nothing.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
import shlex
import subprocess
import tempfile
import time
from collections.abc import Generator, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from functools import cache, cached_property
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock

from nvfp4ctl.atomic_file import made_read_only, write_bytes_atomic
from nvfp4ctl.errors import UsageError
from nvfp4ctl.outcome import Outcome
from nvfp4ctl.project import cache_root
from nvfp4ctl.runner.gpu import first_gpu, run_device
from nvfp4ctl.words import seconds_text

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

HEADING = "## Run log"
# The heading as a user may type it: any case, a note in parentheses or after a colon, ATX closing #s.
# "## Run logs" or "## Run log ideas" are headings of their own, never the section.
_HEADING_LINE = re.compile(r"##[ \t]+run log(?:[ \t]*\([^()]*\)|[ \t]*:.*)?(?:[ \t]+#+)?", re.IGNORECASE)
PREAMBLE = ("<!-- nvfp4ctl appends one line per command below; keep your notes above this section,"
            " or below it under a heading of your own. -->")
SEPARATOR = " · "
LOCK_TIMEOUT_S = 30.0
MARKDOWN_SUFFIXES = (".md", ".markdown")


class ReadOnlyRunLog(Exception):
    """MEMORY.md made read-only (chmod a-w): the user's way to stop the logging. The line is not written;
    the command warns with this message and ends as it would have."""


class UndecodableRunLog(Exception):
    """MEMORY.md starts with a UTF-16 or UTF-32 byte order mark but is no valid text in that encoding: the
    line is not written (a copy made from what decodes would lose the rest); the command warns with this
    message and ends as it would have."""


# The byte order marks of the wider encodings an editor may save MEMORY.md in (Windows Notepad's
# "Unicode" is UTF-16 LE); UTF-32 LE's first, as it starts with UTF-16 LE's. Any other file is UTF-8.
_WIDE_ENCODINGS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
                   (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


@dataclass(frozen=True)
class RunEntry:
    time: str
    command: str
    target: str
    commit: str
    gpu: str
    exit_code: str
    result: str
    problem: str = ""  # the task's problem ("nvfp4_dual_gemm"); a last cell, absent on older lines

    def to_line(self) -> str:
        names = [f.name for f in fields(self) if f.name != "problem" or self.problem]
        cells = [_one_line(getattr(self, name).replace(SEPARATOR.strip(), "-")) for name in names]
        cells[1] = f"`{cells[1]}`"
        return "- " + SEPARATOR.join(cells) + "\n"

    @property
    def subcommand(self) -> str:
        """The command's name ("bench"), past the global options typed before it (`nvfp4ctl -q bench`)."""
        return command_name(self.command)

    @classmethod
    def from_line(cls, line: str) -> RunEntry | None:
        if not line.startswith("- "):
            return None
        cells = line[2:].rstrip("\n").split(SEPARATOR)
        if len(cells) not in (len(fields(cls)) - 1, len(fields(cls))):
            return None
        cells[1] = cells[1].strip("`")
        return cls(*cells)


def command_name(command: str) -> str:
    """"bench" for `nvfp4ctl bench ...`, `nvfp4ctl -q bench ...` and a rejected `nvfp4ctl --task log bench`
    (log is --task's value): the word where the CLI reads the command's name (cli.command_position), so
    the run log and the CLI agree on whose line it is; "" when none."""
    from nvfp4ctl.cli import command_position  # here, not at the top: modules the CLI imports import this one

    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote in a hand-edited line
        words = command.split()
    at = command_position(words[1:])
    return words[1:][at] if at is not None else ""


def _one_line(cell: str) -> str:
    """Every character str.splitlines() breaks at (\\r, \\x0b, \\x1c, \\u2028, ...) as a space: the
    log is read back line by line, and a break inside a cell would lose that entry."""
    return " ".join(cell.splitlines()) if cell else cell


def file_digest(path: Path) -> str:
    """Short content hash of a target. A kernel's local headers count too (a tuned dispatch table or a
    config header changes what runs while the .cu stays the same); a submission is one file."""
    try:
        digest = hashlib.sha256(path.read_bytes())
        if path.suffix in (".cu", ".cuh"):
            from nvfp4ctl.build.sources import local_headers  # only kernels pay for the build package

            for header in local_headers(path):
                digest.update(header.name.encode() + b"\0" + header.read_bytes())
        return digest.hexdigest()[:12]
    except OSError:
        return "unreadable"


# A target file's path on a line is relative to the run log's own folder, written "./path": one log
# shared by two folders (NVFP4CTL_MEMORY) names their two submission.py files apart, and a log kept
# in the project reads the same from any checkout of it. Lines before this carry the path relative
# to the folder of the run that wrote them ("submission.py"), which the log does not say: a reader
# takes those relative to its own folder, as they always were.
LOG_RELATIVE = "./"


def describe_target(target: Path | str | None, root: Path | None = None, source: str | None = None,
                    log_folder: Path | None = None) -> str:
    """`path@content-hash [why]`; a file's path "./"-relative to `log_folder`, the run log's folder,
    when inside it (else absolute; relative to the user's folder `root` where no log folder is given),
    so the log reads the same from any checkout and any working directory; a folder's (a label, never
    compared) relative to `root`. `why` says how it was chosen."""
    if target is None:
        return "-"
    path = Path(target)
    if path.is_file():
        named = _log_relative(path, log_folder) if log_folder is not None else _relative_to_root(path, root)
        cell = f"{named}@{file_digest(path)}"
    elif path.is_dir():
        cell = _relative_to_root(path, root)
    else:
        cell = str(target)
    return f"{cell} [{source}]" if source else cell


def split_target(cell: str) -> tuple[str, str]:
    """A logged target cell back into (path as logged, content hash); ("", "") for "-" or a folder."""
    if cell.endswith("]") and " [" in cell:
        cell = cell[: cell.rindex(" [")]
    path, _, digest = cell.rpartition("@")
    return path, digest


def logged_path(path: str, root: Path, log_folder: Path | None) -> Path:
    """The file a logged target path names, resolved: "./path" inside `log_folder` (the run log's folder),
    an older line's relative path inside `root` (the reader's folder), an absolute path as it is."""
    if path.startswith(LOG_RELATIVE) and log_folder is not None:
        return (log_folder / path).resolve()
    return (root / path).resolve()


def log_folder_of(memory: Path) -> Path:
    """The folder a run log's "./" paths start from: the one that holds it, as named (not where a link to
    it points, which would move every path when the link is made)."""
    return Path(os.path.abspath(memory)).parent


def _log_relative(path: Path, log_folder: Path) -> str:
    resolved = path.resolve()
    try:
        return LOG_RELATIVE + str(resolved.relative_to(log_folder.resolve()))
    except ValueError:
        return str(resolved)


def _relative_to_root(path: Path, root: Path | None) -> str:
    resolved = path.resolve()
    if root is not None:
        try:
            return str(resolved.relative_to(root.resolve()))
        except ValueError:
            pass
    return str(resolved)


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state(cwd: Path, run_log: Path | None = None) -> str:
    """The commit of the tree at `cwd`, "+dirty" with changes to tracked files. The run log itself is
    not a change: where MEMORY.md is tracked, the command before this one appended to it, and every
    line after a session's first one said "+dirty" of a clean tree."""
    found = _git(["rev-parse", "--show-toplevel", "--short", "HEAD"], cwd)
    if not found or len(lines := found.splitlines()) != 2:
        return "no-git"
    top, commit = lines
    status = ["status", "--porcelain", "--untracked-files=no"]
    if run_log is not None and (inside := _inside(run_log, Path(top))) is not None:
        status += ["--", f":(top,exclude,literal){inside}"]
    dirty = _git(status, cwd)
    return f"{commit}+dirty" if dirty else commit


def _inside(path: Path, top: Path) -> str | None:
    """`path` relative to the work tree's top, in git's spelling; None outside it."""
    try:
        return path.resolve().relative_to(top.resolve()).as_posix()
    except (OSError, ValueError):
        return None


CPU_DEVICE_LABEL = "cpu (NVFP4CTL_DEVICE=cpu)"


def detect_gpu(runs_on_device: bool = True) -> str:
    """The GPU column: the machine's GPU ("no GPU" without one), or, for a command that runs the target
    on the device NVFP4CTL_DEVICE picks (`runs_on_device`: check, bench, tune), the CPU label where
    that is the CPU. lint, build, dump and export run nothing there: the setting says nothing of them."""
    try:
        on_cpu = runs_on_device and run_device() == "cpu"
    except UsageError:  # a bad NVFP4CTL_DEVICE: the command said so and ran nothing
        on_cpu = False
    if on_cpu:  # the run did not use the GPU: its times must not be compared with the GPU's
        return CPU_DEVICE_LABEL
    gpu = first_gpu()
    return gpu.describe() if gpu else "no GPU"


def make_entry(outcome: Outcome, argv: list[str], cwd: Path, memory: Path | None = None,
               runs_on_device: bool = True) -> RunEntry:
    """The run's line; `memory`: the run log it goes to, whose folder its target's path starts from;
    `runs_on_device`: whether the command runs its target on NVFP4CTL_DEVICE's device (detect_gpu)."""
    return RunEntry(
        time=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        command=shlex.join(["nvfp4ctl", *argv]),
        target=describe_target(outcome.target, cwd, outcome.target_source,
                               log_folder_of(memory) if memory is not None else None),
        commit=git_state(cwd, memory),
        gpu=outcome.gpu or detect_gpu(runs_on_device),
        exit_code=str(int(outcome.exit_code)),
        result=outcome.result,
        problem=outcome.problem or "",
    )


def lock_path(memory: Path, kind: str = "runlog") -> Path:
    """The lock lives in nvfp4ctl's cache, not beside MEMORY.md: the user's folder gets no stray file.
    A cache folder that cannot be made (NVFP4CTL_CACHE naming a file) must not cost the log its line:
    the system's temporary folder holds the lock then. `kind` names what the lock guards (tune's
    dispatch table locks `path` the same way)."""
    key = hashlib.sha256(str(memory.resolve()).encode()).hexdigest()[:16]
    # per user, private: a shared temporary folder made by someone else would refuse this user's lock
    fallback = Path(tempfile.gettempdir()) / f"nvfp4ctl-locks-{os.getuid()}"
    for folder, mode in ((cache_root() / "locks", 0o777), (fallback, 0o700)):
        try:
            folder.mkdir(mode=mode, parents=True, exist_ok=True)
        except OSError:
            continue
        return folder / f"{kind}-{key}.lock"
    raise OSError(f"no folder for the run log's lock ({cache_root() / 'locks'}, {tempfile.gettempdir()})")


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
    log, a submission.py of Markdown that the next command then refused. A folder, a device or a FIFO
    (/dev/null, /dev/stderr) is none of these: the append says why not, or writes there."""
    if memory.suffix.lower() in MARKDOWN_SUFFIXES:
        return None
    try:
        text = _decoded(memory.read_bytes()) if memory.is_file() else ""
    except OSError:
        return None  # unreadable: the append's own error names the reason
    return _why_not_a_run_log(memory, text)


def _why_not_a_run_log(memory: Path, text: str) -> str | None:
    """not_a_run_log of `memory` holding `text` (append judges the bytes it read, not a second read)."""
    if memory.suffix.lower() in MARKDOWN_SUFFIXES or _no_regular_file(memory):
        return None
    # Only the heading as nvfp4ctl writes it: a hand-typed variant (_is_heading) is a Markdown file's, and a
    # `## Run Log` comment in a Python file must not make it one.
    if any(line.lstrip("\ufeff").rstrip() == HEADING for line in text.splitlines()):
        return None
    if not text:
        return "not a run log (its name does not end in .md, and a new run log's name must)"
    return f'not a run log (its name does not end in .md and it has no "{HEADING}" section)'


def _no_regular_file(memory: Path) -> bool:
    """Whether `memory` is there as something other than a file: a folder, a device, a FIFO."""
    try:
        return memory.exists() and not memory.is_file()
    except OSError:
        return False


def refuse_a_missing_folder(memory: Path) -> None:
    """FileNotFoundError where a folder of `memory`'s does not exist, for a path the user's setting names,
    whose folders the append must not make (/nonexist/dir/ was, for a typo or another machine's path).
    Not where a file is in the way of a folder: the append names that file."""
    if (folder := missing_folder(memory)) is not None:
        raise FileNotFoundError(errno.ENOENT, f"there is no folder {folder}; make it first")


def missing_folder(memory: Path) -> Path | None:
    """The first of `memory`'s folders that does not exist, from the top; None where all do, where a file
    is in the way of one (file_in_the_way names it) or where one cannot be looked into."""
    if file_in_the_way(memory) is not None:
        return None
    for folder in reversed(memory.parents):
        try:
            if not folder.exists():
                return folder
        except PermissionError:  # a folder that cannot be looked into: the append or the read says why
            return None
    return None


def append(entry: RunEntry, memory: Path) -> None:
    """Append `entry` under the run-log section (made at the end when missing); a UsageError, the file
    untouched, when `memory` holds something other than a run log (not_a_run_log)."""
    if (blocker := file_in_the_way(memory)) is not None:  # mkdir's own error names neither the file nor why
        raise NotADirectoryError(errno.ENOTDIR, f"{blocker} is not a folder")
    memory.parent.mkdir(parents=True, exist_ok=True)
    lock = lock_path(memory)
    with FileLock(str(lock), timeout=LOCK_TIMEOUT_S), _file_itself_locked(memory):
        existing = _previous_bytes(memory)
        if (wide := _wide_encoding(existing)) is not None:  # worked on as UTF-8, written back as it was saved
            existing = _as_utf8(memory, existing, *wide)
        text = existing.decode("utf-8", errors="replace")
        if (why := _why_not_a_run_log(memory, text)) is not None:  # judged under the lock, on what is replaced
            raise UsageError(f"{memory}: {why}; the run log was not appended to it")
        if made_read_only(memory):  # also judged under the lock, on what would be replaced
            raise ReadOnlyRunLog(f"{memory} is read-only")
        start = _after_the_first_heading(existing)
        end = _log_end(existing, start) if start is not None else None
        at = end.at if end is not None else len(existing)
        chunk = ""
        if at == len(existing) and existing and not existing.endswith(b"\n"):
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
        if _uses_crlf(existing):  # a file saved with Windows line breaks keeps them: no mixed endings
            chunk = chunk.replace("\n", "\r\n")
        # A new copy moved over the old one, not an appending write: a process killed inside a write()
        # (SIGKILL, a dying machine) could leave half a line, and the file holds the user's notes too.
        updated = existing[:at] + chunk.encode() + existing[at:]
        if wide is not None:
            bom, codec = wide
            updated = bom + updated.decode("utf-8").encode(codec)
        write_bytes_atomic(memory, updated)


def _joins_an_html_block(existing: bytes, end: _LogEnd, line: bytes) -> bool:
    """Whether Markdown reads `line`, written at `end.at`, as part of an HTML block above it that a blank line
    before it would end (`<div>`, `<details>`: only a blank line ends those; a `<!-- -->` comment ends at its `-->`)."""
    if end.parsed_from is None or end.at <= end.parsed_from:
        return False
    piece = existing[end.parsed_from : end.at]
    if not piece.endswith((b"\n", b"\r")):
        piece += b"\n"
    after = _top_level_blocks(piece + line)
    if not after or after[-1].type != "html_block" or (after[-1].map or [0, 0])[1] < _line_count(piece + line):
        return False
    return _top_level_blocks(piece + b"\n" + line)[-1].type != "html_block"


def _wide_encoding(data: bytes) -> tuple[bytes, str] | None:
    """The byte order mark and codec of text saved as UTF-16 or UTF-32; None for UTF-8 (with a BOM or not)."""
    return next(((bom, codec) for bom, codec in _WIDE_ENCODINGS if data.startswith(bom)), None)


def _as_utf8(memory: Path, data: bytes, bom: bytes, codec: str) -> bytes:
    """A UTF-16/32 file's text as UTF-8, its mark dropped. Decoded strictly: the append writes the file
    back from this, so anything that did not decode would be lost; such a file is left as it is."""
    try:
        return data[len(bom):].decode(codec).encode("utf-8")
    except UnicodeError:
        raise UndecodableRunLog(f"{memory} starts with a {codec.upper()} byte order mark but is no valid"
                                f" {codec.upper()} text; it was left as it is") from None


def _decoded(data: bytes) -> str:
    """The text of a run log's bytes: UTF-8, or the UTF-16/32 its byte order mark names."""
    if (wide := _wide_encoding(data)) is None:
        return data.decode("utf-8", errors="replace")
    bom, codec = wide
    return data[len(bom):].decode(codec, errors="replace")


def file_in_the_way(memory: Path) -> Path | None:
    """The first of `memory`'s folders that is a file (NVFP4CTL_MEMORY=submission.py/MEMORY.md), or None:
    no run log can be at such a path. Folders that do not exist yet are no obstacle: the append makes them."""
    for folder in reversed(memory.parents):  # from the top: the one the user must change
        try:
            if not folder.is_dir():
                return folder if folder.exists() else None
        except OSError:  # a folder that cannot be looked into: the read or the append says why
            return None
    return None


def _previous_bytes(memory: Path) -> bytes:
    """What `memory` holds now; b"" for none and for a device or FIFO (/dev/null, /dev/stderr, a named
    pipe), which takes the new lines only: reading one blocks until its writer closes it (this very
    process, for /dev/stderr sent down a pipe) or never ends (/dev/zero). A folder still fails, saying so."""
    if memory.exists() and not memory.is_file() and not memory.is_dir():
        return b""
    return memory.read_bytes() if memory.exists() else b""


def _log_span(existing: bytes) -> tuple[int, int] | None:
    """The run-log section of `existing` as byte offsets (start, end): from just after its first heading to
    where a section of the user's below it starts (_users_section_at), else the end of the file; None
    without the heading. One rule for the append, whose line goes at `end`, and the readers, which read
    no further: a line written there is read back, and no note of the user's below it is taken for a run."""
    start = _after_the_first_heading(existing)
    if start is None:
        return None
    return start, _users_section_at(existing, start)


# Markdown is read as CommonMark (markdown-it-py): a heading in an HTML comment, a fence or indented code is
# none. Parsing a log of years of runs (tens of MB) whole takes seconds, so only pieces are parsed: the notes
# above a line that may be the run log's heading, and below it the stretches of lines between runs' lines that
# may hold a heading of the user's or open a block (_NOTABLE_LINE), each from the run's line before it. A run's
# line as nvfp4ctl writes it (_RUN_LINE: `- ` and the time, in the first column) is a list item of one line of
# text, which closes whatever block the lines before it left open but a fence or an HTML block of the top level;
# the runs' lines between two such stretches are never parsed.
_NOTABLE_LINE = re.compile(rb"\n {0,3}(?:#{1,6}(?=[ \t\r\n]|\Z)|=|```|~~~|<|-(?![ \t]*[^ \t\r\n-]))")
_RUN_LINE = re.compile(rb"\n- \d{4}-\d\d-\d\dT\d\d:\d\d")
_LONE_CR = re.compile(rb"\r(?!\n)")
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
_MAYBE_THE_HEADING = re.compile(rb"(?<![^\r\n])(?:\xef\xbb\xbf)*##")
# A notable line this close after a window's end joins it: one parse of a few more runs' lines costs less than
# a parse of its own (markdown-it's fixed cost per parse is that of about ten lines).
_JOINED_WITHIN_BYTES = 1 << 10


def _after_the_first_heading(existing: bytes) -> int | None:
    """The offset just after the line of the run log's first heading (_is_heading) in `existing` that
    Markdown reads as a heading; None without one. The first: the runs follow it, and a `## Run log` further
    down (quoted in a code block of the user's) is the user's text."""
    at = 0
    while (found := _MAYBE_THE_HEADING.search(existing, at)) is not None:
        line_start = found.start()
        line = _LINE.match(existing, line_start)
        assert line is not None  # _LINE matches any text, even none
        line_end = line.end()
        if existing[line_end : line_end + 2] == b"\r\n":
            line_end += 2
        elif line_end < len(existing):
            line_end += 1
        if _is_heading_line(existing[line_start:line_end]):
            number = len(_LINE_BREAK.findall(existing, 0, line_start))
            if any(block.map[0] == number for block in _headings(_top_level_blocks(existing[:line_end]))):
                return line_end
        at = line_end if line_end > line_start else line_start + 1
    return None


def _users_section_at(existing: bytes, start: int) -> int:
    """Where in `existing` a section of the user's below the run log's heading (whose line ends at `start`)
    begins, the new line's place: after the last line that is not blank before the first heading Markdown
    reads below the log's (`## Ideas`, `### Tuning TODO`, `Ideas` underlined with `===`, never one in a fenced
    or indented code block or an HTML comment: the runs must not land under it), or before a rule (`---`,
    `***`) that only blank lines part from that heading, the separator the user drew above it; else the end of
    the file. A `## Run log` heading again below the first keeps the log going. Judged on the bytes, which
    are kept as they are."""
    return _log_end(existing, start).at


@dataclass(frozen=True)
class _LogEnd:
    """Where the run log's section ends (_users_section_at), and where before it a piece of the file that ends
    there can be parsed from (no block is open there); None where no fence or HTML block can be open at `at`
    (below the last piece parsed, only runs' lines and lines that open no block)."""

    at: int
    parsed_from: int | None


def _log_end(existing: bytes, start: int) -> _LogEnd:
    """_users_section_at, with where a piece of the file ending there can be parsed from."""
    below = max(start - 1, 0)  # from the heading's own line break, so the first line below it is seen
    if _LONE_CR.search(existing, below) is not None:  # an old Mac editor's breaks, which the searches miss: all parsed
        window = existing[start:]
        found = _section_in_window(window, _block_tokens(window))
        return _LogEnd(start + found if found is not None else len(existing), start)
    at = below  # a line break after which no block is open
    while (notable := _NOTABLE_LINE.search(existing, at)) is not None:
        window_start = _run_line_before(existing, at, notable.start(), start)
        reach = notable.end()
        while True:
            window_end, last_run = _window_end(existing, reach)
            window = existing[window_start:window_end]
            tokens = _block_tokens(window)
            if (found := _section_in_window(window, tokens)) is not None:
                return _LogEnd(window_start + found, window_start)
            if window_end == len(existing):
                return _LogEnd(len(existing), window_start)
            if not _left_open_at_its_end(window, tokens):
                break
            # a fence or HTML block swallowed the run's line that ended the window: twice as far, so a fence
            # holding thousands of pasted runs is parsed a few times, not once for each of them
            reach = window_end + (window_end - window_start)
        at = last_run
    return _LogEnd(len(existing), None)


def _run_line_before(existing: bytes, at: int, before: int, start: int) -> int:
    """The start of the last run's line (_RUN_LINE) whose line break lies in existing[at:before]; where there is
    none, the line after `at` (or `start`, the first line below the log's heading)."""
    end = before
    while (found := existing.rfind(b"\n- ", at, end)) >= 0:
        if _RUN_LINE.match(existing, found) is not None:
            return found + 1
        end = found + 2  # "\n- " ending before this one's "- "
    return at + 1 if at >= start else start


def _window_end(existing: bytes, reach: int) -> tuple[int, int]:
    """The end of the first run's line (_RUN_LINE) starting after `reach`, and that line's own line break before
    it; where a notable line follows within _JOINED_WITHIN_BYTES, the run's line after that one instead. The end
    of the file (twice) where no run's line follows."""
    while (run := _RUN_LINE.search(existing, reach)) is not None:
        line_end = existing.find(b"\n", run.end())
        end = line_end + 1 if line_end >= 0 else len(existing)
        joined = _NOTABLE_LINE.search(existing, end - 1, min(end + _JOINED_WITHIN_BYTES, len(existing)))
        if joined is None or end == len(existing):
            return end, run.start()
        reach = joined.end()
    return len(existing), len(existing)


def _section_in_window(window: bytes, tokens: list[Token]) -> int | None:
    """_users_section_at's offset in `window`, a piece of the file that begins where no block is open, of a heading
    among its block `tokens`; None where the window has no heading of the user's. A heading in a list item (`- run`,
    a blank line, `   ### Ideas`) counts, as the user meant it; one quoted (`> ## x`) is the quote's."""
    quoted = 0
    for token in tokens:
        quoted += token.nesting if token.type in ("blockquote_open", "blockquote_close") else 0
        if token.type != "heading_open" or quoted or _is_heading_line(_line_at(window, token.map[0])):
            continue
        blocks = [block for block in tokens if block.level == 0 and block.nesting >= 0 and block.map is not None]
        first = blocks.index(token) if token.level == 0 else None
        while first and blocks[first - 1].type == "hr":  # rules only blank lines part from the heading
            first -= 1
        return _after_text_before(window, blocks[first].map[0] if first is not None else token.map[0])
    return None


def _left_open_at_its_end(window: bytes, tokens: list[Token]) -> bool:
    """Whether a fence or HTML block of the top level among `window`'s block `tokens` reaches its last line (the
    run's line that ends it, which such a block takes in: the window was cut short)."""
    lines = _line_count(window)
    return any(token.type in ("fence", "html_block") and token.level == 0 and token.map is not None
               and token.map[1] >= lines for token in tokens)


def _line_count(data: bytes) -> int:
    """How many lines Markdown reads in `data` (a last one without its line break counts)."""
    return len(_LINE_BREAK.findall(data)) + (0 if not data or data.endswith((b"\n", b"\r")) else 1)


def _after_text_before(window: bytes, line_number: int) -> int:
    """The offset in `window` just after the last line before `line_number` that is not blank; 0 for none."""
    offset, after_text = 0, 0
    for number, line in enumerate(_lines_with_breaks(window)):
        if number >= line_number:
            break
        offset += len(line)
        if line.strip():
            after_text = offset
    return after_text


def _lines_with_breaks(data: bytes) -> Iterator[bytes]:
    """data's lines as Markdown splits them (at \\r\\n, \\r, \\n), each with its break."""
    at = 0
    for found in _LINE_BREAK.finditer(data):
        yield data[at : found.end()]
        at = found.end()
    if at < len(data):
        yield data[at:]


def _line_at(data: bytes, line_number: int) -> bytes:
    return next(islice(_lines_with_breaks(data), line_number, None), b"")


def _headings(blocks: list[Token]) -> list[Token]:
    return [block for block in blocks if block.type == "heading_open"]


def _top_level_blocks(data: bytes) -> list[Token]:
    """The blocks of the top level of Markdown `data` (headings, paragraphs, lists, rules, fences, HTML blocks,
    code), in order, each with its line range (.map, lines counted from 0 at \\r\\n, \\r and \\n). A byte order
    mark starting a line is left out: an editor's, before the run log's heading, is no text."""
    return [token for token in _block_tokens(data) if token.level == 0 and token.nesting >= 0 and token.map is not None]


def _block_tokens(data: bytes) -> list[Token]:
    """markdown-it's block tokens of `data`, opening and closing ones, at every level."""
    return _markdown_parser().parse(_BOM_AT_LINE_START.sub("", data.decode("utf-8", errors="replace")))


_BOM_AT_LINE_START = re.compile("(?<![^\r\n])\ufeff+")


@cache
def _markdown_parser() -> MarkdownIt:
    """CommonMark's block structure only: the text inside blocks is never parsed (the log's lines are many)."""
    from markdown_it import MarkdownIt  # here: only the run log's readers and the append need it

    return MarkdownIt("commonmark").disable("inline")


def _is_heading_line(line: bytes) -> bool:
    """_is_heading of a line of bytes, decoded only where it can be the heading: appends read big logs."""
    return line.lstrip(b"\xef\xbb\xbf").startswith(b"##") and _is_heading(line.decode("utf-8", errors="replace"))


def _text_follows(existing: bytes, at: int) -> bool:
    """Whether the line starting at `at` in `existing` is there and not blank."""
    line = _LINE.match(existing, at)
    return line is not None and bool(line[0].strip())


_LINE = re.compile(rb"[^\r\n]*")


def _uses_crlf(existing: bytes) -> bool:
    """Whether the file's first line ends with \\r\\n (an editor that writes them writes them all)."""
    end = existing.find(b"\n")
    return end > 0 and existing[end - 1 : end] == b"\r"


def _is_heading(line: str) -> bool:
    """Whether `line` is the run log's heading, as written or typed by hand (`## Run Log`, `## Run log
    (nvfp4ctl)`): the whole line, since notes may quote it inside one. A byte order mark before it (an
    editor's UTF-8 with BOM, where the heading is the file's first line) counts as nothing, or a second
    section would be made and the runs above it no longer read."""
    line = line.lstrip("\ufeff")
    return line.startswith("##") and _HEADING_LINE.fullmatch(line.rstrip()) is not None


@dataclass
class RunLogBytes:
    """A run log read once for its readers, as UTF-8 (a file saved as UTF-16 or UTF-32 converted: the section
    is found in UTF-8, as the append finds it), and its section (_log_span), found once: `log` reads the runs,
    then the section of the user's below them, from the same bytes."""

    data: bytes

    @cached_property
    def span(self) -> tuple[int, int] | None:
        return _log_span(self.data)


def read_log(memory: Path) -> RunLogBytes:
    """`memory` read once for the readers (_previous_bytes: nothing for a file not there yet, a device or a FIFO);
    OSError for a folder."""
    data = _previous_bytes(memory)
    if _wide_encoding(data) is not None:
        data = _decoded(data).encode("utf-8")
    return RunLogBytes(data)


def _section_text(log: RunLogBytes) -> tuple[str, int] | None:
    """The text of the run-log section (_log_span) of a run log, and the number of the file's line it starts on
    (as an editor numbers them: from 1, at each \\n); None without the heading."""
    if (span := log.span) is None:
        return None
    start, end = span
    return log.data[start:end].decode("utf-8", errors="replace"), log.data.count(b"\n", 0, start) + 1


def read(memory: Path, last: int | None = None) -> list[RunEntry]:
    """The run log's entries, oldest first: those of its section (_log_span); the `last` most recent only,
    parsed from the end of the section (a log of years of runs is tens of MB, and `log -n 2` needs two lines)."""
    if last:
        return _read_last(memory, last)
    if (section := _section_text(read_log(memory))) is None:
        return []
    return [e for e in (RunEntry.from_line(line) for line in section[0].splitlines()) if e is not None]


@dataclass(frozen=True)
class NumberedRuns:
    """The entries read() gives, each with its line in the file, and the lines that were meant as runs
    but do not read as one (a cell lost to a hand edit): those `log` says it left out. Lines are numbered
    as an editor numbers them (from 1, at each \\n)."""

    entries: list[RunEntry]
    lines: list[int]
    unread: list[int]


def read_numbered(memory: Path, last: int | None = None) -> NumberedRuns:
    """read(memory, last) with line numbers; `unread`: the lines meant as runs among those read, which
    for the `last` entries are the lines after the oldest of them (any before it would not have been
    shown either). Read from the end as read() is; the whole section only where such a line is there."""
    return numbered_runs_in(read_log(memory), last)


def numbered_runs_in(log: RunLogBytes, last: int | None = None) -> NumberedRuns:
    """read_numbered of a run log already read (read_log)."""
    if last:
        passed_over: list[str] = []
        with closing(newest_first_in(log, passed_over)) as newest:
            entries = list(islice(newest, last))[::-1]
        if not passed_over:  # the usual case: no line numbers needed but the entries', which the table never shows
            return NumberedRuns(entries, [], [])
    whole = _numbered_runs(log)
    if not last or len(whole.entries) < last:  # all shown: a line meant as a run anywhere would have been
        return whole
    first_shown = whole.lines[-last]
    return NumberedRuns(whole.entries[-last:], whole.lines[-last:], [n for n in whole.unread if n > first_shown])


def _numbered_runs(log: RunLogBytes) -> NumberedRuns:
    entries: list[RunEntry] = []
    lines: list[int] = []
    unread: list[int] = []
    if (section := _section_text(log)) is None:
        return NumberedRuns(entries, lines, unread)
    text, first = section
    for number, piece in enumerate(text.split("\n"), first):
        for line in piece.splitlines():  # as read() splits them: \r, \u2028 ... break a line too
            if (entry := RunEntry.from_line(line)) is not None:
                entries.append(entry)
                lines.append(number)
            elif looks_like_a_run(line):
                unread.append(number)
    return NumberedRuns(entries, lines, unread)


@dataclass(frozen=True)
class RunsBelowTheLog:
    """Runs' lines in the section of the user's that follows the run log, where older versions appended them
    (under a heading the user wrote after the log): no reader counts them, as the log ends at that heading.
    Lines are numbered as an editor numbers them (from 1, at each \\n)."""

    heading: str  # the heading's first line, as written (`### B200 session`)
    heading_line: int
    lines: list[int]


def runs_below_the_log(memory: Path) -> RunsBelowTheLog | None:
    """The list items of the user's section after the run log (_log_span's end) that read as runs, and that
    section's heading; None where there is no such section or no run in it. Only the section is parsed, as
    CommonMark reads it: a run's line quoted in a fence, an indented code block or an HTML block is no list
    item. `log` alone asks (a note of what it does not count), never the append or bench's comparison."""
    try:
        log = read_log(memory)
    except OSError:  # a folder: the read before this said so
        return None
    return runs_below_the_log_in(log)


def runs_below_the_log_in(log: RunLogBytes) -> RunsBelowTheLog | None:
    """runs_below_the_log of a run log already read (read_log)."""
    data = log.data
    if (span := log.span) is None or span[1] >= len(data):
        return None
    end = span[1]
    section = data[end:]
    pieces = list(_lines_with_breaks(section))
    numbers: list[int] = []  # each Markdown line's number in the file (a lone \r starts no line in an editor)
    number = data.count(b"\n", 0, end) + 1
    for piece in pieces:
        numbers.append(number)
        number += piece.count(b"\n")
    tokens = _block_tokens(section)
    heading = next((token for token in tokens if token.type == "heading_open" and token.map is not None
                    and not _quoted(tokens, token) and not _is_heading_line(pieces[token.map[0]])), None)
    runs = [numbers[token.map[0]] for token in tokens
            if token.type == "list_item_open" and token.map is not None and token.map[0] < len(pieces)
            and RunEntry.from_line(_text_of(pieces[token.map[0]])) is not None]
    if heading is None or heading.map is None or not runs:
        return None
    return RunsBelowTheLog(_text_of(pieces[heading.map[0]]).strip(), numbers[heading.map[0]], runs)


def _quoted(tokens: list[Token], token: Token) -> bool:
    """Whether `token` lies inside a block quote (`> ## x` is the quote's heading, no section's)."""
    depth = 0
    for each in tokens:
        if each is token:
            return depth > 0
        if each.type in ("blockquote_open", "blockquote_close"):
            depth += each.nesting
    return False


def _text_of(piece: bytes) -> str:
    """A line of bytes as text, its line break left out."""
    return piece.decode("utf-8", errors="replace").rstrip("\r\n")


# A bullet meant as a run's line: it starts with the time as logged, or its second cell is a backquoted
# nvfp4ctl command. A note of the user's (`- try 2-CTA`, `- ran `nvfp4ctl bench` twice`) is neither.
_RUN_LIKE = re.compile(r"- (?:\d{4}-\d\d-\d\dT\d\d:\d\d|[^·]*· `nvfp4ctl\b)")


def looks_like_a_run(line: str) -> bool:
    """Whether `line`, which RunEntry.from_line does not read, was meant as a run's line (a hand edit
    that lost or added a cell): `log` says it left it out, where a note of the user's is passed silently."""
    return _RUN_LIKE.match(line) is not None


_BLOCK_BYTES = 1 << 16


def _read_last(memory: Path, count: int) -> list[RunEntry]:
    """read(memory)[-count:], from the end back to the last heading or the `count`th entry."""
    return list(islice(newest_first(memory), count))[::-1]


def newest_first(memory: Path, unread: list[str] | None = None) -> Generator[RunEntry, None, None]:
    """read(memory) newest first, parsed from the end of the run-log section only as far as the caller goes
    (a log of years of runs is tens of MB; bench's comparison stops at the previous bench of its target).
    The file is read whole, once, for where its section ends (_log_span, which the append also reads
    it for): the runs are the section's, never a line of a section of the user's below it. `unread`
    receives the lines passed over that were meant as runs but do not read as one (looks_like_a_run)."""
    yield from newest_first_in(read_log(memory), unread)  # a folder fails here, saying so


def newest_first_in(log: RunLogBytes, unread: list[str] | None = None) -> Generator[RunEntry, None, None]:
    """newest_first of a run log already read (read_log)."""
    if (span := log.span) is None:
        return
    for line in _lines_from_the_end(log.data, *span):
        if (entry := RunEntry.from_line(line)) is not None:
            yield entry
        elif unread is not None and looks_like_a_run(line):
            unread.append(line)


def _lines_from_the_end(data: bytes, start: int, end: int) -> Iterator[str]:
    """The lines of data[start:end], last first, as read() splits them: the bytes are decoded from just
    after a b"\n" (never inside a UTF-8 character), so every piece decodes as it does within the whole."""
    later: list[bytes] = []  # blocks of a line whose start lies further back, the latest first
    while end > start:
        block_start = max(start, end - _BLOCK_BYTES)
        block = data[block_start:end]
        end = block_start
        cut = block.find(b"\n") + 1 if block_start > start else 0
        if block_start > start and cut == 0:  # one long line: its start is further back still (joined once, when found)
            later.append(block)
            continue
        piece = block[cut:] + b"".join(reversed(later))
        later = [block[:cut]]
        yield from reversed(piece.decode("utf-8", errors="replace").splitlines())
