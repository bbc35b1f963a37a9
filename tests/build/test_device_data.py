"""The device image's data digest tune compares builds by, on modules nvcc 13 builds: equal for an unread
-D (another folder and module name too), other for a knob held only in the device image's data, a
`__constant__` initialiser or a `__shared__` array's size, whose SASS is the same."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from nvfp4ctl.build import toolchain
from nvfp4ctl.build.device_data import NO_DEVICE_IMAGE, device_data_digest
from nvfp4ctl.build.resources import dump_sass, sass_digest

SOURCE = """
#ifndef SPLITS
#define SPLITS 1
#endif
__constant__ int kSplits[1] = {SPLITS};
__global__ void kern(float* out) { if (threadIdx.x < kSplits[0]) out[threadIdx.x] = 1.0f; }
#ifndef SMEM_PAD
#define SMEM_PAD 0
#endif
__global__ void kern2(float* out) {
  __shared__ float buf[256 + SMEM_PAD];
  buf[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = buf[255 - threadIdx.x];
}
"""


def _objects(folder: Path, builds: dict[str, tuple[str, ...]]) -> dict[str, Path]:
    """Each build's object, compiled at once (nvcc with the flags a build adds that could name it: -lineinfo,
    the module's name), each from a copy of the source in a folder of its own."""
    nvcc = shutil.which("nvcc")
    if nvcc is None or toolchain.sass_tools() is None:
        pytest.skip("needs nvcc, cuobjdump and nvdisasm")
    running = {}
    for name, defines in builds.items():
        (folder / name).mkdir()
        source = folder / name / "k.cu"
        source.write_text(SOURCE)
        command = [nvcc, "-c", "-O3", "-lineinfo", "-gencode", "arch=compute_90a,code=sm_90a",
                   f"-DTORCH_EXTENSION_NAME=k_{name}", *(f"-D{d}" for d in defines), str(source), "-o",
                   str(folder / name / "k.o")]
        running[name] = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for name, process in running.items():
        output, _ = process.communicate(timeout=300)
        assert process.returncode == 0, output
    return {name: folder / name / "k.o" for name in builds}


def test_a_knob_held_only_in_the_device_images_data_changes_the_digest(tmp_path: Path) -> None:
    objects = _objects(tmp_path, {"start": (), "unread": ("UNREAD=7",), "splits": ("SPLITS=4",),
                                  "padded": ("SMEM_PAD=40000",)})
    digests = {name: device_data_digest(path) for name, path in objects.items()}
    assert len(digests["start"]) == 64 and digests["start"] != NO_DEVICE_IMAGE
    assert digests["unread"] == digests["start"]
    assert digests["splits"] != digests["start"] and digests["padded"] != digests["start"]
    # what the SASS digest alone took for one program
    sass = {name: sass_digest(dump_sass(path) or "") for name, path in objects.items()}
    assert sass["splits"] == sass["start"] == sass["unread"]


def test_without_cuobjdump_or_a_module_nothing_is_claimed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert device_data_digest(None) == "" and device_data_digest(tmp_path / "gone.so") == ""
    (tmp_path / "text.so").write_text("not an ELF file")
    assert device_data_digest(tmp_path / "text.so") == ""
    objects = _objects(tmp_path, {"start": ()})
    monkeypatch.setattr(toolchain, "find_tool", lambda name: None)
    assert device_data_digest(objects["start"]) == ""


def test_a_module_without_a_device_image_holds_no_device_data(tmp_path: Path) -> None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("needs a C compiler")
    (tmp_path / "host.c").write_text("int split_of(int k) { return k >= 1024 ? 4 : 1; }\n")
    subprocess.run([compiler, "-shared", "-fPIC", str(tmp_path / "host.c"), "-o", str(tmp_path / "host.so")], check=True)
    assert device_data_digest(tmp_path / "host.so") == NO_DEVICE_IMAGE
