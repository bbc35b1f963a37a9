"""A checked file: its text exactly as the server would see it, and offset <-> (line, col) maps.

Lines end at \\n, \\r\\n or \\r (universal newlines, as editors count them); columns are 1-based
characters. Reading never imports or executes anything.
"""

from __future__ import annotations

import bisect
import errno
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from nvfp4ctl.errors import UsageError, os_reason
from nvfp4ctl.not_text import NUL_BYTE, undecodable_byte

PYTHON_SUFFIXES = frozenset({".py"})
CPP_SUFFIXES = frozenset({".cu", ".cuh", ".cpp", ".h", ".hpp", ".cc", ".cxx", ".hh"})
CHECKED_SUFFIXES = PYTHON_SUFFIXES | CPP_SUFFIXES
SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".hg", ".venv", "venv", "node_modules", "build", ".pytest_cache"})
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
BOM = "\ufeff"
# What `nvcc -keep` leaves beside a kernel (x.cudafe1.cpp, x.cudafe1.stub.c, x.cpp1.ii, x.ptx,
# x.fatbin.c, x.module_id, x.sm_100a.cubin): the compiler's rewrite of a source with every header
# inlined, 1-28 MB, neither the user's code nor what the leaderboard sees (only submission.py).
_COMPILER_OUTPUT = re.compile(
    r"\.(?:cudafe\d+\.\w+(?:\.c)?|cpp\d+\.ii|ii|ptx|cubin|fatbin(?:\.c)?|module_id|stub\.c|reg\.c)$", re.IGNORECASE)


@dataclass
class SourceFile:
    path: Path
    text: str
    # Where the file stops being UTF-8: the offset of its first such byte, which the text (latin-1
    # then, a character a byte) holds at that offset. None for UTF-8.
    undecodable_at: int | None = None
    line_starts: list[int] = field(init=False)
    byte_order_mark: bool = field(init=False)  # the text began with one: python then takes no other coding

    def __post_init__(self) -> None:
        # A UTF-8 byte order mark is dropped, as python drops it: ast.parse of the str refused the
        # character (NV001 where `python submission.py` runs), and editors count columns without it.
        self.byte_order_mark = self.text.startswith(BOM)
        self.text = self.text.removeprefix(BOM)
        self.line_starts = [0] + [match.end() for match in _LINE_BREAK.finditer(self.text)]

    @property
    def kind(self) -> str:
        return kind_of(self.path)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, col) of a character offset."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def offset(self, line: int, col: int) -> int:
        """Character offset of a 1-based line and 0-based column (Python's ast convention)."""
        return self.line_starts[line - 1] + col

    def ast_offset(self, line: int, byte_col: int) -> int:
        """Character offset of an ast node position (1-based line, UTF-8 byte column)."""
        start = self.line_starts[line - 1] if line - 1 < len(self.line_starts) else len(self.text)
        prefix = self.text[start : start + byte_col]
        if prefix.isascii():
            return start + byte_col
        return start + len(prefix.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def not_text(self) -> tuple[int, str] | None:
        """(offset, why) where the file is not UTF-8 text or holds a NUL byte: the leaderboard reads a
        submission as text, and lint's rules cannot judge bytes. None for text."""
        if self.undecodable_at is not None:
            return self.undecodable_at, undecodable_byte(ord(self.text[self.undecodable_at]))
        nul = self.text.find("\x00")
        return (nul, NUL_BYTE) if nul >= 0 else None

    def line_text(self, line: int) -> str:
        if not 1 <= line <= len(self.line_starts):
            return ""
        start = self.line_starts[line - 1]
        end = self.line_starts[line] if line < len(self.line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")


def read_source(path: Path) -> SourceFile:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {path}: {os_reason(error, path)}") from None
    try:
        return SourceFile(path, data.decode("utf-8"))
    except UnicodeDecodeError as error:
        # Still check the word rule on something: latin-1 maps every byte to one character.
        return SourceFile(path, data.decode("latin-1"), undecodable_at=error.start)


def kind_of(path: Path) -> str:
    """"python", "cpp", or "text" for any other file (named on the command line: only the word rule)."""
    suffix = path.suffix.lower()
    if suffix in PYTHON_SUFFIXES:
        return "python"
    if suffix in CPP_SUFFIXES:
        return "cpp"
    return "text"


def is_compiler_output(path: Path) -> bool:
    """Is this file's name one nvcc -keep gives its intermediates (x.cudafe1.cpp, x.cpp1.ii, x.ptx)?"""
    return _COMPILER_OUTPUT.search(path.name) is not None


def discover(paths: list[Path], broken: list[Path] | None = None,
             compiler_outputs: list[Path] | None = None) -> list[Path]:
    """Files to check: named files as given (any type), folders searched for checked suffixes.

    A named path that does not exist is a usage error; a broken link met while walking a folder is
    only added to `broken` (an editor's or a build's leftover must not stop the whole run), and a
    compiler intermediate (is_compiler_output) found there only to `compiler_outputs`."""
    found: list[Path] = []
    seen: dict[Path, int] = {}  # resolved file -> its place in found
    walked_links: set[Path] = set()  # resolved files first met through a link while walking
    for path in paths:
        mode = entry_mode(path)
        if mode is None:
            if path.is_symlink():
                raise UsageError(f"{path}: broken link (to {link_target(path)})")
            raise UsageError(f"no such file or folder: {path}")
        named = not stat.S_ISDIR(mode)
        if named and not stat.S_ISREG(mode):
            raise UsageError(f"{path} is not a regular file ({_kind(mode)}): lint reads source files")
        candidates = [path] if named else sorted(_walk(path, broken if broken is not None else [], compiler_outputs))
        for candidate in candidates:
            key = candidate.resolve()
            if key not in seen:
                seen[key] = len(found)
                found.append(candidate)
                if not named and candidate.is_symlink():
                    walked_links.add(key)
            elif key in walked_links and not candidate.is_symlink():
                # The same file under its own name and a link's: report it under its own name.
                found[seen[key]] = candidate
                walked_links.discard(key)
    return found


def _walk(folder: Path, broken: list[Path], compiler_outputs: list[Path] | None = None) -> list[Path]:
    """Checked files under folder. Linked folders are walked after every real one, so a file is
    found under its own folder's name, not under a link that happens to sort first."""
    compiler_outputs = [] if compiler_outputs is None else compiler_outputs
    seen: set[Path] = set()
    linked: list[Path] = []
    files = _walk_real(folder, broken, compiler_outputs, seen, linked)
    while linked:
        files.extend(_walk_real(linked.pop(0), broken, compiler_outputs, seen, linked))
    return files


def _walk_real(folder: Path, broken: list[Path], compiler_outputs: list[Path], seen: set[Path],
               linked: list[Path]) -> list[Path]:
    real = folder.resolve()
    if real in seen:  # a linked folder met again (a link to a parent would loop forever)
        return []
    seen.add(real)
    files: list[Path] = []
    try:
        entries = sorted(folder.iterdir())
    except OSError as error:
        raise UsageError(f"cannot read folder {folder}: {os_reason(error, folder)}") from None
    for entry in entries:
        if entry.name.startswith("."):
            continue  # hidden files and folders, editor lock files (.#name.cu)
        mode = entry_mode(entry)
        if mode is not None and stat.S_ISDIR(mode):
            if entry.name in SKIPPED_DIRS:
                continue
            if entry.is_symlink():
                linked.append(entry)
            else:
                files.extend(_walk_real(entry, broken, compiler_outputs, seen, linked))
        elif entry.suffix.lower() in CHECKED_SUFFIXES:
            if is_compiler_output(entry):
                compiler_outputs.append(entry)
            elif mode is None:  # a link to nothing, or gone since the folder was listed
                if entry.is_symlink():
                    broken.append(entry)
            elif not stat.S_ISREG(mode):
                raise UsageError(f"{entry} is not a regular file ({_kind(mode)}) in a folder lint reads: lint reads"
                                 " source files (move it out, or name the files to lint)")
            else:
                files.append(entry)
    return files


def entry_mode(path: Path) -> int | None:
    """The st_mode of what `path` is (through links); None where there is nothing (missing, a broken link, a
    link loop). One that cannot be looked at (a link into /proc/1/cwd, a folder without x permission) is one
    UsageError, named on the command line, in task.yml's lint.paths or met in a folder alike."""
    try:
        return path.stat().st_mode
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return None
        raise UsageError(f"cannot read {path}: {os_reason(error, path)}") from None
    except ValueError:  # a NUL in the name: no such file
        return None


def _kind(mode: int) -> str:
    """What a file that is not a regular one is: reading a FIFO waits for a writer, a device may never end."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "no file"


def link_target(link: Path) -> str:
    """Where a (possibly broken) link points, as written in the link."""
    try:
        return str(link.readlink())
    except OSError:
        return "?"
