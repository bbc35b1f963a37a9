"""The run log's short content hash of a target, made of bytes already read: a build logs what it read when it
started, not the file as it is when the build ends (a file overwritten during a 50 s compile)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

DIGEST_CHARS = 12


def content_digest(data: bytes, headers: Iterable[tuple[str, bytes]] = ()) -> str:
    """The hash runlog.file_digest gives the file whose bytes are `data`; `headers`: a kernel's local headers
    as (file name, bytes), in local_headers' order, which count too."""
    return finished_digest(hashlib.sha256(data), headers)


def finished_digest(digest: Any, headers: Iterable[tuple[str, bytes]] = ()) -> str:
    """The short hash of a sha256 fed the target's bytes, the local headers then fed after it: one rule for the
    bytes a build kept and the file read now, so that the two hashes of the same files match."""
    for name, header in headers:
        digest.update(name.encode() + b"\0" + header)
    return digest.hexdigest()[:DIGEST_CHARS]
