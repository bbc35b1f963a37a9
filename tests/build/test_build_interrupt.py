"""`kill PID` during a build ends the compiler and everything it started, for a kernel .cu and for a
submission.py alike (compile.run_compiler): a stand-in toolkit whose nvcc starts a tool of its own
(as nvcc runs `sh -c cudafe++ ...`) and waits for it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from process_tree import stand_in_toolkit, wait_dead
from nvfp4ctl.build import compile as build_compile
from nvfp4ctl.errors import ExitCode
from nvfp4ctl.runlog import read

FIXTURES = Path(__file__).parent / "fixtures"
ZERO_GEMM = FIXTURES / "zero_gemm.cu"  # no arch, no tensor-core op (tests/build/conftest.py)
SUBMISSION = textwrap.dedent('''
    from torch.utils.cpp_extension import load_inline

    CUDA = r"""
    __global__ void fill(float* x) { x[threadIdx.x] = 1.0f; }
    """
    module = load_inline(name="fill_ext", cpp_sources="", cuda_sources=CUDA,
                         extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])


    def custom_kernel(data):
        return data
''')


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads process states from /proc (Linux)")
@pytest.mark.parametrize("target, stop", [("kernel", "kill PID"), ("submission", "kill PID"),
                                          ("kernel", "group SIGKILL")])
def test_kill_during_a_build_ends_the_compiler_and_what_it_started(tmp_path: Path, target: str, stop: str) -> None:
    """A submission's build left nvcc's `sh -c cudafe++ ...` compiling into a staging folder already
    deleted once nvfp4ctl had said "interrupted"; a kernel's build left cicc. A SIGKILL to nvfp4ctl's
    whole process group (a CI job cancelled) must reach them too: in a session of their own they lived on."""
    import nvfp4ctl

    tool_pid = tmp_path / "tool.pid"
    if target == "kernel":
        source = ZERO_GEMM
    else:
        source = tmp_path / "submission.py"
        source.write_text(SUBMISSION)
    memory = tmp_path / "MEMORY.md"
    env = dict(os.environ, CUDA_HOME=str(stand_in_toolkit(tmp_path / "cuda", tool_pid)),
               NVFP4CTL_CACHE=str(tmp_path / "cache"), NVFP4CTL_MEMORY=str(memory),
               PYTHONPATH=os.pathsep.join([str(Path(nvfp4ctl.__file__).resolve().parents[1]), *sys.path]))
    env.pop("CUDA_PATH", None)
    parent = subprocess.Popen([sys.executable, "-m", "nvfp4ctl", "build", str(source), "--arch", "sm_90a"],
                              cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)  # a group of its own, as a CI job's
    tool = None
    try:
        deadline = time.monotonic() + 120
        while not tool_pid.is_file():
            assert parent.poll() is None, parent.stderr.read() if parent.stderr else ""
            assert time.monotonic() < deadline, "the stand-in nvcc never ran"
            time.sleep(0.05)
        tool = int(tool_pid.read_text())
        if stop == "kill PID":
            parent.send_signal(signal.SIGTERM)  # nvfp4ctl's pid alone
            assert parent.wait(timeout=30) == ExitCode.INTERRUPTED, parent.stderr.read() if parent.stderr else ""
        else:
            os.killpg(parent.pid, signal.SIGKILL)  # no handler runs: the signal itself must reach the tools
            assert parent.wait(timeout=30) == -signal.SIGKILL
    finally:
        if parent.poll() is None:
            parent.kill()
    dead = wait_dead(tool, build_compile.STOP_GRACE_S + 5.0)
    if not dead:
        os.kill(tool, signal.SIGKILL)  # not left running by the test either
    assert dead, "the compiler's tool outlived the interrupted build"
    if stop == "kill PID":
        entry = read(memory)[-1]
        assert entry.result == "interrupted"
        assert f"{source.name}@" in entry.target, entry.target  # what was being built, as tune logs it: not "-"


def test_a_compiler_past_its_timeout_is_ended_with_what_it_started(tmp_path: Path) -> None:
    tool_pid = tmp_path / "tool.pid"
    nvcc = stand_in_toolkit(tmp_path / "cuda", tool_pid) / "bin" / "nvcc"
    with pytest.raises(subprocess.TimeoutExpired):
        build_compile.run_compiler([str(nvcc), "-c", "x.cu"], tmp_path, dict(os.environ), timeout_s=1.0)
    tool = int(tool_pid.read_text())
    dead = wait_dead(tool, build_compile.STOP_GRACE_S + 5.0)
    if not dead:
        os.kill(tool, signal.SIGKILL)
    assert dead, "the compiler's tool outlived the timeout"


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds (Linux 5.3+)")
def test_the_tools_below_the_compiler_are_signalled_through_pidfds_never_by_number(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool that exits during the grace period frees its number, which another process may take: the
    SIGKILL after the grace period went by number to every process found before it."""
    by_number: list[int] = []
    real_kill = os.kill
    monkeypatch.setattr(os, "kill", lambda pid, signum: (by_number.append(pid), real_kill(pid, signum)))
    tool_pid = tmp_path / "tool.pid"
    nvcc = stand_in_toolkit(tmp_path / "cuda", tool_pid) / "bin" / "nvcc"
    with pytest.raises(subprocess.TimeoutExpired):
        build_compile.run_compiler([str(nvcc), "-c", "x.cu"], tmp_path, dict(os.environ), timeout_s=1.0)
    tool = int(tool_pid.read_text())
    assert wait_dead(tool, 5.0)
    assert tool not in by_number
