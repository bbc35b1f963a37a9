"""How long a child may take to load its target (import a submission, build a kernel or a load_inline module)
before the watchdog kills it: NVFP4CTL_LOAD_TIMEOUT, else the run's per-test timeout but never under 600 s."""

from __future__ import annotations

import math

from nvfp4ctl.env import Env, env_str
from nvfp4ctl.errors import UsageError

MIN_LOAD_TIMEOUT_S = 600.0  # building a kernel or a load_inline submission takes minutes
DEFAULT_SOURCE = "default"
# what a load's timeout adds, so that a build known to be slow, or a hang found early, need not wait out the floor
HOW_TO_CHANGE = f"{Env.LOAD_TIMEOUT}=S sets this limit"


def load_limit(timeout_s: float) -> tuple[float, str]:
    """Seconds a load may take and where they came from: NVFP4CTL_LOAD_TIMEOUT > max(`timeout_s`, 600)."""
    from_env = env_str(Env.LOAD_TIMEOUT)
    if from_env is None:
        return max(timeout_s, MIN_LOAD_TIMEOUT_S), DEFAULT_SOURCE
    try:
        seconds = float(from_env)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < math.inf:  # nan too: a watchdog that never fires
        raise UsageError(f"{Env.LOAD_TIMEOUT}={from_env}: expected a finite number of seconds > 0")
    return seconds, Env.LOAD_TIMEOUT
