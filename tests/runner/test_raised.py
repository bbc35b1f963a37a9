"""What a crash of the target's call shows of its traceback (runner/raised.py)."""

from __future__ import annotations

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
