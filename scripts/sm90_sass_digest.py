"""The shipped sm_90a kernel's SASS against its committed digest (tests/kernels/sm90_sass.json).

  python3 scripts/sm90_sass_digest.py           # build as `nvfp4ctl build` does; exit 1 if the SASS changed
  python3 scripts/sm90_sass_digest.py --write   # record the current SASS (after a change meant to alter it)

A change that must not alter the machine code (moving code between headers, renames, comments,
knob declarations) keeps the digest; tests/kernels/test_sm90_layout.py makes the same comparison
on CPU in CI. The digest holds for one nvcc release and build mode (recorded beside it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KERNEL = Path("kernels/sm90/nvfp4_gemm_sm90.cu")
RECORD = REPO / "tests" / "kernels" / "sm90_sass.json"


def current() -> dict[str, object]:
    """Build (or find in the cache) the shipped kernel and describe its SASS."""
    from nvfp4ctl.build import build_kernel, toolchain
    from nvfp4ctl.build.builder import build_mode
    from nvfp4ctl.build.resources import sass_digest, saved_sass

    if toolchain.sass_tools() is None:
        raise SystemExit("cuobjdump/nvdisasm missing: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")
    report = build_kernel(REPO / KERNEL, "sm_90a")
    sass = saved_sass(report.entry) or ""
    release = re.search(r"V\d+\.\d+\.\d+", toolchain.nvcc_version())
    return {
        "kernel": KERNEL.as_posix(),
        "arch": "sm_90a",
        "nvcc": release.group(0) if release else toolchain.nvcc_version().splitlines()[-1],
        "mode": build_mode(),
        "functions": sass.count("Function :"),
        "sha256": sass_digest(sass),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="record the current SASS digest")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    found = current()
    if args.write:
        RECORD.write_text(json.dumps(found, indent=1) + "\n")
        print(f"wrote {RECORD.relative_to(REPO)}: {found['sha256']}")
        return 0
    want = json.loads(RECORD.read_text())
    same = found == want
    print(f"{'unchanged' if same else 'CHANGED'}: {found['kernel']} {found['arch']} nvcc {found['nvcc']} ({found['mode']} build), "
          f"{found['functions']} functions, sha256 {found['sha256']}" + ("" if same else f" (recorded {want})"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
