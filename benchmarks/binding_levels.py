"""The GEMM's torch binding at each -O level, on the CPU alone: build time and the CPU cost of one
call (pybind11 dispatch, torch's tensor accessors, the binding's checks), no GPU needed.

  python3 benchmarks/binding_levels.py [-O0 -O1 -O2 -O3]

A proxy for the GPU machine's measurement (benchmarks/host_binding.py): the binding is built for CPU
tensors (`is_cuda()` read as `is_cpu()`) and linked to a stub launch that does nothing, so what is
timed is the binding alone. Both files compile in parallel, as in a real build, so the build time is
the slower of the two. The study: docs/sm90_performance.md, "Host cost per call".
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

STUB = """#include "nvfp4_gemm_api.h"
const char* nvfp4_gemm_unsupported(int, int, int, int) { return nullptr; }
cudaError_t nvfp4_gemm_launch(const Nvfp4GemmArgs&) { return cudaSuccess; }
const char* cudaGetErrorString(cudaError_t) { return "stub"; }
"""
# the binding's device check, pointed at CPU tensors (included before the binding)
CPU_TENSORS = "#pragma once\n#include <torch/extension.h>\n#define is_cuda is_cpu\n"


def build_spec(level: str, folder: Path) -> dict[str, object]:
    from nvfp4ctl.build import toolchain

    cuda_include = str(toolchain.cuda_home() / "include")
    return {"name": f"binding_O{level.removeprefix('-O')}",
            "sources": [str(REPO / "kernels" / "common" / "torch_binding.cpp"), str(folder / "stub.cpp")],
            "extra_cflags": [level, "-include", str(folder / "cpu_tensors.h")],
            "extra_include_paths": [str(REPO / "kernels" / "common"), cuda_include],
            "build_directory": str(folder / level), "with_cuda": False}


def main(levels: list[str]) -> int:
    from torch.utils import cpp_extension

    from nvfp4ctl.problems.nvfp4_gemm.inputs import generate_input

    sys.path.insert(0, str(REPO / "benchmarks"))
    from sm90_kernel import cpu_us_per_call

    data = generate_input(128, 7168, 2048, 1, 1111, device="cpu")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "stub.cpp").write_text(STUB)
        (folder / "cpu_tensors.h").write_text(CPU_TENSORS)
        print(f"[binding levels] {time.strftime('%Y-%m-%d')} · this machine's CPU ({os.cpu_count()} cores) · "
              "µs per call: median of 20 loops of 2000 calls")
        print(f"{'level':>6s} {'build s':>8s} {'µs per call':>12s}")
        for level in levels:
            spec = build_spec(level, folder)
            Path(str(spec["build_directory"])).mkdir()
            started = time.time()
            module = cpp_extension.load(**spec, verbose=False)
            built = time.time() - started
            us = cpu_us_per_call(lambda: module.nvfp4_gemm(data[0], data[1], data[4], data[5], data[6]),
                                 settle=lambda: None, calls=2000)
            print(f"{level:>6s} {built:8.1f} {us:12.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["-O0", "-O1", "-O2", "-O3"]))
