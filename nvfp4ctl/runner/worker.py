"""The parent's side of the child process: send a job, watch the clock, kill on deadlock.

Every target runs in a spawned child (its own process group, output into a log file). A job that
outlives its timeout gets the whole group SIGKILLed (`KernelTimeout`); a child that dies, cannot load
its target or hits a CUDA error is a `KernelCrash` carrying the last lines of its log (a CUDA error's
traceback from the target's frame down, as a raised exception's: runner/raised.py). Either way the
next call starts a fresh child. A target refused at load with a `UsageError` (a CPU-only torch, a
kernel for another GPU, no nvcc, a submission with no callable custom_kernel) is that `UsageError`,
one line; a kernel whose build's compiler ran past its limit is a `ToolTimeout` (exit 3), one line. Other exceptions in a job come back as `JobError`; the child stays. A job may report its
progress on the way (runner/progress.py): the worker hands each report to `on_progress`, and a timeout
after one carries the latest and its age, for the caller to tell a slow job from a stuck one.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import shutil
import signal
import tempfile
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from nvfp4ctl.bounded_text import SHOWN_TAIL, TailLimits, clipped_tail
from nvfp4ctl.errors import KernelCrash, KernelTimeout, ToolTimeout, UnloadableSubmission, UsageError
from nvfp4ctl.runner.child import child_main
from nvfp4ctl.runner.child_env import submission_build_env
from nvfp4ctl.runner.leftovers import CHILD_TAG, kill_tagged, new_tag
from nvfp4ctl.runner.load_limit import HOW_TO_CHANGE, load_limit
from nvfp4ctl.runner.raised import crash_trace
from nvfp4ctl.runner.targets import TargetSpec
from nvfp4ctl.words import seconds_text

POLL_S = 0.1
COMPILE_TIMEOUT = "CompileTimeout"  # build.compile's error, by the name the child sends: the parent imports no build code


class JobError(Exception):
    """A Python exception raised inside a job; the child is still alive."""

    def __init__(self, message: str, traceback_text: str, type_name: str = "") -> None:
        super().__init__(message)
        self.traceback_text = traceback_text
        self.type_name = type_name  # the exception's class name in the child, e.g. "UsageError"

    @property
    def text(self) -> str:
        """The message without its "TypeName: " prefix."""
        return str(self).removeprefix(f"{self.type_name}: ")


class ChildCrashed(KernelCrash):
    """The child died or hit a CUDA error; `log_tail` holds the last lines it wrote, `cause` what ended it in
    a few words where known ("killed by SIGSEGV", "exit code 3", "AcceleratorError: CUDA error: ..."), for a
    summary line that outlives the message above it."""

    def __init__(self, message: str, log_tail: list[str], log_path: Path | None, cause: str | None = None) -> None:
        super().__init__(message)
        self.log_tail = log_tail
        self.log_path = log_path
        self.cause = cause


class TargetLoadError(ChildCrashed):
    """The target could not be imported or built: every job would fail the same way."""


class ChildTimeout(KernelTimeout):
    def __init__(self, message: str, log_tail: list[str], log_path: Path | None,
                 progress: Any = None, progress_age_s: float | None = None, what: str | None = None) -> None:
        super().__init__(message)
        self.log_tail = log_tail
        self.log_path = log_path
        self.progress = progress  # the job's latest progress report; None: it reported none
        self.progress_age_s = progress_age_s  # how long before the kill that report came
        self.what = what  # what ran past its limit, without the kill: a summary line's cause


@dataclass
class _Child:
    process: BaseProcess
    conn: Connection
    log_path: Path
    tag: str  # in the environment of whatever it execs: runner/leftovers.py
    log_offset: int = 0
    busy: bool = False  # a message is in flight: the child will not read "stop" soon
    progress: tuple[Any, float] | None = None  # the job under way's latest report and its monotonic time


class _LogFolder:
    """The children's logs: a temp folder made on first use, removed unless a crash log is worth keeping."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self.keep = False

    def folder(self) -> Path:
        if self.path is None:
            self.path = Path(tempfile.mkdtemp(prefix="nvfp4ctl-child-"))
        return self.path

    def remove_unless_kept(self) -> None:
        if self.path is not None and not self.keep:
            shutil.rmtree(self.path, ignore_errors=True)
            self.path = None


_live_workers: weakref.WeakSet[Worker] = weakref.WeakSet()


@atexit.register
def _kill_leftover_children() -> None:
    for worker in list(_live_workers):
        worker.close()


class Worker:
    """Runs jobs against one target in a watched child process (use as a context manager)."""

    def __init__(
        self,
        target: TargetSpec,
        timeout_s: float,
        device: str = "cuda",
        *,
        load_timeout_s: float | None = None,
        preload: tuple[str, ...] = (),
        on_output: Callable[[str], None] | None = None,
        env: dict[str, str] | None = None,
        on_loaded: Callable[[], None] | None = None,
        on_progress: Callable[[Any], None] | None = None,
        tail_limits: TailLimits = SHOWN_TAIL,
    ) -> None:
        self.target = target
        self.timeout_s = timeout_s
        self.device = device
        self.load_timeout_s = load_timeout_s if load_timeout_s is not None else load_limit(timeout_s)[0]
        self.preload = preload  # modules the jobs need, imported under the load timeout, not a job's
        self.on_output = on_output  # receives each line the child prints (for -v)
        self.env = dict(env or {})  # set in the child before it imports anything (CUDA_VISIBLE_DEVICES per GPU)
        self._build_env: dict[str, str] | None = None  # the toolkit and extensions folder a submission builds with
        self.on_loaded = on_loaded  # called once a child has loaded the target (a build may take minutes)
        self.on_progress = on_progress  # receives each progress report of the job under way
        self.tail_limits = tail_limits  # how much of its log a crash or timeout carries (-v: more)
        self.gpu: str | None = None  # as the child's torch sees it, once a child has loaded
        self.children_started = 0
        self._logs = _LogFolder()
        weakref.finalize(self, self._logs.remove_unless_kept)  # also when a worker is dropped unclosed
        self._child: _Child | None = None
        self._context = multiprocessing.get_context("spawn")
        _live_workers.add(self)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- public ----------------------------------------------------------------------------------

    def call(self, job: str, *, label: str, timeout_s: float | None = None, **payload: Any) -> Any:
        """Run `job(target, **payload)` in the child and return its value."""
        child = self._ready_child(label)
        limit = self.timeout_s if timeout_s is None else timeout_s
        child.progress = None
        self._send(child, ("job", job, payload), label)
        reply = self._wait(child, limit, label, what=f"possible deadlock: {label} ran past {seconds_text(limit)}")
        if reply[0] == "ok":
            return reply[1]
        if reply[0] == "error":
            raise JobError(reply[1], reply[2], reply[3])
        raise self._crash(child, f"{label} crashed with a CUDA error: {reply[1]}{trap_note(reply[1])}", show_exit=False,
                          cuda_error=True, cause=reply[1])

    def close(self) -> None:
        """Stop the child (politely if idle, SIGKILL if busy, e.g. on Ctrl-C) and remove the logs unless kept."""
        try:
            if self._child is not None:
                child, self._child = self._child, None
                try:
                    if not child.busy:
                        child.conn.send(("stop",))
                        child.process.join(timeout=2.0)
                except (OSError, ValueError):
                    pass
                finally:  # also when a second Ctrl-C or a SIGTERM cuts the polite wait short
                    _kill_group(child.process)
                    kill_tagged(child.tag)
                    child.conn.close()
        finally:
            self._logs.remove_unless_kept()
            _live_workers.discard(self)

    @property
    def log_path(self) -> Path | None:
        return self._child.log_path if self._child else None

    @property
    def loads_first(self) -> bool:
        """Whether the next call starts a child and loads the target before its job: none was started yet,
        or the last one was discarded (a crash or a timeout took it)."""
        return self._child is None

    # --- child lifecycle -------------------------------------------------------------------------

    def _ready_child(self, label: str) -> _Child:
        if self._child is not None and self._child.process.is_alive():
            return self._child
        if self._child is not None:  # died between jobs
            raise self._crash(self._child, f"{label}: the child had died before the job started")
        child = self._start_child()
        # a crash here is the load's, whichever job waits on it: "bench 128x256x256 crashed" would blame the shape
        loading = f"loading {self.target.label}"
        self._send(child, ("load", self.preload), loading)
        what = f"{loading} ran past {seconds_text(self.load_timeout_s)} (a hang at import or build? {HOW_TO_CHANGE})"
        reply = self._wait(child, self.load_timeout_s, loading, what=what)
        if reply[0] == "ready":
            self.gpu = reply[1] or self.gpu
            if self.on_loaded is not None:
                self.on_loaded()
            return child
        # the child reported the failure ("load_failed") and returned: its exit status says nothing more
        if reply[3] in (UsageError.__name__, UnloadableSubmission.__name__):  # one line; its traceback went to -v
            self._discard_child(child, keep_log=False)
            reason = reply[1].removeprefix(f"{reply[3]}: ")
            if reply[3] == UnloadableSubmission.__name__:  # FILE:LINE: ... names the place itself
                raise UnloadableSubmission(reason)
            raise UsageError(f"cannot load {self.target.label}: {reason}")
        if reply[3] == COMPILE_TIMEOUT:  # the build's compiler was stopped at its limit: a timeout (exit 3), not a crash
            self._discard_child(child)
            raise ToolTimeout(f"cannot load {self.target.label}: {reply[1].removeprefix(f'{reply[3]}: ')}")
        error = self._crash(child, f"cannot load {self.target.label}: {reply[1]}", show_exit=False)
        raise TargetLoadError(str(error), error.log_tail, error.log_path)

    def _start_child(self) -> _Child:
        self.children_started += 1
        log_path = self._logs.folder() / f"child-{self.children_started}.log"
        log_path.touch()
        parent_conn, child_conn = self._context.Pipe(duplex=True)
        tag = new_tag()
        if self._build_env is None:  # once: a child started again after a crash builds with the same
            self._build_env = submission_build_env(self.target)
        process = self._context.Process(
            target=child_main,
            args=(child_conn, self.target, self.device, str(log_path), self._build_env | self.env | {CHILD_TAG: tag}),
            name=f"nvfp4ctl-child-{self.children_started}",
            daemon=True,
        )
        process.start()
        child_conn.close()  # so the parent sees EOF when the child dies
        self._child = _Child(process, parent_conn, log_path, tag)
        return self._child

    def _send(self, child: _Child, message: tuple, label: str = "the job") -> None:
        """Hand the child a message; a child gone in the meantime (the pipe is closed) is a crash."""
        child.busy = True
        try:
            child.conn.send(message)
        except OSError:  # BrokenPipeError, ConnectionResetError: nobody reads the other end
            raise self._crash(child, f"{label} crashed: the child died") from None

    def _wait(self, child: _Child, limit_s: float, label: str, what: str) -> tuple:
        deadline = time.monotonic() + limit_s
        while True:
            try:
                if child.conn.poll(min(POLL_S, max(0.0, deadline - time.monotonic()))):
                    reply = child.conn.recv()
                    if reply[0] == "progress":  # news of the job under way, not its end
                        self._note_progress(child, reply[1])
                        continue
                    child.busy = False
                    self._echo_output(child)
                    return reply
            except (EOFError, OSError):
                raise self._crash(child, f"{label} crashed: the child died") from None
            self._echo_output(child)
            if not child.process.is_alive() and not child.conn.poll(0):
                raise self._crash(child, f"{label} crashed: the child died")
            if time.monotonic() >= deadline:
                raise self._timeout(child, what)

    def _note_progress(self, child: _Child, value: Any) -> None:
        child.progress = (value, time.monotonic())
        if self.on_progress is not None:
            self.on_progress(value)

    def _echo_output(self, child: _Child) -> None:
        if self.on_output is None:
            return
        try:
            with open(child.log_path, "rb") as log:
                log.seek(child.log_offset)
                chunk = log.read()
        except OSError:
            return
        complete = chunk[: chunk.rfind(b"\n") + 1]
        child.log_offset += len(complete)
        for line in complete.decode(errors="replace").splitlines():
            self.on_output(line)

    def _discard_child(self, child: _Child, keep_log: bool = True, cuda_error: bool = False) -> list[str]:
        """Kill the child's whole process group and what it started in other sessions, reap it, and return the tail of its log (kept on
        disk when it says something, unless `keep_log` is off); after a CUDA error, its traceback from
        the target's frame down (log_tail)."""
        _kill_group(child.process)
        kill_tagged(child.tag)
        child.process.join(timeout=5.0)
        child.conn.close()
        if self._child is child:
            self._child = None
        tail = log_tail(child.log_path, cuda_error=cuda_error, limits=self.tail_limits)
        self._logs.keep = self._logs.keep or (keep_log and bool(tail))  # worth keeping only if the child said something
        return tail

    def _crash(self, child: _Child, message: str, show_exit: bool = True, cuda_error: bool = False,
               cause: str | None = None) -> ChildCrashed:
        child.process.join(timeout=1.0)  # EOF comes before the exit status: give it a moment
        died_by_itself = not child.process.is_alive()
        tail = self._discard_child(child, cuda_error=cuda_error)
        if show_exit and died_by_itself and child.process.exitcode is not None:
            cause = describe_exit(child.process.exitcode)
            message = f"{message} ({cause})"
        return ChildCrashed(_with_tail(message, tail), tail, child.log_path if tail else None, cause)

    def _timeout(self, child: _Child, what: str) -> ChildTimeout:
        progress, age_s = (None, None) if child.progress is None else (child.progress[0], time.monotonic() - child.progress[1])
        tail = self._discard_child(child)
        return ChildTimeout(f"{what}; the child was killed", tail, child.log_path if tail else None, progress, age_s,
                            what)


def _kill_group(process: BaseProcess) -> None:
    """SIGKILL the child's process group, also when the child itself has already exited (a crash, its
    exit after a CUDA error, "stop"): what it started there (a helper process, a build) must not be
    left running. The group's id stays taken while any member lives, so it names no one else."""
    if process.pid is None:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)  # the child called setsid(): its pgid is its pid
    except (ProcessLookupError, PermissionError):
        pass
    if process.exitcode is not None:
        return
    try:
        process.kill()  # in case it had not reached setsid() yet
    except (ProcessLookupError, ValueError, AttributeError):
        pass
    process.join(timeout=5.0)


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


# Lines of a child's log that say nothing about the target: frames of spawn's bootstrap, of the
# child loop and of importlib, faulthandler's list of extension modules, traceback carets.
_NOISE = ("multiprocessing/", '"<string>"', "<frozen ", "nvfp4ctl/runner/", "Extension modules:")


def log_tail(path: Path, *, cuda_error: bool = False, limits: TailLimits = SHOWN_TAIL) -> list[str]:
    """The last lines of a child's log that say something, as many as `limits` says and each cut to its
    characters, a first line saying how many earlier ones were left out (the kept log holds them); where
    the child ended on a CUDA error in a job, its traceback is cut to start in the target, as a raised
    exception's is (crash_trace), before the last lines are taken, so that they are the target's."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    kept: list[str] = []
    skip_code_line = False
    for line in text.splitlines():
        stripped = line.strip()
        if skip_code_line and not stripped.startswith("File "):
            skip_code_line = False  # the source line under a dropped frame
            continue
        skip_code_line = False
        if not stripped or set(stripped) <= set("^~ "):
            continue
        if any(noise in line for noise in _NOISE):
            skip_code_line = stripped.startswith("File ")
            continue
        kept.append(line)
    return clipped_tail(crash_trace(kept) if cuda_error else kept, limits)


# A kernel that executes `trap` ends with this error and nothing else to tell it from a fault: say so,
# since the shipped kernels' bounded waits trap instead of hanging, and a deadlock is what it then means.
TRAP_ERROR = "unspecified launch failure"
TRAP_NOTE = (" (also how a kernel that executes trap ends: nvfp4ctl's kernels trap when a wait lasts over 2 s,"
             " a likely deadlock: a missed mbarrier phase, a wrong expect-tx byte count, CTAs not all resident)")


def trap_note(cuda_error: str) -> str:
    return TRAP_NOTE if TRAP_ERROR in cuda_error.lower() else ""


def _with_tail(message: str, tail: list[str]) -> str:
    return message if not tail else message + "\n" + "\n".join("  " + line for line in tail)
