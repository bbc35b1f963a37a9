from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import BuildReport, load_kernel_module, loader, toolchain
from nvfp4ctl.errors import UsageError

FIXTURES = Path(__file__).parent / "fixtures"
HGMMA_PROBE, ZERO_GEMM = FIXTURES / "hgmma_probe.cu", FIXTURES / "zero_gemm.cu"


@pytest.mark.parametrize(
    ("source", "gpu", "expected"),
    [(HGMMA_PROBE, None, "sm_90a"), (HGMMA_PROBE, "sm_90a", "sm_90a"), (ZERO_GEMM, "sm_100a", "sm_100a")],
)
def test_arch_is_the_files_own_else_the_gpus(source: Path, gpu: str | None, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "gpu_arch", lambda: gpu)
    assert loader.arch_for(source) == expected


def test_a_kernel_for_another_gpu_or_no_arch_at_all_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "gpu_arch", lambda: "sm_100a")
    with pytest.raises(UsageError, match="is an sm_90a kernel but this GPU needs sm_100a"):
        loader.arch_for(HGMMA_PROBE)
    monkeypatch.setattr(loader, "gpu_arch", lambda: None)
    with pytest.raises(UsageError, match="no GPU here and none declared"):
        loader.arch_for(ZERO_GEMM)


@pytest.mark.skipif(toolchain.torch_build().has_cuda, reason="torch with CUDA builds real modules")
def test_cpu_torch_cannot_load_a_module(hgmma_report: BuildReport) -> None:
    with pytest.raises(UsageError, match="this torch has no CUDA"):
        load_kernel_module(HGMMA_PROBE)


@pytest.mark.gpu
def test_the_fixture_module_runs_on_the_gpu() -> None:
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.task import Case

    problem = get_problem("nvfp4_gemm")
    data = problem.generate_input(Case(m=128, n=256, k=256, l=1, seed=1111))
    module = load_kernel_module(ZERO_GEMM)
    assert load_kernel_module(ZERO_GEMM) is module  # imported once per process
    out = module.nvfp4_gemm(data[0], data[1], data[4], data[5], data[6])
    assert out.data_ptr() == data[6].data_ptr() and not out.any()
    with pytest.raises(ValueError, match="sfa_permuted"):
        module.nvfp4_gemm(data[0], data[1], data[2], data[5], data[6])  # reference scales have the wrong shape
