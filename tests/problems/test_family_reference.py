"""The family's exact references against a float64 brute force (math.fsum over values decoded by hand).

Shapes are small; full-range scales are included, and a worst case (every fp4 value at its largest)
shows that full-range scales keep every fp16 output finite.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from nvfp4ctl.problems.common.tensors import flat_tensors
from nvfp4ctl.problems.nvfp4_dual_gemm import inputs as dual
from nvfp4ctl.problems.nvfp4_dual_gemm.reference import products
from nvfp4ctl.problems.nvfp4_dual_gemm.reference import reference as dual_reference
from nvfp4ctl.problems.nvfp4_gemm.reference import round_to_fp16
from nvfp4ctl.problems.nvfp4_gemv import inputs as gemv
from nvfp4ctl.problems.nvfp4_gemv.reference import reference as gemv_reference
from nvfp4ctl.problems.nvfp4_group_gemm import inputs as group
from nvfp4ctl.problems.nvfp4_group_gemm.reference import reference as group_reference

# e2m1 by hand (OCP MX spec table); e4m3 through torch's own float8 conversion
E2M1_BY_HAND = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
SCALES = ["generator", "full"]


def dims(**sizes: Any) -> SimpleNamespace:
    return SimpleNamespace(**{"n": None, "l": None, "g": None, **sizes})


def decode(packed: torch.Tensor, scales: torch.Tensor) -> list[list[float]]:
    """fp4 (rows, k/2) with e4m3 scales (rows, k/16) -> rows of Python floats, element 2i = low nibble."""
    codes = packed.view(torch.uint8).tolist()
    factors = scales.cpu().float().tolist()
    rows = []
    for row_codes, row_factors in zip(codes, factors):
        values = [E2M1_BY_HAND[nibble] for byte in row_codes for nibble in (byte & 0xF, byte >> 4)]
        rows.append([value * row_factors[index // 16] for index, value in enumerate(values)])
    return rows


def brute_products(a: torch.Tensor, b: torch.Tensor, sfa: torch.Tensor, sfb: torch.Tensor) -> torch.Tensor:
    """float64 (m, n, l): every dot product summed by math.fsum (correctly rounded, here exact)."""
    m, n, l = a.shape[0], b.shape[0], a.shape[2]
    out = torch.empty((m, n, l), dtype=torch.float64)
    for batch in range(l):
        rows_a = decode(a[:, :, batch], sfa[:, :, batch])
        rows_b = decode(b[:, :, batch], sfb[:, :, batch])
        for i, row_a in enumerate(rows_a):
            for j, row_b in enumerate(rows_b):
                out[i, j, batch] = math.fsum(x * y for x, y in zip(row_a, row_b))
    return out


def fp16_ulp(x: torch.Tensor) -> torch.Tensor:
    exponent = torch.floor(torch.log2(x.abs().clamp(min=2.0**-14)))
    return torch.pow(2.0, exponent - 10)


def bits(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.view(torch.uint8 if tensor.element_size() == 1 else torch.int16)


def snapshot(data: Any) -> list[torch.Tensor]:
    return [bits(tensor).clone() for _, tensor in flat_tensors(data)]


@pytest.mark.parametrize("scales", SCALES)
@pytest.mark.parametrize("m, n, k, l", [(8, 16, 64, 1), (12, 8, 96, 2)])
def test_dual_products_are_the_exact_sums_rounded_once_to_fp32(m: int, n: int, k: int, l: int, scales: str) -> None:
    data = dual.generate_input(dims(m=m, n=n, k=k, l=l), 7, device="cpu", scales=scales)
    first, second = products(data)
    for got, b, sfb in ((first, data[1], data[4]), (second, data[2], data[5])):
        want = brute_products(data[0], b, data[3], sfb).to(torch.float32)
        assert got.dtype == torch.float32 and got.shape == (m, n, l)
        assert torch.equal(got.view(torch.int32), want.view(torch.int32))


@pytest.mark.parametrize("scales", SCALES)
@pytest.mark.parametrize("m, n, k, l", [(8, 16, 64, 1), (12, 8, 96, 2)])
def test_dual_reference_is_within_one_fp16_ulp_of_float64(m: int, n: int, k: int, l: int, scales: str) -> None:
    data = dual.generate_input(dims(m=m, n=n, k=k, l=l), 8, device="cpu", scales=scales)
    before = snapshot(data)
    got = dual_reference(data)
    assert all(torch.equal(x, y) for x, y in zip(before, snapshot(data)))  # data untouched
    assert (got.dtype, got.shape, got.stride()) == (torch.float16, data[9].shape, data[9].stride())
    r1 = brute_products(data[0], data[1], data[3], data[4])
    r2 = brute_products(data[0], data[2], data[3], data[5])
    want = r1 * torch.sigmoid(r1) * r2  # silu and product in float64
    assert bool(((got.double() - want).abs() <= fp16_ulp(want)).all())
    assert float(want.abs().max()) > 0.0


def test_dual_full_scales_keep_the_worst_case_finite() -> None:
    """All fp4 values at +1.5 (the masked draw's largest): |silu(r1) * r2| stays within fp16."""
    data = dual.generate_input(dims(m=128, n=128, k=7168, l=1), 3, device="cpu", scales="full")
    for operand in data[:3]:
        operand.view(torch.uint8).fill_(0x33)
    got = dual_reference(data)
    assert bool(got.isfinite().all()) and float(got.abs().max()) <= 65504 / 2


@pytest.mark.parametrize("scales", SCALES)
@pytest.mark.parametrize("m, k, l", [(16, 64, 1), (8, 128, 3)])
def test_gemv_reference_is_the_exact_sum_rounded_once(m: int, k: int, l: int, scales: str) -> None:
    data = gemv.generate_input(dims(m=m, k=k, l=l), 5, device="cpu", scales=scales)
    before = snapshot(data)
    got = gemv_reference(data)
    assert all(torch.equal(x, y) for x, y in zip(before, snapshot(data)))
    assert (got.dtype, got.shape, got.stride()) == (torch.float16, data[6].shape, data[6].stride())
    want = round_to_fp16(brute_products(data[0], data[1][:1], data[2], data[3][:1]))
    assert torch.equal(bits(got), bits(want))


def test_gemv_full_scales_keep_the_worst_case_finite() -> None:
    data = gemv.generate_input(dims(m=128, k=7168, l=1), 3, device="cpu", scales="full")
    for operand in data[:2]:
        operand.view(torch.uint8).fill_(0x77)  # every value 6, the largest e2m1
    assert bool(gemv_reference(data).isfinite().all())


@pytest.mark.parametrize("scales", SCALES)
def test_group_reference_is_one_exact_gemm_per_group(scales: str) -> None:
    data = group.generate_input(dims(m=(8, 4, 16), n=(16, 8, 4), k=(64, 96, 32), g=3), 2, device="cpu", scales=scales)
    before = snapshot(data)
    got = group_reference(data)
    assert all(torch.equal(x, y) for x, y in zip(before, snapshot(data)))
    assert isinstance(got, list) and len(got) == 3
    for out, (a, b, c), (sfa, sfb) in zip(got, data[0], data[1]):
        assert (out.dtype, out.shape, out.stride()) == (torch.float16, c.shape, c.stride())
        assert torch.equal(bits(out), bits(round_to_fp16(brute_products(a, b, sfa, sfb))))


def test_a_wrong_group_changes_only_its_output() -> None:
    data = group.generate_input(dims(m=(8, 8), n=(8, 8), k=(64, 64), g=2), 2, device="cpu")
    first = group_reference(data)
    data[1][1][0].view(torch.uint8).fill_(0x40)  # group 1's A scales all 2.0
    second = group_reference(data)
    assert torch.equal(bits(first[0]), bits(second[0])) and not torch.equal(bits(first[1]), bits(second[1]))
