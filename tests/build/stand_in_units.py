"""The smallest units a build can take, for tests whose compiler is a stand-in (a timeout, a full disk): a
kernel .cu and a submission's load_inline, each for sm_90a with no tensor op to look for."""

from __future__ import annotations

from pathlib import Path

from nvfp4ctl.build.report import BuildReport, TensorOpCheck

KERNEL = "// nvfp4ctl: arch=sm_90a\n// nvfp4ctl: no-tensor-op\n__global__ void k(float* p) { p[0] = 1.0f; }\n"
SUBMISSION = '''from torch.utils.cpp_extension import load_inline
CUDA_SOURCE = r"""// nvfp4ctl: no-tensor-op
__global__ void k(float* p) { p[0] = 1.0f; }
"""
m = load_inline(name="plain", cpp_sources="", cuda_sources=CUDA_SOURCE, extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])
'''


def flat(text: str) -> str:
    """Output with rich's folding undone: every run of whitespace one space."""
    return " ".join(text.split())


def saved_report(source: Path, arch: str, key: str, entry: Path) -> BuildReport:
    """What a stand-in compile of `source` leaves in its cache entry: a report, saved, of a build that found no
    tensor op (none is looked at)."""
    report = BuildReport(source=source, arch=arch, key=key, entry=entry, module_name=None, functions=(),
                         tensor_op=TensorOpCheck(expected="HGMMA", found=(), match=None, checked=True), compile_s=1.0)
    report.save()
    return report
