"""The GPUs tune times on, as nvidia-smi lists them: their ids and the smallest one's memory."""

from __future__ import annotations

import subprocess

import pytest

from nvfp4ctl.tune import devices

LISTING = ("0, GPU-1111aaaa-0000-0000-0000-000000000000, 81559\n"
           "1, GPU-2222bbbb-0000-0000-0000-000000000000, 143771\n")


def answer(stdout: str, returncode: int = 0):
    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess(command, returncode, stdout, "")
    return run


@pytest.mark.parametrize("gpus, mib", [(["0", "1"], 81559), (["1"], 143771),
                                       (["GPU-2222bbbb-0000-0000-0000-000000000000"], 143771)])
def test_the_smallest_memory_of_the_gpus_tune_times_on(gpus: list[str], mib: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices.subprocess, "run", answer(LISTING))
    assert devices.smallest_memory(gpus) == mib * 2**20


@pytest.mark.parametrize("stdout, returncode, gpus", [(LISTING, 0, ["7"]), ("", 9, ["0"]),
                                                      ("0, GPU-1, [N/A]\n", 0, ["0"])])
def test_no_memory_where_nvidia_smi_cannot_tell(stdout: str, returncode: int, gpus: list[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices.subprocess, "run", answer(stdout, returncode))
    assert devices.smallest_memory(gpus) is None


def test_no_memory_without_nvidia_smi(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("nvidia-smi")

    monkeypatch.setattr(devices.subprocess, "run", missing)
    assert devices.smallest_memory(["0"]) is None


def test_the_gpus_tune_spreads_over_are_the_indexes_of_the_listing_memory_is_read_from(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(devices.VISIBLE, raising=False)
    asked: list[list[str]] = []

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        asked.append(command)
        return subprocess.CompletedProcess(command, 0, LISTING, "")

    monkeypatch.setattr(devices.subprocess, "run", run)
    assert devices.visible_gpus() == ["0", "1"]
    assert devices.smallest_memory(devices.visible_gpus()) == 81559 * 2**20
    assert len({tuple(command) for command in asked}) == 1  # one query for both


def test_no_gpus_to_spread_over_without_nvidia_smi(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("nvidia-smi")

    monkeypatch.delenv(devices.VISIBLE, raising=False)
    monkeypatch.setattr(devices.subprocess, "run", missing)
    assert devices.visible_gpus() == []
