"""GPU: a tiny tune of the sm_90a kernel on one shape (one knob, three values), checked and timed
through the real pools; the dispatch table is left as it is (--no-write). Skipped without a GPU,
on GPUs other than sm_90, and while the kernel declares no knobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.knobs import discover

KERNEL = Path(__file__).resolve().parents[2] / "kernels" / "sm90" / "nvfp4_gemm_sm90.cu"
KNOB = "STAGES_SHARED_A"  # used by the shared-A kernels of the M = 128 benchmark shapes


@pytest.mark.gpu
def test_a_tiny_tune_of_the_sm90_kernel_on_one_shape(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("needs an sm_90 GPU")
    try:
        knobs = discover(KERNEL)
        knob = knobs.by_name(KNOB)
    except UsageError as error:
        pytest.skip(f"the sm_90a kernel has no {KNOB} knob yet: {error}")
    task = tmp_path / "task.yml"
    task.write_text("tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\nbenchmarks:\n  - {m: 128, n: 7168, k: 2048, l: 1, seed: 1111}\n")
    table = knobs.dispatch.read_text() if knobs.dispatch else None
    result = CliRunner().invoke(app, ["tune", "--kernel", str(KERNEL), "--task", str(task), "--shapes", "benchmarks",
                                      "--knobs", KNOB, "--gpus", "1", "--no-write", "--fresh", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    (shape,) = report["shapes"]
    assert shape["current"]["status"] == "ok" and shape["current"]["us"] > 0
    tried = {entry["config"][knob.name] for entry in shape["ranked"] if entry["config"]}
    assert tried == set(knob.values)
    assert all(entry["status"] == "ok" for entry in shape["ranked"]), shape["ranked"]
    assert shape["winner"][knob.name] in knob.values
    # a lead, if any, was timed again back to back with the current best (the search's rematch)
    assert all(r["current_result"]["status"] == r["challenger_result"]["status"] == "ok" for r in report["rematches"])
    if table is not None:
        assert knobs.dispatch.read_text() == table
