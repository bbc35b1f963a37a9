"""Build tests share one cache folder per session, so each kernel compiles once; CI may point
NVFP4CTL_CACHE at a folder it keeps between runs, and then the real kernels are not rebuilt at all."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvfp4ctl.build import BuildReport, build_kernel, submission_build
from nvfp4ctl.build.submission_sources import Extension

FIXTURES = Path(__file__).parent / "fixtures"
HGMMA_PROBE = FIXTURES / "hgmma_probe.cu"  # declares sm_90a, one wgmma -> HGMMA (test files repeat these paths:
ZERO_GEMM = FIXTURES / "zero_gemm.cu"  # no arch, no tensor-core op              tests/ folders are not packages)


@pytest.fixture(scope="session")
def build_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("NVFP4CTL_CACHE")
    return Path(given) if given else tmp_path_factory.mktemp("nvfp4ctl-cache")


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
