"""Build tests share one cache folder per session, so each kernel compiles once; CI may point
NVFP4CTL_TEST_CACHE at a folder it keeps between runs, and then the real kernels are not rebuilt at all
(tests/session_cache.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

import session_cache
from nvfp4ctl.build import BuildReport, build_kernel, submission_build
from nvfp4ctl.build.submission_sources import Extension
from nvfp4ctl.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
HGMMA_PROBE = FIXTURES / "hgmma_probe.cu"  # declares sm_90a, one wgmma -> HGMMA (test files repeat these paths:
ZERO_GEMM = FIXTURES / "zero_gemm.cu"  # no arch, no tensor-core op              tests/ folders are not packages)
# a TORCH_CUDA_ARCH_LIST of two archs, and device code without a tensor-core op for the extensions below it
TWO_ARCH_LIST = ('import os\nfrom torch.utils.cpp_extension import load_inline\n'
                 'os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0a;10.0a"\n'
                 'CUDA = "// nvfp4ctl: no-tensor-op\\n__global__ void k(int* p) { p[0] = 1; }"\n')


@pytest.fixture(scope="session")
def build_cache(pytestconfig: pytest.Config) -> Path:
    return Path(session_cache.folder(pytestconfig))


@pytest.fixture(autouse=True)
def _session_cache(build_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(build_cache))


@pytest.fixture(scope="session")
def hgmma_report(build_cache: Path) -> Iterator[BuildReport]:
    """The probe built once for sm_90a (device code only here: CPU torch)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NVFP4CTL_CACHE", str(build_cache))
        yield build_kernel(HGMMA_PROBE, "sm_90a")


@pytest.fixture()
def compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The units compiled, by a stand-in for nvcc that succeeds and leaves no object behind."""
    compiled: list[str] = []

    def command(extension: Extension, unit: Path, arch: str, code: str, folder: Path) -> list[str]:
        compiled.append(unit.name)
        return [sys.executable, "-c", "pass"]

    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(submission_build, "_command", command)
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: None)
    monkeypatch.setenv("COLUMNS", "200")
    return compiled


@pytest.fixture()
def build_two_arch_list(tmp_path: Path) -> Callable[..., Result]:
    """`build` of a submission that sets TORCH_CUDA_ARCH_LIST="9.0a;10.0a" and compiles CUDA as the extension
    "both", whose extra_cuda_cflags are `flags` (as written in Python; none where empty), then the `calls` below
    it: torch compiles an extension that names no arch for every arch of the list."""

    def build(flags: str = "", *calls: str) -> Result:
        given = f", extra_cuda_cflags={flags}" if flags else ""
        submission = tmp_path / "submission.py"
        submission.write_text(TWO_ARCH_LIST + f'both = load_inline(name="both", cpp_sources="", cuda_sources=CUDA{given})\n'
                              + "".join(calls))
        return CliRunner().invoke(app, ["build", str(submission)])

    return build
