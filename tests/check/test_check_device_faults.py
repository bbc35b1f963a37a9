"""A kernel that spins, faults or traps on the GPU itself: check and bench kill or report it, and the GPU
is usable afterwards. Unlike the Python stand-ins of targets/ (a sleep, a raised "CUDA error"), these
launch real kernels (targets/device_faults/), so what is tested is what the driver does with them."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from check_fakes import TARGETS
from nvfp4ctl.cli import app
from nvfp4ctl.project import kernels_dir

pytestmark = pytest.mark.gpu

FAULTS = TARGETS / "device_faults"
PLAIN_TORCH = str(kernels_dir() / "torch_dequant" / "submission.py")


def nvfp4ctl(*args: str):
    return CliRunner().invoke(app, list(args))


def test_a_spinning_kernel_is_killed_and_the_gpu_works_after_it() -> None:
    check = nvfp4ctl("check", "--submission", str(FAULTS / "spins.py"), "--only", "4", "--timeout", "20")
    assert check.exit_code == 3, check.output
    assert "possible deadlock in test 4 (m=256 n=7168 k=256): no result after 20 s; the child was killed" in check.output
    bench = nvfp4ctl("bench", "--submission", str(FAULTS / "spins.py"), "--shape", "256,7168,256", "--timeout", "20")
    assert bench.exit_code == 3, bench.output
    assert "possible deadlock: bench 256x7168x256 ran past 20 s; the child was killed" in bench.output
    after = nvfp4ctl("check", "--submission", PLAIN_TORCH, "--only", "4")
    assert after.exit_code == 0, after.output
    assert "1/1 pass" in after.output


@pytest.mark.parametrize(("fault", "said"), [
    ("bad_address.py", "an illegal memory access was encountered"),
    ("trap.py", "unspecified launch failure (also how a kernel that executes trap ends"),
])
def test_a_fault_crashes_its_test_and_the_next_runs_in_a_fresh_child(fault: str, said: str) -> None:
    check = nvfp4ctl("check", "--submission", str(FAULTS / fault), "--only", "4", "--only", "3")
    assert check.exit_code == 4, check.output
    assert said in check.output
    # the summary, which the run log keeps, gives the CUDA error
    assert re.search(rf"1/2 pass, 1 crash \(test 4: \w+: CUDA error: {re.escape(said[:26])}", " ".join(check.output.split()))
    bench = nvfp4ctl("bench", "--submission", str(FAULTS / fault), "--shape", "256,7168,256")
    assert bench.exit_code == 4, bench.output
    assert "bench 256x7168x256 crashed with a CUDA error" in bench.output
