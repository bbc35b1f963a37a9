"""A source build compiles whose bytes are not UTF-8 (a latin-1 `é` in a comment): lint says NV004 and export
refuses it, and build, where nvcc compiles it as it is, says so in a warning with NV004's words and the line,
where it said nothing. A submission.py that is not UTF-8 stays the one-line refusal check gives (exit 2).
The compiler is a stand-in here."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build.report import BuildReport, TensorOpCheck
from nvfp4ctl.cli import app

runner = CliRunner()
LATIN_1 = "// nvfp4ctl: no-tensor-op\n// caf\xe9 au lait\n__global__ void k(float* p) { p[0] = 1.f; }\n".encode("latin-1")
WARNING = ("k.cu:2: k.cu is not text (byte 0xe9 here is not UTF-8): the leaderboard reads a submission as UTF-8 text;"
           " built as nvcc reads it, byte for byte: save it as UTF-8 (lint: NV004)")
NONE_DECLARED = TensorOpCheck(expected="UTCOMMA.4X", found=(), match=None, checked=True)


@pytest.fixture()
def kernel_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The kernels built, by a stand-in for the build that compiles nothing."""
    built: list[Path] = []

    def build_kernel(source: Path, arch: str, verbose: bool = False) -> BuildReport:
        built.append(source)
        return BuildReport(source=source, arch=arch, key="k", entry=tmp_path, module_name=None, functions=(),
                           tensor_op=NONE_DECLARED, compile_s=0.0)

    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", build_kernel)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return built


def _said(result: object) -> str:
    return " ".join(result.output.split())  # type: ignore[attr-defined]


def test_a_kernel_source_that_is_not_utf8_is_warned_of_and_built(tmp_path: Path, kernel_builds: list[Path]) -> None:
    (tmp_path / "k.cu").write_bytes(LATIN_1)
    result = runner.invoke(app, ["build", "--arch", "sm_100a", "k.cu"])
    said = _said(result)
    assert kernel_builds == [tmp_path / "k.cu"], said
    assert f"warning: {WARNING}" in said and said.count("NV004") == 1, said
    lint = runner.invoke(app, ["lint", "k.cu"])
    assert "k.cu:2:7: NV004 k.cu is not text (byte 0xe9 here is not UTF-8): the leaderboard reads a submission as" \
           " UTF-8 text" in _said(lint)


def test_a_utf8_kernel_source_has_no_warning(tmp_path: Path, kernel_builds: list[Path]) -> None:
    (tmp_path / "k.cu").write_bytes(LATIN_1.decode("latin-1").encode("utf-8"))
    said = _said(runner.invoke(app, ["build", "--arch", "sm_100a", "k.cu"]))
    assert kernel_builds and "warning:" not in said and "NV004" not in said, said


def test_a_load_source_that_is_not_utf8_is_warned_of_and_built(tmp_path: Path, compiles: list[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "k.cu").write_bytes(LATIN_1)
    (tmp_path / "submission.py").write_text(
        "from torch.utils.cpp_extension import load\n"
        "m = load(name='m', sources=['k.cu'], extra_cuda_cflags=['-gencode=arch=compute_100a,code=sm_100a'])\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["build", "submission.py"])
    said = _said(result)
    assert result.exit_code == 0 and compiles == ["k.cu"], said
    assert f"warning: {WARNING}" in said and said.count("NV004") == 1, said


LATIN_1_HEADER = "#pragma once\n// caf\xe9 au lait\n#define TILE 128\n".encode("latin-1")
HEADER_WARNING = ("k.cuh:2: k.cuh is not text (byte 0xe9 here is not UTF-8): the leaderboard reads a submission as UTF-8"
                  " text; built as nvcc reads it, byte for byte: save it as UTF-8 (lint: NV004)")


def test_a_kernel_header_that_is_not_utf8_is_warned_of_and_built(tmp_path: Path, kernel_builds: list[Path]) -> None:
    """The kernel's own header is compiled and keyed with it: build said nothing of its bytes."""
    (tmp_path / "k.cuh").write_bytes(LATIN_1_HEADER)
    (tmp_path / "k.cu").write_text('// nvfp4ctl: no-tensor-op\n#include "k.cuh"\n__global__ void k(float* p) { p[0] = TILE; }\n')
    result = runner.invoke(app, ["build", "--arch", "sm_100a", "k.cu"])
    said = _said(result)
    assert kernel_builds == [tmp_path / "k.cu"] and "Traceback" not in result.output, said
    assert f"warning: {HEADER_WARNING}" in said and said.count("NV004") == 1, said


def test_a_header_several_kernels_include_is_warned_of_once(tmp_path: Path, kernel_builds: list[Path]) -> None:
    """`build a.cu b.cu`, both including k.cuh: its warning came once per kernel."""
    (tmp_path / "k.cuh").write_bytes(LATIN_1_HEADER)
    for name in ("a", "b"):
        (tmp_path / f"{name}.cu").write_text(
            f'// nvfp4ctl: no-tensor-op\n#include "k.cuh"\n__global__ void {name}(float* p) {{ p[0] = TILE; }}\n')
    result = runner.invoke(app, ["build", "--arch", "sm_100a", "a.cu", "b.cu"])
    said = _said(result)
    assert kernel_builds == [tmp_path / "a.cu", tmp_path / "b.cu"], said
    assert f"warning: {HEADER_WARNING}" in said and said.count("NV004") == 1, said


def test_a_header_of_a_submissions_cuda_that_is_not_utf8_is_warned_of_once(tmp_path: Path, compiles: list[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A header a load() source includes beside it, and one load_inline's CUDA finds in extra_include_paths: the
    same file, warned of once for both extensions."""
    (tmp_path / "k.cuh").write_bytes(LATIN_1_HEADER)
    (tmp_path / "k.cu").write_text('// nvfp4ctl: no-tensor-op\n#include "k.cuh"\n__global__ void k(float* p) { p[0] = TILE; }\n')
    (tmp_path / "submission.py").write_text(
        "from torch.utils.cpp_extension import load, load_inline\n"
        "FLAGS = ['-gencode=arch=compute_100a,code=sm_100a']\n"
        "m = load(name='m', sources=['k.cu'], extra_cuda_cflags=FLAGS)\n"
        f"n = load_inline(name='n', cpp_sources='', cuda_sources='// nvfp4ctl: no-tensor-op\\n#include \"k.cuh\"\\n',"
        f" extra_include_paths=[{str(tmp_path)!r}], extra_cuda_cflags=FLAGS)\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["build", "submission.py"])
    said = _said(result)
    assert result.exit_code == 0 and compiles == ["k.cu", "n.cu"], said
    assert f"warning: {HEADER_WARNING}" in said and said.count("NV004") == 1, said


def test_a_submission_that_is_not_utf8_stays_refused(tmp_path: Path, compiles: list[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """python refuses it before any line runs, and the docs give build check's line for it."""
    (tmp_path / "submission.py").write_bytes(
        b"from torch.utils.cpp_extension import load_inline\n# caf\xe9\n"
        b"m = load_inline(name='m', cpp_sources='', cuda_sources='__global__ void k() {}')\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["build", "submission.py"])
    assert result.exit_code == 2 and not compiles, result.output
    assert "submission.py:2: not UTF-8 text (invalid continuation byte at byte 55)" in _said(result)


@pytest.mark.parametrize("command", ["check", "bench", "tune"])
def test_a_kernel_run_by_another_command_warns_of_its_header_as_build_does(tmp_path: Path, command: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """check, bench and tune build a --kernel in a child or a worker, whose output is read only when it fails:
    they said nothing of a header that is not UTF-8, where build warns. The warning comes before the build
    (here before "no GPU", or tune's own reading of the kernel), once."""
    (tmp_path / "k.cuh").write_bytes(LATIN_1_HEADER)
    (tmp_path / "k.cu").write_text('// nvfp4ctl: no-tensor-op\n#include "k.cuh"\n__global__ void k(float* p) { p[0] = TILE; }\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: False)  # no kernel is built or run, GPU or not
    monkeypatch.setattr("nvfp4ctl.commands.check.gpu_present", lambda: False)
    said = _said(runner.invoke(app, [command, "--kernel", "k.cu"]))
    assert f"warning: {HEADER_WARNING}" in said and said.count("NV004") == 1, said


def test_tune_reads_the_knobs_of_a_kernel_whose_header_is_not_utf8(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """tune's search for knobs read each header as UTF-8 and stopped on a latin-1 comment with a traceback."""
    (tmp_path / "k.cuh").write_bytes(LATIN_1_HEADER)
    (tmp_path / "k.cu").write_text('// nvfp4ctl: no-tensor-op\n#include "k.cuh"\n__global__ void k(float* p) { p[0] = TILE; }\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setattr("nvfp4ctl.runner.gpu.gpu_present", lambda: False)
    result = runner.invoke(app, ["tune", "--kernel", "k.cu"])
    assert result.exit_code == 2 and "k.cu: declares no knobs" in _said(result), result.output
