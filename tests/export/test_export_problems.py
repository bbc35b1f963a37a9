"""A kernel's problem C ABI follows from the API header it includes: its binding is built and
exported with it, and the exported custom_kernel passes that problem's tuple elements."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import toolchain
from nvfp4ctl.build.sources import binding_path, build_inputs
from nvfp4ctl.cli import app
from nvfp4ctl.export import export_submission
from nvfp4ctl.problems.base import PROBLEMS_DIR
from nvfp4ctl.project import kernels_dir

NAIVE = kernels_dir() / "naive"
runner = CliRunner()


@pytest.mark.parametrize("kernel, binding, call", [
    ("nvfp4_dual_gemm_naive.cu", "nvfp4_dual_gemm_binding.cpp",
     "_kernel_module.nvfp4_dual_gemm(data[0], data[1], data[2], data[6], data[7], data[8], data[9])"),
    ("nvfp4_gemv_naive.cu", "nvfp4_gemv_binding.cpp",
     "_kernel_module.nvfp4_gemv(data[0], data[1], data[4], data[5], data[6])"),
    ("nvfp4_group_gemm_naive.cu", "nvfp4_group_gemm_binding.cpp",
     "_kernel_module.nvfp4_group_gemm([g[0] for g in data[0]], [g[1] for g in data[0]], [s[0] for s in data[2]], "
     "[s[1] for s in data[2]], [g[2] for g in data[0]])"),
])
def test_binding_and_export_follow_the_included_api(tmp_path: Path, kernel: str, binding: str, call: str) -> None:
    source = NAIVE / kernel
    assert binding_path(source).name == binding
    inputs = build_inputs(source)
    assert inputs.binding.name == binding and not inputs.needs_cutlass
    output = tmp_path / "submission.py"
    export_submission(source, output)
    text = output.read_text()
    ast.parse(text)
    assert f"    return {call}\n" in text
    assert "stream" not in text.lower()


def test_a_gemm_kernel_keeps_the_gemm_binding() -> None:
    assert binding_path(kernels_dir() / "sm90" / "nvfp4_gemm_sm90.cu").name == "torch_binding.cpp"
    assert binding_path().name == "torch_binding.cpp"


@pytest.mark.parametrize("problem", ["nvfp4_gemv", "nvfp4_dual_gemm", "nvfp4_group_gemm"])
def test_a_naive_kernel_exports_for_the_b200_with_arch(tmp_path: Path, problem: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The naive kernels, the only ones these problems have, say `arch=sm_90a`: their export was an sm_90a
    submission with a warning, and export had no --arch to make the sm_100a one their own comment promises."""
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(toolchain, "nvcc_version", lambda: "Cuda compilation tools, release 13.0")
    monkeypatch.chdir(tmp_path)  # the problem's folder, as `nvfp4ctl init --problem` writes it
    (tmp_path / "task.yml").write_text((PROBLEMS_DIR / problem / "task.yml").read_text())
    kernel = NAIVE / f"{problem}_naive.cu"
    output = tmp_path / "submission.py"
    own = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(output)])
    assert own.exit_code == 0, own.output
    assert (f"warning: {kernel.name} is an sm_90a kernel: the B200 leaderboard needs sm_100a; --arch sm_100a exports"
            " it for a B200 (it has no tensor-core code: its no-tensor-op mark)") in " ".join(own.output.split())
    b200 = runner.invoke(app, ["export", "--kernel", str(kernel), "--arch", "sm_100a", "-o", str(output)])
    assert b200.exit_code == 0, b200.output
    assert "warning:" not in b200.output and f"{kernel.name} for sm_100a" in b200.output
    # nvfp4ctl's tests build its kernels for their own arch only: for another, the hint to build it stands
    assert "hint:" not in own.output and "has no build for sm_100a" in " ".join(b200.output.split())
    text = output.read_text()
    assert f"{kernel.name} for sm_100a" in text.splitlines()[0]
    assert "'-gencode=arch=compute_100a,code=sm_100a'" in text and "sm_90a" not in text.split("CUDA_SOURCE")[0]


def test_a_tensor_core_kernel_for_another_arch_is_told_how_to_find_out(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel written for sm_90a (its sm90/ folder) is refused with --arch sm_100a: the warning names a kernel
    written for sm_100a, where it named the --arch that export now refuses for it."""
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    kernel = kernels_dir() / "sm90" / "nvfp4_gemm_sm90.cu"
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(tmp_path / "submission.py")])
    assert result.exit_code == 0, result.output
    assert ("nvfp4_gemm_sm90.cu is an sm_90a kernel: the B200 leaderboard needs sm_100a; for the leaderboard, export"
            " a kernel written for sm_100a") in " ".join(result.output.split())
    refused = runner.invoke(app, ["export", "--kernel", str(kernel), "--arch", "sm_100a", "-o", "b200.py"])
    assert refused.exit_code == 2 and not (tmp_path / "b200.py").exists()


@pytest.mark.parametrize("problem", ["nvfp4_gemv", "nvfp4_dual_gemm", "nvfp4_group_gemm"])
def test_builds_static_reading_of_an_export_is_whole_and_names_the_extension(tmp_path: Path, problem: str) -> None:
    """build read every export's `extra_include_paths=_include_dirs()` as not static and warned that it built
    without them (a kernel without CUTLASS has none), under the name ext_line365 for the f-string name."""
    from nvfp4ctl.build.submission_sources import find_sources
    from nvfp4ctl.export import _extension_digest

    output = tmp_path / "submission.py"
    export_submission(NAIVE / f"{problem}_naive.cu", output, arch="sm_100a")
    [extension] = find_sources(output).extensions
    assert extension.notes == [] and extension.include_paths == []
    strings = {node.targets[0].id: ast.literal_eval(node.value) for node in ast.parse(output.read_text()).body
               if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
               and node.targets[0].id in ("CUDA_SOURCE", "CPP_SOURCE", "CUDA_FLAGS", "CPP_FLAGS")}
    digest = _extension_digest(strings["CUDA_SOURCE"], strings["CPP_SOURCE"], strings["CUDA_FLAGS"], strings["CPP_FLAGS"])
    assert extension.name == f"{problem}_{digest}"  # the file's own text hashed, as the name made at import was


def test_the_grouped_gemm_export_describes_its_launches_and_the_arch_it_is_for(tmp_path: Path) -> None:
    """The docstring said "Every call is one kernel launch" where nvfp4_group_gemm_launch launches per group, and
    an export made with --arch sm_100a kept the kernel's `// nvfp4ctl: arch=sm_90a` as CUDA_SOURCE's first line."""
    output = tmp_path / "submission.py"
    export_submission(NAIVE / "nvfp4_group_gemm_naive.cu", output, arch="sm_100a")
    text = output.read_text()
    docstring = " ".join(ast.get_docstring(ast.parse(text)).split())  # type: ignore[union-attr]
    assert "one kernel launch" not in docstring
    assert ("Every call is one nvfp4_group_gemm_launch() call on the default launch queue, making as many kernel"
            " launches as that function does") in docstring
    cuda_source = text.split("CUDA_SOURCE = r'''", 1)[1]
    assert cuda_source.startswith("// nvfp4ctl: arch=sm_100a (exported with --arch sm_100a; the kernel's own line"
                                  " says sm_90a)\n")
    assert "arch=sm_90a" not in text.replace("says sm_90a", "")
    own = tmp_path / "own.py"
    export_submission(NAIVE / "nvfp4_group_gemm_naive.cu", own)  # for its own arch the line stays as written
    assert own.read_text().split("CUDA_SOURCE = r'''", 1)[1].startswith("// nvfp4ctl: arch=sm_90a\n")
