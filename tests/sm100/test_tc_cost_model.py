"""benchmarks/sm100_cost_model.py (a model, not a measurement) agrees with the kernel it models: its
Python copy of the spanning split gives the kernel's own segments (plan printer), and the kernel's
dispatch table holds the config and CTA count the model rates fastest with >= 128 CTAs. Its floor (a perfect kernel from
the same inputs) is below every design, above the 6 us goal with the default inputs, and the
break-even it prints is where the floor meets the goal."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

from tc_plan import load_plan
from tc_shapes import BENCH_SHAPES, TEST_SHAPES

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sm100_cost_model.py"


@pytest.fixture(scope="module")
def cost_model():
    spec = importlib.util.spec_from_file_location("sm100_cost_model", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sm100_cost_model"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.usefixtures("tc_printer")
@pytest.mark.parametrize("shape", BENCH_SHAPES + TEST_SHAPES[:4], ids=lambda s: "x".join(map(str, s)))
def test_python_split_matches_the_kernel(cost_model, shape: tuple[int, int, int, int]) -> None:
    plan = load_plan(*shape)
    model = cost_model.span_segments(plan.tiles, plan.k_tiles, plan.ctas)
    kernel = [[(s.tile, s.k_begin, s.k_end) for s in plan.segments(cta)] for cta in range(plan.ctas)]
    assert model == kernel


def test_dispatch_table_is_the_model_choice(cost_model) -> None:
    rates = cost_model.Rates()
    table = cost_model.dispatch_table()
    for m, n, k, _ in BENCH_SHAPES:
        choices = {tile_m: cost_model.best_span_ctas(m, n, k, rates, tile_m=tile_m) for tile_m in (128, 64)}
        tile_m, (ctas, _us) = min(choices.items(), key=lambda item: item[1][1])
        assert table[(m, n, k)] == (tile_m, ctas), f"{m=}, {n=}, {k=}: model picks {tile_m}-row tiles on {ctas} CTAs"
        assert ctas >= cost_model.LEAST_BUSY_SMS


def test_the_table_prints(cost_model) -> None:
    lines = cost_model.table(cost_model.Rates())
    assert lines[0].startswith("MODEL, not a measurement")
    assert any(line.startswith("tc-span ") for line in lines)
    assert any(line.startswith("floor ") for line in lines)
    assert any(line.startswith("Verdict (MODEL, not a measurement)") for line in lines)
    assert any("break-even" in line for line in lines)


RATE_SETS = [{}, {"setup_us": 0.0, "launch_gap_us": 0.5}, {"sm_ingress_gbps": 1000.0, "l2_tbps": 100.0, "flag_us": 0.0},
             {"dram_tbps": 3.0, "host_issue_us": 0.5}]


@pytest.mark.parametrize("changes", RATE_SETS, ids=lambda c: ",".join(c) or "defaults")
def test_the_floor_is_below_every_design(cost_model, changes: dict[str, float]) -> None:
    rates = dataclasses.replace(cost_model.Rates(), **changes)
    for shape in cost_model.SHAPES:
        floor = cost_model.floor_estimate(*shape, rates)
        for design in cost_model.designs(*shape):
            ours = cost_model.estimate(design, *shape, rates)
            assert floor.per_call_us <= ours.per_call_us + 1e-9, f"{shape=}: {design.name} beats the floor"
            assert floor.device_us <= ours.device_us + 1e-9


def test_the_floor_moves_every_byte_once(cost_model) -> None:
    # 128x7168x16384: A 1 MiB + B 56 MiB of fp4, scales (128 + 7168) x 16384 / 16 bytes, C 128 x 7168 fp16
    assert cost_model.dram_bytes(128, 7168, 16384) == 2**20 + 56 * 2**20 + 7296 * 1024 + 128 * 7168 * 2
    rates = cost_model.Rates()
    floor = cost_model.floor_estimate(128, 7168, 16384, rates)
    assert floor.device_us == pytest.approx(rates.setup_us + cost_model.dram_bytes(128, 7168, 16384) / 7.2e6)
    assert floor.per_call_us == pytest.approx(rates.launch_gap_us + floor.device_us)


def test_the_goal_is_out_of_reach_with_the_default_inputs(cost_model) -> None:
    rates = cost_model.Rates()
    assert cost_model.floor_geomean(rates) > cost_model.GOAL_US == 6.0
    assert cost_model.floor_geomean(rates) == pytest.approx(6.53, abs=0.01)
    assert cost_model.floor_geomean(dataclasses.replace(rates, setup_us=0.0)) == pytest.approx(5.41, abs=0.01)


@pytest.mark.parametrize("name", ["setup_us", "launch_gap_us"])
def test_the_break_even_puts_the_floor_on_the_goal(cost_model, name: str) -> None:
    rates = cost_model.Rates()
    value = cost_model.break_even(rates, name)
    assert value is not None and 0.0 < value < getattr(rates, name)
    at = cost_model.floor_geomean(dataclasses.replace(rates, **{name: value}))
    above = cost_model.floor_geomean(dataclasses.replace(rates, **{name: value + 1e-3}))
    assert at == pytest.approx(cost_model.GOAL_US, abs=1e-6) and above > cost_model.GOAL_US


def test_the_break_even_says_when_it_cannot_or_need_not(cost_model) -> None:
    slow_dram = dataclasses.replace(cost_model.Rates(), dram_tbps=2.0)
    assert cost_model.break_even(slow_dram, "setup_us") is None
    fast = dataclasses.replace(cost_model.Rates(), launch_gap_us=0.2)
    assert cost_model.break_even(fast, "setup_us") == fast.setup_us
