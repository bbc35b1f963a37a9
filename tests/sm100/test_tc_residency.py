"""The tcgen05 kernel's CTAs wait on each other's split-K flags, so a launch whose grid cannot be
wholly resident would deadlock: its host side asks the occupancy API before launching and returns
cudaErrorCooperativeLaunchTooLarge instead, which the torch binding raises as one line saying why.
Proven on the CPU through tests/sm100/host/sm100_tc_residency.cu, which includes the kernel source and
calls its check_resident (and the binding's launch_failure) without a GPU."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tc_plan import load_plan
from tc_shapes import ALL_SHAPES

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "kernels" / "sm100" / "nvfp4_gemm_sm100_tc.cu"
PROGRAM = ROOT / "tests" / "sm100" / "host" / "sm100_tc_residency.cu"
BINDING = ROOT / "kernels" / "common" / "torch_binding.cpp"
TOO_LARGE = "cudaErrorCooperativeLaunchTooLarge"


@pytest.fixture(scope="module")
def residency(tmp_path_factory: pytest.TempPathFactory):
    """Runs the residency program on (ctas, sms, blocks per SM, TMEM columns) rows; its JSON."""
    from nvfp4ctl.build import toolchain
    from nvfp4ctl.errors import UsageError

    try:
        nvcc = toolchain.nvcc_path()
    except UsageError as error:
        pytest.skip(f"needs nvcc: {error}")
    binary = tmp_path_factory.mktemp("residency") / "sm100_tc_residency"
    build = subprocess.run(
        [str(nvcc), "-gencode=arch=compute_100a,code=sm_100a", "-O1", "-std=c++17", "--expt-relaxed-constexpr",
         f"-I{ROOT / 'kernels' / 'common'}", str(PROGRAM), "-o", str(binary)],
        capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr

    def run(*rows: tuple[int, int, int, int]) -> dict[str, Any]:
        args = [str(value) for row in rows for value in row]
        done = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    return run


def test_a_grid_larger_than_the_resident_ctas_is_refused(residency) -> None:
    rows = [(148, 148, 1, 512), (149, 148, 1, 512), (1, 148, 0, 512), (132, 132, 1, 512), (133, 132, 1, 512)]
    checks = residency(*rows)["checks"]
    assert [check["error"] for check in checks] == ["cudaSuccess", TOO_LARGE, TOO_LARGE, "cudaSuccess", TOO_LARGE]
    assert checks[2]["capacity"] == 0, "a CTA that does not fit on an SM at all leaves no room for any"


def test_tensor_memory_caps_what_the_occupancy_api_allows(residency) -> None:
    # two CTAs per SM by shared memory and registers, but each takes all 512 TMEM columns: the
    # second CTA on an SM would wait in tcgen05.alloc for the first, which may wait for its flag
    checks = residency((296, 148, 2, 512), (296, 148, 2, 256), (148, 148, 2, 512))["checks"]
    assert [(c["capacity"], c["error"]) for c in checks] == [(148, TOO_LARGE), (296, "cudaSuccess"), (148, "cudaSuccess")]


@pytest.mark.usefixtures("tc_printer")
@pytest.mark.parametrize("sms", [148, 132])
def test_every_planned_grid_fits_one_cta_per_sm(residency, sms: int) -> None:
    tmem = residency()["tmem_columns"]
    plans = {shape: load_plan(*shape, sms=sms) for shape in ALL_SHAPES}
    rows = [(plan.ctas, sms, 1, tmem["Tile64" if plan.config["BLOCK_M"] == 64 else "Tile128"]) for plan in plans.values()]
    refused = [(shape, check) for shape, check in zip(plans, residency(*rows)["checks"]) if check["error"] != "cudaSuccess"]
    assert not refused, f"the plan launches grids the residency check refuses: {refused}"


def test_the_binding_says_why_the_launch_was_refused(residency) -> None:
    line = residency()["binding_error"]
    assert line.startswith("nvfp4_gemm launch failed: too many blocks in cooperative launch (")
    assert "must run at once" in line and "\n" not in line
    from nvfp4ctl.runner.child import is_cuda_error

    # a launch refused before it reached the GPU leaves the CUDA context usable: not a crash
    assert not is_cuda_error(RuntimeError(line))
    assert 'launch_failure("nvfp4_gemm", err)' in BINDING.read_text()


def test_the_launch_checks_residency_before_it_launches() -> None:
    launch = re.search(r"cudaError_t launch\(const Nvfp4GemmArgs& args.*?\n}\n", KERNEL.read_text(), re.DOTALL)
    assert launch is not None, "launch() not found in the kernel"
    body = launch.group(0)
    assert "check_resident(" in body and "blocks_per_sm<Config>(" in body
    assert body.index("check_resident(") < body.index("<<<"), "the residency check must come before the launch"
    assert "cudaOccupancyMaxActiveBlocksPerMultiprocessor(" in KERNEL.read_text()


def test_the_wait_limit_is_seconds(residency) -> None:
    # far above any legal wait (a whole launch takes microseconds), far below the 180 s watchdog
    assert 1_000_000_000 <= residency()["wait_timeout_ns"] <= 10_000_000_000
