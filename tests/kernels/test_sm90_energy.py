"""benchmarks/sm90_energy.py on CPU: its arithmetic (least time at the power limit, cycles, the 5 %
target's budget), its round order and its table. (Its GPU runs: docs/sm90_performance.md, v17.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.kernels.benchmark_scripts import imported_benchmark

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "sm90_energy.py"


@pytest.fixture(scope="module")
def energy():
    yield from imported_benchmark("sm90_energy")


def _measurement(energy, name: str, us: float, mj: float, mhz: float, capped: float = 1.0):
    return energy.Measurement(name, "2304x4608x7168", calls=1000, us_per_call=us, mj_per_call=mj,
                              mean_w=mj / us * 1e3, median_sm_mhz=mhz, power_capped=capped, thermal=0.0,
                              power_limit_w=700.0, max_sm_mhz=1980.0)


def test_least_time_at_the_limit_is_energy_over_power(energy) -> None:
    assert energy.time_at_limit_us(70.0, 700.0) == pytest.approx(100.0)  # 70 mJ at 700 W: 100 µs
    assert energy.time_at_limit_us(0.0, 700.0) == 0.0


def test_rounds_alternate_the_order(energy) -> None:
    assert energy.round_order(["a", "b", "c"], 3) == [["a", "b", "c"], ["c", "b", "a"], ["a", "b", "c"]]


def test_summary_averages_the_rounds_and_counts_cycles(energy) -> None:
    summary = energy.summarize([_measurement(energy, "main", 240.0, 170.0, 1600.0),
                                _measurement(energy, "main", 250.0, 172.0, 1700.0)])
    assert (summary.us_per_call, summary.mj_per_call, summary.rounds) == (245.0, 171.0, 2)
    assert summary.median_sm_mhz == 1650.0
    assert energy.cycles_k(summary) == pytest.approx(245.0 * 1650.0 / 1e3)


def test_report_states_each_row_against_main_and_the_targets_budget(energy) -> None:
    rows = [energy.summarize([_measurement(energy, name, us, mj, mhz)])
            for name, us, mj, mhz in (("cublas_fp16", 206.0, 141.6, 1620.0), ("main", 244.2, 170.6, 1650.0),
                                      ("no_b_decode", 219.2, 153.2, 1600.0))]
    lines: list[str] = []
    energy.report_shape("2304x4608x7168", rows, 700.0, 1980.0, 197.5, lines.append)
    text = "\n".join(lines)
    no_b = next(line for line in lines if line.strip().startswith("no_b_decode"))
    assert "-17.40" in no_b and "-24.9" in no_b  # 17.4 mJ less than main: 24.9 µs at 700 W
    assert f"{219.2 * 1.6 - 244.2 * 1.65:+8.0f}" in no_b  # thousands of cycles against main's
    assert "<= 207.4 µs per call" in text  # 197.5 µs * 1.05
    assert "145.2 mJ per call at the limit" in text
    assert "342 at main's clock under the limit (1650 MHz)" in text


def test_unknown_shapes_are_a_usage_error_without_a_traceback() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--only", "1x2x3"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "not task.yml shapes: 1x2x3" in done.stderr and "Traceback" not in done.stderr
