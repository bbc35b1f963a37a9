"""Timing candidates on every local GPU: one watched worker process per GPU, tasks to whichever is free.

Each worker is a runner Worker (its own child process, CUDA_VISIBLE_DEVICES naming one GPU); a
thread per worker sends it one (candidate, shape) task at a time, so N GPUs work on N tasks at once.
A candidate that crashes or hangs costs only its own task: the Worker kills that child and the
next task gets a fresh one. Results are plain Measurements; nothing here decides a winner.
"""

from __future__ import annotations

import queue
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from nvfp4ctl.errors import KernelCrash, KernelTimeout
from nvfp4ctl.tune.results import CRASH, ERROR, OK, TIMEOUT, Measurement

MEASURE_JOB = "nvfp4ctl.tune.jobs:measure"


class WorkerLike(Protocol):
    gpu: str | None

    def call(self, job: str, *, label: str, timeout_s: float | None = None, **payload: Any) -> Any: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class NamedWorker:
    name: str  # "GPU 0"
    worker: WorkerLike


class GpuPool:
    """submit(artifact, case, label) -> Future[Measurement]; `payload` holds the job's fixed settings."""

    def __init__(self, workers: Sequence[NamedWorker], payload: dict[str, Any], timeout_s: float) -> None:
        if not workers:
            raise ValueError("a GPU pool needs at least one worker")
        self.workers = list(workers)
        self.payload = payload
        self.timeout_s = timeout_s
        self._free: queue.Queue[NamedWorker] = queue.Queue()
        for worker in self.workers:
            self._free.put(worker)
        self._executor = ThreadPoolExecutor(max_workers=len(self.workers), thread_name_prefix="tune-gpu")
        self.busy_s: dict[str, float] = {w.name: 0.0 for w in self.workers}

    @property
    def gpu(self) -> str | None:
        return next((w.worker.gpu for w in self.workers if w.worker.gpu), None)

    def submit(self, artifact: dict | None, case: Any, label: str) -> Future[Measurement]:
        return self._executor.submit(self._run, artifact, case, label)

    def _run(self, artifact: dict | None, case: Any, label: str) -> Measurement:
        import time

        from nvfp4ctl.runner.worker import JobError

        named = self._free.get()  # as many threads as workers: one is always free here
        started = time.perf_counter()
        try:
            reply = named.worker.call(MEASURE_JOB, label=label, timeout_s=self.timeout_s,
                                      artifact=artifact, case=case, **self.payload)
        except KernelTimeout as error:
            return Measurement(TIMEOUT, message=_first_line(error), gpu=named.name)
        except KernelCrash as error:
            return Measurement(CRASH, message=_first_line(error), gpu=named.name)
        except JobError as error:
            return Measurement(ERROR, message=str(error), gpu=named.name)
        finally:
            self.busy_s[named.name] += time.perf_counter() - started
            self._free.put(named)
        if reply.get("status") != OK:
            return Measurement(reply.get("status", ERROR), message=reply.get("message", ""), gpu=named.name)
        return Measurement(OK, us=reply["us"], err_us=reply["err_us"], runs=reply["runs"], gpu=named.name)

    def close(self, kill: bool = False) -> None:
        """Drop queued tasks; with `kill` (Ctrl-C, an error) stop the running ones at once too: a
        busy worker's child is SIGKILLed and its task ends as a crash nobody reads."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        if kill:
            for named in self.workers:
                named.worker.close()
        self._executor.shutdown(wait=True)
        for named in self.workers:
            named.worker.close()

    def __enter__(self) -> GpuPool:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(kill=exc_type is not None)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def make_workers(gpus: Sequence[str], device: str, timeout_s: float) -> list[NamedWorker]:
    """One runner Worker per GPU id (CUDA_VISIBLE_DEVICES), or `len(gpus)` CPU workers off CUDA.
    Their base target is the torch fallback: cheap to load; every task loads its own candidate."""
    from nvfp4ctl.project import REPO_DIR
    from nvfp4ctl.runner.targets import FALLBACK_SUBMISSION, TORCH, TargetSpec
    from nvfp4ctl.runner.worker import Worker

    base = TargetSpec(TORCH, REPO_DIR / "kernels" / FALLBACK_SUBMISSION, "tune worker", "tune")
    named = []
    for gpu in gpus:
        env = {"CUDA_VISIBLE_DEVICES": gpu} if device == "cuda" else {}
        label = f"GPU {gpu}" if device == "cuda" else f"CPU worker {gpu}"
        named.append(NamedWorker(label, Worker(base, timeout_s, device=device, env=env)))
    return named
