"""build's compile time on a loaded machine: wall time says as much about the neighbours as about the
code, so where load inflated it build gives the compiler's CPU time beside it: submission.py's budget
line, and a kernel .cu's note. The compiler here is a stand-in that sleeps (wall far above CPU) or burns
CPU (the two alike)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.build import builder, compile, machine, submission_build
from nvfp4ctl.build.submission_sources import Extension
from nvfp4ctl.cli import app
from nvfp4ctl.commands.build_submission import _budget_line

SUBMISSION = '''from torch.utils.cpp_extension import load_inline
CUDA_SOURCE = r"""// nvfp4ctl: no-tensor-op
__global__ void k(float* p) { p[0] = 1.0f; }
"""
m = load_inline(name="plain", cpp_sources="", cuda_sources=CUDA_SOURCE, extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])
'''
KERNEL = "// nvfp4ctl: arch=sm_90a\n// nvfp4ctl: no-tensor-op\n__global__ void k(float* p) { p[0] = 1.0f; }\n"
SLEEPS = "import time; time.sleep(1.5)"  # a compile that waited for a core: 1.5 s of wall, almost no CPU
BURNS = "import time\nwhile time.process_time() < 1.5: pass"  # a compile that had its core: CPU ~ wall


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture()
def build_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`build submission.py` with a stand-in compiler running `script` (the compile's own CPU time against
    its wall time tells load apart)."""
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: None)
    submission = tmp_path / "submission.py"
    submission.write_text(SUBMISSION)

    def build(script: str):
        def command(extension: Extension, unit: Path, arch: str, code: str, folder: Path) -> list[str]:
            return [sys.executable, "-c", script]

        monkeypatch.setattr(submission_build, "_command", command)
        return CliRunner().invoke(app, ["build", str(submission)])

    return build


def test_a_compile_that_waited_for_the_cpu_gives_its_cpu_time_beside_the_wall_time(build_with) -> None:
    result = build_with(SLEEPS)
    assert result.exit_code == 0, result.output
    said = _flat(result.output)
    assert "of the leaderboard's 120 s for the whole `python submission.py`, inflated by load here: nvcc's CPU time 0." in said
    assert ", inflated by load: 0." in runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result


def test_a_compile_is_said_inflated_exactly_where_its_cpu_time_fell_short_of_its_wall_time(build_with) -> None:
    result = build_with(BURNS)
    assert result.exit_code == 0, result.output
    said = _flat(result.output)
    assert "compile: " in said
    entry = next(Path(os.environ["NVFP4CTL_CACHE"]).glob("submission-plain-*"))
    stored = json.loads((entry / "report.json").read_text())
    assert stored["compile_cpu_s"] >= 1.4  # the stand-in's own CPU time, measured through its rusage
    # a neighbour taking the core meanwhile (pytest -n) may still inflate this run's wall time: then it says so
    assert ("inflated by load" in said) == stored["compile_busy"]
    assert stored["compile_busy"] == (stored["compile_cpu_s"] < machine.BUSY_CPU_FRACTION * stored["compile_s"])


def test_a_cache_hit_keeps_its_compiles_cpu_time(build_with) -> None:
    first = build_with(SLEEPS)
    again = build_with(SLEEPS)
    assert again.exit_code == 0 and "hit" in again.output, again.output
    assert "inflated by load here" in _flat(first.output) and "inflated by load here" in _flat(again.output)


def test_the_budget_line_judges_a_busy_compile_by_its_cpu_time() -> None:
    """141.2 s of wall, 38.0 s of CPU on a loaded 2-core machine: not past the warning line."""
    line, warn = _budget_line(141.2, 1, busy_cpu_s=38.0)
    assert line.startswith("compile: 141.2 s for 1 unit = 118% of the leaderboard's 120 s for the whole"
                           " `python submission.py`, inflated by load here: nvcc's CPU time 38.0 s = 32% (nvcc's own time")
    assert not warn
    assert _budget_line(141.2, 1, busy_cpu_s=90.0)[1]  # past 60 % of CPU alone
    assert "inflated" not in _budget_line(141.2, 1)[0] and _budget_line(141.2, 1)[1]


@pytest.mark.parametrize("wall, cpu, busy", [
    (40.0, 38.0, False),  # had its core, whatever the load average said
    (141.2, 38.0, True),  # waited for one
    (40.0, 75.0, False),  # several threads: CPU above wall, no waiting
    (0.5, 0.01, False),  # too short to tell, and to matter
])
def test_busy_while(wall: float, cpu: float, busy: bool) -> None:
    """A compile that had its core was said "inflated by load" where the load average was above the CPU count."""
    assert machine.busy_while(wall, cpu) is busy


@pytest.fixture()
def build_kernel_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`build k.cu` (device code only, as with a CPU-only torch) with a stand-in compiler running `script`."""
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    import torch.utils.cpp_extension  # noqa: F401  imported already: the build importing it would add its own CPU time
    monkeypatch.setattr(builder.resources, "dump_sass", lambda binary: None)
    kernel = tmp_path / "k.cu"
    kernel.write_text(KERNEL)

    def build(script: str, *options: str, before: Callable[[], None] = lambda: None):
        def run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
            before()
            return compile.run_compiler([sys.executable, "-c", script], cwd, env)

        monkeypatch.setattr(compile, "_run", run)
        return CliRunner().invoke(app, ["build", *options, str(kernel)])

    return build


def test_a_kernel_compile_that_waited_for_the_cpu_gives_its_cpu_time_beside_the_wall_time(build_kernel_with) -> None:
    result = build_kernel_with(SLEEPS)
    assert result.exit_code == 0, result.output
    said = _flat(result.output)
    assert "note: k.cu (sm_90a): compiled in 1." in said
    assert "s of wall time, inflated by load here (a busy machine): its CPU time 0." in said
    # the figure holds build's own process time too (time.process_time(): torch's import), not the compiler's alone
    assert "s (the compiler's and its tools', and build's own)" in said
    entry = next(Path(os.environ["NVFP4CTL_CACHE"]).glob("k-sm_90a-*"))
    stored = json.loads((entry / "report.json").read_text())
    assert stored["compile_busy"] and stored["compile_cpu_s"] < 0.75 * stored["compile_s"]


def test_a_kernel_compile_is_said_inflated_exactly_where_its_cpu_time_fell_short_of_its_wall_time(build_kernel_with) -> None:
    result = build_kernel_with(BURNS, "-v")
    assert result.exit_code == 0, result.output
    said = _flat(result.output)
    entry = next(Path(os.environ["NVFP4CTL_CACHE"]).glob("k-sm_90a-*"))
    stored = json.loads((entry / "report.json").read_text())
    assert stored["compile_cpu_s"] >= 1.4  # the stand-in's own CPU time, measured through its rusage
    assert f"first compile took {stored['compile_s']:.1f} s, {stored['compile_cpu_s']:.1f} s of CPU" in said
    # a neighbour taking the core meanwhile (pytest -n) may still inflate this run's wall time: then it says so
    assert ("inflated by load" in said) == stored["compile_busy"]
    assert stored["compile_busy"] == (stored["compile_cpu_s"] < machine.BUSY_CPU_FRACTION * stored["compile_s"])


def test_a_kernel_cache_hit_is_not_said_inflated_by_its_first_compiles_load(build_kernel_with) -> None:
    """The row's time is this run's (reading the entry): the first compile's load is -v's to tell."""
    build_kernel_with(SLEEPS)
    again = build_kernel_with(SLEEPS)
    assert again.exit_code == 0 and "hit" in again.output, again.output
    assert "inflated by load" not in _flat(again.output)



def _burn_here() -> None:
    """1.5 s of CPU in this process, as torch's import before nvcc starts."""
    busy_until = time.process_time() + 1.5
    while time.process_time() < busy_until:
        pass


def test_a_kernel_builds_own_work_here_is_not_said_waiting(build_kernel_with) -> None:
    """The device-code build imports torch's cpp_extension in this process before nvcc starts (seconds, on a
    first build): CPU time here, not a wait for a core, which the compiler's children alone left out."""
    result = build_kernel_with("pass", "-v", before=_burn_here)
    assert result.exit_code == 0, result.output
    entry = next(Path(os.environ["NVFP4CTL_CACHE"]).glob("k-sm_90a-*"))
    stored = json.loads((entry / "report.json").read_text())
    assert stored["compile_cpu_s"] >= 1.4
    # a neighbour taking the core meanwhile (pytest -n) may still inflate this run's wall time: then it says so
    assert ("inflated by load" in _flat(result.output)) == stored["compile_busy"]
