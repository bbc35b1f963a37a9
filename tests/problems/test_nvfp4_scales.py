"""--scales full: the whole unsigned e4m3 encoding where K allows it, never an fp16 overflow."""

from __future__ import annotations

import pytest
import torch

from nvfp4ctl.problems.nvfp4_gemm.formats import E4M3_MAX_CODE, E4M3_VALUES
from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
from nvfp4ctl.problems.nvfp4_gemm.layout import to_blocked
from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm
from nvfp4ctl.problems.nvfp4_gemm.scales import draw_full_scales, product_exponent_budget, top_code_below

VALUES = torch.tensor(E4M3_VALUES, dtype=torch.float64)


def test_budget_and_caps() -> None:
    assert product_exponent_budget(256) == 1  # 256 * 36 * 2 = 18432 <= 32752 < 256 * 36 * 4
    assert product_exponent_budget(16384) == -5
    assert top_code_below(9) == E4M3_MAX_CODE  # 448
    assert top_code_below(-8) == 0x01  # 2**-9, the smallest subnormal
    assert E4M3_VALUES[top_code_below(0)] == 0.9375 and E4M3_VALUES[top_code_below(0) + 1] == 1.0


def test_small_k_covers_every_code_from_zero_to_448() -> None:
    codes_a, codes_b = draw_full_scales(128, 128, 256, 1, 1111)
    assert set(codes_a.flatten().tolist()) | set(codes_b.flatten().tolist()) == set(range(E4M3_MAX_CODE + 1))
    # both operands see subnormals and large scales
    for codes in (codes_a, codes_b):
        assert int(codes.min()) == 0 and int(codes.max()) >= 0x70
        assert bool(((codes > 0) & (codes < 8)).any())


@pytest.mark.parametrize("k", [256, 2048, 7168, 16384])
def test_every_output_stays_below_half_the_fp16_range(k: int) -> None:
    codes_a, codes_b = draw_full_scales(64, 64, k, 2, 3)
    assert int(codes_a.max()) <= E4M3_MAX_CODE and int(codes_b.max()) <= E4M3_MAX_CODE  # unsigned, no NaN
    largest_a = VALUES[codes_a.long()].amax(dim=1)  # (l, sf_k)
    largest_b = VALUES[codes_b.long()].amax(dim=1)
    worst_case = (16 * 6 * 6 * largest_a * largest_b).sum(dim=1)  # every |a|, |b| = 6, all same sign
    assert float(worst_case.max()) <= 65504 / 2


def test_worst_case_data_with_full_scales_is_finite() -> None:
    a, b, sfa, sfb, _, _, _ = generate_input(32, 48, 2048, 1, 11, device="cpu", scales="full")
    a.view(torch.uint8).fill_(0x77)  # every element +6
    b.view(torch.uint8).fill_(0x77)
    out = reference_gemm(a, b, sfa, sfb)
    assert bool(out.isfinite().all())
    assert float(out.abs().max()) > 100  # large, not flushed to nothing


def test_full_scale_permuted_tensors_equal_to_blocked_of_the_reference() -> None:
    _, _, sfa, sfb, sfa_p, sfb_p, _ = generate_input(96, 200, 272, 2, 4, device="cpu", scales="full")
    for ref, permuted in ((sfa, sfa_p), (sfb, sfb_p)):
        storage = permuted.view(torch.uint8).permute(5, 2, 4, 0, 1, 3)
        for batch in range(2):
            assert torch.equal(storage[batch].flatten(), to_blocked(ref[:, :, batch]).view(torch.uint8))


def test_full_scales_are_deterministic_and_seeded() -> None:
    first = draw_full_scales(64, 64, 512, 1, 5)
    assert all(torch.equal(x, y) for x, y in zip(first, draw_full_scales(64, 64, 512, 1, 5)))
    assert not torch.equal(first[0], draw_full_scales(64, 64, 512, 1, 6)[0])


@pytest.mark.gpu
def test_full_scales_are_the_same_on_cuda_and_cpu() -> None:
    on_cpu = generate_input(128, 256, 512, 1, 8, device="cpu", scales="full")
    on_cuda = generate_input(128, 256, 512, 1, 8, device="cuda", scales="full")
    for index in (2, 3, 4, 5):
        assert torch.equal(on_cpu[index].view(torch.uint8), on_cuda[index].cpu().view(torch.uint8))


def test_huge_k_is_refused() -> None:
    with pytest.raises(ValueError, match="too large"):
        draw_full_scales(1, 1, 1 << 28, 1, 0)
