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
