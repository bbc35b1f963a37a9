"""benchmarks/sm90_kernel.py on CPU: its check is `nvfp4ctl check`'s comparison, its timing `nvfp4ctl
bench`'s loop, and every variant sets only knobs or declared experiments. (Its GPU runs: the
commands in docs/sm90_kernel.md.)"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from nvfp4ctl.build.knobs import read_knobs
from tests.kernels.benchmark_scripts import imported_benchmark

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def harness():
    for module in imported_benchmark("sm90_kernel"):
        module.DEVICE = "cpu"
        yield module


def _right(data):
    from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

    data[6].copy_(reference_gemm(data[0], data[1], data[2], data[3]))
    return data[6]


def test_variants_set_only_knobs_and_declared_experiments(harness) -> None:
    knobs = {knob.name for knob in read_knobs(REPO / "kernels" / "sm90" / "sm90_config.cuh")}
    experiments = set(re.findall(r"#ifndef (NVFP4_SM90_\w+)", (REPO / "benchmarks" / "sm90_experiments.h").read_text()))
    tune_switch = {"NVFP4CTL_TUNE"}  # the dispatch table left out, as in a tune candidate (sm90_plan.cuh)
    for name, defines in harness.VARIANTS.items():
        for define in defines:
            macro = define.removeprefix("-D").split("=")[0]
            assert macro in knobs | experiments | tune_switch, f"variant {name}: {macro} is neither a knob nor an experiment"


def test_timeline_columns_follow_the_kernel_events_in_order(harness) -> None:
    # the host reads the kernel's per-CTA rows by position: an event added on one side only would
    # put every later phase under the wrong name (the timeline build is never run on CPU)
    header = (REPO / "kernels" / "sm90" / "sm90_timeline.cuh").read_text()
    body = header.split("enum TimelineEvent {", 1)[1].split("};", 1)[0]
    events = [re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower() for name in re.findall(r"^\s*k(\w+)", body, flags=re.M)]
    assert events.pop() == "timeline_events"
    assert len(events) == len(harness.TIMELINE_EVENTS)
    for column, event in zip(harness.TIMELINE_EVENTS, events):
        assert event.startswith(column), f"timeline column {column!r} reads the kernel's {event!r}"


def test_a_variant_that_sets_a_plan_knob_builds_without_the_dispatch_table(harness) -> None:
    # the table holds every plan knob of every task shape: with it, no_span would time the shipped plan there
    assert "-DNVFP4CTL_TUNE" in harness.variant_defines("no_span")
    assert harness.variant_defines("direct_all").count("-DNVFP4CTL_TUNE") == 1
    assert "-DNVFP4CTL_TUNE" not in harness.variant_defines("main")
    assert "-DNVFP4CTL_TUNE" not in harness.variant_defines("no_direct")  # an experiment switch: the table stays


def test_check_passes_a_right_kernel_and_counts_what_a_wrong_one_left_unwritten(harness) -> None:
    good = harness.check_one(_right, 128, 256, 256, 1, 1111, "generator", "cpu")
    assert good.ok and good.mismatches == 0 and good.unwritten == 0

    def half_written(data):
        _right(data)
        data[6][:64].view(torch.int16).fill_(0x7E5A)  # the check's poison: never written
        return data[6]

    bad = harness.check_one(half_written, 128, 256, 256, 1, 1111, "generator", "cpu")
    assert not bad.ok and bad.unwritten == 64 * 256 and bad.mismatches == 64 * 256 and bad.first_bad.startswith("c[0,0,0]")


def test_a_nan_in_both_output_and_reference_is_a_match(harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """The old check called NaN == NaN a mismatch; `nvfp4ctl check` (GPU MODE's rule) does not."""
    from nvfp4ctl.problems.nvfp4_gemm import reference

    real = reference.reference_gemm

    def with_nan(*args):
        out = real(*args)
        out[0, 0, 0] = float("nan")
        return out

    monkeypatch.setattr(reference, "reference_gemm", with_nan)
    result = harness.check_one(lambda d: (d[6].copy_(with_nan(*d[:4])), d[6])[1], 128, 256, 256, 1, 7, "generator", "cpu")
    assert result.ok, result


def test_timing_runs_the_bench_loop_and_returns_microseconds(harness) -> None:
    args = argparse.Namespace(settle=0.0, max_repeats=5, max_noise=0.1)
    calls = []
    inputs = harness.bench_inputs(128, 256, 256, 1, 3)
    us = harness.leaderboard_us(lambda d: calls.append(d) or d[6], inputs, args)
    assert us > 0
    assert len(calls) % 3 == 0 and 3 * 3 <= len(calls) <= 3 * 5  # whole repeats over every input set


def test_task_shape_targets_name_every_shape_below_the_anchor_and_off_its_floor(harness) -> None:
    rows = [
        {"shape": "128x7168x16384", "main": 20.0, "cublas_fp16": 40.0, "floor": 10.0},
        {"shape": "128x4096x7168", "main": 20.0, "cublas_fp16": 40.0, "floor": 10.0},
        {"shape": "128x7168x2048", "main": 20.0, "cublas_fp16": 40.0, "floor": 10.0},
        {"shape": "384x7168x2304", "main": 40.0, "cublas_fp16": 20.0, "floor": 15.0},  # anchor 1.33x floor,
        {"shape": "2304x4608x7168", "main": 205.0, "cublas_fp16": 208.0, "floor": 190.0},
    ]
    lines: list[str] = []
    found = harness.log_anchor_targets(rows, lines.append)
    assert found["below_anchor"] == ["384x7168x2304"]
    assert found["off_floor"] == ["2304x4608x7168"]  # 205 > 1.05 * 190, the anchor within 10 %
    assert found["bench_geomean_us"] == pytest.approx(20.0)
    text = "\n".join(lines)
    assert "every shape >= 1x the anchor: NOT met (below: 384x7168x2304 0.50x)" in text
    assert "benchmark shapes geomean <= 22 us: 20.00 us, met" in text


def test_cpu_time_per_call_settles_outside_the_clock(harness) -> None:
    calls, settles = [], []
    us = harness.cpu_us_per_call(lambda: calls.append(1), lambda: settles.append(1), loops=3, calls=5)
    assert len(calls) == 1 + 3 * 5 and len(settles) == 1 + 3 and us >= 0.0


def test_timeline_of_a_direct_kernel_call_says_it_records_none(harness, monkeypatch: pytest.MonkeyPatch) -> None:
    # the direct kernel marks no phases: its rows used to be read as all zero ("384 CTAs on 1 SMs, span 0.0")
    class Lib:
        def nvfp4_capi_plan(self, m, n, k, l):
            return harness.DIRECT_PLAN + 321

        def nvfp4_capi_timeline(self, buf, ctas):
            raise AssertionError("a direct kernel's timeline is not read")

    class Kernel:
        lib = Lib()

        def __call__(self, data):
            return _right(data)

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    lines: list[str] = []
    args = argparse.Namespace(settle=0.0, max_repeats=3, max_noise=0.1, sets=2, results={})
    harness.timeline_one("timeline", Kernel(), (128, 256, 256, 1), args, lines.append)
    assert len(lines) == 1 and "direct kernel" in lines[0] and "records no timeline" in lines[0]
    assert "timeline" not in args.results
