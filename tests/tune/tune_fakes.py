"""Helpers the tune tests import by name (a conftest is not importable by name: pytest may have
loaded another folder's conftest under that module name first)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nvfp4ctl.build.knobs import Knob
from nvfp4ctl.tune.knobs import KernelKnobs
from nvfp4ctl.tune.gpu_pool import PAIR_JOB
from nvfp4ctl.tune.results import OK, BuildResult

FIXTURES = Path(__file__).parent / "fixtures"
TINY = FIXTURES / "tiny_knobs.cu"


def make_knobs(*specs: tuple[str, tuple[int, ...], int, str]) -> KernelKnobs:
    """KernelKnobs from (name, values, default, scope) without a source file."""
    knobs = tuple(Knob(name, default, values, scope, "test knob", i + 1) for i, (name, values, default, scope) in enumerate(specs))
    return KernelKnobs(source=Path("fake.cu"), knobs=knobs, dispatch=None)


def fake_compile(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
    """A 'build' that only remembers its defines: the artifact a FakeWorker reads its time from."""
    values = dict(d.split("=", 1) for d in defines if "=" in d)
    return BuildResult(OK, registers=100, artifact={"kind": "fake", "values": values})


class FakeWorker:
    """Stands in for a runner Worker: sleeps `delay_s` per task and answers from `timing(values, case)`;
    a pair task (the search's rematch) with both candidates' answers."""

    def __init__(self, timing: Callable[[dict, Any], dict], delay_s: float = 0.0, name: str = "fake GPU") -> None:
        self.timing, self.delay_s, self.gpu = timing, delay_s, name
        self.calls: list[str] = []
        self.busy: list[tuple[float, float]] = []  # (start, end) of each task, time.perf_counter
        self.closed = False

    def call(self, job: str, *, label: str, timeout_s: float | None = None, **payload: Any) -> Any:
        started = time.perf_counter()
        time.sleep(self.delay_s)
        self.busy.append((started, time.perf_counter()))
        self.calls.append(label)
        artifact = payload["artifact"] or {"values": {}}
        answer = self.timing(artifact["values"], payload["case"])
        if job != PAIR_JOB:
            return answer
        other = self.timing(payload["challenger"]["values"], payload["case"])
        return {"status": OK, "current": answer, "challenger": other}  # each side its own status, as measure_pair

    def close(self) -> None:
        self.closed = True


def slow_compile(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
    """A 'build' (in a spawned compile worker) that runs `sleep 60` as nvcc would run, its pid left in
    the folder `source` names."""
    import subprocess

    process = subprocess.Popen(["sleep", "60"])
    (Path(source) / f"{process.pid}.pid").write_text("")
    process.wait()
    return BuildResult(OK)


def staging_compile(source: str, arch: str, defines: tuple[str, ...]) -> BuildResult:
    """A 'build' (in a spawned compile worker) that compiles as build_kernel does, in a staging folder of the
    build cache, where a compiler stand-in runs for 60 s and, told to stop (SIGTERM), still writes its object
    half a second later, as a tool finishing its file does; the stand-in's pid is left in the folder `source`
    names."""
    import shlex
    import subprocess

    from nvfp4ctl.build import cache

    entry = cache.entry_dir(Path(source) / "tiny_knobs.cu", arch, "0" * 16 + "-".join(defines))
    with cache.staging(entry) as folder:
        (folder / "tiny_knobs.cuda.o").write_text("")
        late = shlex.quote(str(folder))
        process = subprocess.Popen(["sh", "-c", f"trap 'sleep 0.5; mkdir -p {late}; : > {late}/late.o; exit 0' TERM;"
                                                " sleep 60 & wait"])
        (Path(source) / f"{process.pid}.pid").write_text("")
        process.wait()
    return BuildResult(OK)


def stuck_measure(target: Any, *, artifact: dict, case: Any, **settings: Any) -> dict:
    """A 'timing' (in a GPU worker's child) that starts a helper, `sleep 60`, as a kernel's job may, then hangs
    as a stuck kernel would; the child's and the helper's pids are left in the folder `artifact` names."""
    import os
    import subprocess

    helper = subprocess.Popen(["sleep", "60"])
    folder = Path(artifact["folder"])
    (folder / f"{helper.pid}.pid").write_text("")
    (folder / f"{os.getpid()}.pid").write_text("")
    time.sleep(60)
    return {"status": OK}
