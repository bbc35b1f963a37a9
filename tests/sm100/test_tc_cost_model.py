"""benchmarks/sm100_cost_model.py (a model, not a measurement) agrees with the kernel it models: its
Python copy of the spanning split gives the kernel's own segments (plan printer), and the kernel's
dispatch table holds the config and CTA count the model rates fastest with at least 128 SMs busy."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from nvfp4ctl.umma.sm100_tc_plan import load_plan
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
        assert ctas >= 128


def test_the_table_prints(cost_model) -> None:
    lines = cost_model.table(cost_model.Rates())
    assert lines[0].startswith("MODEL, not a measurement")
    assert any(line.startswith("tc-span ") for line in lines)
