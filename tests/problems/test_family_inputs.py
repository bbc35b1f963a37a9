"""generate_input / refill_input of the dual GEMM, grouped GEMM and GEMV: GPU MODE's structure.

The expected shapes, dtypes, strides and devices below were written down from reading GPU MODE's
generate_input in problems/nvidia/<name>/reference.py (gpu-mode/reference-kernels); bit-identity on
CUDA is checked against digests of their tensors in test_gpu_mode_digests.py.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems.common.tensors import flat_tensors
from nvfp4ctl.problems.nvfp4_dual_gemm import inputs as dual
from nvfp4ctl.problems.nvfp4_gemm.layout import ceil_div, scale_offsets, to_blocked
from nvfp4ctl.problems.nvfp4_gemv import inputs as gemv
from nvfp4ctl.problems.nvfp4_group_gemm import inputs as group

FP4, E4M3, FP16 = torch.float4_e2m1fn_x2, torch.float8_e4m3fn, torch.float16


def dims(**sizes: Any) -> SimpleNamespace:
    return SimpleNamespace(**{"n": None, "l": None, "g": None, **sizes})


def raw(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.view(torch.uint8 if tensor.element_size() == 1 else torch.int16)


def layout(tensor: torch.Tensor) -> tuple[Any, ...]:
    return (tensor.dtype, tuple(tensor.shape), tensor.stride(), tensor.device.type)


def same_bits(first: Any, second: Any) -> bool:
    pairs = zip(flat_tensors(first), flat_tensors(second), strict=True)
    return all(la == lb and layout(x) == layout(y) and torch.equal(raw(x), raw(y)) for (la, x), (lb, y) in pairs)


def operand(rows: int, k: int, l: int, dtype: torch.dtype = FP4) -> tuple[Any, ...]:
    """(rows, k/2, l) viewed from (l, rows, k/2) storage: strides (k/2, 1, rows*k/2)."""
    return (dtype, (rows, k // 2, l), (k // 2, 1, rows * k // 2), "cpu")


def ref_scales(rows: int, k: int, l: int, device: str = "cpu") -> tuple[Any, ...]:
    sf_k = k // 16
    return (E4M3, (rows, sf_k, l), (sf_k, 1, rows * sf_k), device)


def permuted(rows: int, k: int, l: int) -> tuple[Any, ...]:
    """(32, 4, rest_mn, 4, rest_k, l) viewed from contiguous (l, rest_mn, rest_k, 32, 4, 4)."""
    rest, rest_k = ceil_div(rows, 128), ceil_div(k // 16, 4)
    return (E4M3, (32, 4, rest, 4, rest_k, l), (16, 4, rest_k * 512, 1, 512, rest * rest_k * 512), "cpu")


def output(m: int, n: int, l: int) -> tuple[Any, ...]:
    return (FP16, (m, n, l), (n, 1, m * n), "cpu")


# ---- structure ------------------------------------------------------------------------------------

@pytest.mark.parametrize("m, n, k, l", [(256, 512, 256, 1), (96, 200, 272, 2)])
def test_dual_tuple_structure(m: int, n: int, k: int, l: int) -> None:
    data = dual.generate_input(dims(m=m, n=n, k=k, l=l), 1111, device="cpu")
    expected = [
        operand(m, k, l), operand(n, k, l), operand(n, k, l),
        ref_scales(m, k, l), ref_scales(n, k, l), ref_scales(n, k, l),
        permuted(m, k, l), permuted(n, k, l), permuted(n, k, l),
        output(m, n, l),
    ]  # fmt: skip
    assert [layout(tensor) for tensor in data] == expected
    assert dual.output_of(data) is data[9]
    assert vars(dual.dims_of(data)) == {"m": m, "n": n, "k": k, "l": l, "g": None}


@pytest.mark.parametrize("m, k, l", [(128, 256, 1), (96, 272, 3)])
def test_gemv_tuple_structure_pads_b_to_128_rows(m: int, k: int, l: int) -> None:
    data = gemv.generate_input(dims(m=m, k=k, l=l), 1111, device="cpu")
    expected = [
        operand(m, k, l), operand(128, k, l),
        ref_scales(m, k, l), ref_scales(128, k, l),
        permuted(m, k, l), permuted(128, k, l),
        (FP16, (m, 1, l), (1, 1, m), "cpu"),
    ]  # fmt: skip
    assert [layout(tensor) for tensor in data] == expected
    assert gemv.output_of(data) is data[6]
    assert vars(gemv.dims_of(data)) == {"m": m, "n": None, "k": k, "l": l, "g": None}


def test_group_tuple_structure_keeps_reference_scales_on_the_cpu() -> None:
    ms, ns, ks = (40, 128, 200), (512, 136, 128), (256, 272, 512)
    abc, refs, reordered, sizes = group.generate_input(dims(m=ms, n=ns, k=ks, g=3), 1111, device="cpu")
    assert isinstance(abc, list) and isinstance(refs, list) and isinstance(reordered, list)
    assert sizes == [(m, n, k, 1) for m, n, k in zip(ms, ns, ks)]
    for (a, b, c), (sfa, sfb), (sfa_p, sfb_p), (m, n, k, _) in zip(abc, refs, reordered, sizes):
        assert [layout(a), layout(b), layout(c)] == [operand(m, k, 1), operand(n, k, 1), output(m, n, 1)]
        assert [layout(sfa), layout(sfb)] == [ref_scales(m, k, 1, "cpu"), ref_scales(n, k, 1, "cpu")]
        assert [layout(sfa_p), layout(sfb_p)] == [permuted(m, k, 1), permuted(n, k, 1)]
    data = (abc, refs, reordered, sizes)
    assert [c.data_ptr() for c in group.output_of(data)] == [c.data_ptr() for _, _, c in abc]
    assert vars(group.dims_of(data)) == {"m": ms, "n": ns, "k": ks, "l": 1, "g": 3}


# ---- values and the order of draws ---------------------------------------------------------------

def mapped_bytes(permuted_view: torch.Tensor, mn: int, sf_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(bytes at mapped offsets, bytes elsewhere) per batch of a permuted scale view."""
    storage = permuted_view.view(torch.uint8).permute(5, 2, 4, 0, 1, 3)
    flat = storage.reshape(storage.shape[0], -1)
    keep = torch.zeros(flat.shape[1], dtype=torch.bool)
    keep[scale_offsets(mn, sf_k).reshape(-1)] = True
    return flat[:, keep], flat[:, ~keep]


def assert_permuted_holds(ref: torch.Tensor, permuted_view: torch.Tensor, padding: set[int]) -> None:
    mn, sf_k, l = ref.shape
    mapped, rest = mapped_bytes(permuted_view, mn, sf_k)
    offsets = scale_offsets(mn, sf_k).reshape(-1).sort().values
    for batch in range(l):
        assert torch.equal(mapped[batch], to_blocked(ref[:, :, batch]).view(torch.uint8)[offsets])
    assert set(rest.unique().tolist()) <= padding


def test_dual_draws_in_gpu_modes_order() -> None:
    m, n, k, l, seed = 128, 256, 512, 2, 31
    data = dual.generate_input(dims(m=m, n=n, k=k, l=l), seed, device="cpu")
    after = torch.rand(4)
    torch.manual_seed(seed)
    for index, rows in enumerate((m, n, n)):  # a, b1, b2: randint(255) bytes, masked
        drawn = torch.randint(255, (l, rows, k // 2), dtype=torch.uint8) & 0b1011_1011
        assert torch.equal(raw(data[index]), drawn.permute(1, 2, 0))
    assert torch.equal(data[9], torch.randn((l, m, n), dtype=FP16).permute(1, 2, 0))
    for index, rows in zip((3, 4, 5), (m, n, n)):  # rand in [0, 1) -> e4m3, no draw for the permuted tensor
        drawn = torch.rand((l, rows, k // 16)).to(E4M3)
        assert torch.equal(raw(data[index]), raw(drawn.permute(1, 2, 0)))
    assert torch.equal(torch.rand(4), after)


def test_gemv_draws_in_gpu_modes_order() -> None:
    m, k, l, seed = 96, 272, 2, 5
    data = gemv.generate_input(dims(m=m, k=k, l=l), seed, device="cpu")
    after = torch.rand(4)
    torch.manual_seed(seed)
    assert torch.equal(raw(data[0]), torch.randint(0, 4, (l, m, k // 2), dtype=torch.uint8).permute(1, 2, 0))
    assert torch.equal(raw(data[1]), torch.randint(0, 4, (l, 128, k // 2), dtype=torch.uint8).permute(1, 2, 0))
    assert torch.equal(data[6], torch.randn((l, m, 1), dtype=FP16).permute(1, 2, 0))
    for ref_index, perm_index, rows in ((2, 4, m), (3, 5, 128)):
        drawn = torch.randint(0, 3, (l, rows, ceil_div(k, 16)), dtype=torch.int8).to(E4M3)
        assert torch.equal(raw(data[ref_index]), raw(drawn.permute(1, 2, 0)))
        padding = torch.randint(0, 3, (l, ceil_div(rows, 128), ceil_div(k // 16, 4), 32, 4, 4), dtype=torch.int8)
        _, rest = mapped_bytes(data[perm_index], rows, k // 16)
        keep = torch.ones(padding[0].numel(), dtype=torch.bool)
        keep[scale_offsets(rows, k // 16).reshape(-1)] = False
        assert torch.equal(rest, raw(padding.to(E4M3)).reshape(l, -1)[:, keep])
    assert torch.equal(torch.rand(4), after)


def test_group_draws_in_gpu_modes_order_on_one_generator() -> None:
    ms, ns, ks, seed = (64, 200), (128, 136), (256, 272), 9
    abc, refs, reordered, _ = group.generate_input(dims(m=ms, n=ns, k=ks, g=2), seed, device="cpu")
    after = torch.rand(4)
    torch.manual_seed(seed)
    for (a, b, c), (sfa, sfb), (sfa_p, sfb_p), m, n, k in zip(abc, refs, reordered, ms, ns, ks):
        for tensor, rows in ((a, m), (b, n)):
            drawn = torch.randint(255, (1, rows, k // 2), dtype=torch.uint8) & 0b1011_1011
            assert torch.equal(raw(tensor), drawn.permute(1, 2, 0))
        assert torch.equal(c, torch.randn((1, m, n), dtype=FP16).permute(1, 2, 0))
        for tensor, rows in ((sfa, m), (sfb, n)):
            drawn = torch.randint(1, 3, (1, rows, k // 16), dtype=torch.int8).to(E4M3)
            assert torch.equal(raw(tensor), raw(drawn.permute(1, 2, 0)))
        for tensor, rows in ((sfa_p, m), (sfb_p, n)):
            torch.randint(1, 3, (1, ceil_div(rows, 128), ceil_div(k // 16, 4), 32, 4, 4), dtype=torch.int8)
    assert torch.equal(torch.rand(4), after)


@pytest.mark.parametrize("scales", ["generator", "full"])
def test_permuted_scales_hold_the_reference_scales(scales: str) -> None:
    """Every mapped entry equals to_blocked's; padding: 0 (dual, full), else the padding draw's values."""
    d = dual.generate_input(dims(m=96, n=200, k=272, l=2), 3, device="cpu", scales=scales)
    for ref, perm in zip(d[3:6], d[6:9]):
        assert_permuted_holds(ref, perm, {0})
    v = gemv.generate_input(dims(m=96, k=272, l=2), 3, device="cpu", scales=scales)
    for ref, perm in zip(v[2:4], v[4:6]):
        assert_permuted_holds(ref, perm, {0} if scales == "full" else {0x00, 0x38, 0x40})
    shape = dims(m=(40, 128), n=(136, 256), k=(272, 256), g=2)
    abc, refs, reordered, _ = group.generate_input(shape, 3, device="cpu", scales=scales)
    for (sfa, sfb), (sfa_p, sfb_p) in zip(refs, reordered):
        padding = {0} if scales == "full" else {0x38, 0x40}  # randint(1, 3) -> e4m3 1.0, 2.0
        assert_permuted_holds(sfa, sfa_p, padding)
        assert_permuted_holds(sfb, sfb_p, padding)


def test_generator_value_ranges() -> None:
    d = dual.generate_input(dims(m=256, n=256, k=512, l=1), 1, device="cpu")
    for fp4 in d[:3]:
        assert int((raw(fp4) & 0b0100_0100).max()) == 0  # masked: no e2m1 code above 1.5
    scales = torch.cat([s.float().flatten() for s in d[3:6]])
    assert float(scales.min()) >= 0.0 and float(scales.max()) <= 1.0
    assert float((raw(d[3]) < 0x08).float().mean()) > 0.01  # rand in [0, 1): some subnormal codes
    v = gemv.generate_input(dims(m=128, k=256, l=1), 1, device="cpu")
    assert int(raw(v[0]).max()) <= 3 and int(raw(v[1]).max()) <= 3
    assert set(v[2].float().unique().tolist()) <= {0.0, 1.0, 2.0}
    _, refs, _, _ = group.generate_input(dims(m=(128,), n=(128,), k=(256,), g=1), 1, device="cpu")
    assert set(refs[0][0].float().unique().tolist()) <= {1.0, 2.0}


# ---- determinism, refill, full scales, errors ----------------------------------------------------

CASES = [
    (dual, dims(m=96, n=200, k=272, l=2)),
    (gemv, dims(m=96, k=272, l=2)),
    (group, dims(m=(40, 128), n=(136, 256), k=(272, 256), g=2)),
]
IDS = ["dual", "gemv", "group"]


@pytest.mark.parametrize("module, shape", CASES, ids=IDS)
def test_same_seed_same_bits_other_seed_other_bits(module: Any, shape: SimpleNamespace) -> None:
    first = module.generate_input(shape, 42, device="cpu")
    assert same_bits(first, module.generate_input(shape, 42, device="cpu"))
    assert not same_bits(first, module.generate_input(shape, 43, device="cpu"))


@pytest.mark.parametrize("scales", ["generator", "full"])
@pytest.mark.parametrize("module, shape", CASES, ids=IDS)
def test_refill_writes_new_values_into_the_same_tensors(module: Any, shape: SimpleNamespace, scales: str) -> None:
    data = module.generate_input(shape, 1, device="cpu")
    before = [(label, id(tensor), tensor.data_ptr()) for label, tensor in flat_tensors(data)]
    module.refill_input(data, 2, scales=scales)
    assert [(label, id(tensor), tensor.data_ptr()) for label, tensor in flat_tensors(data)] == before
    assert same_bits(data, module.generate_input(shape, 2, device="cpu", scales=scales))


@pytest.mark.parametrize("module, shape", CASES, ids=IDS)
def test_full_scales_keep_the_operands_and_c(module: Any, shape: SimpleNamespace) -> None:
    plain = dict(flat_tensors(module.generate_input(shape, 9, device="cpu")))
    full = dict(flat_tensors(module.generate_input(shape, 9, device="cpu", scales="full")))
    assert plain.keys() == full.keys()
    changed = set()
    for label, tensor in plain.items():
        assert layout(tensor) == layout(full[label]), label
        if not torch.equal(raw(tensor), raw(full[label])):
            changed.add(label)
    assert changed and all(full[label].dtype == E4M3 for label in changed)
    unchanged_fp4 = [label for label, t in plain.items() if t.dtype in (FP4, FP16)]
    assert not changed & set(unchanged_fp4)


def test_full_scales_reach_across_the_encoding() -> None:
    codes = lambda tensors: torch.cat([raw(t).flatten() for t in tensors])  # noqa: E731
    d = codes(dual.generate_input(dims(m=256, n=256, k=256, l=2), 4, device="cpu", scales="full")[3:6])
    assert int(d.max()) >= 0x60 and 0 < int(d[d > 0].min()) < 0x08  # 32 and up (< 64 at k = 256), subnormals
    v = codes(gemv.generate_input(dims(m=512, k=256, l=2), 4, device="cpu", scales="full")[2:4])
    assert int(v.max()) == 0x7E or int(v.max()) >= 0x78  # the GEMM's scheme reaches 2**8 and beyond
    assert int(v[v > 0].min()) < 0x08
    shape = dims(m=(256, 256), n=(256, 256), k=(256, 256), g=2)
    _, refs, _, _ = group.generate_input(shape, 4, device="cpu", scales="full")
    g = codes([t for pair in refs for t in pair])
    assert int(g.max()) >= 0x78 and int(g[g > 0].min()) < 0x08
    assert all(t.device.type == "cpu" for pair in refs for t in pair)


@pytest.mark.parametrize(
    "module, shape, message",
    [
        (dual, dims(m=128, n=128, k=100, l=1), "shape m=128 n=128 k=100 l=1: k must be a multiple of 16"),
        (dual, dims(m=0, n=128, k=256, l=1), "shape m=0 n=128 k=256 l=1: expected positive integer sizes"),
        (gemv, dims(m=128, k=200, l=1), "shape m=128 k=200 l=1: k must be a multiple of 16"),
        (gemv, dims(m=128, k=256, l=0), "expected positive integer sizes"),
        (group, dims(m=(128, 64), n=(128,), k=(256, 256), g=2), "g=2 but m, n, k have 2, 1, 2 entries"),
        (group, dims(m=(128,), n=(128,), k=(256,), g=1, l=2), "l must be 1"),
        (group, dims(m=128, n=128, k=256, g=1), "m must be a list of sizes"),
        # groups are numbered from 1, as check, dump and --shape number them: it said "group 0"
        (group, dims(m=(128,), n=(128,), k=(250,), g=1), "group 1: m=128 n=128 k=250: k must be a multiple of 16"),
        (group, dims(m=(128, 0), n=(128, 128), k=(256, 256), g=2), "group 2: m=0 n=128 k=256: expected positive"),
    ],
)
def test_impossible_shapes_are_usage_errors(module: Any, shape: SimpleNamespace, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        module.generate_input(shape, 1, device="cpu")


@pytest.mark.parametrize("module, shape", CASES, ids=IDS)
def test_unknown_scale_mode_is_a_usage_error(module: Any, shape: SimpleNamespace) -> None:
    with pytest.raises(UsageError, match="scales: expected one of generator, full, got 'wide'"):
        module.generate_input(shape, 1, device="cpu", scales="wide")


def test_describe_names_every_tensor() -> None:
    lines = dual.describe(dual.generate_input(dims(m=128, n=128, k=256, l=1), 1, device="cpu"))
    assert len(lines) == 10 and lines[6].startswith("[6] sfa_permuted") and "float8_e4m3fn" in lines[6]
    assert gemv.describe(gemv.generate_input(dims(m=128, k=256, l=1), 1, device="cpu"))[1].startswith("[1] b ")
    lines = group.describe(group.generate_input(dims(m=(128, 64), n=(128, 256), k=(256, 256), g=2), 1, device="cpu"))
    assert len(lines) == 2 * 7 + 1
    assert lines[0].startswith("[0][0][0] a0")
    assert lines[-1] == "[3] problem_sizes  (128, 128, 256, 1), (64, 256, 256, 1)"
