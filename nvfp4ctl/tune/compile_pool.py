"""Compiling candidates: one build per distinct configuration, in parallel on every CPU core.

A process pool (spawned workers) runs `compile_candidate`, which is nvfp4ctl.build's own
`build_kernel` with the candidate's `-D` defines: the content-keyed cache makes a repeated
configuration (same defines) a cache hit, in this run, a resumed one or a later `build`.
A candidate with register spills is rejected here, before any GPU time.

Each worker runs in its own process group: Ctrl-C at the terminal reaches the parent alone, which
stops submitting and ends every worker's group at once (the worker, its nvcc and the tools nvcc
runs) instead of letting the running and queued compiles finish.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from nvfp4ctl.build.device_data import device_data_digest_of
from nvfp4ctl.build.elf_sections import file_sections
from nvfp4ctl.build.host_code import host_digest_of
from nvfp4ctl.build.machine import cpu_cores
from nvfp4ctl.tune.knobs import Config
from nvfp4ctl.tune.results import COMPILE_ERROR, OK, SPILLS, BuildResult, spill_reason

CompileFn = Callable[[str, str, tuple[str, ...]], BuildResult]
ENDING_S = 5.0  # how long close(cancel=True) waits for the ended workers' groups, before and after SIGKILL


def kernel_artifact(source: str, arch: str, defines: tuple[str, ...], key: str) -> dict:
    """What a GPU worker needs to load this build (from the cache: tune.jobs.load_candidate). The
    cache key tells two builds with the same defines apart (the table changed between them)."""
    return {"kind": "kernel", "source": source, "arch": arch, "defines": list(defines), "key": key}


def compile_candidate(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
    """Build one candidate (cached) and summarise its resources; never raises for a compile error."""
    from nvfp4ctl.build import CompileError, build_kernel
    from nvfp4ctl.build.kernel_names import readable_names

    started = time.perf_counter()
    try:
        report = build_kernel(Path(source), arch, defines=defines)
    except CompileError as error:
        return BuildResult(COMPILE_ERROR, compile_s=round(time.perf_counter() - started, 2), message=str(error))
    main = report.main_kernel
    kernels = report.named_kernels()
    spilling = [f for f in report.functions if f.spill_stores or f.spill_loads]
    spilled = tuple((name, f.spill_stores, f.spill_loads)
                    for name, f in zip(readable_names([f.name for f in spilling]), spilling))
    host, data = _module_digests(report.module_path, report.module_name)
    return BuildResult(
        status=SPILLS if spilled else OK,
        registers=main.registers if main else 0,
        shared_bytes=main.shared_bytes if main else 0,
        stack_bytes=report.stack_bytes,
        spill_bytes=report.spill_bytes,
        compile_s=report.compile_s if not report.cache_hit else round(time.perf_counter() - started, 2),
        cache_hit=report.cache_hit,
        message=spill_reason(spilled),
        artifact=kernel_artifact(source, arch, defines, report.key),
        spilled=spilled,
        kernel=next((name for name, f in kernels if f is main), ""),
        kernels=tuple((name, f.registers, f.shared_bytes) for name, f in kernels),
        code_digest=code_digest(report.entry),
        host_digest=host,
        data_digest=data,
    )


def _module_digests(module: Path | None, name: str | None) -> tuple[str, str]:
    """(host_digest, device_data_digest) of a built module, the file read and its ELF sections parsed once."""
    sections = file_sections(module)
    return host_digest_of(sections, name), device_data_digest_of(module, sections)


def code_digest(entry: Path) -> str:
    """resources.sass_digest of the SASS a cache entry keeps: its functions alone, not the source's path
    (`identifier = SOURCE`, the same for every candidate but no code); "" where the entry has no SASS."""
    from nvfp4ctl.build.resources import sass_digest, saved_sass

    sass = saved_sass(entry)
    return "" if sass is None else sass_digest(sass)


def with_current_digests(build: BuildResult) -> BuildResult:
    """A build an earlier nvfp4ctl saved, its code_digest, host_digest and data_digest worked out again from its
    cache entry as compile_candidate works them out now: an earlier one hashed the SASS listing another way and
    kept no host or device data digest, so its build could never be found the same program as one built now.
    Where the entry or its module is gone, the digest is "" (nothing claimed)."""
    from nvfp4ctl.build import cache
    from nvfp4ctl.build.builder import module_name

    artifact = build.artifact or {}
    if artifact.get("kind") != "kernel":
        return replace(build, code_digest="", host_digest="", data_digest="")
    source, arch, key = Path(artifact["source"]), str(artifact["arch"]), str(artifact["key"])
    entry, name = cache.entry_dir(source, arch, key), module_name(source, arch, key)
    host, data = _module_digests(entry / f"{name}.so", name)
    return replace(build, code_digest=code_digest(entry), host_digest=host, data_digest=data)


class CompilePool:
    """submit(config) -> Future[BuildResult]; one future per distinct configuration."""

    def __init__(self, source: Path, arch: str, jobs: int | None = None,
                 compile_fn: CompileFn = compile_candidate, executor: Executor | None = None) -> None:
        self.source, self.arch = str(source), arch
        self.jobs = jobs or cpu_cores()
        self.compile_fn = compile_fn
        self._executor = executor or ProcessPoolExecutor(max_workers=self.jobs, mp_context=get_context("spawn"),
                                                         initializer=_own_process_group)
        self._futures: dict[tuple[str, ...], Future[BuildResult]] = {}

    def submit(self, config: Config | None) -> Future[BuildResult]:
        """`None` is the shipped build (no defines: the kernel reads its dispatch table)."""
        defines = () if config is None else config.defines()
        if defines not in self._futures:
            self._futures[defines] = self._executor.submit(self.compile_fn, self.source, self.arch, defines)
        return self._futures[defines]

    def forget(self, config: Config | None) -> None:
        """Build this configuration again on the next submit (its sources changed)."""
        self._futures.pop(() if config is None else config.defines(), None)

    def close(self, cancel: bool = False) -> None:
        """Wait for the compiles; with `cancel` (Ctrl-C, SIGTERM, an error) drop the queued ones and end
        the running ones now: each worker's process group gets SIGTERM (ninja passes it on to its own).
        A worker so ended never runs its build's cleanup: once its group is gone, the staging folders it
        made in the build cache are removed here."""
        processes = dict(getattr(self._executor, "_processes", None) or {})  # shutdown forgets them
        self._executor.shutdown(wait=not cancel, cancel_futures=cancel)
        if cancel and processes:
            for pid in processes:
                try:
                    os.killpg(pid, signal.SIGTERM)
                except ProcessLookupError:  # still starting, not yet in its own group: the worker alone
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGTERM)
            _await_ended(processes)
            from nvfp4ctl.build.cache import remove_staging_of

            remove_staging_of(processes)

    def __enter__(self) -> CompilePool:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(cancel=exc_type is not None)


def _await_ended(processes: dict[int, Any]) -> None:
    """Until the workers (multiprocessing processes by pid, their groups' leaders) and what they started
    have ended, at most ENDING_S, then ENDING_S more after SIGKILL to what is left: a tool still writing
    into a staging folder would put back what is removed."""
    for force in (False, True):
        deadline = time.monotonic() + ENDING_S
        for process in processes.values():
            with contextlib.suppress(OSError, ValueError, AssertionError):  # reaped by the executor's own thread
                process.join(max(deadline - time.monotonic(), 0))
        alive = [pid for pid in processes if _group_alive(pid)]
        while alive and time.monotonic() < deadline:
            time.sleep(0.02)
            alive = [pid for pid in alive if _group_alive(pid)]
        if not alive:
            return
        if not force:
            for pid in alive:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the number went to another user's group: ours has ended
        return False
    return True


def _own_process_group() -> None:
    """Worker initializer (see the module's docstring). Its warnings are the parent's to say, once (a
    $CUTLASS_PATH passed over: tune.setup.resolve_kernel), not one per worker over the progress lines."""
    from nvfp4ctl.console import QUIET, set_verbosity

    os.setpgid(0, 0)
    set_verbosity(QUIET)
    _stdout_closed()
    _ended_with_parent()


def _stdout_closed() -> None:
    """The worker's stdout onto /dev/null: its results go back through the pool's pipes, and an inherited
    stdout kept open by a worker (or the nvcc it runs) would keep `tune ... | tail` waiting for its end."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
    finally:
        os.close(devnull)


PARENT_POLL_S = 0.2


def _ended_with_parent() -> None:
    """Once the tune is gone (`kill -9`: no close() ends the workers), end this worker's process group, its
    compile with it, within PARENT_POLL_S: in a group of its own, no signal meant for the tune's reaches it,
    and it would compile on for minutes, holding the tune's stdout and the pool's resource tracker alive.
    A thread watching for the worker to be handed to another parent, not prctl(PR_SET_PDEATHSIG), which
    follows the thread that started the worker rather than the tune, and exists on Linux alone."""
    import multiprocessing
    import threading

    parent = multiprocessing.parent_process()
    expected = parent.pid if parent is not None else os.getppid()

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(PARENT_POLL_S)
        os.killpg(0, signal.SIGKILL)

    threading.Thread(target=watch, name="ended-with-parent", daemon=True).start()
