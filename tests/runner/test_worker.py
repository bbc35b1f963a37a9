"""The watched child: results, job errors, timeouts (Python and C hangs), crashes, cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from load_margin import latency_bound, slowdown
from nvfp4ctl.errors import ExitCode, KernelCrash, KernelTimeout, ToolTimeout, UsageError
from nvfp4ctl.runner.worker import JobError, TargetLoadError, Worker

CALL = "runner_jobs:call_target"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); look at its state
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _wait_dead(pid: int, seconds: float = 3.0) -> bool:
    """Whether pid is gone (or a zombie) within `seconds`."""
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


KILL_GUARD_S = 60.0  # a watchdog that never kills fails the test after this, rather than hanging it


def _call_killing_after(worker: Worker, pid: int, guard_s: float) -> tuple[BaseException | None, float]:
    """(what worker.call of the hanging target raised, the wall seconds it took). Should the watchdog
    not kill the child within `guard_s`, the test kills it itself and fails."""
    raised: list[BaseException] = []

    def call() -> None:
        try:
            worker.call(CALL, label="test 6", data=None)
        except BaseException as error:  # handed to the test's thread
            raised.append(error)

    caller = threading.Thread(target=call, daemon=True)
    started = time.monotonic()
    caller.start()
    caller.join(guard_s)
    waited = time.monotonic() - started
    if caller.is_alive():
        os.kill(pid, signal.SIGKILL)  # the call then ends as a crash
        caller.join(10)
        pytest.fail(f"the watchdog had not killed the hung child after {guard_s:g} s")
    return (raised[0] if raised else None), waited


def test_returns_the_job_value_and_keeps_the_child(make_target):
    target = make_target("return [x * 2 for x in data]")
    with Worker(target, timeout_s=10, device="cpu") as worker:
        assert worker.call(CALL, label="test 1", data=[1, 2]) == [2, 4]
        first = worker.call("runner_jobs:child_pid", label="pid")
        assert worker.call("runner_jobs:child_pid", label="pid") == first
        assert worker.children_started == 1


def test_job_exception_comes_back_as_job_error_and_child_survives(make_target):
    with Worker(make_target("return 1"), timeout_s=10, device="cpu") as worker:
        pid = worker.call("runner_jobs:child_pid", label="pid")
        with pytest.raises(JobError, match="ValueError: bad value 42") as caught:
            worker.call("runner_jobs:raise_value_error", label="test 1")
        assert "raise_value_error" in caught.value.traceback_text
        assert (caught.value.type_name, caught.value.text) == ("ValueError", "bad value 42")
        with pytest.raises(JobError, match="pickle|Pickl"):
            worker.call("runner_jobs:unpicklable", label="test 2")
        assert worker.call("runner_jobs:child_pid", label="pid") == pid


@pytest.mark.parametrize(
    "body, header",
    [
        ("time.sleep(3600)", "import time"),  # stuck in Python
        ("ctypes.PyDLL(None).sleep(3600)", "import ctypes"),  # stuck in C, holding the GIL
    ],
    ids=["python-sleep", "c-sleep-holding-gil"],
)
def test_hanging_target_is_killed_at_the_timeout(make_target, body, header):
    with Worker(make_target(body, header), timeout_s=1.0, device="cpu") as worker:
        pid = worker.call("runner_jobs:child_pid", label="pid")
        load_before = slowdown()
        error, waited = _call_killing_after(worker, pid, KILL_GUARD_S)
        # the kill is a latency, so wall time; its margin over the timeout grows with the load
        assert waited < latency_bound(1.0, 1.0, load_before, slowdown()), f"killed after {waited:.2f} s"
        assert isinstance(error, KernelTimeout), error
        assert "possible deadlock: test 6 ran past 1 s; the child was killed" in str(error)
        assert not _alive(pid)
        # the next call gets a fresh child
        assert worker.call("runner_jobs:child_pid", label="pid") != pid
        assert worker.children_started == 2


def test_grandchildren_die_with_the_process_group(make_target, tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    body = f"""
    p = subprocess.Popen(["sleep", "3600"])
    open({str(pid_file)!r}, "w").write(str(p.pid))
    time.sleep(3600)
    """
    with Worker(make_target(body, "import subprocess, time"), timeout_s=1.5, device="cpu") as worker:
        with pytest.raises(KernelTimeout):
            worker.call(CALL, label="test 1", data=None)
    assert _wait_dead(int(pid_file.read_text()))


@pytest.mark.parametrize("ending", ["os._exit(1)", 'raise RuntimeError("CUDA error: an illegal memory access")'],
                         ids=["child-exits", "cuda-error"])
def test_a_crashed_childs_own_children_do_not_outlive_it(make_target, tmp_path, ending):
    """The child died by itself (a crash, or its exit after a CUDA error): what it started in its
    process group (a helper, a build) is killed too, not left running as an orphan."""
    pid_file = tmp_path / "grandchild.pid"
    body = f"""
    p = subprocess.Popen(["sleep", "3600"])
    open({str(pid_file)!r}, "w").write(str(p.pid))
    {ending}
    """
    with Worker(make_target(body, "import os, subprocess"), timeout_s=10, device="cpu") as worker:
        with pytest.raises(KernelCrash):
            worker.call(CALL, label="test 1", data=None)
        grandchild = int(pid_file.read_text())
        assert _wait_dead(grandchild), "the crashed child's subprocess is still running"


def test_a_stopped_childs_own_children_do_not_outlive_it(make_target, tmp_path):
    """close() after a normal run: the child exits on "stop"; a process it left behind goes with it."""
    pid_file = tmp_path / "grandchild.pid"
    header = f"""
    import subprocess
    _helper = subprocess.Popen(["sleep", "3600"])
    open({str(pid_file)!r}, "w").write(str(_helper.pid))
    """
    with Worker(make_target("return 1", header), timeout_s=10, device="cpu") as worker:
        assert worker.call(CALL, label="test 1", data=None) == 1
    assert _wait_dead(int(pid_file.read_text())), "the stopped child's subprocess is still running"


def test_child_that_exits_is_a_crash_with_its_last_lines(make_target):
    body = """
    print("about to fail", file=sys.stderr, flush=True)
    os._exit(1)
    """
    with Worker(make_target(body, "import os, sys"), timeout_s=10, device="cpu") as worker:
        with pytest.raises(KernelCrash) as caught:
            worker.call(CALL, label="test 2", data=None)
        message = str(caught.value)
        assert message.startswith("test 2 crashed: the child died (exit code 1)")
        assert "about to fail" in message
        assert caught.value.log_tail[-1] == "about to fail"
        assert worker.call("runner_jobs:say_hello", label="next") == "done"  # fresh child


def test_a_child_gone_just_before_the_job_is_sent_is_a_crash_not_a_broken_pipe(make_target, monkeypatch):
    """The child dies between the liveness check and the send (a target's background thread ending the
    process): the send hits a closed pipe. That is a crash (exit 4), never a BrokenPipeError traceback."""
    with Worker(make_target("return 1"), timeout_s=10, device="cpu") as worker:
        pid = worker.call("runner_jobs:child_pid", label="pid")
        process = worker._child.process
        os.kill(pid, signal.SIGKILL)
        process.join(5)
        monkeypatch.setattr(type(process), "is_alive", lambda self: True)  # as if it died a moment later
        with pytest.raises(KernelCrash, match="test 2 crashed: the child died"):
            worker.call(CALL, label="test 2", data=None)
        monkeypatch.undo()
        assert worker.call(CALL, label="test 3", data=None) == 1  # a fresh child


def test_segfault_is_a_crash_with_the_python_stack(make_target):
    with Worker(make_target("ctypes.string_at(0)", "import ctypes"), timeout_s=10, device="cpu") as worker:
        with pytest.raises(KernelCrash, match="killed by SIGSEGV") as caught:
            worker.call(CALL, label="test 3", data=None)
        assert "Segmentation fault" in str(caught.value)


def test_cuda_error_is_a_crash_and_restarts_the_child(make_target):
    body = 'raise RuntimeError("CUDA error: an illegal memory access was encountered")'
    with Worker(make_target(body), timeout_s=10, device="cpu") as worker:
        pid = worker.call("runner_jobs:child_pid", label="pid")
        with pytest.raises(KernelCrash, match="test 4 crashed with a CUDA error: RuntimeError: CUDA error: an illegal"):
            worker.call(CALL, label="test 4", data=None)
        assert worker.call("runner_jobs:child_pid", label="pid") != pid


@pytest.fixture
def jobs_as_harness(monkeypatch: pytest.MonkeyPatch) -> None:
    """runner_jobs.py stands where nvfp4ctl's jobs do: its frames are the harness's, the target's are not."""
    from nvfp4ctl.runner import raised

    monkeypatch.setattr(raised, "PACKAGE_DIR", Path(__file__).parent)


def test_a_cuda_errors_lines_start_in_the_targets_frame(make_target, jobs_as_harness):
    """They began in the job's frames (check's check_case, bench's jobs.py), above the target's, where a
    raised exception's began in the target's: the same cut now, the full log still on disk."""
    body = 'raise RuntimeError("CUDA error: an illegal memory access was encountered")'
    with Worker(make_target(body), timeout_s=10, device="cpu") as worker:
        with pytest.raises(KernelCrash) as caught:
            worker.call(CALL, label="test 4", data=None)
    tail = caught.value.log_tail
    assert tail[0] == "Traceback (most recent call last):" and "submission.py" in tail[1], tail
    assert not any("runner_jobs.py" in line for line in tail) and "no frame of the target" not in str(caught.value)
    assert "runner_jobs.py" in caught.value.log_path.read_text()


def test_a_cuda_error_at_the_jobs_own_later_call_keeps_its_trace_and_names_the_targets_launch(make_target,
                                                                                              jobs_as_harness):
    with Worker(make_target("return 1"), timeout_s=10, device="cpu") as worker:
        with pytest.raises(KernelCrash) as caught:
            worker.call("runner_jobs:call_then_fail_at_sync", label="test 4", data=None)
    tail = caught.value.log_tail
    assert any("in call_then_fail_at_sync" in line for line in tail), tail
    assert tail[-1].startswith("no frame of the target in this traceback: CUDA reports a kernel's fault at a later call")


def test_import_error_is_a_target_load_error(make_target):
    with Worker(make_target("return 1", "from os import no_such_name_here"), timeout_s=10, device="cpu") as worker:
        with pytest.raises(TargetLoadError, match="cannot load submission.py: ImportError") as caught:
            worker.call(CALL, label="test 1", data=None)
        assert any("no_such_name_here" in line for line in caught.value.log_tail)
        assert "exit code" not in str(caught.value)  # the child said why; its exit status adds nothing


# `sys.modules[name] = None` makes `import name` raise ModuleNotFoundError(name=name) whatever is installed
@pytest.mark.parametrize("module, says", [
    ("cutlass", "has no nvidia-cutlass-dsl (pip install nvidia-cutlass-dsl)"),
    ("triton", "has no triton (pip install triton)"),
    ("no_such_module_here", "has no module named 'no_such_module_here'"),
])
def test_a_module_this_python_lacks_is_one_line_naming_its_package_not_a_crash(make_target, module, says):
    """It was a crash (exit 4) with the child's traceback: "ModuleNotFoundError: No module named 'cutlass'"."""
    header = f"import sys\nsys.modules[{module!r}] = None\nimport {module}"
    lines: list[str] = []
    with Worker(make_target("return 1", header), timeout_s=10, device="cpu", on_output=lines.append) as worker:
        with pytest.raises(UsageError) as caught:
            worker.call(CALL, label="test 1", data=None)
    assert not isinstance(caught.value, KernelCrash)
    assert str(caught.value) == f"cannot load submission.py: it imports {module}, and the Python running it" \
                                f" ({sys.executable}) {says}"
    assert f"    import {module}" in lines  # -v still shows where it was imported


def test_a_missing_part_of_an_installed_package_is_the_submissions_own_error(make_target):
    """`import torch.cuda.not_a_module` under an installed torch said "has no torch (pip install torch)"."""
    with Worker(make_target("return 1", "import json.not_a_module"), timeout_s=10, device="cpu") as worker:
        with pytest.raises(TargetLoadError, match="cannot load submission.py: ModuleNotFoundError") as caught:
            worker.call(CALL, label="test 1", data=None)
    assert "pip install" not in str(caught.value) and "has no" not in str(caught.value)
    assert any("json.not_a_module" in line for line in caught.value.log_tail)


def test_usage_error_at_load_is_one_line_with_its_traceback_only_in_the_output(make_target):
    """A CPU-only torch (or a kernel for another GPU, or no nvcc) refuses the target with a
    UsageError in the child: the parent raises that one line (exit 2), not a crash with a traceback."""
    header = """
    from nvfp4ctl.errors import UsageError
    raise UsageError("this torch has no CUDA: kernel modules load only with a CUDA build of torch")
    """
    lines: list[str] = []
    with Worker(make_target("return 1", header), timeout_s=10, device="cpu", on_output=lines.append) as worker:
        with pytest.raises(UsageError) as caught:
            worker.call(CALL, label="test 1", data=None)
    assert not isinstance(caught.value, KernelCrash)
    assert str(caught.value) == ("cannot load submission.py: this torch has no CUDA: kernel modules load only"
                                 " with a CUDA build of torch")
    assert "Traceback (most recent call last):" in lines  # what -v echoes as [child] lines


def test_a_build_stopped_at_its_compile_limit_at_load_is_a_timeout_not_a_crash(make_target):
    """check/bench's load builds a --kernel: its compiler stopped past the limit is one line and exit 3, where it
    was a crash (exit 4) with the child's traceback, as a build that failed."""
    header = """
    from nvfp4ctl.build.compile import CompileTimeout
    raise CompileTimeout("the compiler ran past 1800 s and was stopped (the limit is fixed)", "")
    """
    with Worker(make_target("return 1", header), timeout_s=10, device="cpu") as worker:
        with pytest.raises(ToolTimeout) as caught:
            worker.call(CALL, label="test 1", data=None)
    assert caught.value.exit_code == ExitCode.TIMEOUT and not isinstance(caught.value, KernelCrash)
    assert str(caught.value) == "cannot load submission.py: the compiler ran past 1800 s and was stopped (the limit is fixed)"


def test_submission_without_custom_kernel_is_the_users_input_not_a_crash(tmp_path, monkeypatch):
    """Where the parent's reading of the text let it through, the child says the same one line (exit 2)."""
    from nvfp4ctl.runner.targets import SUBMISSION, TargetSpec

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "submission.py"
    path.write_text("def kernel(data):\n    return data\n")
    with Worker(TargetSpec(SUBMISSION, path, "submission.py"), timeout_s=10, device="cpu") as worker:
        with pytest.raises(UsageError) as caught:
            worker.call(CALL, label="test 1", data=None)
    assert not isinstance(caught.value, KernelCrash)
    assert str(caught.value) == "submission.py: defines no custom_kernel(data) function, which GPU MODE calls"


def test_child_output_is_captured_and_echoed(make_target):
    lines: list[str] = []
    with Worker(make_target("return 1"), timeout_s=10, device="cpu", on_output=lines.append) as worker:
        worker.call("runner_jobs:say_hello", label="hello")
    assert "hello from the child" in lines


def test_close_kills_a_busy_child(make_target):
    worker = Worker(make_target("time.sleep(3600)", "import time"), timeout_s=30, device="cpu")
    pid = worker.call("runner_jobs:child_pid", label="pid")
    worker._send(worker._child, ("job", CALL, {"data": None}))  # the child is now busy sleeping
    started = time.monotonic()
    worker.close()
    assert time.monotonic() - started < 1.5
    assert not _alive(pid)


def _parent_with_a_hung_child(target, tmp_path) -> tuple[subprocess.Popen, int]:
    """A parent process whose Worker's child is inside the target's custom_kernel (which hangs), and
    the child's pid."""
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from pathlib import Path
        from nvfp4ctl.runner.targets import TargetSpec
        from nvfp4ctl.runner.worker import Worker
        if __name__ == "__main__":
            with Worker(TargetSpec("submission", Path({str(target.path)!r}), "s"), timeout_s=60, device="cpu") as worker:
                print(worker.call("runner_jobs:child_pid", label="pid"), flush=True)
                worker.call("runner_jobs:call_target", label="hang", data=None)
    """))
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return parent, int(parent.stdout.readline())


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "parent-killed"])
def test_child_dies_with_its_parent(make_target, tmp_path, signum):
    """Ctrl-C: the Worker's context manager kills the busy child. SIGKILL: PR_SET_PDEATHSIG does."""
    target = make_target("time.sleep(3600)", "import time")
    parent, child = _parent_with_a_hung_child(target, tmp_path)
    assert _alive(child)
    time.sleep(0.3)  # let the parent enter its wait
    parent.send_signal(signum)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGHUP], ids=["parent-killed", "parent-hung-up"])
@pytest.mark.parametrize(
    "body, header",
    [("time.sleep(3600)", "import time"), ("ctypes.PyDLL(None).sleep(3600)", "import ctypes")],
    ids=["python-sleep", "c-sleep-holding-gil"],
)
def test_the_childs_process_group_dies_with_its_parent(make_target, tmp_path, signum, body, header):
    """The parent SIGKILLed (or its terminal gone): the child dies of PR_SET_PDEATHSIG, and what it
    started in its own process group (a compiler, a helper) goes too, even while the child is stuck in
    C code holding the GIL, where no Python-level handler of the child could run."""
    pid_file = tmp_path / "grandchild.pid"
    target = make_target(body, f"""{header}
import subprocess
_helper = subprocess.Popen(["sleep", "3600"])
open({str(pid_file)!r}, "w").write(str(_helper.pid))
""")
    parent, child = _parent_with_a_hung_child(target, tmp_path)
    grandchild = int(pid_file.read_text())
    time.sleep(0.3)  # let the job reach custom_kernel
    parent.send_signal(signum)
    parent.wait(timeout=10)
    try:
        assert _wait_dead(child, 5.0), "the child outlived its parent"
        assert _wait_dead(grandchild, 5.0), "the child's subprocess outlived the parent"
    finally:
        for pid in (child, grandchild):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)  # not left running by the test either


@pytest.mark.parametrize(
    "error, crash",
    [
        (RuntimeError("CUDA error: an illegal memory access was encountered"), True),
        (RuntimeError("nvfp4_gemm launch failed: an illegal memory access was encountered"), True),
        (RuntimeError("CUDA error: device-side assert triggered"), True),
        (RuntimeError("cuBLAS error in matmul: CUDA driver failure"), True),
        (RuntimeError("a must be a CUDA tensor, got cpu"), False),
        (RuntimeError("c must be float16\nframe #0: c10::Error::Error(...) cuda"), False),
        (ValueError("CUDA error"), False),  # not a RuntimeError: raised by Python code, context fine
    ],
)
def test_which_errors_poison_the_cuda_context(error, crash):
    from nvfp4ctl.runner.child import is_cuda_error

    assert is_cuda_error(error) is crash


def test_logs_are_removed_unless_a_crash_left_something_to_read(make_target, tmp_path):
    def child_folders() -> list[Path]:
        return sorted(tmp_path.glob("nvfp4ctl-child-*"))

    with Worker(make_target("return 1"), timeout_s=10, device="cpu") as worker:
        worker.call("runner_jobs:say_hello", label="hello")
    assert child_folders() == []
    body = 'print("last words", file=sys.stderr, flush=True)\nos._exit(3)'
    with Worker(make_target(body, "import os, sys"), timeout_s=10, device="cpu") as worker:
        with pytest.raises(KernelCrash) as caught:
            worker.call(CALL, label="test 1", data=None)
    assert caught.value.log_path.read_text().strip() == "last words"
    assert [p.name for p in child_folders()] == [caught.value.log_path.parent.name]


def test_an_interrupt_during_the_polite_stop_still_kills_the_group(make_target, tmp_path, monkeypatch):
    """A second Ctrl-C (or SIGTERM) while close() waits for an idle child to stop: the child and what it
    started in its process group are killed all the same, and the interrupt goes on."""
    pid_file = tmp_path / "grandchild.pid"
    header = f"""
    import subprocess
    _helper = subprocess.Popen(["sleep", "3600"])
    open({str(pid_file)!r}, "w").write(str(_helper.pid))
    """
    worker = Worker(make_target("return 1", header), timeout_s=10, device="cpu")
    pid = worker.call("runner_jobs:child_pid", label="pid")
    process = worker._child.process
    join = type(process).join

    def interrupted_join(self, timeout=None):
        if timeout == 2.0:  # the polite wait for "stop"
            raise KeyboardInterrupt
        return join(self, timeout)

    monkeypatch.setattr(type(process), "join", interrupted_join)
    worker._child.conn.send = lambda message: None  # the child never hears "stop": only the kill ends it
    with pytest.raises(KeyboardInterrupt):
        worker.close()
    monkeypatch.undo()
    assert _wait_dead(pid), "the child outlived an interrupted close()"
    assert _wait_dead(int(pid_file.read_text())), "the child's subprocess outlived an interrupted close()"
    assert worker._child is None


def test_an_unspecified_launch_failure_names_a_trap_as_a_possible_deadlock(make_target):
    """A bounded wait that traps (every wait of the shipped kernels, after 2 s) surfaces as this error alone:
    the crash says what it likely means instead of leaving a B200 user to guess at a fault."""
    body = 'raise RuntimeError("CUDA error: unspecified launch failure")'
    with Worker(make_target(body), timeout_s=10, device="cpu") as worker:
        with pytest.raises(KernelCrash) as caught:
            worker.call(CALL, label="test 2", data=None)
    first = str(caught.value).splitlines()[0]
    assert first.startswith("test 2 crashed with a CUDA error: RuntimeError: CUDA error: unspecified launch failure")
    assert "trap when a wait lasts over 2 s, a likely deadlock" in first


def test_other_cuda_errors_get_no_trap_note(make_target):
    body = 'raise RuntimeError("CUDA error: an illegal memory access was encountered")'
    with Worker(make_target(body), timeout_s=10, device="cpu") as worker:
        with pytest.raises(KernelCrash) as caught:
            worker.call(CALL, label="test 4", data=None)
    assert "trap" not in str(caught.value)


def test_a_jobs_progress_reaches_the_parent_and_its_timeout(make_target):
    """The child reports work done on the way (runner/progress.py): each report goes to on_progress, and a
    timeout after one carries the latest and its age, so the caller can tell slow from stuck."""
    heard, loaded = [], []
    limit = 2.0 * slowdown()
    with Worker(make_target("return 1"), timeout_s=limit, device="cpu", on_progress=heard.append,
                on_loaded=lambda: loaded.append(True)) as worker:
        with pytest.raises(KernelTimeout) as raised:
            worker.call("runner_jobs:report_then_hang", label="slow job", reports=2)
    assert loaded == [True]
    assert heard == [{"done": 1}, {"done": 2}]
    assert raised.value.progress == {"done": 2} and 0 < raised.value.progress_age_s <= limit + 1
