"""`python -m nvfp4ctl.build.child SPEC_JSON`: one cpp_extension build, its ninja output on stdout.

Run by compile.build_module in a child process; the parent captures stdout and parses it.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    from torch.utils import cpp_extension

    if cpp_extension.CUDA_HOME is None:  # torch decides it at import, and never for a CPU-only build
        cpp_extension.CUDA_HOME = os.environ.get("CUDA_HOME")

    try:
        # verbose=True: ninja writes every command and the compiler's output (ptxas -v) to fd 1
        cpp_extension.load(
            name=spec["name"],
            sources=spec["sources"],
            extra_cflags=spec["extra_cflags"],
            extra_cuda_cflags=spec["extra_cuda_cflags"],
            extra_include_paths=spec["extra_include_paths"],
            build_directory=spec["build_directory"],
            with_cuda=True,
            verbose=True,
        )
    except Exception as error:  # the compiler's own messages are already on stdout
        print(f"nvfp4ctl: cpp_extension build failed: {str(error).splitlines()[0] if str(error) else error!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
