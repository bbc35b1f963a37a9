"""NVFP4CTL_DEVICE: cpu runs the runner plumbing on the CPU (tests); anything but cpu/cuda is refused."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.errors import UsageError
from nvfp4ctl.runner.gpu import run_device


@pytest.mark.parametrize("setting, device", [("", "cuda"), ("cuda", "cuda"), (" CPU ", "cpu"), ("cpu", "cpu")])
def test_known_settings(monkeypatch, setting: str, device: str) -> None:
    monkeypatch.setenv("NVFP4CTL_DEVICE", setting)
    assert run_device() == device


def test_a_typo_is_refused_not_run_on_the_gpu(monkeypatch) -> None:
    monkeypatch.setenv("NVFP4CTL_DEVICE", "gpu")
    with pytest.raises(UsageError, match="NVFP4CTL_DEVICE=gpu: expected cpu or cuda"):
        run_device()
    result = CliRunner().invoke(app, ["check", "--only", "1"])
    assert result.exit_code == 2 and "Traceback" not in result.output
