"""A file that is not UTF-8 text, said in one wording wherever it is found: lint's NV004 and build's warning
(the leaderboard reads a submission as text; nvcc takes a source's bytes as they are)."""

from __future__ import annotations

import re
from pathlib import Path

from nvfp4ctl.errors import UsageError

NUL_BYTE = "a NUL byte here"
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")  # lines as lint counts them (universal newlines)


def undecodable_byte(byte: int) -> str:
    return f"byte 0x{byte:02x} here is not UTF-8"


def not_text_message(name: str, why: str) -> str:
    """"k.cu is not text (byte 0xe9 here is not UTF-8): the leaderboard reads a submission as UTF-8 text"."""
    return f"{name} is not text ({why}): the leaderboard reads a submission as UTF-8 text"


def utf8_text(path: Path, why: str) -> str:
    """The text of `path` as UTF-8, a byte order mark and line ends kept as they are: a file nvfp4ctl reads
    as text (and may write back) that is another encoding (a Latin-1 `é` in a comment) is one UsageError,
    `FILE:LINE: not UTF-8 (byte 0xe9); WHY`, not Python's UnicodeDecodeError. An OSError passes through
    (each caller words a file it cannot read)."""
    return utf8_decoded(path.read_bytes(), path, why)


def utf8_decoded(data: bytes, path: Path, why: str) -> str:
    """utf8_text of the bytes `data` already read of `path`."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise UsageError(f"{path}:{line}: not UTF-8 (byte 0x{data[error.start]:02x}); {why}") from None


def not_text_place(data: bytes) -> tuple[int, str] | None:
    """(line, why) of the first byte where `data` stops being text as lint reads it (not UTF-8, or a NUL
    byte; a UTF-8 byte order mark is text), None for text."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        offset, why = error.start, undecodable_byte(data[error.start])
    else:
        offset = data.find(b"\x00")
        if offset < 0:
            return None
        why = NUL_BYTE
    return len(_LINE_BREAK.findall(data, 0, offset)) + 1, why


def packed_or_wide(head: bytes) -> str | None:
    """What a file's first bytes say it is where it is no plain text that lines can be read from: gzip's
    magic (1f 8b), or UTF-16's byte order mark or NUL bytes (every other byte of ASCII text); None else."""
    if head.startswith(b"\x1f\x8b"):
        return "it is gzip-compressed (its bytes start 1f 8b): zcat it into a plain file first"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
        mark = "its bytes start with UTF-16's byte order mark" if head[:2] in (b"\xff\xfe", b"\xfe\xff") \
            else "it has NUL bytes"
        return f"it looks like UTF-16 text ({mark}): convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)"
    return None
