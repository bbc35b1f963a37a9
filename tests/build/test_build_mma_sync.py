"""An mma.sync (HMMA in the SASS) is a tensor-core op: a kernel built around it passes on sm_90a and sm_100a with
a note that it is not the arch's widest MMA (wgmma, tcgen05), where a kernel without any tensor-core op still fails,
and so does an mma.sync side path of a kernel whose own MMA is the other arch's (wgmma behind an arch guard)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build.report import TensorOpCheck, narrower_note, tensor_op_problem
from nvfp4ctl.cli import app

from kernel_probes import mma_sync_probe, wgmma_kernel

runner = CliRunner()


def _build(kernel: Path, arch: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["build", str(kernel), "--arch", arch])
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize("arch, widest", [("sm_90a", "HGMMA (wgmma)"), ("sm_100a", "UTCOMMA.4X (tcgen05.mma)")])
def test_an_mma_sync_kernel_builds_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arch: str,
                                               widest: str) -> None:
    code, said = _build(mma_sync_probe(tmp_path), arch, monkeypatch)
    assert code == 0, said
    assert "│ HMMA.16816.F32 │" in said  # the tensor-op column shows it
    assert (f"note: mma_sync_probe.cu ({arch}): its tensor-core op is HMMA.16816.F32 (mma.sync), not {arch}'s widest"
            f" MMA {widest}") in said
    assert "error:" not in said and "no-tensor-op" not in said


def test_an_mma_sync_side_path_of_a_wgmma_kernel_built_for_sm100a_still_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wgmma behind `#if __CUDA_ARCH__ == 900` is compiled out for sm_100a: the HMMA left is not the kernel."""
    kernel = tmp_path / "side_path.cu"
    wgmma, start, end = wgmma_kernel()
    kernel.write_text(mma_sync_probe(tmp_path).read_text().replace("// nvfp4ctl: arch=sm_90a\n", "")  # no arch
                      + wgmma[start:end])
    code, said = _build(kernel, "sm_100a", monkeypatch)
    assert code == 1, said
    assert ("no UTCOMMA.4X in the sm_100a SASS (found: HMMA.16816.F32): its wgmma / SM90 code is sm_90a's, which"
            " sm_100a does not run; build it with --arch sm_90a") in said


def test_a_kernel_without_any_tensor_core_op_still_fails() -> None:
    none = TensorOpCheck(expected="HGMMA", found=(), match=None, checked=True)
    assert not none.present and narrower_note(none, "sm_90a") is None
    assert "a kernel without tensor cores on purpose says so" in (tensor_op_problem(none, "sm_90a") or "")
    hmma = TensorOpCheck(expected="HGMMA", found=("HMMA.16816.F32",), match=None, checked=True)
    assert hmma.present and hmma.shown == "HMMA.16816.F32" and tensor_op_problem(hmma, "sm_90a") is None
