"""Host programs over the sm_90a kernel's own headers (kernels/sm90/), compiled by nvcc and run on
the CPU: the schedule tests walk the kernel's work split with its own code, no GPU needed."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from nvfp4ctl.build import toolchain

SM90_HEADERS = Path(__file__).resolve().parents[2] / "kernels" / "sm90"
COMMON_HEADERS = SM90_HEADERS.parent / "common"  # the decoder and PTX wrappers the kernel headers include


@pytest.fixture(scope="session")
def host_program(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """compile(name, source, optimize=False): the executable of a C++ program that includes
    kernels/sm90/ headers; skips the test where nvcc is missing."""

    def compile_program(name: str, source: str, optimize: bool = False) -> Path:
        try:
            nvcc = toolchain.nvcc_path()
        except Exception as exc:  # noqa: BLE001 - any missing toolchain means the same skip
            pytest.skip(f"no nvcc: {exc}")
        folder = tmp_path_factory.mktemp(name)
        path, binary = folder / f"{name}.cu", folder / name
        path.write_text(source)
        command = [str(nvcc), "-std=c++17", *(["-Xcompiler", "-O2"] if optimize else []), f"-I{SM90_HEADERS}",
                   f"-I{COMMON_HEADERS}", "-o", str(binary), str(path)]
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return binary

    return compile_program
