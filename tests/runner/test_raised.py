"""What a crash of the target's call shows of its traceback (runner/raised.py)."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from nvfp4ctl.runner import raised


def _raise_through(harness: Path, target: Path) -> BaseException:
    """An exception the target raises, called from the harness file: each file's code runs under its own name."""
    target.write_text("def kernel(data):\n    raise ValueError('no tile config')\n")
    harness.write_text("def call(kernel, data):\n    try:\n        kernel(data)\n"
                       "    except Exception as error:\n        return error\n")
    names: dict = {}
    exec(compile(target.read_text(), str(target), "exec"), names)
    calls: dict = {}
    exec(compile(harness.read_text(), str(harness), "exec"), calls)
    return calls["call"](names["kernel"], None)


def test_a_shipped_kernels_frames_stay_where_a_wheel_keeps_it_inside_the_package(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every frame under nvfp4ctl/ was dropped from the top, and a wheel keeps the shipped kernels in
    nvfp4ctl/_shipped/: an exception of kernels/torch_dequant lost its whole traceback."""
    package = tmp_path / "nvfp4ctl"
    (package / "_shipped" / "kernels").mkdir(parents=True)
    monkeypatch.setattr(raised, "PACKAGE_DIR", package)
    monkeypatch.setattr(raised, "SHIPPED_DIR", package / "_shipped")
    error = _raise_through(package / "jobs.py", package / "_shipped" / "kernels" / "fallback.py")
    headline, *trace = raised.describe_raised(error)
    assert headline == "custom_kernel raised ValueError: no tile config"
    assert any("fallback.py" in line for line in trace) and not any("jobs.py" in line for line in trace)


def test_the_harness_frames_above_the_target_are_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "nvfp4ctl"
    package.mkdir()
    monkeypatch.setattr(raised, "PACKAGE_DIR", package)
    monkeypatch.setattr(raised, "SHIPPED_DIR", package / "_shipped")
    error = _raise_through(package / "jobs.py", tmp_path / "submission.py")
    trace = raised.describe_raised(error)[1:]
    assert any("submission.py" in line for line in trace) and not any("jobs.py" in line for line in trace)


@pytest.mark.parametrize("error, constraint", [
    (ValueError("unsupported shape (m=7, n=4096, k=14336, l=1): m must be a multiple of 128 (the kernel's tile M)"),
     "m must be a multiple of 128 (the kernel's tile M)"),
    (ValueError("unsupported shape (m=7, k=4096, l=1): k must be a multiple of 256"), "k must be a multiple of 256"),
    (ValueError("unsupported groups: group 2: n must be a multiple of 128"), "group 2: n must be a multiple of 128"),
    (ValueError("unsupported shape"), "unsupported shape"),
    (ValueError("no tile config for m=7"), None),
    (RuntimeError("unsupported shape (m=7, n=1, k=1, l=1): m must be ..."), None),
    (ValueError("an unsupported shape (m=7)"), None),
])
def test_a_bindings_shape_refusal_is_read_for_its_constraint(error: BaseException, constraint: str | None) -> None:
    assert raised.refusal_of(error) == constraint
    assert raised.raised_from(error).refused == constraint


TORCH_SYNC = Path(sysconfig.get_paths()["purelib"]) / "torch" / "cuda" / "__init__.py"


def _frame(path: Path, line: int, function: str, code: str) -> list[str]:
    return [f'  File "{path}", line {line}, in {function}', f"    {code}"]


def _crash_log(*frames: list[str]) -> list[str]:
    """A child's log ending in a CUDA error, as torch words it (the message runs over several lines)."""
    return ["kernel: launching 4 CTAs", "Traceback (most recent call last):", *(line for frame in frames for line in frame),
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "CUDA kernel errors might be asynchronously reported at some other API call"]


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    package = tmp_path / "nvfp4ctl"
    package.mkdir()
    monkeypatch.setattr(raised, "PACKAGE_DIR", package)
    monkeypatch.setattr(raised, "SHIPPED_DIR", package / "_shipped")
    return package


def test_a_cuda_errors_trace_starts_in_the_target_as_a_raised_ones_does(package: Path, tmp_path: Path) -> None:
    """The crash's lines began with nvfp4ctl's check_case and _call_and_compare (bench's: three frames of
    jobs.py and the call counter) before the submission's frame, where a raised exception's began there."""
    target = _frame(tmp_path / "submission.py", 9, "custom_kernel", "gemm(a, b, c)")
    log = _crash_log(_frame(package / "check" / "job.py", 64, "check_case", "first = _call_and_compare(...)"),
                     _frame(package / "bench" / "call_progress.py", 245, "counted", "output = target(data)"),
                     target, _frame(TORCH_SYNC, 800, "synchronize", "torch._C._cuda_synchronize()"))
    trace = raised.crash_trace(log)
    assert trace[:4] == ["kernel: launching 4 CTAs", "Traceback (most recent call last):", *target]
    assert trace[-2:] == log[-2:] and "job.py" not in "\n".join(trace) and raised.LATER_CALL_NOTE not in trace


def test_a_torch_wrapper_around_the_target_still_leaves_the_targets_frame(package: Path, tmp_path: Path) -> None:
    """custom_kernel under @torch.no_grad(): torch's wrapper is called first, the target's frame below it."""
    wrapper = _frame(TORCH_SYNC.parent.parent / "utils" / "_contextlib.py", 116, "decorate_context", "return func()")
    log = _crash_log(_frame(package / "check" / "job.py", 64, "check_case", "first = ..."), wrapper,
                     _frame(tmp_path / "submission.py", 9, "custom_kernel", "gemm(a, b, c)"))
    trace = raised.crash_trace(log)
    assert trace[2:4] == wrapper and raised.LATER_CALL_NOTE not in trace


def test_a_cuda_error_reported_at_nvfp4ctls_own_call_keeps_its_whole_trace_and_says_why(package: Path) -> None:
    """The fault surfaced at the harness's synchronize after the call: no frame of the target, so cutting
    nvfp4ctl's frames left torch's alone (or nothing); the trace stays whole and says whose kernel it is."""
    for last in ([], _frame(TORCH_SYNC, 800, "synchronize", "torch._C._cuda_synchronize()")):
        log = _crash_log(_frame(package / "check" / "job.py", 64, "check_case", "first = ..."),
                         _frame(package / "check" / "job.py", 144, "_call_and_compare", "_synchronize(device)"), last)
        assert raised.crash_trace(log) == [*log, raised.LATER_CALL_NOTE]
    assert "CUDA reports a kernel's fault at a later call" in raised.LATER_CALL_NOTE
    assert "the target's last launch before it" in raised.LATER_CALL_NOTE


def test_a_log_without_a_traceback_is_left_as_it_is(package: Path) -> None:
    log = ["Fatal Python error: Segmentation fault", f'  File "{package / "check" / "job.py"}", line 64 in check_case']
    assert raised.crash_trace(log) == log
