"""A submission.py's text, read the one way every command reads it: UTF-8, as the leaderboard reads a
submission, so check and build refuse a file that is not in the same line."""

from __future__ import annotations

import ast
import codecs
import io
import re
import tokenize
from pathlib import Path

from nvfp4ctl.errors import UnloadableSubmission, os_reason


def read_submission(path: Path, shown: str) -> str:
    """The text of the submission at `path`; `shown` is the file as the user's messages name it. A file
    that cannot be read, or is not UTF-8, is one UnloadableSubmission line (exit 2): FILE:LINE: not UTF-8
    text (why at byte N), never Python's "(unicode error) 'utf-8' codec can't decode ...". A UTF-8 byte
    order mark is dropped, as Python drops it (kept, ast.parse refuses the character)."""
    from nvfp4ctl.build.read_once import source_bytes

    try:
        data = source_bytes(path)  # within build.read_once.reading_once, the bytes the whole command reads
    except OSError as error:
        raise UnloadableSubmission(f"cannot read {shown}: {os_reason(error, path)}") from None
    _refuse_a_coding_line_python_refuses(data, shown)
    body = data.removeprefix(codecs.BOM_UTF8)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        at = error.start + len(data) - len(body)  # a byte of the file, as an editor's hex view counts it
        line = data.count(b"\n", 0, at) + 1
        raise UnloadableSubmission(f"{shown}:{line}: not UTF-8 text ({error.reason} at byte {at})") from None


# PEP 263's declaration, in line 1 or 2: what tokenize.detect_encoding reads
_CODING_LINE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def _refuse_a_coding_line_python_refuses(data: bytes, shown: str) -> None:
    """A coding line Python refuses stops `python submission.py` before any line runs, whatever its bytes
    are: the same line as a syntax error, FILE:LINE: not valid Python (unknown encoding: x), before a GPU
    is looked for."""
    problem = coding_line_problem(data)
    if problem is not None:
        line, reason = problem
        raise UnloadableSubmission(f"{shown}:{line}: not valid Python ({reason})") from None


def coding_line_problem(data: bytes) -> tuple[int, str] | None:
    """(line, Python's reason) where a file's coding line names an encoding Python refuses (an unknown
    one, or another than UTF-8 after a byte order mark); None otherwise. Bytes that are not UTF-8 with no
    such line are not a coding line's fault: the UTF-8 reader names their place."""
    first_lines = data.removeprefix(codecs.BOM_UTF8).split(b"\n", 2)[:2]  # python reads its coding in these two
    found = [(number, match) for number, text in enumerate(first_lines, 1) if (match := _CODING_LINE.match(text))]
    if not found:
        return None
    line = found[0][0]
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        if not error.msg.startswith(("unknown encoding", "encoding problem")):
            return None
        if data.startswith(codecs.BOM_UTF8):  # tokenize says "encoding problem: utf-8"; python names both
            return line, f"encoding problem: {found[0][1].group(1).decode('ascii', 'replace')} with BOM"
        return line, error.msg
    if encoding in ("utf-8", "utf-8-sig"):
        return None
    # a codec tokenize finds that python still refuses: no text encoding (rot13, hex), or one that cannot
    # read the file (utf-16): python's own verdict, from a parse that stops at the first such problem
    try:
        compile(data, "<submission>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        if any(words in error.msg for words in ("codec", "text encoding", "encoding problem")):
            return line, error.msg.split(";")[0]
    return None
