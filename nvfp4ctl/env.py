"""Every environment variable nvfp4ctl reads, in one place (listed in the README)."""

from __future__ import annotations

import os


class Env:
    TASK = "NVFP4CTL_TASK"  # path of task.yml (default: ./task.yml, else the packaged one)
    MEMORY = "NVFP4CTL_MEMORY"  # path of MEMORY.md that receives the run log
    TIMEOUT = "NVFP4CTL_TIMEOUT"  # watchdog seconds per check test (all its phases), bench shape, tune candidate
    LOAD_TIMEOUT = "NVFP4CTL_LOAD_TIMEOUT"  # watchdog seconds for a child's load of its target (default: max(timeout, 600))
    CACHE = "NVFP4CTL_CACHE"  # build cache folder
    DEBUG = "NVFP4CTL_DEBUG"  # 1: unexpected errors show locals in the traceback
    DEVICE = "NVFP4CTL_DEVICE"  # "cpu": check and bench run a torch submission on the CPU (no GPU needed)
    NO_COLOR = "NO_COLOR"


def env_str(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}
