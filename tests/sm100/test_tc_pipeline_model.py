"""The tcgen05 kernel's synchronisation protocol, modelled (tests/sm100/tc_pipeline_model.py) on the
plan the kernel itself computes (the host printer built from its source), for every shape and a few
SM counts: every wait is eventually satisfied, stage byte counts match the TMA boxes, stages and
accumulators are never overwritten early, split-K partials are read after their flags and cover K
exactly once. CPU only (needs nvcc to build the printer)."""

from __future__ import annotations

import dataclasses

import pytest

from tc_pipeline_model import ProtocolError, check_stage_layout, run_model
from tc_plan import TcPlan, load_plan
from tc_shapes import ALL_SHAPES, BENCH_SHAPES

pytestmark = pytest.mark.usefixtures("tc_printer")


@pytest.mark.parametrize("shape", ALL_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("sms", [148, 132])
def test_protocol_completes(shape: tuple[int, int, int, int], sms: int) -> None:
    plan = load_plan(*shape, sms=sms, loads=True)
    for seed in range(3):
        result = run_model(plan, seed=seed)
        assert result.ctas <= sms
        assert result.loads == plan.tiles * plan.k_tiles, f"{shape=}: every (tile, K tile) loaded once"


@pytest.mark.parametrize("shape", BENCH_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_bench_shapes_fill_the_chip(shape: tuple[int, int, int, int]) -> None:
    plan = load_plan(*shape, sms=148)
    assert plan.ctas >= 128, f"{shape=}: only {plan.ctas} of 148 SMs busy"


def test_stage_bytes_match_the_boxes() -> None:
    plan = load_plan(128, 4096, 7168)
    tx = check_stage_layout(plan)
    cfg = plan.config
    assert tx == cfg["BLOCK_N"] * cfg["BLOCK_K"] // 2 + cfg["BLOCK_M"] * cfg["BLOCK_K"] // 2 + 2 * cfg["SMEM_SF_BYTES"]


def _mutated(plan: TcPlan, **config: int) -> TcPlan:
    raw = dict(plan.raw)
    raw["config"] = {**plan.config, **config}
    return dataclasses.replace(plan, raw=raw)


def test_model_catches_a_wrong_byte_count() -> None:
    plan = load_plan(128, 4096, 7168, loads=True)
    with pytest.raises(ProtocolError, match="bytes"):
        run_model(_mutated(plan, kStageTxBytes=plan.config["kStageTxBytes"] - 512))


def test_model_catches_a_wrong_reduction_source() -> None:
    plan = load_plan(128, 4096, 7168, loads=True)
    raw = dict(plan.raw)
    raw["ctas"] = [dict(c) for c in plan.raw["ctas"]]
    owner, index = next((cta, i) for cta in range(plan.ctas) for i, s in enumerate(plan.segments(cta)) if s.reduce)
    segments = [dict(s) for s in raw["ctas"][owner]["segments"]]
    segments[index]["first_contributor"] += 1  # forgets the first CTA's partial
    raw["ctas"][owner] = {"segments": segments}
    with pytest.raises(ProtocolError, match="gap or overlap"):
        run_model(TcPlan(raw))
