"""The exact reference against a float64 brute force, including scales over the whole e4m3 range."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
from nvfp4ctl.problems.nvfp4_gemm.reference import decode_e2m1, decode_e4m3, reference_gemm, round_to_fp16

# e2m1 by hand (OCP MX spec table), independent of formats.py
E2M1_BY_HAND = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def all_codes() -> torch.Tensor:
    return torch.arange(256, dtype=torch.int32).to(torch.uint8)


def test_decode_e4m3_equals_torch_on_all_256_codes() -> None:
    ours = decode_e4m3(all_codes())
    torchs = all_codes().view(torch.float8_e4m3fn).float()
    assert torch.equal(ours.isnan(), torchs.isnan())
    finite = ~ours.isnan()
    assert torch.equal(ours[finite].view(torch.int32), torchs[finite].view(torch.int32))  # also -0
    assert torch.equal(decode_e4m3(all_codes().view(torch.float8_e4m3fn)).nan_to_num(7.0), ours.nan_to_num(7.0))


def test_decode_e4m3_edges() -> None:
    edges = decode_e4m3(torch.tensor([0x00, 0x01, 0x07, 0x08, 0x38, 0x7E, 0x7F, 0x80, 0xFF], dtype=torch.uint8))
    expected = [0.0, 2.0**-9, 7 * 2.0**-9, 2.0**-6, 1.0, 448.0]
    assert edges[:6].tolist() == expected
    assert math.isnan(edges[6]) and math.isnan(edges[8])
    assert edges[7].item() == 0.0 and math.copysign(1.0, edges[7].item()) == -1.0


def test_decode_e2m1_low_nibble_is_the_even_element() -> None:
    values = decode_e2m1(all_codes().view(16, 16))  # (16, 32)
    for byte in range(256):
        row, col = divmod(byte, 16)
        pair = values[row, 2 * col : 2 * col + 2].tolist()
        assert pair == [E2M1_BY_HAND[byte & 0xF], E2M1_BY_HAND[byte >> 4]]
    assert decode_e2m1(torch.tensor([0x21], dtype=torch.uint8)).tolist() == [0.5, 1.0]
    as_fp4 = all_codes().view(torch.float4_e2m1fn_x2)
    assert torch.equal(decode_e2m1(as_fp4), decode_e2m1(all_codes()))


def test_all_238_dequantized_products_are_exact_in_fp16_and_bf16() -> None:
    e2m1 = torch.tensor(E2M1_BY_HAND[:8], dtype=torch.float64)
    e4m3 = all_codes()[: 0x7F].view(torch.float8_e4m3fn).double()  # every finite non-negative scale
    products = (e2m1[:, None] * e4m3[None, :]).flatten().unique()
    assert products.numel() == 238
    assert float(products.max()) == 2688.0 and float(products[1]) == 2.0**-10
    for dtype in (torch.float16, torch.bfloat16):
        assert torch.equal(products.to(dtype).double(), products)


def test_round_to_fp16_is_correct_rounding_where_a_float32_detour_is_not() -> None:
    generator = np.random.default_rng(0)
    halves = generator.integers(0, 0x7BFF, 20000).astype(np.uint16).view(np.float16).astype(np.float64)
    ulp = np.spacing(halves.astype(np.float16)).astype(np.float64)
    samples = np.concatenate(
        [
            generator.standard_normal(20000) * 10.0 ** generator.integers(-8, 5, 20000),
            halves + ulp / 2,  # ties: to even
            -(halves + ulp / 2),
            halves + ulp / 2 + ulp * 2.0**-20,  # just above a tie, below float32 precision
            [65504.0, 65519.99, 65520.0, 1e6, -1e6, 1e300, -1e300, 2.0**-25, 3 * 2.0**-26, 2.0**-30, 0.0, -0.0],
        ]
    )
    with np.errstate(over="ignore"):
        truth = samples.astype(np.float16).view(np.uint16)
    assert np.array_equal(round_to_fp16(torch.from_numpy(samples)).numpy().view(np.uint16), truth)
    # the float32 detour rounds twice and gets some of these wrong
    detour = torch.from_numpy(samples).float().half().numpy()
    assert not np.array_equal(detour.view(np.uint16), truth)
    special = round_to_fp16(torch.tensor([math.inf, -math.inf, math.nan], dtype=torch.float64))
    assert special[:2].tolist() == [math.inf, -math.inf] and math.isnan(special[2])


def brute_force(data: tuple[torch.Tensor, ...]) -> np.ndarray:
    """Loop-level float64: decode every element and scale by hand, exact sum (math.fsum), numpy fp16."""
    a, b, sfa, sfb = (t.view(torch.uint8).numpy() for t in data[:4])
    m, half_k, l = a.shape
    n = b.shape[0]
    scale_value = all_codes().view(torch.float8_e4m3fn).double().numpy()

    def row_values(packed: np.ndarray, scales: np.ndarray, row: int, batch: int) -> list[float]:
        codes = [(int(packed[row, kk // 2, batch]) >> (4 * (kk % 2))) & 0xF for kk in range(2 * half_k)]
        return [E2M1_BY_HAND[code] * float(scale_value[scales[row, kk // 16, batch]]) for kk, code in enumerate(codes)]

    out = np.empty((m, n, l), dtype=np.float16)
    for batch in range(l):
        a_rows = [row_values(a, sfa, i, batch) for i in range(m)]
        b_rows = [row_values(b, sfb, j, batch) for j in range(n)]
        for i in range(m):
            for j in range(n):
                exact = math.fsum(x * y for x, y in zip(a_rows[i], b_rows[j]))
                with np.errstate(over="ignore"):  # sums beyond 65504 become inf, as they should
                    out[i, j, batch] = np.float16(exact)
    return out


def assert_equal_fp16(got: torch.Tensor, want: np.ndarray) -> None:
    got_np = got.numpy()
    both_nan = np.isnan(got_np) & np.isnan(want)
    assert np.array_equal(np.where(both_nan, 0, got_np), np.where(both_nan, 0, want))


def whole_range_scales(data: tuple[torch.Tensor, ...], seed: int) -> None:
    """Overwrite the reference scales with codes over the whole finite e4m3 range, edges forced in."""
    generator = torch.Generator().manual_seed(seed)
    for scales in data[2:4]:
        codes = scales.view(torch.uint8)
        codes.copy_(torch.randint(0, 0x7F, codes.shape, generator=generator, dtype=torch.int32).to(torch.uint8))
        codes[:3, 0, 0] = torch.tensor([0x00, 0x01, 0x7E], dtype=torch.uint8)  # zero, 2**-9, 448


@pytest.mark.parametrize(
    "m, n, k, l, seed, scales",
    [
        (5, 7, 64, 2, 1, "generator"),
        (4, 6, 32, 1, 2, "whole-range"),  # mostly finite, some overflow to inf
        (3, 5, 32, 2, 3, "whole-range"),
        (6, 4, 256, 1, 4, "full"),
        (3, 3, 48, 1, 5, "full"),
    ],
)
def test_reference_equals_brute_force(m: int, n: int, k: int, l: int, seed: int, scales: str) -> None:
    data = generate_input(m, n, k, l, seed, device="cpu", scales="full" if scales == "full" else "generator")
    if scales == "whole-range":
        whole_range_scales(data, seed)
    want = brute_force(data)
    assert_equal_fp16(reference_gemm(*data[:4]), want)
    assert_equal_fp16(reference_gemm(*data[:4], k_chunk=16), want)  # one scale block per chunk


def test_nan_scale_gives_nan_only_where_it_reaches() -> None:
    data = generate_input(4, 4, 32, 1, 0, device="cpu")
    data[2].view(torch.uint8)[1, 0, 0] = 0x7F
    out = reference_gemm(*data[:4])
    assert bool(out[1].isnan().all()) and not bool(out[[0, 2, 3]].isnan().any())


def test_reference_is_a_new_tensor_with_c_layout_and_leaves_c_alone() -> None:
    data = generate_input(128, 64, 512, 2, 1111, device="cpu")
    c_before = data[6].clone()
    out = reference_gemm(*data[:4])
    assert out.data_ptr() != data[6].data_ptr()
    assert (out.dtype, out.shape, out.stride()) == (torch.float16, data[6].shape, data[6].stride())
    assert torch.equal(data[6], c_before)


def test_generator_scales_reference_equals_plain_float64_matmul() -> None:
    data = generate_input(128, 96, 1024, 1, 1111, device="cpu")
    a = decode_e2m1(data[0][:, :, 0]).double() * decode_e4m3(data[2][:, :, 0]).double().repeat_interleave(16, 1)
    b = decode_e2m1(data[1][:, :, 0]).double() * decode_e4m3(data[3][:, :, 0]).double().repeat_interleave(16, 1)
    want = (a @ b.T).numpy().astype(np.float16)  # exact sums: numpy's direct rounding is the truth
    assert np.array_equal(reference_gemm(*data[:4])[:, :, 0].numpy(), want)


@pytest.mark.gpu
def test_cuda_reference_is_bit_identical_to_the_cpu_reference() -> None:
    data = generate_input(256, 384, 2048, 2, 1111, device="cuda", scales="full")
    on_cuda = reference_gemm(*data[:4]).cpu()
    on_cpu = reference_gemm(*(tensor.cpu() for tensor in data[:4]))
    assert torch.equal(on_cuda.view(torch.int16), on_cpu.view(torch.int16))


@pytest.mark.gpu
def test_reference_fits_the_largest_test_in_little_memory() -> None:
    data = generate_input(2304, 4608, 7168, 1, 1111, device="cuda")
    torch.cuda.reset_peak_memory_stats()
    start = torch.cuda.memory_allocated()
    out = reference_gemm(*data[:4])
    assert bool(out.isfinite().all())
    assert torch.cuda.max_memory_allocated() - start < 2 << 30


@pytest.mark.gpu
def test_reference_agrees_with_scaled_mm_where_cublas_has_fp4() -> None:
    if torch.cuda.get_device_capability() < (10, 0):
        pytest.skip("torch._scaled_mm has no fp4 path before sm_100")
    from nvfp4ctl.problems.nvfp4_gemm.layout import to_blocked

    a, b, sfa, sfb, _, _, _ = generate_input(256, 512, 1024, 1, 1111, device="cuda", scales="full")
    scaled = torch._scaled_mm(
        a[:, :, 0], b[:, :, 0].transpose(0, 1), to_blocked(sfa[:, :, 0]), to_blocked(sfb[:, :, 0]),
        bias=None, out_dtype=torch.float16,
    )  # fmt: skip
    want = reference_gemm(a, b, sfa, sfb)[:, :, 0].double()
    assert bool(((scaled.double() - want).abs() <= 1e-3 + 1e-3 * want.abs()).all())
