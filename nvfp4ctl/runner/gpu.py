"""What GPU the machine has, asked of nvidia-smi so the parent process never initialises CUDA."""

from __future__ import annotations

import subprocess
from pathlib import Path
from dataclasses import dataclass
from functools import lru_cache

from nvfp4ctl.env import Env, env_str
from nvfp4ctl.errors import UsageError


@dataclass(frozen=True)
class GpuInfo:
    name: str
    compute_cap: str  # "9.0", "10.0"

    @property
    def arch(self) -> str:
        return "sm_" + self.compute_cap.replace(".", "")

    @property
    def major(self) -> int:
        return int(self.compute_cap.split(".")[0])

    def describe(self) -> str:
        return f"{self.name} ({self.arch})"


@lru_cache(maxsize=1)
def first_gpu() -> GpuInfo | None:
    """The first GPU nvidia-smi lists, or None when there is no driver or no GPU."""
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=15,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return None
    name, _, cap = lines[0].partition(",")
    cap = cap.strip()
    if not cap or not cap.split(".")[0].isdigit():
        return None
    return GpuInfo(name=name.strip(), compute_cap=cap)


def gpu_present() -> bool:
    """nvidia-smi sees a GPU, or a driver is there without nvidia-smi (some containers: the child decides)."""
    return first_gpu() is not None or Path("/dev/nvidiactl").exists()


def run_device() -> str:
    """"cuda" normally; "cpu" when NVFP4CTL_DEVICE=cpu (the runner plumbing on CPU, for tests). Any
    other value is refused: a typo must not quietly run on the GPU."""
    setting = (env_str(Env.DEVICE) or "").strip().lower()
    if setting not in ("", "cuda", "cpu"):
        raise UsageError(f"{Env.DEVICE}={env_str(Env.DEVICE)}: expected cpu or cuda (unset: cuda)")
    return setting or "cuda"
