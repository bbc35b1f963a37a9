"""The `build --submission-time` line names what a quoted compile time was measured on (CPUs, CPU
model, load at start) and the leaderboard verdict. Formatting only: no export, no compile."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import machine
from nvfp4ctl.build.machine import Machine
from nvfp4ctl.build.submission_time import SubmissionTime

TWO_CORES = Machine(2, "Intel(R) Xeon(R) Processor", 0.1)


def test_the_line_names_time_machine_and_verdict() -> None:
    timed = SubmissionTime(18.2, 19.6, "compiled-no-link", "", TWO_CORES)
    assert timed.summary("nvfp4_gemm_sm100_tc.cu") == (
        "nvfp4_gemm_sm100_tc.cu: python submission.py took 18.2 s (19.6 s CPU) (CPU-only torch: compile only,"
        " link skipped) on 2 logical CPUs (Intel(R) Xeon(R) Processor), load 0.10 at start:"
        " within the leaderboard's 120 s limit")


@pytest.mark.parametrize(("seconds", "outcome", "verdict"), [
    (120.0, "imported", "within the leaderboard's 120 s limit"),
    (120.1, "imported", "OVER the leaderboard's 120 s limit"),
    (3.0, "failed", "did not compile"),
])
def test_the_verdict(seconds: float, outcome: str, verdict: str) -> None:
    assert SubmissionTime(seconds, 1.0, outcome, "", TWO_CORES).summary("k.cu").endswith(f": {verdict}")


def test_a_machine_without_model_or_load_still_says_its_cores() -> None:
    assert Machine(1, None, None).describe() == "1 logical CPU, load unknown at start"
    assert Machine(16, "AMD EPYC 9454", 3.456).describe() == "16 logical CPUs (AMD EPYC 9454), load 3.46 at start"


def test_the_cpu_model_comes_from_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R)  Xeon(R)   Platinum 8480+\n")
    assert machine.cpu_model(cpuinfo) == "Intel(R) Xeon(R) Platinum 8480+"
    cpuinfo.write_text("processor\t: 0\nBogoMIPS\t: 50.00\n")  # some ARM hosts name no model
    assert machine.cpu_model(cpuinfo) is None
    assert machine.cpu_model(tmp_path / "missing") is None


def test_this_machine_is_read_from_the_os() -> None:
    here = machine.this_machine()
    assert here.cpus >= 1
    assert here.load_1min is None or here.load_1min >= 0.0
