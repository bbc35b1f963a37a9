"""The machine a timing was taken on: the logical CPUs this process may use, the CPU's model name and
the 1-minute load average, so a compile time quoted in the docs says what it was measured on (wall
time on a shared or small machine says as much about the machine as about the code)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class Machine:
    cpus: int  # logical CPUs this process may run on (its affinity, not the host's count)
    model: str | None  # /proc/cpuinfo's "model name"; None where there is none (macOS, some ARM)
    load_1min: float | None  # None where the OS has no load average

    def describe(self) -> str:
        """'2 logical CPUs (Intel(R) Xeon(R) Processor), load 0.10 at start'."""
        model = f" ({self.model})" if self.model else ""
        load = "load unknown" if self.load_1min is None else f"load {self.load_1min:.2f}"
        return f"{self.cpus} logical CPU{'s' if self.cpus != 1 else ''}{model}, {load} at start"


def cpu_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity API (macOS)
        return os.cpu_count() or 1


def cpu_model(cpuinfo: Path = CPUINFO) -> str | None:
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return " ".join(value.split())
    return None


def load_1min() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def this_machine() -> Machine:
    return Machine(cpu_cores(), cpu_model(), load_1min())
