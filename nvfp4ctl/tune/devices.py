"""The local GPUs tune spreads candidates over, asked of nvidia-smi (the parent never initialises CUDA)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

VISIBLE = "CUDA_VISIBLE_DEVICES"
ORDER = "CUDA_DEVICE_ORDER"


def visible_gpus() -> list[str]:
    """Device ids to hand to one worker each as CUDA_VISIBLE_DEVICES: the ones already visible to
    this process when CUDA_VISIBLE_DEVICES is set, else every GPU nvidia-smi lists."""
    given = os.environ.get(VISIBLE)
    if given is not None:
        # CUDA reads the list up to its first entry that names no GPU ("-1", an empty one) and ignores the rest
        visible: list[str] = []
        for part in (part.strip() for part in given.split(",")):
            if not part or part.startswith("-"):
                break
            visible.append(part)
        return visible
    return [index for index, _, _ in _listed_gpus() if index.isdigit()]


def smallest_memory(gpus: list[str]) -> float | None:
    """The whole memory in bytes of the smallest of these GPUs (ids as visible_gpus gives them: an index or a
    UUID), or None where nvidia-smi cannot tell: a shape too large for it is refused before any candidate runs.

    Where an index may name another card (_order_uncertain), the largest memory listed: the parent then
    refuses no shape some GPU could take, and each worker's own check refuses one its GPU cannot."""
    listed = [(index, uuid, float(mib) * 2**20) for index, uuid, mib in _listed_gpus() if mib.isdigit()]
    sizes = [size for index, uuid, size in listed if index in gpus or uuid in gpus]
    if not sizes:
        return None
    if _order_uncertain(gpus, listed):
        return max(size for _, _, size in listed)
    return min(sizes)


def _order_uncertain(gpus: list[str], listed: list[tuple[str, str, float]]) -> bool:
    """Whether an index among `gpus` may name another card than nvidia-smi's of that index: nvidia-smi
    numbers GPUs by PCI bus, CUDA (which reads CUDA_VISIBLE_DEVICES) fastest first unless
    CUDA_DEVICE_ORDER=PCI_BUS_ID. It matters only where the cards differ in memory and some are left out."""
    indexes = {index for index, _, _ in listed}
    return (os.environ.get(ORDER) != "PCI_BUS_ID" and any(gpu in indexes for gpu in gpus)
            and len({size for _, _, size in listed}) > 1 and not indexes <= set(gpus))


_Listing = list[tuple[str, str, str]]
# nvidia-smi's listing within asking_once: a context variable, as tune's prepare runs in the command's thread
_asked: ContextVar[list[_Listing] | None] = ContextVar("nvfp4ctl_tune_gpu_listing", default=None)


@contextmanager
def asking_once() -> Iterator[None]:
    """Within: nvidia-smi is asked for its listing once, and visible_gpus and smallest_memory read that one
    (each query takes a driver round trip, up to its 15 s limit on a hung driver); outside, every call asks."""
    if _asked.get() is not None:
        yield
        return
    token = _asked.set([])
    try:
        yield
    finally:
        _asked.reset(token)


def _listed_gpus() -> _Listing:
    """(index, UUID, memory.total in MiB) of each GPU nvidia-smi lists, as it writes them ("[N/A]" for a
    memory it cannot tell); none where nvidia-smi is missing, hangs or fails. The one query of both above,
    made once within asking_once."""
    kept = _asked.get()
    if kept is None:
        return _query_gpus()
    if not kept:
        kept.append(_query_gpus())
    return kept[0]


def _query_gpus() -> _Listing:
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
