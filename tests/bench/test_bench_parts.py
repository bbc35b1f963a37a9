"""Small pieces: head start, device-time split, correctness check, roofline numbers, rendering."""

import json

import pytest
import torch

from nvfp4ctl.bench.calibration import Ceilings, cache_file, ceilings_for, load_cached, store
from nvfp4ctl.bench.correctness import Mismatch, first_mismatch
from nvfp4ctl.bench.flush import HEAD_START_FLOOR_S, LEADERBOARD_FLUSH_S, next_head_start
from nvfp4ctl.bench.kineto import DeviceActivity, split_device_time
from nvfp4ctl.problems import get_problem
from nvfp4ctl.task import Case


def test_head_start_covers_the_issue_time_up_to_the_leaderboard_flush() -> None:
    assert next_head_start(0.0) == HEAD_START_FLOOR_S
    assert next_head_start(1e-3) == pytest.approx(1.5e-3 + 50e-6)
    assert next_head_start(1.0) == LEADERBOARD_FLUSH_S


def test_device_time_excludes_the_flush() -> None:
    every = [DeviceActivity("fill", 60.0), DeviceActivity("spin_kernel", 900.0)] + [
        DeviceActivity("gemm", 10.0), DeviceActivity("epilogue", 1.0)] * 50
    flush = [DeviceActivity("fill", 60.0), DeviceActivity("spin_kernel", 900.0)]
    device = split_device_time(every, flush, calls=50)
    assert device is not None
    assert device.us_per_call == pytest.approx(11.0)
    assert device.kernels_per_call == 2 and device.top_kernels[0] == ("gemm", 50) and not device.approximate


def test_device_time_falls_back_to_kernel_names() -> None:
    every = [DeviceActivity("void at::native::FillFunctor<int>", 60.0), DeviceActivity("gemm", 10.0)]
    device = split_device_time(every, [], calls=1)
    assert device is not None and device.us_per_call == pytest.approx(10.0) and device.approximate
    assert split_device_time([], [], calls=1) is None


def test_first_mismatch_counts_and_locates() -> None:
    want = torch.zeros(4, 3, 1, dtype=torch.float16)
    got = want.clone()
    assert first_mismatch(got, want, 1e-3, 1e-3) is None
    got[1, 2, 0] = 0.5
    got[3, 0, 0] = float("nan")
    miss = first_mismatch(got, want, 1e-3, 1e-3)
    assert isinstance(miss, Mismatch) and miss.wrong == 2 and miss.index == (1, 2, 0)
    assert miss.describe() == "2 of 12 elements differ; first at (m=1, n=2, l=0): got 0.5, want 0"
    gemv_miss = first_mismatch(got[:, :1], want[:, :1], 1e-3, 1e-3, dims=("m", "1", "l"))
    assert isinstance(gemv_miss, Mismatch) and gemv_miss.describe().startswith("1 of 4 elements differ; first at (m=3, 0, l=0)")
    both_nan = torch.full((2,), float("nan"), dtype=torch.float16)
    assert first_mismatch(both_nan, both_nan.clone(), 0.0, 0.0) is None
    inf = torch.tensor([float("inf")], dtype=torch.float16)
    assert isinstance(first_mismatch(-inf, inf, 1.0, 1.0), Mismatch)
    assert "shape" in str(first_mismatch(torch.zeros(2, 2), torch.zeros(2, 3), 0.0, 0.0))
    assert "not a tensor" in str(first_mismatch(None, want, 0.0, 0.0))


def test_first_mismatch_compares_an_fp32_output_unrounded_and_refuses_another_device() -> None:
    want = torch.tensor([2048.0, 1.0], dtype=torch.float16).view(2, 1, 1)
    exact = want.float()
    assert first_mismatch(exact, want, 1e-3, 1e-3) is None
    # 1.4 fp16 ulps (ulp 2 at 2048): hidden when rounded to fp16 first, a miss in GPU MODE's fp32 difference
    miss = first_mismatch(exact + torch.tensor([2.8, 0.0]).view(2, 1, 1), want, 1e-3, 1e-3)
    assert isinstance(miss, Mismatch) and miss.index == (0, 0, 0) and miss.got == pytest.approx(2050.8)
    on_meta = torch.empty((2, 1, 1), dtype=torch.float16, device="meta")
    assert first_mismatch(want, on_meta, 1e-3, 1e-3) == "custom_kernel returned a CPU tensor, expected one on meta"
    assert first_mismatch(want.to(torch.int16), want, 1e-3, 1e-3) == "custom_kernel returned int16, expected float16"


@pytest.mark.parametrize(("gpu", "withheld"), [
    ("NVIDIA H100 80GB HBM3 (sm_90)", False), ("NVIDIA B200 (sm_100)", True), ("NVIDIA GB300 (sm_103)", True),
    ("unknown GPU", True),
])
def test_the_fp16_ceiling_is_a_roofline_on_sm_90_alone(gpu: str, withheld: bool) -> None:
    reason = Ceilings(gpu, 750.0, 3.0, "2026-11-25T00:00:00Z").roofline_withheld
    assert (reason is not None) is withheld
    if withheld:
        assert reason.startswith("no % of this GPU on ") and "fp16 cuBLAS ceiling" in reason


def test_roofline_numbers_match_facts() -> None:
    # FACTS.md: floors on H100 (3.01 TB/s, 800 TFLOP/s) 23.0 / 6.0 / 3.4 µs and 37.6 / 9.4 / 4.7 µs
    gemm = get_problem("nvfp4_gemm")
    shapes = [Case(m, n, k, 1, 1111) for m, n, k in [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048)]]
    assert [gemm.bytes_moved(c) / 3.01e6 for c in shapes] == pytest.approx([23.0, 6.0, 3.4], abs=0.06)
    assert [gemm.flops(c) / 800e6 for c in shapes] == pytest.approx([37.6, 9.4, 4.7], abs=0.06)
    assert gemm.key(shapes[0]) == "128x7168x16384" and gemm.key(Case(1, 2, 3, 4, 1111)) == "1x2x3x4"


def test_calibration_cache_round_trip(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path))
    gpu = "NVIDIA H100 80GB HBM3 (sm_90)"
    assert load_cached(gpu) is None
    store(Ceilings(gpu, 750.0, 3.0, "2026-11-25T00:00:00Z"))
    assert cache_file(gpu) == tmp_path / "calibration" / "nvidia-h100-80gb-hbm3-sm-90.json"
    assert json.loads(cache_file(gpu).read_text())["tflops"] == 750.0
    cached = ceilings_for(gpu)
    assert cached.cached and cached.tbps == 3.0
    cache_file(gpu).write_text("{broken")
    assert load_cached(gpu) is None
