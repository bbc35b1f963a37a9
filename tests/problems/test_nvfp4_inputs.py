"""generate_input / refill_input: GPU MODE's draws, shapes, dtypes and strides, byte for byte."""

from __future__ import annotations

import pytest
import torch

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input, refill_input
from nvfp4ctl.problems.nvfp4_gemm.layout import to_blocked


def gpu_mode_generate_input(m: int, n: int, k: int, l: int, seed: int, device: str) -> tuple[torch.Tensor, ...]:
    """GPU MODE's generate_input (problems/nvidia/nvfp4_gemm/reference.py at the mirrored HEAD),
    transcribed literally for comparison; only the hard-coded device "cuda" became `device`."""

    def ceil_div(a: int, b: int) -> int:
        return (a + b - 1) // b

    sf_vec_size = 16
    torch.manual_seed(seed)
    a_ref = torch.randint(-128, 128, (l, m, k // 2), dtype=torch.int8, device=device).permute(1, 2, 0)
    b_ref = torch.randint(-128, 128, (l, n, k // 2), dtype=torch.int8, device=device).permute(1, 2, 0)
    a_ref = a_ref.view(torch.float4_e2m1fn_x2)
    b_ref = b_ref.view(torch.float4_e2m1fn_x2)
    c_ref = torch.randn((l, m, n), dtype=torch.float16, device=device).permute(1, 2, 0)

    def create_scale_factor_tensors(l: int, mn: int, sf_k: int) -> tuple[torch.Tensor, torch.Tensor]:
        ref_shape = (l, mn, sf_k)
        ref_permute_order = (1, 2, 0)
        ref_f8_random_int = torch.randint(0, 4, ref_shape, dtype=torch.int8, device=device)
        ref_f8_torch_tensor = ref_f8_random_int.to(dtype=torch.float8_e4m3fn)
        ref_f8_torch_tensor_permuted = ref_f8_torch_tensor.permute(*ref_permute_order)
        atom_m = (32, 4)
        atom_k = 4
        mma_shape = (l, ceil_div(mn, atom_m[0] * atom_m[1]), ceil_div(sf_k, atom_k), atom_m[0], atom_m[1], atom_k)
        mma_permute_order = (3, 4, 1, 5, 2, 0)
        rand_int_tensor = torch.randint(0, 4, mma_shape, dtype=torch.int8, device=device)
        reordered_f8_torch_tensor = rand_int_tensor.to(dtype=torch.float8_e4m3fn)
        reordered_f8_torch_tensor = reordered_f8_torch_tensor.permute(*mma_permute_order)
        i_idx = torch.arange(mn, device=device)
        j_idx = torch.arange(sf_k, device=device)
        b_idx = torch.arange(l, device=device)
        i_grid, j_grid, b_grid = torch.meshgrid(i_idx, j_idx, b_idx, indexing="ij")
        mm = i_grid // (atom_m[0] * atom_m[1])
        mm32 = i_grid % atom_m[0]
        mm4 = (i_grid % 128) // atom_m[0]
        kk = j_grid // atom_k
        kk4 = j_grid % atom_k
        reordered_f8_torch_tensor[mm32, mm4, mm, kk4, kk, b_grid] = ref_f8_torch_tensor_permuted[i_grid, j_grid, b_grid]
        return ref_f8_torch_tensor_permuted.cpu(), reordered_f8_torch_tensor

    sf_k = ceil_div(k, sf_vec_size)
    sfa_ref_cpu, sfa_ref_permuted = create_scale_factor_tensors(l, m, sf_k)
    sfb_ref_cpu, sfb_ref_permuted = create_scale_factor_tensors(l, n, sf_k)
    return (a_ref, b_ref, sfa_ref_cpu.to(device), sfb_ref_cpu.to(device), sfa_ref_permuted, sfb_ref_permuted, c_ref)


def raw(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's bits as integers, so NaN payloads and -0 compare exactly."""
    return tensor.view(torch.uint8 if tensor.element_size() == 1 else torch.int16)


def assert_same_tuple(ours: tuple[torch.Tensor, ...], theirs: tuple[torch.Tensor, ...]) -> None:
    names = ("a", "b", "sfa_ref", "sfb_ref", "sfa_permuted", "sfb_permuted", "c")
    for name, mine, want in zip(names, ours, theirs, strict=True):
        assert (mine.dtype, mine.shape, mine.stride(), mine.device) == (
            want.dtype,
            want.shape,
            want.stride(),
            want.device,
        ), name
        assert torch.equal(raw(mine), raw(want)), name


CPU_SHAPES = [(128, 256, 256, 1, 1111), (256, 384, 512, 2, 7), (96, 200, 272, 2, 3)]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("m, n, k, l, seed", CPU_SHAPES)
def test_matches_gpu_mode_byte_for_byte_and_leaves_the_same_rng_state(
    device: str, m: int, n: int, k: int, l: int, seed: int
) -> None:
    ours = generate_input(m, n, k, l, seed, device=device)
    after_ours = torch.rand(8, device=device)
    theirs = gpu_mode_generate_input(m, n, k, l, seed, device)
    after_theirs = torch.rand(8, device=device)
    assert_same_tuple(ours, theirs)
    assert torch.equal(after_ours, after_theirs)


@pytest.mark.gpu
@pytest.mark.parametrize("m, n, k, l", [(128, 1536, 7168, 1), (384, 7168, 2304, 1), (128, 4096, 7168, 2)])
def test_matches_gpu_mode_on_cuda_for_leaderboard_sizes(m: int, n: int, k: int, l: int) -> None:
    assert_same_tuple(generate_input(m, n, k, l, 1111, device="cuda"), gpu_mode_generate_input(m, n, k, l, 1111, "cuda"))


def test_generator_scales_are_small_integers_and_permuted_holds_the_reference() -> None:
    a, b, sfa, sfb, sfa_p, sfb_p, c = generate_input(256, 128, 512, 2, 5, device="cpu")
    assert set(sfa.float().unique().tolist()) <= {0.0, 1.0, 2.0, 3.0}
    for batch in range(2):
        flat = sfa_p.view(torch.uint8).permute(5, 2, 4, 0, 1, 3)[batch].flatten()
        assert torch.equal(flat, to_blocked(sfa[:, :, batch]).view(torch.uint8))


def test_same_seed_same_bytes_other_seed_other_bytes() -> None:
    first = generate_input(128, 128, 256, 1, 42, device="cpu")
    again = generate_input(128, 128, 256, 1, 42, device="cpu")
    other = generate_input(128, 128, 256, 1, 43, device="cpu")
    assert_same_tuple(first, again)
    assert not torch.equal(raw(first[0]), raw(other[0]))


def test_full_scales_keep_a_b_c_of_the_generator() -> None:
    plain = generate_input(128, 256, 512, 1, 9, device="cpu")
    full = generate_input(128, 256, 512, 1, 9, device="cpu", scales="full")
    for index in (0, 1, 6):
        assert torch.equal(raw(plain[index]), raw(full[index]))
    assert not torch.equal(raw(plain[2]), raw(full[2]))
    for ours, theirs in zip(plain[2:6], full[2:6]):
        assert (ours.shape, ours.stride(), ours.dtype) == (theirs.shape, theirs.stride(), theirs.dtype)


@pytest.mark.parametrize("scales", ["generator", "full"])
def test_refill_writes_new_values_into_the_same_tensors(scales: str) -> None:
    data = generate_input(96, 200, 272, 2, 1, device="cpu")
    pointers = [tensor.data_ptr() for tensor in data]
    refill_input(data, 2, scales=scales)
    assert [tensor.data_ptr() for tensor in data] == pointers
    assert_same_tuple(data, generate_input(96, 200, 272, 2, 2, device="cpu", scales=scales))


def test_unknown_scale_mode_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="scales: expected one of generator, full, got 'wide'"):
        generate_input(128, 128, 256, 1, 1, device="cpu", scales="wide")


@pytest.mark.parametrize("m, n, k, l", [(128, 128, 100, 1), (0, 128, 256, 1), (128, 128, 256, 0)])
def test_impossible_shapes_are_usage_errors(m: int, n: int, k: int, l: int) -> None:
    with pytest.raises(UsageError, match=f"shape m={m} n=128 k={k} l={l}: expected positive sizes"):
        generate_input(m, n, k, l, 1, device="cpu")
