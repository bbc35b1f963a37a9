"""CPU cost of one call of the sm_90a kernel through each host layer, with the torch binding built
four ways (GPU machine; made for short leases, about two minutes).

  python3 benchmarks/host_binding.py [--out DIR]

Builds the kernel's torch module as cpp_extension does with no optimisation flag for the binding
(its default: -O0), the same linked to nvcc's static CUDA runtime instead of the shared libcudart,
at -O3, and as `nvfp4ctl build` does now (the binding at flags.BINDING_CFLAGS), plus a probe that times the host code alone
(plan, tensor maps, launch) in a C++ loop. Then, per bench shape: µs of CPU per call from Python for
the C ABI through ctypes (`.sm90build/main.so`, from `sm90_kernel.py libs`), each module's function,
and pybind11 passing the five tensors without a launch. Outputs of every launching path must be
bit-identical. The study is in docs/sm90_performance.md, "Host cost per call".
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHAPES = [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048)]  # task.yml's benchmarks

# The host code alone, timed in C++, and pybind11 functions that pass tensors without checks.
PROBE_CU = r"""
#include "nvfp4_gemm_sm90.cu"
#include <torch/extension.h>
#include <chrono>
double launch_us(int64_t a, int64_t b, int64_t sfa, int64_t sfb, int64_t c, int m, int n, int k, int l, int reps) {
  const Nvfp4GemmArgs args{(const uint8_t*)a, (const uint8_t*)b, (const uint8_t*)sfa, (const uint8_t*)sfb, (void*)c,
                           m, n, k, l};
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) (void)nvfp4_gemm_launch(args);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
}
void takes_five(torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor) {}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, mod) {
  mod.def("launch_us", &launch_us);
  mod.def("takes_five", &takes_five);
}
"""

BUILD = """
import json, os, sys
from torch.utils import cpp_extension
cpp_extension.CUDA_HOME = cpp_extension.CUDA_HOME or os.environ["CUDA_HOME"]
spec = json.loads(sys.argv[1])
cpp_extension.load(**spec, with_cuda=True, verbose=False)
"""


def module_builds(out: Path) -> dict[str, dict[str, object]]:
    from nvfp4ctl.build import flags, toolchain
    from nvfp4ctl.build.sources import build_inputs

    inputs = build_inputs(REPO / "kernels" / "sm90" / "nvfp4_gemm_sm90.cu")
    cuda_flags = [*flags.cuda_flags("sm_90a")]
    includes = [str(p) for p in flags.include_dirs(inputs)]
    static = [f"-L{toolchain.cuda_home()}/lib64", "-l:libcudart_static.a", "-ldl", "-lrt", "-lpthread"]
    gemm = [str(inputs.kernel), str(inputs.binding)]
    probe = out / "host_probe.cu"
    probe.write_text(PROBE_CU)
    specs = {
        "binding -O0 (before)": {"sources": gemm, "extra_cflags": []},
        "binding -O0, static cudart": {"sources": gemm, "extra_cflags": [], "extra_ldflags": static},
        "binding -O3": {"sources": gemm, "extra_cflags": ["-O3"]},
        f"binding {' '.join(flags.BINDING_CFLAGS)} (now)": {"sources": gemm, "extra_cflags": list(flags.BINDING_CFLAGS)},
        "probe": {"sources": [str(probe)], "extra_cflags": list(flags.BINDING_CFLAGS),
                  "extra_include_paths": [*includes, str(REPO / "kernels" / "sm90")]},
    }
    for i, spec in enumerate(specs.values()):
        folder = out / "build" / f"m{i}"
        folder.mkdir(parents=True, exist_ok=True)
        spec.update(name=f"host_m{i}", build_directory=str(folder), extra_cuda_cflags=cuda_flags)
        spec.setdefault("extra_include_paths", includes)
    return specs


def build(spec: dict[str, object]) -> Path:
    from nvfp4ctl.build import toolchain

    env = {**os.environ, "CUDA_HOME": str(toolchain.cuda_home())}
    done = subprocess.run([sys.executable, "-c", BUILD, json.dumps(spec)], env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{spec['name']}: build failed\n{(done.stdout + done.stderr)[-3000:]}")
    return Path(str(spec["build_directory"])) / f"{spec['name']}.so"


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", REPO / ".sm90build" / "host")))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    import torch

    sys.path.insert(0, str(REPO / "benchmarks"))
    from sm90_kernel import LIB_DIR, CapiKernel, bench_inputs, cpu_us_per_call

    specs = module_builds(args.out)
    with concurrent.futures.ThreadPoolExecutor(len(specs)) as pool:
        modules = dict(zip(specs, (load(p) for p in pool.map(build, specs.values()))))
    probe = modules.pop("probe")
    capi = CapiKernel(LIB_DIR / "main.so")
    paths = {"C ABI via ctypes": capi}
    for label, module in modules.items():
        paths[label] = (lambda m: lambda d: m.nvfp4_gemm(d[0], d[1], d[4], d[5], d[6]))(module)
    paths["pybind11, five tensors, no launch"] = lambda d: probe.takes_five(d[0], d[1], d[4], d[5], d[6])

    print(f"[host] {torch.cuda.get_device_name()} · {time.strftime('%Y-%m-%d')} · CPU µs per call from Python "
          "(median of 20 loops of 200 calls, two rounds); 'host code in C++': plan + tensor maps + launch in a C++ loop")
    rows = []
    for m, n, k in SHAPES:
        data = bench_inputs(m, n, k, 1, 1)[0]
        outputs = []
        for label, fn in paths.items():
            if "no launch" not in label:
                data[6].fill_(float("nan"))
                fn(data)
                torch.cuda.synchronize()
                outputs.append(data[6].clone().view(torch.int16))
        identical = all(torch.equal(o, outputs[0]) for o in outputs)
        row: dict[str, object] = {"shape": f"{m}x{n}x{k}", "identical": identical}
        for _ in range(2):  # two rounds, interleaved, so drift between paths shows
            for label, fn in paths.items():
                row.setdefault(label, []).append(  # type: ignore[union-attr]
                    cpu_us_per_call(lambda: fn(data), torch.cuda.synchronize))
            ptrs = [data[i].data_ptr() for i in (0, 1, 4, 5, 6)]
            in_cpp = []
            for _ in range(10):
                in_cpp.append(probe.launch_us(*ptrs, m, n, k, 1, 200))
                torch.cuda.synchronize()
            row.setdefault("host code in C++", []).append(statistics.median(in_cpp))  # type: ignore[union-attr]
        rows.append(row)
        print(f"{row['shape']}: outputs bit-identical across paths: {identical}")
        for label, values in row.items():
            if isinstance(values, list):
                print(f"  {label:36s} " + " ".join(f"{v:6.2f}" for v in values), flush=True)
    (args.out / "host_binding.json").write_text(json.dumps(rows, indent=1))
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
