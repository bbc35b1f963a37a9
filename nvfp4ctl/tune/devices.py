"""The local GPUs tune spreads candidates over, asked of nvidia-smi (the parent never initialises CUDA)."""

from __future__ import annotations

import os
import subprocess

VISIBLE = "CUDA_VISIBLE_DEVICES"


def visible_gpus() -> list[str]:
    """Device ids to hand to one worker each as CUDA_VISIBLE_DEVICES: the ones already visible to
    this process when CUDA_VISIBLE_DEVICES is set, else every GPU nvidia-smi lists."""
    given = os.environ.get(VISIBLE)
    if given is not None:
        return [part.strip() for part in given.split(",") if part.strip() and part.strip() != "-1"]
    return [index for index, _, _ in _listed_gpus() if index.isdigit()]


def smallest_memory(gpus: list[str]) -> float | None:
    """The whole memory in bytes of the smallest of these GPUs (ids as visible_gpus gives them: an index or a
    UUID), or None where nvidia-smi cannot tell: a shape too large for it is refused before any candidate runs."""
    sizes = [float(mib) * 2**20 for index, uuid, mib in _listed_gpus()
             if mib.isdigit() and (index in gpus or uuid in gpus)]
    return min(sizes) if sizes else None


def _listed_gpus() -> list[tuple[str, str, str]]:
    """(index, UUID, memory.total in MiB) of each GPU nvidia-smi lists, as it writes them ("[N/A]" for a
    memory it cannot tell); none where nvidia-smi is missing, hangs or fails. The one query of both above."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,memory.total", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    return [_fields(line) for line in done.stdout.splitlines()]


def _fields(line: str) -> tuple[str, str, str]:
    index, uuid, mib = (part.strip() for part in (line.split(",") + ["", ""])[:3])
    return index, uuid, mib
