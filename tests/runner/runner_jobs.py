"""Jobs the worker tests send to the child (imported there as "runner_jobs:<name>")."""

from __future__ import annotations

import os
from typing import Any


def call_target(kernel: Any, data: Any = None) -> Any:
    return kernel(data)


def child_pid(kernel: Any) -> int:
    return os.getpid()


def raise_value_error(kernel: Any) -> None:
    raise ValueError("bad value 42")


def unpicklable(kernel: Any) -> Any:
    return lambda: None


def say_hello(kernel: Any) -> str:
    print("hello from the child", flush=True)
    return "done"


def report_then_hang(kernel: Any, reports: int = 2) -> None:
    """Reports progress, then blocks past any timeout: a job that was moving, then stuck."""
    import time

    from nvfp4ctl.runner import progress

    for count in range(1, reports + 1):
        progress.report({"done": count}, now=True)
    time.sleep(3600)


def call_then_fail_at_sync(kernel: Any, data: Any = None) -> None:
    """The call returns and the CUDA error comes at the job's own next call, as a kernel's fault does."""
    kernel(data)
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
