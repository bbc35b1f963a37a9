"""`export --arch` of a kernel marked for the other arch: refused only where its code holds that arch's own
instructions (wgmma for sm_90a, tcgen05 for sm_100a, as build finds them, arch guards and all); a kernel of
mma.sync or plain CUDA, which runs on either, is exported with a warning that its mark names another arch."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app

from kernel_probes import mma_sync_probe

BUILD_FIXTURES = Path(__file__).parents[1] / "build" / "fixtures"
HGMMA_PROBE = BUILD_FIXTURES / "hgmma_probe.cu"  # `arch=sm_90a`, one wgmma behind `#if __CUDA_ARCH__ == 900`
runner = CliRunner()


def _export(kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, Path]:
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.chdir(tmp_path)
    copied = tmp_path / "kernels" / kernel.name
    copied.parent.mkdir(exist_ok=True)
    copied.write_text(kernel.read_text())
    result = runner.invoke(app, ["export", "--kernel", f"kernels/{kernel.name}", "--arch", "sm_100a", "-o", "out.py"])
    return result.exit_code, " ".join(result.output.split()), tmp_path / "out.py"


def test_an_mma_sync_kernel_marked_sm90a_is_exported_for_sm100a_with_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `arch=sm_90a`, one mma.sync: runs on sm_100a too
    code, said, written = _export(mma_sync_probe(tmp_path / "probe"), tmp_path, monkeypatch)
    assert code == 0, said
    assert ("warning: mma_sync_probe.cu is marked as an sm_90a kernel (its `// nvfp4ctl: arch=sm_90a` line) but holds"
            " no wgmma / SM90 instructions: exported for --arch sm_100a as it is (`nvfp4ctl build --arch sm_100a"
            " kernels/mma_sync_probe.cu` checks that it compiles there)") in said
    assert "wrote out.py" in said and "mma_sync_probe.cu for sm_100a" in said
    assert "-gencode=arch=compute_100a,code=sm_100a" in written.read_text()


def test_a_wgmma_kernel_behind_an_arch_guard_is_still_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, said, written = _export(HGMMA_PROBE, tmp_path, monkeypatch)
    assert code == 2, said
    assert said == ("error: hgmma_probe.cu is an sm_90a kernel (its `// nvfp4ctl: arch=sm_90a` line), not one for"
                    " --arch sm_100a: its wgmma / SM90 instructions would not run there; pass --arch sm_90a or a kernel"
                    " written for sm_100a; nothing was written")
    assert not written.exists()
