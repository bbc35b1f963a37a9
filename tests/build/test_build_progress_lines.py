"""build where stderr is no terminal (a log file, CI, `2>&1 | tee`; CliRunner's too): no bar is drawn, and a
plain line says each compile as it starts, then at most every 30 s while it runs; -q says nothing, and stdout
is the same either way. The compiler and the timed export are stand-ins here."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli_streams import separate_streams_runner
from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck
from nvfp4ctl.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
UTCOMMA = TensorOpCheck(expected="UTCOMMA.4X", found=("UTCOMMA.4X",), match="UTCOMMA.4X", checked=True)
KERNEL = FunctionUsage(name="k", entry=True, registers=80, shared_bytes=0, stack_bytes=0, spill_stores=0,
                       spill_loads=0)
INLINE = '''from torch.utils.cpp_extension import load_inline
CUDA = r"""__global__ void k(float* p) { p[0] = 1.0f; }"""
first = load_inline(name="first", cpp_sources="", cuda_sources=CUDA,
                    extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])
second = load_inline(name="second", cpp_sources="", cuda_sources=CUDA,
                     extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])
'''


@dataclass
class Kernels:
    sources: list[str]
    compile_s: float = 0.0  # how long each stand-in build takes


@pytest.fixture
def kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Kernels:
    """Two kernel sources, built by a stand-in for the compiler."""
    made = Kernels([])
    for name in ("a.cu", "b.cu"):
        (tmp_path / name).write_text((FIXTURES / "zero_gemm.cu").read_text())
        made.sources.append(str(tmp_path / name))

    def build_kernel(source: Path, arch: str, verbose: bool = False) -> BuildReport:
        time.sleep(made.compile_s)
        return BuildReport(source=source, arch=arch, key="k", entry=tmp_path, module_name=None, functions=(KERNEL,),
                           tensor_op=UTCOMMA, compile_s=made.compile_s)

    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", build_kernel)
    monkeypatch.setenv("COLUMNS", "200")
    return made


def _build(*args: str):
    return separate_streams_runner().invoke(app, ["build", *args])


def _steps(stderr: str, start: str) -> list[str]:
    return [line.rsplit(",", 1)[0] for line in stderr.splitlines() if line.startswith(start)]


def test_each_kernel_is_a_line_as_it_starts_and_stdout_is_unchanged(kernels: Kernels) -> None:
    result = _build(*kernels.sources, "--arch", "sm_100a")
    assert result.exit_code == 0, result.output
    assert _steps(result.stderr, "compiling ") == ["compiling a.cu (sm_100a): 0 of 2", "compiling b.cu (sm_100a): 1 of 2"]
    assert "compiling" not in result.stdout and "2 kernels built (sm_100a)" in result.stdout
    quiet = _build("-q", *kernels.sources, "--arch", "sm_100a")
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout == "2 kernels built (sm_100a), 0 B of spills\n"


def test_a_kernel_that_compiles_on_is_said_again(kernels: Kernels, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nvfp4ctl.progress_lines.PLAIN_LINE_EVERY_S", 0.1)
    kernels.compile_s = 0.6
    result = _build(kernels.sources[0], "--arch", "sm_100a")
    assert result.exit_code == 0, result.output
    assert len(_steps(result.stderr, "compiling a.cu (sm_100a): 0 of 1")) >= 3, result.stderr


def test_timing_the_export_is_said_while_it_runs(kernels: Kernels, monkeypatch: pytest.MonkeyPatch) -> None:
    """--submission-time runs `python submission.py` for up to 10 minutes; its start is on stdout, and a log
    of stderr alone heard nothing of it."""
    from nvfp4ctl.build import submission_time
    from nvfp4ctl.build.machine import Machine

    def time_submission(source: Path, arch: str) -> submission_time.SubmissionTime:
        time.sleep(0.6)
        return submission_time.SubmissionTime(0.6, 0.5, "imported", "", Machine(2, "Some CPU", 0.5))

    monkeypatch.setattr(submission_time, "time_submission", time_submission)
    monkeypatch.setattr("nvfp4ctl.progress_lines.PLAIN_LINE_EVERY_S", 0.1)
    result = _build(kernels.sources[0], "--arch", "sm_100a", "--submission-time")
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if line.startswith("timing python submission.py of a.cu: ")]
    assert len(said) >= 3, result.stderr
    assert "timing python submission.py of a.cu (fresh, nothing cached) ..." in result.stdout  # as before
    assert "a.cu: python submission.py took 0.6 s" in " ".join(result.stdout.split())


def test_each_extension_of_a_submission_is_a_line_as_it_starts(tmp_path: Path, compiles: list[str]) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE)
    result = _build(str(submission))
    assert _steps(result.stderr, "compiling ") == [
        "compiling first (sm_100a): 0 of 2", "compiling second (sm_100a): 1 of 2"], result.output
    quiet = _build("-q", str(submission))
    assert "compiling" not in quiet.stderr


def test_only_an_extension_that_includes_cutlass_is_said_to_take_minutes(tmp_path: Path, compiles: list[str]) -> None:
    """A plain CUDA extension compiles in seconds: every extension's line said CUTLASS takes minutes. CUTLASS
    counts included by the code itself or by a local header it includes."""
    (tmp_path / "tile.cuh").write_text("#pragma once\n#  include <cute/tensor.hpp>\n")
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE.replace('CUDA = r"""', 'CUTE = r"""#include <cute/tensor.hpp>\n"""\nCUDA = r"""')
                          .replace("second = load_inline(name=\"second\", cpp_sources=\"\", cuda_sources=CUDA,",
                                   "second = load_inline(name=\"second\", cpp_sources=\"\", cuda_sources=CUTE + CUDA,")
                          + f'third = load_inline(name="third", cpp_sources="", cuda_sources=\'#include "tile.cuh"\\n\','
                          f' extra_include_paths=["{tmp_path}"],'
                          ' extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])\n')
    result = _build(str(submission))
    assert _steps(result.stderr, "compiling ") == [
        "compiling first (sm_100a): 0 of 3",
        "compiling second (sm_100a; CUTLASS takes minutes): 1 of 3",
        "compiling third (sm_100a; CUTLASS takes minutes): 2 of 3"], result.output
    assert "CUTLASS takes minutes" not in result.stdout


def test_an_extension_built_before_is_said_to_come_from_the_cache(tmp_path: Path, compiles: list[str]) -> None:
    """A cache hit compiles nothing: its line said "compiling first (sm_100a): 0 of 2, 0 s" as a compile's does."""
    submission = tmp_path / "submission.py"
    plain = INLINE.replace('CUDA = r"""', 'CUDA = r"""// nvfp4ctl: no-tensor-op\n')  # the stand-in compiles no MMA
    submission.write_text(plain)
    first = _build(str(submission))
    assert first.exit_code == 0 and compiles == ["first.cu", "second.cu"], first.output
    again = _build(str(submission))
    assert again.exit_code == 0 and compiles == ["first.cu", "second.cu"], again.output  # nothing compiled again
    assert "compiling" not in again.stderr, again.stderr
    assert _steps(again.stderr, "first ") + _steps(again.stderr, "second ") == [
        "first (sm_100a): built before, taken from nvfp4ctl's build cache: 0 of 2",
        "second (sm_100a): built before, taken from nvfp4ctl's build cache: 1 of 2"], again.stderr
    submission.write_text(plain.replace("p[0] = 1.0f", "p[0] = 2.0f"))  # new code: compiled
    changed = _build(str(submission))
    assert _steps(changed.stderr, "compiling ") == ["compiling first (sm_100a): 0 of 2",
                                                   "compiling second (sm_100a): 1 of 2"], changed.stderr


def test_a_kernel_built_before_is_said_to_come_from_the_cache(kernels: Kernels, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nvfp4ctl.build.builder.has_build", lambda source, arch: source.name == "a.cu")
    result = _build(*kernels.sources, "--arch", "sm_100a")
    assert result.exit_code == 0, result.output
    assert [line.rsplit(",", 1)[0] for line in result.stderr.splitlines() if line.startswith(("a.cu", "compiling"))] == [
        "a.cu (sm_100a): built before, taken from nvfp4ctl's build cache: 0 of 2", "compiling b.cu (sm_100a): 1 of 2"]


def test_an_extension_of_two_archs_in_one_run_built_before_is_said_to_come_from_the_cache(
        tmp_path: Path, compiles: list[str]) -> None:
    """Its flags name two archs, one nvcc run keyed by the first: its line looked for an entry per arch and said
    "compiling both (sm_100a, sm_90a)" on a hit."""
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE.split("first = ")[0].replace('CUDA = r"""', 'CUDA = r"""// nvfp4ctl: no-tensor-op\n')
                          + 'both = load_inline(name="both", cpp_sources="", cuda_sources=CUDA, extra_cuda_cflags=['
                            '"-gencode=arch=compute_100a,code=sm_100a", "-gencode=arch=compute_90a,code=sm_90a"])\n')
    first = _build(str(submission))
    assert first.exit_code == 0 and compiles == ["both.cu"], first.output
    assert _steps(first.stderr, "compiling ") == ["compiling both (sm_100a, sm_90a): 0 of 1"], first.stderr
    again = _build(str(submission))
    assert again.exit_code == 0 and compiles == ["both.cu"], again.output
    assert _steps(again.stderr, "both ") == [
        "both (sm_100a, sm_90a): built before, taken from nvfp4ctl's build cache: 0 of 1"], again.stderr


def test_a_build_under_the_fallback_flags_key_is_said_to_come_from_the_cache(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch,
                                                                             compiles: list[str]) -> None:
    """A hit under the key of a build with the fallback flags said "compiling two (sm_100a)": the line looked for
    the unit's entry under its main key alone."""
    from nvfp4ctl.build import torch_nvcc

    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    (tmp_path / "a.cu").write_text("// nvfp4ctl: no-tensor-op\n__global__ void k(int* p) { p[0] = 1; }\n")
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load\n"
                          'm = load(name="two", sources=["a.cu"], extra_cuda_cflags=["-O3"])\n')
    monkeypatch.setattr(torch_nvcc, "_FALLBACK_REASONS", [])  # torch's flags read afresh: the probe is cached per process
    torch_nvcc.extension_flags.cache_clear()
    monkeypatch.setattr(cpp_extension, "_write_ninja_file_to_build_library", _unreadable_ninja_writer)
    try:
        results = [separate_streams_runner().invoke(app, ["build", str(submission), "--arch", "sm_100a"])
                   for _ in range(2)]
    finally:
        torch_nvcc.extension_flags.cache_clear()
    assert [result.exit_code for result in results] == [0, 0] and compiles == ["a.cu"], results[1].output
    assert "compiling two" in results[0].stderr and "compiling" not in results[1].stderr, results[1].stderr
    assert "two (sm_100a): built before, taken from nvfp4ctl's build cache" in results[1].stderr


def _unreadable_ninja_writer(path: str, *, layout: object) -> None:
    raise AssertionError("a release whose ninja writer takes other parameters")
