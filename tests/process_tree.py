"""A stand-in compiler that starts a tool of its own (as nvcc runs `sh -c cudafe++ ...`) and waits for
it, and whether that tool is still running: for the tests that stop a compile early and check that
nothing it started lives on (build's run_compiler, the host proofs' runs), or that a tune killed
outright leaves no worker behind (every process below it, read from /proc)."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable
from pathlib import Path


def alive(pid: int) -> bool:
    """Running: not gone, and not a zombie waiting for whoever adopted it to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_dead(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def until(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether `condition` holds within `seconds` (asked every 50 ms)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def descendants(root: int) -> set[int]:
    """Every process below `root`, read from /proc (psutil is not installed)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, waiting = set(), [root]
    while waiting:
        for child in children.get(waiting.pop(), []):
            found.add(child)
            waiting.append(child)
    return found


def stand_in_toolkit(folder: Path, tool_pid: Path) -> Path:
    """A CUDA_HOME whose nvcc answers --version, then for a compile starts a long tool, writes its pid
    to `tool_pid` and waits on it."""
    nvcc = folder / "bin" / "nvcc"
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.0, V13.0.48"; exit 0; fi
        sleep 3600 &
        echo $! > {tool_pid}.tmp && mv {tool_pid}.tmp {tool_pid}
        wait
    """))
    nvcc.chmod(0o755)
    return folder
