"""A submission.py's text, read the one way every command reads it: UTF-8, as the leaderboard reads a
submission, so check and build refuse a file that is not in the same line."""

from __future__ import annotations

import codecs
from pathlib import Path

from nvfp4ctl.errors import UnloadableSubmission, os_reason


def read_submission(path: Path, shown: str) -> str:
    """The text of the submission at `path`; `shown` is the file as the user's messages name it. A file
    that cannot be read, or is not UTF-8, is one UnloadableSubmission line (exit 2): FILE:LINE: not UTF-8
    text (why at byte N), never Python's "(unicode error) 'utf-8' codec can't decode ...". A UTF-8 byte
    order mark is dropped, as Python drops it (kept, ast.parse refuses the character)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UnloadableSubmission(f"cannot read {shown}: {os_reason(error, path)}") from None
    body = data.removeprefix(codecs.BOM_UTF8)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        at = error.start + len(data) - len(body)  # a byte of the file, as an editor's hex view counts it
        line = data.count(b"\n", 0, at) + 1
        raise UnloadableSubmission(f"{shown}:{line}: not UTF-8 text ({error.reason} at byte {at})") from None
