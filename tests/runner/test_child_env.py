"""The child loading a submission builds with the toolkit `build` finds and a torch extensions folder in the
cache, where the user set neither."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import toolchain
from nvfp4ctl.errors import UsageError
from nvfp4ctl.runner.child_env import submission_build_env
from nvfp4ctl.runner.targets import KERNEL, SUBMISSION, TargetSpec
from nvfp4ctl.runner.worker import Worker

LOAD_INLINE = ("def _build():\n    from torch.utils.cpp_extension import load_inline\n"
               "    return load_inline(name='g', cpp_sources='int f();', cuda_sources='int f() { return 1; }')\n")
TOOLKIT = Path("/opt/toolkit-13.0")


@pytest.fixture(autouse=True)
def _toolkit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(toolchain, "cuda_home", lambda: TOOLKIT)
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.14.1+cu130", "13.0"))
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))


def _submission(tmp_path: Path, text: str) -> TargetSpec:
    path = tmp_path / "submission.py"
    path.write_text(text + "\ndef custom_kernel(data):\n    return data\n")
    return TargetSpec(SUBMISSION, path, "submission.py")


def test_a_submission_that_compiles_gets_the_toolkit_and_a_folder_in_the_cache(tmp_path):
    """torch guessed CUDA_HOME=/usr/local from a wrapper nvcc in /usr/local/bin (a build failing on
    cuda_runtime.h), and built in ~/.cache/torch_extensions, outside NVFP4CTL_CACHE."""
    import sys

    folder = tmp_path / "cache" / "torch_extensions" / f"py{sys.version_info.major}{sys.version_info.minor}_cu130"
    assert submission_build_env(_submission(tmp_path, LOAD_INLINE), {}) == {
        "TORCH_EXTENSIONS_DIR": str(folder), "CUDA_HOME": str(TOOLKIT)}


def test_what_the_user_set_stays_and_plain_torch_looks_up_no_toolkit(tmp_path, monkeypatch):
    target = _submission(tmp_path, LOAD_INLINE)
    assert submission_build_env(target, {"TORCH_EXTENSIONS_DIR": "/mine", "CUDA_HOME": "/cuda"}) == {}
    assert set(submission_build_env(target, {"CUDA_PATH": "/cuda"})) == {"TORCH_EXTENSIONS_DIR"}
    assert submission_build_env(TargetSpec(KERNEL, tmp_path / "k.cu", "k.cu"), {}) == {}
    monkeypatch.setattr(toolchain, "cuda_home", lambda: pytest.fail("nvcc was looked up for plain torch"))
    assert set(submission_build_env(_submission(tmp_path, "import torch\n"), {})) == {"TORCH_EXTENSIONS_DIR"}


def test_no_toolkit_leaves_cuda_home_to_torch(tmp_path, monkeypatch):
    def missing() -> Path:
        raise UsageError(toolchain.NVCC_MISSING)

    monkeypatch.setattr(toolchain, "cuda_home", missing)
    assert set(submission_build_env(_submission(tmp_path, LOAD_INLINE), {})) == {"TORCH_EXTENSIONS_DIR"}


def test_the_child_that_loads_it_has_them(tmp_path, monkeypatch):
    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    path = tmp_path / "submission.py"
    path.write_text(LOAD_INLINE + "\nimport os\n\ndef custom_kernel(data):\n"
                    "    return os.environ.get('CUDA_HOME'), os.environ.get('TORCH_EXTENSIONS_DIR')\n")
    with Worker(TargetSpec(SUBMISSION, path, "submission.py"), 60.0, device="cpu") as worker:
        home, extensions = worker.call("runner_jobs:call_target", label="env")
    assert home == str(TOOLKIT)
    assert Path(extensions).parent == tmp_path / "cache" / "torch_extensions"
