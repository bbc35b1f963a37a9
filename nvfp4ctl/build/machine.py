"""The machine a timing was taken on: the logical CPUs this process may use, the CPU's model name and
the 1-minute load average, so a compile time quoted in the docs says what it was measured on (wall
time on a shared or small machine says as much about the machine as about the code)."""

from __future__ import annotations

import os
import resource
import time
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


# nvcc's tools run one after another, each on a core of its own: on an idle machine a compile's CPU time
# is close to its wall time. Well below it, the compile waited for a core (other work was running).
BUSY_CPU_FRACTION = 0.75
JUDGED_FROM_S = 1.0  # a shorter compile's wall time is too short to read the machine's load from, and too short to matter


def children_cpu_seconds() -> float:
    """CPU time (user + system) of the child processes this process has waited for, their own children
    included: a delta around a compile is the compiler's, whatever else the machine ran meanwhile."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_and_children_cpu_seconds() -> float:
    """This process's CPU time (its threads') and its waited-for children's: a delta spans work done
    both here and in the compiler (a kernel's device-code build imports torch's cpp_extension here
    before nvcc starts, seconds of wall time a children-only delta would call waiting)."""
    return time.process_time() + children_cpu_seconds()


def busy_while(wall_s: float, cpu_s: float) -> bool:
    """Whether load inflated a compile's wall time: its CPU time well below it. Not the load average: a
    compile that had its core (38 s of CPU in 40 s) took its own time, however busy the machine was, and
    one that ran several threads (CPU above wall) waited for none."""
    return wall_s >= JUDGED_FROM_S and cpu_s < BUSY_CPU_FRACTION * wall_s
