"""MEMORY.md as a file: the encodings it may be saved in, the folders it needs, and what is no file to read."""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from pathlib import Path

from nvfp4ctl.atomic_file import SOCKET_REASON

MARKDOWN_SUFFIXES = (".md", ".markdown")


class UndecodableRunLog(Exception):
    """MEMORY.md is no valid text in the encoding its byte order mark names (UTF-16, UTF-32), in UTF-8 where
    it has no mark, or in the UTF-16 a file with no mark was told to be (_wide_encoding): the line is not
    written (a copy made from what decodes would lose the rest, and UTF-8 lines appended to Latin-1 make a
    file of two encodings); the command warns with this message and ends as it would have."""


# The byte order marks of the wider encodings an editor may save MEMORY.md in (Windows Notepad's
# "Unicode" is UTF-16 LE); UTF-32 LE's first, as it starts with UTF-16 LE's. Any other file is UTF-8.
_WIDE_ENCODINGS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
                   (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def is_null_device(memory: Path) -> bool:
    """Whether `memory` is the null device however it is spelt (/dev/null, /dev/../dev/null, a link to it):
    no run log kept (NVFP4CTL_MEMORY=/dev/null in CI). Told by the file itself, not by its spelling."""
    try:
        return os.path.samefile(memory, os.devnull)
    except OSError:  # not there (a new MEMORY.md), or not to be looked at: not the null device
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
    UTF-16 saved without a mark has b"" for it. Such a file that is valid UTF-8 too (ASCII and NUL bytes are)
    is UTF-16 only where NUL bytes sit beside most of its ASCII characters (_reads_as_utf16): a stray NUL in
    UTF-8 notes leaves them UTF-8. One that is no valid UTF-8 (notes in CJK, where a code unit's two bytes are
    often both printable) is UTF-16 of the byte order its line feeds or else its NUL bytes tell
    (_unmarked_utf16_order); with no order told, None, and _strict_utf8 refuses it. _as_utf8 holds the whole
    file to the guess."""
    if (marked := next(((bom, codec) for bom, codec in _WIDE_ENCODINGS if data.startswith(bom)), None)) is not None:
        return marked
    if _is_utf8(data):
        start = data[:_SNIFFED_BYTES]
        if b"\0" not in start:
            return None
        return next(((b"", codec) for codec in ("utf-16-le", "utf-16-be") if _reads_as_utf16(start, codec)), None)
    return (b"", codec) if (codec := _unmarked_utf16_order(data)) is not None else None


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_SNIFFED_BYTES = 1 << 12
_TEXT_BYTES = frozenset((*range(0x20, 0x7F), 0x09, 0x0A, 0x0D))  # printable ASCII and the line's own controls


def _reads_as_utf16(data: bytes, codec: str) -> bool:
    """Whether `data` reads as UTF-16 of `codec`'s byte order: most of its two-byte units whose low byte is an
    ASCII character have a NUL beside it (UTF-16's ASCII), not another ASCII character (two of UTF-8's). So a
    NUL that slipped into UTF-8 notes leaves them UTF-8 (an append of UTF-16 made a file of two encodings), and
    a character of another script (Cyrillic's U+04xx, Latin-1's é) counts for neither. Only for bytes that are
    valid UTF-8: a CJK character's two bytes are often both printable (U+5173 is `s` and `Q`)."""
    low = 0 if codec.endswith("le") else 1
    ascii_characters = ascii_pairs = 0
    for at in range(0, len(data) - 1, 2):
        if data[at + low] not in _TEXT_BYTES:
            continue
        high = data[at + 1 - low]
        if high == 0:
            ascii_characters += 1
        elif high in _TEXT_BYTES:
            ascii_pairs += 1
    return ascii_characters > ascii_pairs


def _unmarked_utf16_order(data: bytes) -> str | None:
    """The UTF-16 codec whose byte order `data`'s line feeds tell (a unit 0A 00 is LE's, 00 0A BE's: the other
    reading is U+0A00, no character), else its NUL bytes (ASCII's high byte: at odd offsets in LE); None where
    neither tells one (Latin-1 has no NUL byte)."""
    le_feeds, be_feeds = _line_feeds(data, "utf-16-le"), _line_feeds(data, "utf-16-be")
    if le_feeds != be_feeds:
        return "utf-16-le" if le_feeds > be_feeds else "utf-16-be"
    at_odd, at_even = data[1::2].count(0), data[0::2].count(0)
    if at_odd != at_even:
        return "utf-16-le" if at_odd > at_even else "utf-16-be"
    return None


def _line_feeds(data: bytes, codec: str) -> int:
    """How many of `data`'s two-byte units are a line feed in `codec`'s byte order."""
    unit = "\n".encode(codec)
    return sum(1 for found in re.finditer(re.escape(unit), data) if found.start() % 2 == 0)


def _as_utf8(memory: Path, data: bytes, bom: bytes, codec: str) -> bytes:
    """A UTF-16/32 file's text as UTF-8, its mark dropped. Decoded strictly (an even length, no lone
    surrogate): the append writes the file back from this, so anything that did not decode would be lost;
    such a file is left as it is. Without a mark, the whole file must bear out the guess _wide_encoding
    made: no NUL character decoded (UTF-32, or bytes that are no text), no line feed of the other byte order
    (lines appended in it), and where NULs beside ASCII told it (bytes that are valid UTF-8 too), its NUL
    bytes at the one parity all through (_one_parity)."""
    try:
        text = data[len(bom):].decode(codec)
    except UnicodeError:
        text = None
    if text is None or (not bom and not _bears_out_unmarked_utf16(data, text, codec)):
        name = codec.upper()
        told = f"starts with a {name} byte order mark" if bom else f"has no byte order mark and reads as {name}"
        raise UndecodableRunLog(f"{memory} {told} but is no valid {name} text; it was left as it is") from None
    return text.encode("utf-8")


def _bears_out_unmarked_utf16(data: bytes, text: str, codec: str) -> bool:
    """Whether `data`, decoded strictly to `text`, is UTF-16 of `codec`'s byte order all through (_as_utf8)."""
    other = "utf-16-be" if codec.endswith("le") else "utf-16-le"
    if "\0" in text or _line_feeds(data, other):
        return False
    return not _is_utf8(data) or _one_parity(data, codec)


# In UTF-16 the NUL bytes of one parity are its ASCII characters' high bytes; those of the other, the low bytes
# of the few characters such as U+3000 and U+4E00. More of those than a quarter of the first: pieces of either
# byte order put together (notes in UTF-8 or UTF-16 of one order, lines appended in the other). Held only to
# files that are valid UTF-8: in CJK notes with few ASCII characters, U+4E00 (一) alone may outnumber them.
_OTHER_PARITY_SHARE = 4


def _one_parity(data: bytes, codec: str) -> bool:
    """Whether `data`'s NUL bytes lie at the high bytes of `codec`'s units, as UTF-16's of one byte order do."""
    high = 1 if codec.endswith("le") else 0
    ours, others = data[high::2].count(0), data[1 - high :: 2].count(0)
    return others * _OTHER_PARITY_SHARE <= ours


def _strict_utf8(memory: Path, data: bytes) -> str:
    """A file with no byte order mark as the UTF-8 text it must be. Strictly: one in another encoding
    (Latin-1's `caf\\xe9`) would get UTF-8 lines appended, a file of two encodings; such a file is left as it is."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UndecodableRunLog(f"{memory} has no byte order mark naming another encoding but is no valid UTF-8"
                                " text; it was left as it is") from None


def _decoded(data: bytes) -> str:
    """The text of a run log's bytes: UTF-8, or the UTF-16/32 its byte order mark names or _wide_encoding
    tells without one."""
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
    if device_or_fifo_mode(mode):
        return b""
    return memory.read_bytes()


def unreadable_kind(memory: Path) -> str | None:
    """Why `memory` is no run log to read, where it is a Unix socket ("not a regular file but a socket, ...");
    None for anything else. A device or a FIFO is read as holding no runs (it takes new lines only), but a
    socket takes no lines either: `log` read it as "no runs logged yet", as if the file were empty. The
    readers of the append (bench's previous run) still take it as holding none, so the run's one warning is
    the append's."""
    try:
        mode = memory.stat().st_mode
    except (OSError, ValueError):  # not there, or not to be looked at: the read says why
        return None
    return f"not a regular file but {SOCKET_REASON}" if stat.S_ISSOCK(mode) else None


def device_or_fifo_mode(mode: int) -> bool:
    """Whether a st_mode is neither a file nor a folder (a device, a FIFO, a socket): a run log there takes
    new lines only, with no lines of its own to read or keep whole."""
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)
