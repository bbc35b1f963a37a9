"""Digests of GPU MODE's own generate_input on a CUDA machine, for tests/problems/test_gpu_mode_digests.py.

GPU MODE's code is not part of this repository. Copy, from gpu-mode/reference-kernels, for each of
nvfp4_gemm, nvfp4_dual_gemm, nvfp4_group_gemm, nvfp4_gemv, into GPU_MODE_DIR/<problem>/:
  reference.py and task.py from problems/nvidia/<problem>/, and utils.py as that problem's task.yml
  names it (problems/nvidia/utils.py for nvfp4_gemm, nvfp4_dual_gemm and nvfp4_gemv;
  problems/nvidia/nvfp4_group_gemm/utils.py for nvfp4_group_gemm). With a git clone of theirs:
  PYTHONPATH=$PWD python3 tests/problems/gpu_mode_digests.py --extract GIT_DIR build/gpu_mode  (build/: ignored)
Then, from the repository root on a CUDA machine (numpy needed by their utils.py):
  PYTHONPATH=$PWD python3 tests/problems/gpu_mode_digests.py build/gpu_mode [--out PATH] [--commit SHA]
It writes PATH (default tests/problems/data/gpu_mode_digests.json) and prints, per case, whether our
generate_input gives the same digests.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from nvfp4ctl.problems.common.digest import digests, our_generate_input, rng_after

DEFAULT_OUT = Path(__file__).resolve().parent / "data" / "gpu_mode_digests.json"
HARNESS_MODULES = ("task", "utils", "reference")

# GPU MODE's keyword arguments: some of each task.yml's tests and benchmarks, plus shapes with
# padding in the permuted scales (m, n not multiples of 128, k not a multiple of 64) and l > 1.
CASES: dict[str, list[dict[str, Any]]] = {
    "nvfp4_gemm": [
        {"m": 128, "n": 256, "k": 256, "l": 1, "seed": 1111},
        {"m": 128, "n": 1536, "k": 7168, "l": 1, "seed": 1111},
        {"m": 128, "n": 4096, "k": 7168, "l": 2, "seed": 1111},
        {"m": 96, "n": 200, "k": 272, "l": 2, "seed": 7},
    ],
    "nvfp4_dual_gemm": [
        {"m": 256, "n": 512, "k": 256, "l": 1, "seed": 1111},
        {"m": 1536, "n": 512, "k": 7168, "l": 1, "seed": 1111},
        {"m": 7168, "n": 384, "k": 2304, "l": 1, "seed": 1111},
        {"m": 256, "n": 4096, "k": 7168, "l": 1, "seed": 1111},
        {"m": 256, "n": 384, "k": 512, "l": 2, "seed": 42},
        {"m": 96, "n": 200, "k": 272, "l": 2, "seed": 7},
    ],
    "nvfp4_group_gemm": [
        {"m": [96, 128], "n": [128, 256], "k": [256, 512], "g": 2, "seed": 1111},
        {"m": [80, 128, 256], "n": [384, 256, 128], "k": [256, 512, 256], "g": 3, "seed": 1111},
        {"m": [40, 56, 384, 512], "n": [512, 384, 256, 128], "k": [256, 256, 256, 256], "g": 4, "seed": 1111},
        {"m": [192, 320], "n": [3072, 3072], "k": [4096, 4096], "g": 2, "seed": 1111},
        {"m": [40, 200], "n": [136, 256], "k": [272, 256], "g": 2, "seed": 7},
    ],
    "nvfp4_gemv": [
        {"m": 128, "k": 256, "l": 1, "seed": 1111},
        {"m": 2432, "k": 4608, "l": 2, "seed": 1111},
        {"m": 4096, "k": 7168, "l": 8, "seed": 1111},
        {"m": 96, "k": 272, "l": 3, "seed": 7},
    ],
}


def load_gpu_mode(folder: Path) -> ModuleType:
    """GPU MODE's reference.py from `folder`, with its own task.py and utils.py, isolated from others."""
    for name in HARNESS_MODULES:
        sys.modules.pop(name, None)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module("reference")
    finally:
        sys.path.remove(str(folder))
        for name in HARNESS_MODULES:
            sys.modules.pop(name, None)


def utils_source(problem: str) -> str:
    """The utils.py that problem's task.yml puts beside a submission."""
    return f"problems/nvidia/{problem}/utils.py" if problem == "nvfp4_group_gemm" else "problems/nvidia/utils.py"


def extract(git_dir: Path, destination: Path) -> str:
    """Write GPU MODE's harness files of every problem under destination/<problem>/; returns HEAD's sha."""
    def show(path: str) -> str:
        command = ["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"]
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout

    for problem in CASES:
        folder = destination / problem
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("reference.py", "task.py"):
            (folder / name).write_text(show(f"problems/nvidia/{problem}/{name}"), encoding="utf-8")
        (folder / "utils.py").write_text(show(utils_source(problem)), encoding="utf-8")
    command = ["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def case_record(problem: str, args: dict[str, Any], data: Any, device: str) -> dict[str, Any]:
    return {"problem": problem, "args": args, **digests(problem, data), "rng_after": rng_after(device)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gpu_mode_dir", type=Path, help="folder with <problem>/{reference,task,utils}.py from GPU MODE")
    parser.add_argument("--extract", type=Path, metavar="GIT_DIR",
                        help="first write those files from this git clone of gpu-mode/reference-kernels, then stop")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--commit", default="", help="the gpu-mode/reference-kernels commit the files came from")
    # only for a dry run of this script against a copy edited to run on the CPU; the data is CUDA's
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.extract is not None:
        sha = extract(options.extract, options.gpu_mode_dir)
        print(f"wrote {options.gpu_mode_dir}/<problem>/{{reference,task,utils}}.py from commit {sha}")
        return 0
    if options.device == "cuda" and not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    cases, mismatches = [], 0
    for problem, problem_cases in CASES.items():
        module = load_gpu_mode(options.gpu_mode_dir / problem)
        for args in problem_cases:
            theirs = case_record(problem, args, module.generate_input(**args), options.device)
            ours = case_record(problem, args, our_generate_input(problem, args, device=options.device), options.device)
            same = ours == theirs
            mismatches += not same
            print(f"{'same' if same else 'DIFFERENT'}  {problem}  {args}", flush=True)
            cases.append(theirs)
            del theirs, ours
            if options.device == "cuda":
                torch.cuda.empty_cache()
    document = {
        "format": 1,
        "source": f"gpu-mode/reference-kernels {options.commit}".strip(),
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if options.device == "cuda" else options.device,
        "cases": cases,
    }
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"{len(cases)} cases, {mismatches} different; wrote {options.out}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
