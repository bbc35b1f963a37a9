"""The run log's short content hash of a target, made of bytes already read: a build logs what it read when it
started, not the file as it is when the build ends (a file overwritten during a 50 s compile)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

DIGEST_CHARS = 12


def content_digest(data: bytes, headers: Iterable[tuple[str, bytes]] = ()) -> str:
    """The hash runlog.file_digest gives the file whose bytes are `data`; `headers`: a kernel's local headers
    as (file name, bytes), in local_headers' order, which count too."""
    digest = hashlib.sha256(data)
    for name, header in headers:
        digest.update(name.encode() + b"\0" + header)
    return digest.hexdigest()[:DIGEST_CHARS]
