"""The family's bindings (dual GEMM, grouped GEMM, GEMV) on several GPUs of one process.

A model split over GPUs calls one loaded module with tensors on each GPU, whichever GPU is current:
each binding must launch on its tensors' GPU and give the caller's current GPU back. The target is
each problem's naive CUDA kernel (kernels/naive/), through the problem's C ABI as `--kernel` runs it.
Skipped with fewer than two GPUs.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from nvfp4ctl.bench.correctness import first_mismatch
from nvfp4ctl.problems import get_problem
from nvfp4ctl.project import shipped
from nvfp4ctl.task import load_task

pytestmark = pytest.mark.gpu

PROBLEMS = ("nvfp4_dual_gemm", "nvfp4_group_gemm", "nvfp4_gemv")


@pytest.mark.parametrize("name", PROBLEMS)
def test_binding_runs_on_the_tensors_gpu(name: str) -> None:
    import torch

    from nvfp4ctl.runner.targets import load_kernel

    count = torch.cuda.device_count()
    if count < 2:
        pytest.skip("needs two GPUs")
    problem = get_problem(name)
    task = load_task(problem.task_file)
    kernel = load_kernel(shipped("kernels") / "naive" / f"{name}_naive.cu", name)
    case = task.tests[0]
    for device in (*range(count), 0):  # GPU 0 again after the others
        data = problem.generate_input(replace(case, seed=case.seed + device), device=f"cuda:{device}")
        want = problem.reference(data)
        other = (device + 1) % count
        with torch.cuda.device(other):
            got = kernel(data)
            assert torch.cuda.current_device() == other
        torch.cuda.synchronize(device)
        miss = first_mismatch(got, want, task.rtol, task.atol)
        assert miss is None, f"{name} on cuda:{device} (cuda:{other} current): {miss}"
