"""A submission whose CUDA is a plain CUDA-core GEMV (FFMA, no tensor-core op), one of portable CUDA that names
no arch, and the SASS a stand-in dump of them gives: what the tests of build's tensor-op check compile, and how
they build one in a folder with a problem's task.yml."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import submission_build
from nvfp4ctl.cli import app
from nvfp4ctl.problems.base import PROBLEMS_DIR

SUB_CUDA = '''from torch.utils.cpp_extension import load_inline
CUDA = r"""__global__ void gemv(const float* a, const float* b, float* c, int k) {
  float sum = 0.f;
  for (int i = 0; i < k; ++i) sum += a[blockIdx.x * k + i] * b[i];
  c[blockIdx.x] = sum;
}"""
gemv = load_inline(name="gemv", cpp_sources="", cuda_sources=CUDA,
                   extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])
'''
FFMA_SASS = "        /*0080*/                   FFMA R4, R2, R3, R4 ;\n"
# plain CUDA naming no arch (no -gencode, no tcgen05 or wgmma): torch builds it for the GPU it runs on
PORTABLE = '''from torch.utils.cpp_extension import load_inline
CUDA = r"""__global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.f * x[i];
}"""
module = load_inline(name="scaled", cpp_sources="", cuda_sources=CUDA)
'''


def build_in_task(folder: Path, problem: str, source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """`nvfp4ctl build sub.py` of `source` in `folder` beside `problem`'s task.yml, its SASS the FFMA stand-in:
    the exit code and the output on one line."""
    folder.mkdir()
    (folder / "task.yml").write_text((PROBLEMS_DIR / problem / "task.yml").read_text())
    (folder / "sub.py").write_text(source)
    monkeypatch.chdir(folder)
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: FFMA_SASS)
    result = CliRunner().invoke(app, ["build", "sub.py"])
    return result.exit_code, " ".join(result.output.split())
