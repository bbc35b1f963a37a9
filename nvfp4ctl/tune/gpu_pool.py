"""Timing candidates on every local GPU: one watched worker process per GPU, one task at a time each.

Each worker is a runner Worker (its own child process, CUDA_VISIBLE_DEVICES naming one GPU) fed by
its own thread. A task names the shape it times, and each shape has a home GPU (shape index modulo
the GPU count), so a shape's candidates are compared on one card: two cards of one model differ by
a percent or so in clocks under load, as much as the gains a knob is kept for. A GPU whose own queue
is empty takes the newest task of the fullest other queue, so no GPU idles while work is left.
A candidate that crashes or hangs costs only its own task: the Worker kills that child and the next
task gets a fresh one. Results are plain Measurements; nothing here decides a winner.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

from nvfp4ctl.errors import KernelCrash, KernelTimeout, UsageError
from nvfp4ctl.problems import DEFAULT_PROBLEM
from nvfp4ctl.tune.results import CRASH, ERROR, OK, TIMEOUT, Measurement

MEASURE_JOB = "nvfp4ctl.tune.jobs:measure"
PAIR_JOB = "nvfp4ctl.tune.jobs:measure_pair"


class WorkerLike(Protocol):
    gpu: str | None

    def call(self, job: str, *, label: str, timeout_s: float | None = None, **payload: Any) -> Any: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class NamedWorker:
    name: str  # "GPU 0"
    worker: WorkerLike


@dataclass
class _Task:
    artifact: dict | None
    case: Any
    label: str
    future: Future
    challenger: dict | None = None  # a pair task (the search's rematch): artifact against this one


class GpuPool:
    """submit(artifact, case, label, home) -> Future[Measurement]; `payload` holds the job's fixed settings."""

    def __init__(self, workers: Sequence[NamedWorker], payload: dict[str, Any], timeout_s: float) -> None:
        if not workers:
            raise ValueError("a GPU pool needs at least one worker")
        self.workers = list(workers)
        self.payload = payload
        self.timeout_s = timeout_s
        self.busy_s: dict[str, float] = {w.name: 0.0 for w in self.workers}
        self.stolen = 0  # tasks timed away from their shape's home GPU
        self._queues: list[deque[_Task]] = [deque() for _ in self.workers]
        self._lock = threading.Condition()
        self._closing = False
        self._threads = [threading.Thread(target=self._serve, args=(index,), name=f"tune-{w.name}", daemon=True)
                         for index, w in enumerate(self.workers)]
        for thread in self._threads:
            thread.start()

    @property
    def gpu(self) -> str | None:
        return next((w.worker.gpu for w in self.workers if w.worker.gpu), None)

    def submit(self, artifact: dict | None, case: Any, label: str, home: int = 0) -> Future[Measurement]:
        return self._queue(_Task(artifact, case, label, Future()), home)

    def submit_pair(self, artifact: dict | None, challenger: dict, case: Any, label: str, home: int = 0
                    ) -> Future[tuple[Measurement, Measurement]]:
        """Both candidates on one shape, back to back in one worker (tune.jobs.measure_pair)."""
        return self._queue(_Task(artifact, case, label, Future(), challenger), home)

    def _queue(self, task: _Task, home: int) -> Future:
        with self._lock:
            self._queues[home % len(self.workers)].append(task)
            self._lock.notify_all()
        return task.future

    def _next(self, index: int) -> _Task | None:
        with self._lock:
            while True:
                if self._closing:
                    return None
                if self._queues[index]:
                    return self._queues[index].popleft()
                fullest = max(range(len(self._queues)), key=lambda i: len(self._queues[i]))
                if self._queues[fullest]:
                    self.stolen += 1
                    return self._queues[fullest].pop()
                self._lock.wait()

    def _serve(self, index: int) -> None:
        while (task := self._next(index)) is not None:
            if not task.future.set_running_or_notify_cancel():
                continue
            try:
                task.future.set_result(self._run(self.workers[index], task))
            except BaseException as error:  # noqa: BLE001 - handed to whoever waits on the future
                task.future.set_exception(error)

    def _run(self, named: NamedWorker, task: _Task) -> Measurement | tuple[Measurement, Measurement]:
        from nvfp4ctl.runner.worker import JobError

        pair = task.challenger is not None
        extra = {"challenger": task.challenger} if pair else {}
        started = time.perf_counter()
        try:
            # a pair is two checks and four timings: twice the time one candidate may take
            reply = named.worker.call(PAIR_JOB if pair else MEASURE_JOB, label=task.label,
                                      timeout_s=self.timeout_s * (2 if pair else 1),
                                      artifact=task.artifact, case=task.case, **extra, **self.payload)
        except KernelTimeout as error:
            failed = Measurement(TIMEOUT, message=_first_line(error), gpu=named.name)
        except KernelCrash as error:
            failed = Measurement(CRASH, message=_first_line(error), gpu=named.name)
        except JobError as error:
            if error.type_name == UsageError.__name__:  # the shape's fault, not the candidate's: ends the tune
                raise UsageError(error.text) from None
            failed = Measurement(ERROR, message=str(error), gpu=named.name)
        else:
            if reply.get("status") != OK:
                failed = _measurement(reply, named.name)
            elif pair:
                return _measurement(reply["current"], named.name), _measurement(reply["challenger"], named.name)
            else:
                return _measurement(reply, named.name)
        finally:
            self.busy_s[named.name] += time.perf_counter() - started
        return (failed, failed) if pair else failed

    def close(self, kill: bool = False) -> None:
        """Drop queued tasks; with `kill` (Ctrl-C, an error) stop the running ones at once too: a
        busy worker's child is SIGKILLed and its task ends as a crash nobody reads."""
        with self._lock:
            self._closing = True
            for queue in self._queues:
                while queue:
                    queue.popleft().future.cancel()
            self._lock.notify_all()
        if kill:
            for named in self.workers:
                named.worker.close()
        for thread in self._threads:
            thread.join()
        for named in self.workers:
            named.worker.close()

    def __enter__(self) -> GpuPool:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(kill=exc_type is not None)


def _measurement(reply: dict[str, Any], gpu: str) -> Measurement:
    if reply.get("status") != OK:
        return Measurement(reply.get("status", ERROR), message=reply.get("message", ""), gpu=gpu)
    return Measurement(OK, us=reply["us"], err_us=reply["err_us"], runs=reply["runs"], gpu=gpu)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def make_workers(gpus: Sequence[str], device: str, timeout_s: float, problem: str = DEFAULT_PROBLEM) -> list[NamedWorker]:
    """One runner Worker per GPU id (CUDA_VISIBLE_DEVICES), or `len(gpus)` CPU workers off CUDA.
    Their base target is the torch fallback: cheap to load; every task loads its own candidate."""
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.project import shipped
    from nvfp4ctl.runner.targets import TORCH, TargetSpec
    from nvfp4ctl.runner.worker import Worker

    fallback = shipped("kernels") / get_problem(problem).fallback_submission
    base = TargetSpec(TORCH, fallback, "tune worker", "tune", problem)
    named = []
    for gpu in gpus:
        env = {"CUDA_VISIBLE_DEVICES": gpu} if device == "cuda" else {}
        label = f"GPU {gpu}" if device == "cuda" else f"CPU worker {gpu}"
        named.append(NamedWorker(label, Worker(base, timeout_s, device=device, env=env)))
    return named
