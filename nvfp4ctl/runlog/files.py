"""MEMORY.md as a file: the encodings it may be saved in, the folders it needs, and what is no file to read."""

from __future__ import annotations

import codecs
import errno
import stat
from pathlib import Path

MARKDOWN_SUFFIXES = (".md", ".markdown")


class UndecodableRunLog(Exception):
    """MEMORY.md is no valid text in the encoding its byte order mark names (UTF-16, UTF-32), in UTF-8 where
    it has no mark, or in UTF-16 where NUL bytes tell one saved without a mark: the line is not written (a
    copy made from what decodes would lose the rest, and UTF-8 lines appended to Latin-1 make a file of two
    encodings); the command warns with this message and ends as it would have."""


# The byte order marks of the wider encodings an editor may save MEMORY.md in (Windows Notepad's
# "Unicode" is UTF-16 LE); UTF-32 LE's first, as it starts with UTF-16 LE's. Any other file is UTF-8.
_WIDE_ENCODINGS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
                   (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


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


def _wide_encoding(data: bytes) -> tuple[bytes, str] | None:
    """The byte order mark and codec of text saved as UTF-16 or UTF-32; None for UTF-8 (with a BOM or not).
    UTF-16 saved without a mark has b"" for it, told by its NUL bytes (no Markdown in UTF-8 holds one): the
    high bytes of its ASCII characters, every other byte, odd ones for little-endian."""
    if (marked := next(((bom, codec) for bom, codec in _WIDE_ENCODINGS if data.startswith(bom)), None)) is not None:
        return marked
    start = data[:_SNIFFED_BYTES]
    if b"\0" not in start:
        return None
    return b"", "utf-16-le" if start[1::2].count(0) > start[0::2].count(0) else "utf-16-be"


_SNIFFED_BYTES = 1 << 12


def _as_utf8(memory: Path, data: bytes, bom: bytes, codec: str) -> bytes:
    """A UTF-16/32 file's text as UTF-8, its mark dropped. Decoded strictly: the append writes the file
    back from this, so anything that did not decode would be lost; such a file is left as it is. Without
    a mark, a NUL character decoded means the guess was wrong (UTF-32, or bytes that are no text)."""
    try:
        text = data[len(bom):].decode(codec)
    except UnicodeError:
        text = None
    if text is None or (not bom and "\0" in text):
        name = codec.upper()
        told = f"starts with a {name} byte order mark" if bom else f"has no byte order mark and reads as {name}"
        raise UndecodableRunLog(f"{memory} {told} but is no valid {name} text; it was left as it is") from None
    return text.encode("utf-8")


def _strict_utf8(memory: Path, data: bytes) -> str:
    """A file with no byte order mark as the UTF-8 text it must be. Strictly: one in another encoding
    (Latin-1's `caf\\xe9`) would get UTF-8 lines appended, a file of two encodings; such a file is left as it is."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UndecodableRunLog(f"{memory} has no byte order mark naming another encoding but is no valid UTF-8"
                                " text; it was left as it is") from None


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
    process, for /dev/stderr sent down a pipe) or never ends (/dev/zero). A folder still fails, saying so, and
    so does a link in a loop, which Path.exists() calls absent: `log` read it as "no runs logged yet"."""
    try:
        mode = memory.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):  # not there yet, a link to a file not there yet, a file in the way
        return b""
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        return b""
    return memory.read_bytes()
