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
# 128x2048x3584x2 and 128x4096x7168 run split-K over a cluster of 3 on an H100 (uneven K tiles, 8/4/4 rows).
# Every way of getting A runs here (plans as benchmarks/sm90_kernel.py check logs them on an H100): the
# launch-wide shared A copy (resident grid, >= 16 K tiles per CTA: 256x7168x2048, 512x1536x7168,
# 128x7168x4096x2, 128x4096x7168), per-CTA A decode (e.g. 2304x4608x7168 whose grid is not resident at
# once, 384x640x768x3) and the direct kernel's register loads (calls of at most 128 units: 128x256x256,
# 256x384x512, 128x256x256x2, 256x384x512x2; and 128x3072x1536 through its dispatch-table entry).
OUTSIDE_TASK = [(256, 384, 512, 1), (128, 256, 256, 2), (256, 384, 512, 2), (384, 640, 768, 3), (128, 2048, 3584, 2),
                (128, 7168, 4096, 2)]
FULL_RANGE = [(128, 256, 256, 1), (256, 384, 512, 2), (128, 7168, 2048, 1), (128, 4096, 7168, 1), (256, 7168, 2048, 1)]
# The spanning split (one K range per SM across tile boundaries, shared A) runs these on an H100 (132
# SMs): 54-55, 27-28, 46-47 and 40-41 K tiles per CTA, 2-3 owners per tile, ranges that hand a tile over
# mid-run; the last four cross M-tile or batch boundaries (20-21, 21, 35-36 and 30-31 K tiles per CTA;
# in 256x2304x14336 one range holds a single K tile of M tile 0, so its locally decoded second tile and
# its prefilled B come from M tile 1; benchmarks/sm90_kernel.py check logs the plans).
SPANNING = [(128, 7168, 16384, 1), (128, 7168, 8192, 1), (128, 6144, 16384, 1), (128, 7168, 12288, 1),
            (512, 1536, 7168, 1), (256, 1536, 7168, 2), (128, 3584, 7168, 3), (256, 2304, 14336, 1)]


# Wide tiles (v20: 192 rows of A per CTA, wgmma n192, one unsplit wave; test_sm90_wide_plan.py proves
# the plans): 384x7168x2304 (task) and 768x3072x1024 take them in the shipped build (their 128-row
# tiles overfill a wave on an H100); with NVFP4_SM90_WIDE_TILES = 2 also batches, odd M tiles (rows
# 192-383 start inside a 128-row scale chunk) and 8 K tiles, the fewest shared A takes.
WIDE = [(384, 7168, 2304, 1), (768, 3072, 1024, 1)]
WIDE_EVERYWHERE = [(384, 1024, 1024, 2), (1152, 1280, 1536, 1), (768, 2048, 2048, 1), (384, 7168, 2304, 1)]


@pytest.fixture(scope="module")
def wide_everywhere():
    return sm90_module(("NVFP4CTL_TUNE", "NVFP4_SM90_WIDE_TILES=2"))


def launched_kernels(kernel, m: int, n: int, k: int, l: int) -> list[str]:
    """Names of the GPU kernels one call launches (the profiler's)."""
    from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input

    data = generate_input(m, n, k, l, 3141, device="cuda")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        kernel.nvfp4_gemm(data[0], data[1], data[4], data[5], data[6])
        torch.cuda.synchronize()
    return [event.key for event in profile.key_averages()]


@pytest.mark.gpu
@pytest.mark.parametrize("scales", ["generator", "full"])
@pytest.mark.parametrize("build,shape", [("kernel", s) for s in WIDE] + [("wide_everywhere", s) for s in WIDE_EVERYWHERE])
def test_wide_tiles(request, build: str, shape: tuple[int, int, int, int], scales: str) -> None:
    kernel = request.getfixturevalue(build)
    run_and_compare(kernel, *shape, seed=3141, scales=scales)
    # the wide instance itself ran: a failed occupancy query or tensor map falls back to 128-row tiles
    names = launched_kernels(kernel, *shape)
    assert any("nvfp4_gemm_sm90_kernel<" in name and ", 192>" in name for name in names), names


# The direct kernel on every call (a build with NVFP4_SM90_DIRECT_MAX_UNITS = 10^8), with the warp
# tile and K split its rule picks for 132 SMs (test_sm90_direct_plan.py proves these plans): every
# configuration the launch has, batches, a warp with an odd number of K tiles (128x768x1280: 10 K tiles
# over 4 warps) and a call of 18 K tiles.
DIRECT_SHAPES = [(128, 512, 256, 1, (32, 2)), (128, 256, 256, 2, (32, 2)), (256, 384, 512, 2, (32, 4)),
                 (128, 768, 1280, 1, (32, 4)), (512, 2048, 256, 1, (32, 1)), (256, 2048, 256, 2, (32, 1)),
                 (1280, 2048, 1024, 3, (64, 1)), (384, 7168, 2304, 1, (64, 1))]


def sm90_module(defines: tuple[str, ...] = ()):
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("needs an sm_90 GPU (H100/H200)")
    from nvfp4ctl.build import load_kernel_module

    return load_kernel_module(KERNEL, defines=defines)


@pytest.fixture(scope="module")
def kernel():
    return sm90_module()


@pytest.fixture(scope="module")
def direct_everywhere():
    # NVFP4CTL_TUNE: the -D values alone decide, as in a tune candidate (the dispatch table is not read)
    return sm90_module(("NVFP4CTL_TUNE", "NVFP4_SM90_DIRECT_MAX_UNITS=100000000"))


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


# One shape per way the kernel runs: direct, shared A (launch-wide copy), per-CTA A, spanning, wide.
EVERY_PLAN = [(128, 256, 256, 1), (128, 4096, 7168, 1), (512, 4096, 512, 1), (128, 7168, 16384, 1), (384, 7168, 2304, 1)]


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,l", EVERY_PLAN)
def test_every_gpu_of_one_process(kernel, m: int, n: int, k: int, l: int) -> None:
    """A model split over GPUs calls one loaded module with tensors on each GPU, whichever GPU is
    current: the binding launches on the tensors' GPU and gives the caller's back, and each GPU gets
    its own launch settings (the raised shared-memory limit, occupancy) and its own workspaces."""
    from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input
    from nvfp4ctl.problems.nvfp4_gemm.reference import reference_gemm

    count = torch.cuda.device_count()
    if count < 2:
        pytest.skip("needs two GPUs")
    for device in (*range(count), 0):  # GPU 0 again after the others: its settings are still its own
        data = generate_input(m, n, k, l, 1111 + device, device=f"cuda:{device}")
        want = reference_gemm(data[0], data[1], data[2], data[3])
        other = (device + 1) % count
        with torch.cuda.device(other):
            data[6].fill_(float("nan"))
            got = kernel.nvfp4_gemm(data[0], data[1], data[4], data[5], data[6])
            assert torch.cuda.current_device() == other
        torch.cuda.synchronize(device)
        bad = ~torch.isclose(got.float(), want.float(), rtol=1e-3, atol=1e-3)
        assert not bad.any(), f"cuda:{device} ({other} current), {m=}, {n=}, {k=}: {int(bad.sum())} mismatches"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,l", FULL_RANGE)
def test_full_range_scales(kernel, m: int, n: int, k: int, l: int) -> None:
    run_and_compare(kernel, m, n, k, l, seed=4242, scales="full")


@pytest.mark.gpu
@pytest.mark.parametrize("scales", ["generator", "full"])
@pytest.mark.parametrize("m,n,k,l", SPANNING)
def test_spanning_split(kernel, m: int, n: int, k: int, l: int, scales: str) -> None:
    run_and_compare(kernel, m, n, k, l, seed=2718, scales=scales)


@pytest.mark.gpu
@pytest.mark.parametrize("scales", ["generator", "full"])
@pytest.mark.parametrize("m,n,k,l", [shape[:4] for shape in DIRECT_SHAPES])
def test_direct_kernel(direct_everywhere, m: int, n: int, k: int, l: int, scales: str) -> None:
    run_and_compare(direct_everywhere, m, n, k, l, seed=1618, scales=scales)


UNSUPPORTED_CALL = """
import faulthandler, sys, torch
faulthandler.enable()
from pathlib import Path
from nvfp4ctl.build import load_kernel_module
m, n, k = (int(x) for x in sys.argv[1:4])
mod = load_kernel_module(Path(sys.argv[4]))
shifted = sys.argv[5] if len(sys.argv) > 5 else ""  # this operand starts 2 bytes into its storage
def at(name, size, dtype):
    skip = 2 // torch.empty(0, dtype=dtype).element_size() if name == shifted else 0
    return torch.zeros(size + 16, dtype=dtype, device="cuda")[skip:skip + size]
def packed(rows, name):
    return at(name, rows * k // 2, torch.uint8).view(1, rows, k // 2).permute(1, 2, 0).view(torch.float4_e2m1fn_x2)
def scales(rows):  # storage (l, rest, rest_k, 32, 4, 4) viewed as the permuted (32, 4, rest, 4, rest_k, l)
    s = torch.zeros((1, (rows + 127) // 128, (k // 16 + 3) // 4, 32, 4, 4), dtype=torch.uint8, device="cuda")
    return s.view(torch.float8_e4m3fn).permute(3, 4, 1, 5, 2, 0)
c = at("c", m * n, torch.float16).view(1, m, n).permute(1, 2, 0)
try:
    mod.nvfp4_gemm(packed(m, "a"), packed(n, "b"), scales(m), scales(n), c)
except (RuntimeError, ValueError) as exc:
    print(exc)
    sys.exit(1)
"""


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,shifted,constraint", [
    (100, 256, 256, "", "m must be a multiple of 128"),
    (128, 200, 256, "", "n must be a multiple of 128"),
    (128, 256, 320, "", "k must be a multiple of 256"),
    # a view 2 bytes into its storage: named, not the launch's "invalid argument"
    (128, 256, 256, "c", "c must start at a 16-byte aligned address, got one 2 bytes past it"),
    (128, 256, 256, "a", "a must start at a 16-byte aligned address, got one 2 bytes past it"),
])
def test_unsupported_input_names_the_constraint(kernel, m: int, n: int, k: int, shifted: str, constraint: str) -> None:
    # In a child process: on 2026-11-25 a TORCH_CHECK failure in the binding crashed the interpreter
    # (the binding now throws std::invalid_argument); a crash must show as one failed test.
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(KERNEL.parents[2]))
    done = subprocess.run([sys.executable, "-c", UNSUPPORTED_CALL, str(m), str(n), str(k), str(KERNEL), shifted],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1, f"exit {done.returncode}: {done.stdout[-500:]} {done.stderr[-2000:]}"
    assert constraint in done.stdout, done.stdout
