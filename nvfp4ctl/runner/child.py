"""The child process's side of the worker: own process group, output into a log, a job loop.

Messages in:  ("load", modules to import first) · ("job", "module:function", payload) · ("stop",)
Messages out: ("ready", gpu) · ("load_failed", message, traceback, error type name) · ("ok", value) ·
              ("error", message, traceback, type name) · ("cuda_error", ...) · during a job, any number of
              ("progress", value) before its reply (runner/progress.py)
"""

from __future__ import annotations

import ctypes
import faulthandler
import importlib
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from nvfp4ctl.bounded_text import MAX_HEADLINE, clipped_line
from nvfp4ctl.runner import progress
from nvfp4ctl.runner.leftovers import CHILD_TAG, kill_tagged
from nvfp4ctl.runner.targets import TargetSpec, load_target

# A CUDA error that leaves the context unusable: the child must go, the next job gets a fresh one.
STICKY_CUDA_ERRORS = (
    "cuda error",
    "illegal memory access",
    "illegal instruction",
    "misaligned address",
    "device-side assert",
    "unspecified launch failure",
    "launch timed out",
    "hardware stack error",
    "an illegal address",
    "cudaerror",
    "cuda driver error",
    "accelerator error",
)


def is_cuda_error(error: BaseException) -> bool:
    torch = sys.modules.get("torch")
    accelerator_error = getattr(torch, "AcceleratorError", None)  # torch >= 2.8 raises this for CUDA
    if accelerator_error is not None and isinstance(error, accelerator_error):
        return True
    if type(error).__name__ == "OutOfMemoryError":  # allocation failed; the context is fine
        return False
    if not isinstance(error, RuntimeError):
        return False
    text = str(error).lower()
    first = text.strip().split("\n", 1)[0]  # C++ stack frames below it say "c10::Error" for any check
    return any(marker in text for marker in STICKY_CUDA_ERRORS) or ("cuda" in first and "error" in first)


def import_job(job: str) -> Callable[..., Any]:
    module_name, _, function_name = job.partition(":")
    if not module_name or not function_name:
        raise ValueError(f"job {job!r}: expected 'package.module:function'")
    return getattr(importlib.import_module(module_name), function_name)


def describe_device(device: str) -> str | None:
    """The GPU as the child sees it, e.g. "NVIDIA H100 80GB HBM3 (sm_90)"; None off CUDA."""
    if device != "cuda" or "torch" not in sys.modules:
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return f"{torch.cuda.get_device_name()} (sm_{major}{minor})"


PR_SET_PDEATHSIG = 1
GROUP_REAPER_SIGNAL = signal.SIGUSR1  # what the reaper gets when this child dies


def _set_death_signal(signum: int) -> bool:
    """Linux: have the kernel send `signum` to this process when its parent dies."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum) == 0
    except (OSError, AttributeError):
        return False


def _die_with_parent() -> None:
    """Linux: SIGKILL this child when the parent dies, so a kernel stuck in C never outlives us."""
    _set_death_signal(signal.SIGKILL)
    parent = os.getppid()

    def watch() -> None:  # fallback where prctl is missing; also covers a parent that died early
        while True:
            if os.getppid() != parent:
                os._exit(75)
            time.sleep(1.0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _start_group_reaper() -> None:
    """Fork a small process into this child's process group that SIGKILLs the whole group once this
    child is gone, whatever ended it.

    When the parent dies (SIGKILL, a lost terminal) the kernel kills this child through its death
    signal, even inside a CUDA call, where no Python handler of ours could run; but what the child
    started in its own group (nvcc, ninja, a helper) would run on as orphans, with nobody left to kill
    the group. The reaper idles in sigwait, so it always runs: its own death signal comes when this
    child dies. Forked before any thread or CUDA context exists; it holds none of the child's pipes,
    so the parent still sees EOF when the child dies."""
    if not hasattr(os, "fork"):
        return
    child = os.getpid()
    if os.fork() != 0:
        return
    try:  # the reaper: never returns into the child's code
        signal.pthread_sigmask(signal.SIG_BLOCK, {GROUP_REAPER_SIGNAL})  # pending until sigwait takes it
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        if not _set_death_signal(GROUP_REAPER_SIGNAL):
            os._exit(0)  # no death signal here: the parent's kill of the group is all there is
        while os.getppid() == child:  # also covers a child gone before the death signal was set
            signal.sigwait({GROUP_REAPER_SIGNAL})
        tag = os.environ.get(CHILD_TAG)
        if tag:  # what it started in sessions of their own, out of the group's reach (runner/leftovers.py)
            kill_tagged(tag)
        os.killpg(0, signal.SIGKILL)  # this child's group, the reaper included
    finally:
        os._exit(0)


def _redirect_output(log_path: str) -> None:
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    for stream_obj in (sys.stdout, sys.stderr):
        try:
            stream_obj.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    faulthandler.enable(file=sys.stderr, all_threads=False)  # a segfault leaves a Python stack in the log


def child_main(conn: Connection, target: TargetSpec, device: str, log_path: str,
               env: dict[str, str] | None = None) -> None:
    os.environ.update(env or {})  # before torch is imported: CUDA reads CUDA_VISIBLE_DEVICES at init
    os.setsid()  # own process group: the watchdog kills it and everything it started
    _redirect_output(log_path)
    _start_group_reaper()
    _die_with_parent()
    progress.attach(conn)
    kernel: Callable[[tuple], Any] | None = None
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if message[0] == "stop":
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)  # skip interpreter teardown (torch's takes seconds); nothing left to save
        if message[0] == "load":
            try:
                for module in message[1]:  # the job's own imports (torch...) count as loading time
                    importlib.import_module(module)
                kernel = load_target(target)
            except BaseException as error:  # noqa: BLE001 - anything at import is the target's fault
                text = traceback.format_exc()
                sys.stderr.write(text)
                # a UsageError is the user's input or this machine's setup (a CPU-only torch, no
                # nvcc): the parent shows it as one line, the traceback only under -v
                conn.send(("load_failed", _one_line(error), text, type(error).__name__))
                return
            conn.send(("ready", describe_device(device)))
            continue
        _, job, payload = message
        reply = _run_job(job, kernel, payload)
        conn.send(reply)
        if reply[0] == "cuda_error":
            sys.stderr.flush()
            os._exit(70)  # the CUDA context is poisoned; the parent starts a fresh child


def _run_job(job: str, kernel: Callable[[tuple], Any] | None, payload: dict[str, Any]) -> tuple:
    try:
        value = import_job(job)(kernel, **payload)
        pickle.dumps(value)  # fail here, as a job error, rather than inside conn.send
        return ("ok", value)
    except Exception as error:  # noqa: BLE001 - reported to the parent, which decides
        text = traceback.format_exc()
        sys.stderr.write(text)
        return ("cuda_error" if is_cuda_error(error) else "error", _one_line(error), text, type(error).__name__)


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {clipped_line(text[0], MAX_HEADLINE)}" if text else type(error).__name__
