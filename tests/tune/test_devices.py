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


MIXED = ("0, GPU-1111aaaa-0000-0000-0000-000000000000, 81559\n"
         "1, GPU-2222bbbb-0000-0000-0000-000000000000, 143771\n"
         "2, GPU-3333cccc-0000-0000-0000-000000000000, 81559\n")


@pytest.mark.parametrize("order", [None, "FASTEST_FIRST"])
def test_an_index_of_mixed_gpus_may_name_another_card_so_the_largest_memory_is_taken(
        order: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """nvidia-smi numbers GPUs by PCI bus, CUDA fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA's
    device 0 may be nvidia-smi's 1, and a shape the 141 GB card takes was refused by the 80 GB one's size."""
    if order is None:
        monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
    else:
        monkeypatch.setenv("CUDA_DEVICE_ORDER", order)
    monkeypatch.setattr(devices.subprocess, "run", answer(MIXED))
    assert devices.smallest_memory(["0"]) == 143771 * 2**20
    assert devices.smallest_memory(["0", "2"]) == 143771 * 2**20


def test_gpus_named_exactly_keep_the_smallest_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """By PCI bus order, by UUID, every GPU listed, or GPUs all of one size: the ids name the cards they say."""
    monkeypatch.setattr(devices.subprocess, "run", answer(MIXED))
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    assert devices.smallest_memory(["1", "2"]) == 81559 * 2**20
    monkeypatch.delenv("CUDA_DEVICE_ORDER")
    assert devices.smallest_memory(["GPU-3333cccc-0000-0000-0000-000000000000"]) == 81559 * 2**20
    assert devices.smallest_memory(["0", "1", "2"]) == 81559 * 2**20
    monkeypatch.setattr(devices.subprocess, "run", answer(MIXED.replace("143771", "81559")))
    assert devices.smallest_memory(["1"]) == 81559 * 2**20


@pytest.mark.parametrize("given, visible", [("0,-1,1", ["0"]), ("-1", []), ("", []), ("1, 0", ["1", "0"]),
                                            ("0,,1", ["0"]), ("GPU-1111aaaa", ["GPU-1111aaaa"])])
def test_visible_gpus_end_where_cuda_stops_reading_the_list(monkeypatch: pytest.MonkeyPatch, given: str,
                                                            visible: list[str]) -> None:
    """`CUDA_VISIBLE_DEVICES=0,-1,1` shows CUDA GPU 0 alone: tune spread candidates over 0 and 1."""
    monkeypatch.setenv(devices.VISIBLE, given)
    assert devices.visible_gpus() == visible
