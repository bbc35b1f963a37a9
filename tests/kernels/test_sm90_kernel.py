"""GPU tests of the sm_90a kernel through the CLI's own path (nvfp4ctl.build.load_kernel_module).

Exact reference (float64, rounded once), rtol = atol = 1e-3, poisoned output, two runs bit-identical.
Skipped without a GPU (conftest) and on GPUs other than sm_90.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "sm90" / "nvfp4_gemm_sm90.cu"

TASK_TESTS = [
    (128, 256, 256, 1), (128, 1536, 7168, 1), (128, 3072, 1536, 1), (256, 7168, 256, 1), (256, 7168, 2048, 1),
    (2304, 4608, 7168, 1), (384, 7168, 2304, 1), (512, 512, 7168, 1), (512, 4096, 512, 1), (512, 1536, 7168, 1),
]
OUTSIDE_TASK = [(256, 384, 512, 1), (128, 256, 256, 2), (256, 384, 512, 2), (384, 640, 768, 3)]
FULL_RANGE = [(128, 256, 256, 1), (256, 384, 512, 2), (128, 7168, 2048, 1)]


@pytest.fixture(scope="module")
def kernel():
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("needs an sm_90 GPU (H100/H200)")
    from nvfp4ctl.build import load_kernel_module

    return load_kernel_module(KERNEL)


def run_and_compare(kernel, m: int, n: int, k: int, l: int, seed: int, scales: str) -> None:
    from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
    from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

    data = generate_input(m, n, k, l, seed, device="cuda", scales=scales)
    want = reference_gemm(data[0], data[1], data[2], data[3])
    outs = []
    for _ in range(2):
        data[6].fill_(float("nan"))
        outs.append(kernel.nvfp4_gemm(data[0], data[1], data[4], data[5], data[6]).clone())
    torch.cuda.synchronize()
    got = outs[0].float()
    bad = ~torch.isclose(got, want.float(), rtol=1e-3, atol=1e-3)
    assert not bad.any(), (
        f"{m=}, {n=}, {k=}, {l=}, {scales=}: {int(bad.sum())} mismatches, first at "
        f"{tuple(int(x) for x in bad.nonzero()[0])}"
    )
    assert torch.equal(outs[0], outs[1]), f"{m=}, {n=}, {k=}, {l=}: two runs differ (a race?)"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,l", TASK_TESTS + OUTSIDE_TASK)
def test_matches_reference(kernel, m: int, n: int, k: int, l: int) -> None:
    run_and_compare(kernel, m, n, k, l, seed=1111, scales="generator")


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,l", FULL_RANGE)
def test_full_range_scales(kernel, m: int, n: int, k: int, l: int) -> None:
    run_and_compare(kernel, m, n, k, l, seed=4242, scales="full")


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,constraint", [(100, 256, 256, "m must be a multiple of 128"),
                                             (128, 200, 256, "n must be a multiple of 128"),
                                             (128, 256, 320, "k must be a multiple of 256")])
def test_unsupported_shape_names_the_constraint(kernel, m: int, n: int, k: int, constraint: str) -> None:
    a = torch.zeros((1, m, k // 2), dtype=torch.uint8, device="cuda").permute(1, 2, 0).view(torch.float4_e2m1fn_x2)
    b = torch.zeros((1, n, k // 2), dtype=torch.uint8, device="cuda").permute(1, 2, 0).view(torch.float4_e2m1fn_x2)
    rest_m, rest_n, rest_k = (m + 127) // 128, (n + 127) // 128, (k // 16 + 3) // 4
    # storage (l, rest, rest_k, 32, 4, 4) viewed as the permuted (32, 4, rest, 4, rest_k, l) tensor
    sfa = torch.zeros((1, rest_m, rest_k, 32, 4, 4), dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
    sfb = torch.zeros((1, rest_n, rest_k, 32, 4, 4), dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
    c = torch.zeros((1, m, n), dtype=torch.float16, device="cuda").permute(1, 2, 0)
    with pytest.raises(RuntimeError, match=constraint):
        kernel.nvfp4_gemm(a, b, sfa.permute(3, 4, 1, 5, 2, 0), sfb.permute(3, 4, 1, 5, 2, 0), c)
