"""The files one `build` of a submission reads, read once: its extensions often share their headers (and
a load() file is read for the arch, the progress line and the compile), and each read hashed and
scanned every header again per extension and per unit.

Held for one command (`reading_once`), not for the process: a file's modification time moves in steps
of milliseconds, so a header edited between two builds of one process (a test's, a tune's) may keep its
size and time, and a cache keyed by them would hand back the old text. Outside `reading_once` every
call reads the file. What is worked out of them (a kernel's build plan, a unit's cache key, asked for by the
progress line and again by the build) is kept alike (`worked_out_once`)."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from nvfp4ctl.not_text import not_text_place
from nvfp4ctl.preprocessor import live_code


class HeaderFile:
    """A header's bytes as the cache key hashes them, its text as the include scans read it, and where it
    stops being UTF-8 text (not_text_place: build's NV004 warning)."""

    def __init__(self, data: bytes) -> None:
        self.digest = hashlib.sha256(data).hexdigest()
        self.text = data.decode(errors="replace")
        self.not_text = not_text_place(data)

    @cached_property
    def live(self) -> str:
        """live_code() of the text: the includes a scan follows."""
        return live_code(self.text)


class _Reads:
    def __init__(self) -> None:
        self.headers: dict[Path, HeaderFile] = {}
        self.sources: dict[Path, bytes] = {}
        self.worked: dict[Hashable, Any] = {}


_Worked = TypeVar("_Worked")


# a context variable, not a global: another thread (tune's builds) starts outside the command's reads
_reads: ContextVar[_Reads | None] = ContextVar("nvfp4ctl_build_reads", default=None)


@contextmanager
def reading_once() -> Iterator[None]:
    """Within: each file is read once (a nested call shares the outer one's reads)."""
    if _reads.get() is not None:
        yield
        return
    token = _reads.set(_Reads())
    try:
        yield
    finally:
        _reads.reset(token)


def header_file(path: Path) -> HeaderFile:
    """The header at `path` (OSError where it cannot be read: nothing is kept of that)."""
    reads = _reads.get()
    if reads is None:
        return HeaderFile(path.read_bytes())
    found = reads.headers.get(path)
    if found is None:
        found = reads.headers[path] = HeaderFile(path.read_bytes())
    return found


def source_bytes(path: Path) -> bytes:
    """A load() source's or a kernel's bytes (the NV004 test of a build reads them; its text is made of them)."""
    reads = _reads.get()
    if reads is None:
        return path.read_bytes()
    found = reads.sources.get(path)
    if found is None:
        found = reads.sources[path] = path.read_bytes()
    return found


def bytes_read(path: Path) -> bytes | None:
    """The bytes source_bytes read of `path` within this reading_once, None where it read none: what the
    command built, which the file may no longer hold (overwritten while it compiled)."""
    reads = _reads.get()
    return reads.sources.get(path) if reads is not None else None


def source_text(path: Path) -> str:
    """A load() source's text, as read_text(errors="replace") gives it (the code compiled and keyed)."""
    # the reader read_text opens: the locale's encoding, universal newlines
    return io.TextIOWrapper(io.BytesIO(source_bytes(path)), errors="replace").read()


def worked_out_once(key: Hashable, work: Callable[[], _Worked]) -> _Worked:
    """work()'s result, made once per `key` within `reading_once` (the files it reads are the command's);
    outside it, every call works it out. A call that raises keeps nothing: the next one raises again."""
    reads = _reads.get()
    if reads is None:
        return work()
    if key not in reads.worked:
        reads.worked[key] = work()
    return reads.worked[key]
