"""A submission that builds a CUDA kernel under NVFP4CTL_DEVICE=cpu: one line, exit 2, before any child."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import toolchain
from nvfp4ctl.cli import app
from nvfp4ctl.errors import UsageError
from nvfp4ctl.export import export_submission
from nvfp4ctl.project import kernels_dir
from nvfp4ctl.runner.cpu_target import refuse_cuda_kernel_on_cpu
from nvfp4ctl.runner.targets import KERNEL, SUBMISSION, TargetSpec

TASK = ("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n"
        "benchmarks:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n")
HEAD = "from torch.utils.cpp_extension import load, load_inline\n"
KERNEL_SOURCE = '"__global__ void k() {}\\nvoid f() { k<<<1, 1>>>(); }"'
ENTRY = "\n\ndef custom_kernel(data):\n    return data[-1]\n"


@pytest.fixture
def cuda_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch 2.14.1+cu130, as on a machine with the toolkit and no GPU, read without importing it."""
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.14.1+cu130", "13.0"))


def _in_a_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    (tmp_path / "task.yml").write_text(TASK)
    (tmp_path / "submission.py").write_text(HEAD + body + ENTRY)
    monkeypatch.chdir(tmp_path)


def _no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.runner import worker

    monkeypatch.setattr(worker.Worker, "_start_child", lambda self: pytest.fail("a child was started"))


@pytest.mark.parametrize("command, doing", [("check", "check"), ("bench", "time")])
def test_an_export_of_a_kernel_is_refused_on_the_cpu_in_one_line(cuda_torch, tmp_path, monkeypatch, command, doing):
    """With a CUDA torch and no GPU, check's child ran the export's load_inline: torch guessed a CUDA_HOME, the
    build failed on cuda_runtime.h and ~20 lines of ninja's log came with exit 4, for a kernel that could not
    have run on the CPU anyway."""
    (tmp_path / "task.yml").write_text(TASK)
    export_submission(kernels_dir() / "sm100" / "nvfp4_gemm_sm100_tc.cu", tmp_path / "exported.py")
    line = next(number for number, text in enumerate((tmp_path / "exported.py").read_text().splitlines(), start=1)
                if "load_inline(" in text and "import" not in text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    _no_child(monkeypatch)
    result = CliRunner().invoke(app, [command, "--submission", "exported.py"], env={"COLUMNS": "400"})
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"error: exported.py (--submission) builds a CUDA kernel (line {line}: load_inline with cuda_sources), which"
        " needs a GPU: NVFP4CTL_DEVICE=cpu runs torch code on the CPU alone; `nvfp4ctl build exported.py` compiles"
        f" it without a GPU, or {doing} it on a GPU")


@pytest.mark.parametrize("body, found", [
    (f"mod = load_inline(name='g', cpp_sources='void f();', cuda_sources={KERNEL_SOURCE}, functions=['f'])\n",
     "line 2: load_inline with cuda_sources"),
    ("mod = load(name='g', sources=['k.cu'])\n", "line 2: load of k.cu"),
], ids=["load_inline", "load"])
def test_a_load_inline_or_load_of_cuda_is_refused_by_its_line(cuda_torch, tmp_path, monkeypatch, body, found):
    _in_a_folder(tmp_path, monkeypatch, body)
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    _no_child(monkeypatch)
    result = CliRunner().invoke(app, ["check"], env={"COLUMNS": "400"})
    assert result.exit_code == 2, result.output
    assert f"error: submission.py (beside task.yml) builds a CUDA kernel ({found}), which needs a GPU" in result.output


@pytest.mark.parametrize("body", [
    "",  # plain torch
    "mod = load_inline(name='g', cpp_sources='int f() { return 1; }', functions=['f'])\n",  # C++ alone
    "mod = load_inline(name='g', cpp_sources='int f();', cuda_sources='// none yet\\n', functions=['f'])\n",
    "mod = load_inline(name='g', cpp_sources='int f();', cuda_sources=make_source(), functions=['f'])\n",  # not static
], ids=["plain-torch", "cpp-only", "comment-only-cuda", "unread-cuda"])
def test_a_submission_with_no_cuda_kernel_it_shows_still_runs_on_the_cpu(cuda_torch, tmp_path, monkeypatch, body):
    _in_a_folder(tmp_path, monkeypatch, body)
    refuse_cuda_kernel_on_cpu(TargetSpec(SUBMISSION, tmp_path / "submission.py", "submission.py"), "cpu", "check")


def test_only_the_cpu_and_a_cuda_torch_refuse_it(tmp_path, monkeypatch):
    """On the GPU the kernel runs; with a CPU-only torch the child's own line stays (`this torch has no CUDA`);
    a --kernel is refused elsewhere (it needs a CUDA torch, and builds through nvfp4ctl's cache)."""
    body = f"mod = load_inline(name='g', cpp_sources='void f();', cuda_sources={KERNEL_SOURCE}, functions=['f'])\n"
    _in_a_folder(tmp_path, monkeypatch, body)
    submission = TargetSpec(SUBMISSION, tmp_path / "submission.py", "submission.py")
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.13.0+cpu", None))
    refuse_cuda_kernel_on_cpu(submission, "cpu", "check")
    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.14.1+cu130", "13.0"))
    refuse_cuda_kernel_on_cpu(submission, "cuda", "check")
    refuse_cuda_kernel_on_cpu(TargetSpec(KERNEL, tmp_path / "k.cu", "k.cu"), "cpu", "check")
    with pytest.raises(UsageError, match="builds a CUDA kernel"):
        refuse_cuda_kernel_on_cpu(submission, "cpu", "check")


CUDA_BUILD = f"load_inline(name='g', cpp_sources='void f();', cuda_sources={KERNEL_SOURCE}, functions=['f'])"


@pytest.mark.parametrize("body", [
    f"import torch\nif torch.cuda.is_available():\n    mod = {CUDA_BUILD}\nelse:\n    mod = None\n",
    f"try:\n    mod = {CUDA_BUILD}\nexcept Exception:\n    mod = None\n",
    f"def build():\n    return {CUDA_BUILD}\n",  # never called at import: custom_kernel may call it on a GPU
    f"import torch\nmod = {CUDA_BUILD} if torch.cuda.is_available() else None\n",
    f"import torch\nmod = torch.cuda.is_available() and {CUDA_BUILD}\n",
    f"import torch\ndef build():\n    if not torch.cuda.is_available():\n        return None\n"
    f"    return {CUDA_BUILD}\n\n"
    "mod = build()\n",
    f"import torch\ndef build():\n    return {CUDA_BUILD}\n\nif torch.cuda.is_available():\n    mod = build()\n",
    f"import torch\ndef build():\n    return {CUDA_BUILD}\n\nif not torch.cuda.is_available():\n"
    "    def build():\n        return None\n\nmod = build()\n",
    f"import contextlib, torch\ndef build():\n    with contextlib.suppress(Exception):\n"
    f"        if not torch.cuda.is_available():\n            return None\n    return {CUDA_BUILD}\n\nmod = build()\n",
], ids=["under-if-cuda", "try-with-fallback", "function-not-called", "conditional-expression", "and",
        "early-return", "called-under-if", "bound-twice", "early-return-in-with"])
def test_a_cuda_build_the_submission_guards_still_runs_on_the_cpu(cuda_torch, tmp_path, monkeypatch, body):
    """It was refused: the scan saw a load_inline with cuda_sources anywhere in the file, though on the CPU
    the submission never builds it and runs its torch code."""
    _in_a_folder(tmp_path, monkeypatch, body)
    refuse_cuda_kernel_on_cpu(TargetSpec(SUBMISSION, tmp_path / "submission.py", "submission.py"), "cpu", "check")


@pytest.mark.parametrize("body, line", [
    (f"def build():\n    return {CUDA_BUILD}\n\nmod = build()\n", 3),
    ("import torch.utils.cpp_extension as cpp_extension\nwith open(__file__):\n"
     f"    mod = cpp_extension.{CUDA_BUILD}\n", 4),
    (f"def build():\n    return {CUDA_BUILD}\n\ndef outer():\n    return build()\n\n"
     "class Holder:\n    mod = outer()\n", 3),
], ids=["function-called-at-import", "under-with", "through-a-class-body"])
def test_a_cuda_build_every_import_runs_is_refused(cuda_torch, tmp_path, monkeypatch, body, line):
    _in_a_folder(tmp_path, monkeypatch, body)
    with pytest.raises(UsageError, match=f"line {line}: load_inline with cuda_sources"):
        refuse_cuda_kernel_on_cpu(TargetSpec(SUBMISSION, tmp_path / "submission.py", "submission.py"), "cpu", "check")
