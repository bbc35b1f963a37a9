"""A kernel whose path holds a byte that is not UTF-8 (Python holds b"\\xff" as the lone surrogate \\udcff) builds:
its build log (the compiler's command names the path), the ABI probe's #include of a header beside it and
cuobjdump's listing (which names the source) each crashed the build with a traceback, UnicodeEncodeError or
UnicodeDecodeError. nvcc compiles the device code here; no GPU is needed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nvfp4ctl.build import build_kernel
from nvfp4ctl.build.builder import BUILD_LOG
from nvfp4ctl.build.resources import saved_sass, sass_digest
from nvfp4ctl.tune.compile_pool import code_digest

ZERO_GEMM = Path(__file__).parent / "fixtures" / "zero_gemm.cu"  # no arch, no tensor-core op
ODD_FOLDER, ODD_NAME = "k\udcff", "zero\udcff.cu"


@pytest.mark.parametrize(("folder", "name"), [(ODD_FOLDER, "zero_gemm.cu"), ("k", ODD_NAME)])
def test_a_kernel_whose_path_is_not_utf8_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str,
                                                name: str) -> None:
    # a cache of its own: the session's may hold this code's build from another test, whose log names another path
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    kernels = tmp_path / folder / "kernels"
    # a kernels/common of the user's, which stands in for nvfp4ctl's: the ABI probe includes its API header by path
    shutil.copytree(ZERO_GEMM.parents[3] / "kernels" / "common", kernels / "common")
    monkeypatch.chdir(kernels.parent)
    kernel = kernels / name
    shutil.copyfile(ZERO_GEMM, kernel)
    report = build_kernel(kernel, "sm_90a")
    assert report.functions, report
    log = (report.entry / BUILD_LOG).read_bytes()
    assert b"\xff" in log and b"zero" in log  # the command as run: the path's own bytes
    sass = saved_sass(report.entry)
    assert sass is not None and "zero_fill" in sass
    assert code_digest(report.entry) == sass_digest(sass) != ""
    again = build_kernel(kernel, "sm_90a")
    assert again.cache_hit and again.entry == report.entry
