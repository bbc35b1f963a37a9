"""The family on CUDA: references agree with the CPU's, refill keeps device addresses, full scales stay finite."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch

from nvfp4ctl.problems.common.tensors import flat_tensors
from nvfp4ctl.problems.nvfp4_dual_gemm import inputs as dual
from nvfp4ctl.problems.nvfp4_dual_gemm import reference as dual_reference
from nvfp4ctl.problems.nvfp4_gemv import inputs as gemv
from nvfp4ctl.problems.nvfp4_gemv import reference as gemv_reference
from nvfp4ctl.problems.nvfp4_group_gemm import inputs as group
from nvfp4ctl.problems.nvfp4_group_gemm import reference as group_reference

pytestmark = pytest.mark.gpu


def dims(**sizes: Any) -> SimpleNamespace:
    return SimpleNamespace(**{"n": None, "l": None, "g": None, **sizes})


def to_cpu(data: Any) -> Any:
    if isinstance(data, torch.Tensor):
        return data.cpu()
    if isinstance(data, (tuple, list)):
        return type(data)(to_cpu(item) for item in data)
    return data


def bits(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.view(torch.uint8 if tensor.element_size() == 1 else torch.int16)


@pytest.mark.parametrize("scales", ["generator", "full"])
@pytest.mark.parametrize("m, n, k, l", [(256, 512, 256, 1), (512, 384, 2048, 2)])
def test_dual_reference_on_cuda_matches_the_cpu(m: int, n: int, k: int, l: int, scales: str) -> None:
    data = dual.generate_input(dims(m=m, n=n, k=k, l=l), 1111, device="cuda", scales=scales)
    host = to_cpu(data)
    for got, want in zip(dual_reference.products(data), dual_reference.products(host)):
        assert torch.equal(got.cpu().view(torch.int32), want.view(torch.int32))  # exact sums, one rounding
    got, want = dual_reference.reference(data).cpu(), dual_reference.reference(host)
    assert got.stride() == data[9].stride()
    # silu's exp may differ by an fp32 ulp between the CPU and CUDA builds: at most one fp16 ulp apart
    steps = (bits(got).int() - bits(want).int()).abs()  # same-sign fp16 neighbours differ by 1 in their bits
    assert int(steps.max()) <= 1
    assert bool(got.isfinite().all())


@pytest.mark.parametrize("scales", ["generator", "full"])
def test_gemv_and_group_references_on_cuda_match_the_cpu_bit_for_bit(scales: str) -> None:
    data = gemv.generate_input(dims(m=2432, k=4608, l=2), 1111, device="cuda", scales=scales)
    assert torch.equal(bits(gemv_reference.reference(data).cpu()), bits(gemv_reference.reference(to_cpu(data))))
    shape = dims(m=(80, 128, 256), n=(384, 256, 128), k=(256, 512, 256), g=3)
    data = group.generate_input(shape, 1111, device="cuda", scales=scales)
    for got, want in zip(group_reference.reference(data), group_reference.reference(to_cpu(data))):
        assert torch.equal(bits(got.cpu()), bits(want))


@pytest.mark.parametrize(
    "module, shape",
    [
        (dual, dims(m=256, n=384, k=512, l=2)),
        (gemv, dims(m=384, k=7168, l=2)),
        (group, dims(m=(40, 200), n=(136, 256), k=(272, 256), g=2)),
    ],
    ids=["dual", "gemv", "group"],
)
def test_refill_on_cuda_keeps_every_address(module: Any, shape: SimpleNamespace) -> None:
    data = module.generate_input(shape, 1, device="cuda")
    before = [(label, tensor.device.type, tensor.data_ptr()) for label, tensor in flat_tensors(data)]
    module.refill_input(data, 2, scales="full")
    assert [(label, tensor.device.type, tensor.data_ptr()) for label, tensor in flat_tensors(data)] == before
    fresh = module.generate_input(shape, 2, device="cuda", scales="full")
    for (_, ours), (_, want) in zip(flat_tensors(data), flat_tensors(fresh)):
        assert torch.equal(bits(ours), bits(want))
