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
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip().isdigit()]


def smallest_memory(gpus: list[str]) -> float | None:
    """The whole memory in bytes of the smallest of these GPUs (ids as visible_gpus gives them: an index or a
    UUID), or None where nvidia-smi cannot tell: a shape too large for it is refused before any candidate runs."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,memory.total", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    sizes = []
    for line in done.stdout.splitlines():
        index, uuid, mib = (part.strip() for part in (line.split(",") + ["", ""])[:3])
        if mib.isdigit() and (index in gpus or uuid in gpus):
            sizes.append(float(mib) * 2**20)
    return min(sizes) if sizes else None
