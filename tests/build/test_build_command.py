"""`nvfp4ctl build` end to end on the fixture kernels (device code only on a CPU torch)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.build import BuildReport, build_kernel, compile, toolchain
from nvfp4ctl.build.machine import children_cpu_seconds
from nvfp4ctl.cli import app
from nvfp4ctl.commands import build as build_command
from nvfp4ctl.build import sources

FIXTURES = Path(__file__).parent / "fixtures"
HGMMA_PROBE, ZERO_GEMM = FIXTURES / "hgmma_probe.cu", FIXTURES / "zero_gemm.cu"
runner = CliRunner()


def _last_result() -> str:
    return runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1].result


def test_the_probe_builds_clean(hgmma_report: BuildReport) -> None:
    assert hgmma_report.problems() == []
    assert hgmma_report.tensor_op.found[0].startswith("HGMMA.64x8x16")
    assert {k.registers > 0 for k in hgmma_report.kernels} == {True}
    assert (hgmma_report.module_name is not None) == toolchain.torch_build().has_cuda
    assert {p.name for p in hgmma_report.entry.iterdir()} >= {"report.json", "build.log", "kernel.sass.gz"}


def test_cli_shows_the_table_and_logs_the_result(hgmma_report: BuildReport, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # the table is wider than 80 columns
    result = runner.invoke(app, ["build", str(HGMMA_PROBE)])
    assert result.exit_code == 0, result.output
    assert "HGMMA.64x8x16" in result.output and "hit" in result.output
    assert _last_result() == "1 kernel built (sm_90a), 0 B of spills, 1 cached"
    assert result.output.splitlines()[-1] == "1 kernel built (sm_90a), 0 B of spills, 1 cached"


def test_quiet_still_prints_the_result(hgmma_report: BuildReport) -> None:
    """-q hides the table; the result line stays (it printed nothing at all)."""
    result = runner.invoke(app, ["build", "-q", str(HGMMA_PROBE)])
    assert result.exit_code == 0, result.output
    assert result.output == "1 kernel built (sm_90a), 0 B of spills, 1 cached\n"


def test_an_unchanged_rebuild_never_starts_the_compiler(hgmma_report: BuildReport, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the compiler ran for an unchanged kernel")

    monkeypatch.setattr(compile, "build_module", refuse)
    monkeypatch.setattr(compile, "build_device_code", refuse)
    started = _cpu_seconds()
    again = build_kernel(HGMMA_PROBE, "sm_90a")
    # a hit took 0.004 s of CPU here, the probe's recompile (device code only, the cheapest) 2.5 s
    assert _cpu_seconds() - started <= 1.0
    assert again.cache_hit and again.key == hgmma_report.key


def _cpu_seconds() -> float:
    """CPU time of this process and of the children it waited for (a hit reads `nvcc --version` for its
    key; a recompile would be nvcc's and its tools'): the work a build does, which wall time on a busy
    2-core machine or under pytest -n mixes with the neighbours'."""
    return time.process_time() + children_cpu_seconds()


def test_an_unchanged_rebuild_from_the_shell_costs_under_two_cpu_seconds(hgmma_report: BuildReport) -> None:
    # CPU time of the whole command, interpreter start and imports included: wall time on a busy
    # 2-core CI machine says more about the neighbours than about us.
    before = children_cpu_seconds()
    done = subprocess.run([sys.executable, "-m", "nvfp4ctl", "-q", "build", str(HGMMA_PROBE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert children_cpu_seconds() - before <= 2.0


def test_a_kernel_without_the_tensor_core_op_fails() -> None:
    result = runner.invoke(app, ["build", str(ZERO_GEMM), "--arch", "sm_90a"])
    assert result.exit_code == 1
    assert "no HGMMA in the sm_90a SASS" in result.output
    assert "`// nvfp4ctl: no-tensor-op`" in " ".join(result.output.split())  # how to say it is on purpose
    assert _last_result().startswith("1 of 1 kernel failed (zero_gemm.cu: no HGMMA")


@pytest.mark.parametrize("says", ["folder", "mark"])
def test_an_sm90_kernel_built_for_sm100a_is_called_the_wrong_kernel_for_the_arch(tmp_path: Path, says: str) -> None:
    """kernels/sm90/nvfp4_gemm_sm90.cu with --arch sm_100a: no UTCOMMA because it is an sm_90a kernel, not one
    without tensor cores, so the no-tensor-op mark is the wrong advice."""
    if says == "folder":
        kernel, why = tmp_path / "sm90" / "wrong_arch.cu", "its sm90/ folder"
        kernel.parent.mkdir()
        kernel.write_text(ZERO_GEMM.read_text())
    else:
        kernel, why = tmp_path / "wrong_arch.cu", "its `// nvfp4ctl: arch=sm_90a` line"
        kernel.write_text("// nvfp4ctl: arch=sm_90a\n" + ZERO_GEMM.read_text())
    result = runner.invoke(app, ["build", str(kernel), "--arch", "sm_100a"])
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert f"no UTCOMMA.4X in the sm_100a SASS (found: no tensor-core op at all): an sm_90a kernel ({why}) built for" \
           " sm_100a; build it with --arch sm_90a" in said
    assert "no-tensor-op" not in said
    assert "build it with --arch sm_90a" in _last_result()
    report = build_kernel(kernel, "sm_100a")
    assert "written_for" not in (report.entry / "report.json").read_text()  # read from the source, never stored


def test_a_kernel_that_declares_no_tensor_op_builds_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    declared = tmp_path / "zero_gemm.cu"
    declared.write_text("// nvfp4ctl: no-tensor-op\n" + ZERO_GEMM.read_text())
    result = runner.invoke(app, ["build", str(declared), "--arch", "sm_90a"])
    assert result.exit_code == 0, result.output
    assert "none (declared)" in result.output and "no HGMMA" not in result.output
    assert _last_result().startswith("1 kernel built (sm_90a)")
    report = build_kernel(declared, "sm_90a")
    assert report.tensor_op.declared_none and report.problems() == []
    # read from the source on each load, never stored: report.json keeps the format older versions read
    assert "declared_none" not in (report.entry / "report.json").read_text()


def test_a_bare_build_of_the_naive_starter_in_a_users_folder_passes(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's kernels/ in our layout holding the plain-CUDA starter: it has no tensor-core op on
    purpose (its `no-tensor-op` mark), so building what they were given is no failure."""
    import shutil

    shipped = Path(__file__).resolve().parents[2] / "kernels"
    shutil.copytree(shipped / "common", tmp_path / "kernels" / "common")
    (tmp_path / "kernels" / "sm90").mkdir()
    for name in ("nvfp4_gemv_naive.cu", "naive_decode.cuh"):
        shutil.copy(shipped / "naive" / name, tmp_path / "kernels" / "sm90" / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "160")
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 0, result.output
    assert "nvfp4_gemv_naive.cu" in result.output and "none (declared)" in result.output
    assert _last_result().startswith("1 kernel built (sm_90a)")


def test_a_kernel_of_yours_builds_with_the_headers_of_a_kernels_common_that_is_no_override(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model repository's kernels/common/ (no binding: nvfp4ctl's own is used) holding rope.cuh, which your
    kernel includes: 'rope.cuh: No such file or directory', exit 1. Its launch_error.h, named like one of
    nvfp4ctl's, is not the one compiled, and a note says so."""
    import shutil

    naive = Path(__file__).resolve().parents[2] / "kernels" / "naive"
    common = tmp_path / "kernels" / "common"
    common.mkdir(parents=True)
    (common / "rope.cuh").write_text("#pragma once\nconstexpr int kRopeOfYours = 3;\n")
    (common / "launch_error.h").write_text('#pragma once\n#error "the launch_error.h of yours"\n')
    shutil.copy(naive / "naive_decode.cuh", tmp_path)
    kernel = tmp_path / "my.cu"
    kernel.write_text((naive / "nvfp4_gemv_naive.cu").read_text() + '#include "rope.cuh"\n#include "launch_error.h"\n'
                      'static_assert(kRopeOfYours == 3, "rope.cuh is the one of yours");\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["build", "--arch", "sm_90a", "my.cu"])
    assert result.exit_code == 0, result.output
    assert ("note: kernels/common/launch_error.h not used: nvfp4ctl's own kernels/common/ has a header of the same"
            " name, found first") in result.output


def test_spills_are_problems(hgmma_report: BuildReport) -> None:
    from dataclasses import replace

    from nvfp4ctl.build import FunctionUsage

    spilled = replace(hgmma_report, functions=(FunctionUsage("_Z1kv", True, 255, 0, 64, 32, 32),))
    assert spilled.spill_bytes == 64
    assert spilled.problems() == ["register spills in k (32 B stores, 32 B loads)"]


def test_a_spill_names_the_kernel_as_the_tables_do(hgmma_report: BuildReport) -> None:
    """The error named ptxas's mangled symbol where build's -v table, build submission.py's and tune's
    show the demangled short name."""
    from dataclasses import replace

    from nvfp4ctl.build import FunctionUsage
    from nvfp4ctl.build.kernel_names import readable_names

    functions = (FunctionUsage("_Z12spill_kernelPKfP6__halfi", True, 255, 0, 64, 32, 32),
                 FunctionUsage("_Z6helperv", False, 8, 0, 0, 0, 0))
    spilled = replace(hgmma_report, functions=functions)
    shown = readable_names([f.name for f in functions])[0]
    assert shown == "spill_kernel"
    assert spilled.problems() == ["register spills in spill_kernel (32 B stores, 32 B loads)"]


def test_a_compile_error_is_trimmed_and_verbose_shows_all(tmp_path: Path) -> None:
    broken = tmp_path / "broken.cu"
    broken.write_text(
        "template <class T> __device__ T twice(T x) { return x.nope * 2; }\n"
        "__global__ void k(float* p) { p[0] = twice(p[1]); }\n"
    )
    result = runner.invoke(app, ["build", str(broken), "--arch", "sm_90a"])
    assert result.exit_code == 1
    assert f"{broken}:1: expression must have class type" in result.output
    assert "detected during" not in result.output
    verbose = runner.invoke(app, ["build", str(broken), "--arch", "sm_90a", "-v"])
    assert verbose.exit_code == 1 and "detected during instantiation" in verbose.output


def test_a_missing_source_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["build", str(tmp_path / "nope.cu")])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: no such kernel source: {tmp_path / 'nope.cu'}"


def test_default_sources_are_the_project_kernels_filtered_by_arch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("sm90", "sm100"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"k_{folder}.cu").write_text("")
    monkeypatch.setattr(build_command, "users_kernels_dir", lambda: tmp_path)
    assert [(p.name, a) for p, a in build_command._plan([], "all")] == [("k_sm100.cu", "sm_100a"), ("k_sm90.cu", "sm_90a")]
    assert [p.name for p, _ in build_command._plan([], "sm_90a")] == ["k_sm90.cu"]


def test_a_project_kernel_this_machine_cannot_build_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "torch_binding.cpp").write_text("")
    (tmp_path / "sm100").mkdir()
    (tmp_path / "sm100" / "k.cu").write_text('#include "cute/tensor.hpp"\n')
    monkeypatch.setattr(sources, "kernels_dir", lambda: tmp_path)
    monkeypatch.setattr(build_command, "users_kernels_dir", lambda: tmp_path)
    monkeypatch.setattr(toolchain, "cutlass_root", lambda: None)  # a GPU machine without the wheel, nor another CUTLASS
    monkeypatch.setattr(toolchain, "CUTLASS_SYSTEM_ROOT", str(tmp_path / "no-usr-local-cutlass"))
    monkeypatch.delenv("CUTLASS_PATH", raising=False)
    monkeypatch.delenv("CUTLASS_HOME", raising=False)
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 2
    assert ("skipped k.cu: the kernel includes CUTLASS/CuTe headers but none were found ($CUTLASS_PATH, $CUTLASS_HOME,"
            " /usr/local/cutlass) and the nvidia-cutlass wheel is not installed") in " ".join(result.output.split())
    assert _last_result() == "nothing built, 1 skipped"
    named = runner.invoke(app, ["build", str(tmp_path / "sm100" / "k.cu")])
    assert named.exit_code == 2 and "nvidia-cutlass wheel is not installed" in named.output


def test_two_processes_building_one_key_share_one_entry(build_cache: Path) -> None:
    script = (
        "from pathlib import Path; from nvfp4ctl.build import build_kernel;"
        f"print(build_kernel(Path({str(ZERO_GEMM)!r}), 'sm_100a').entry)"
    )
    children = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    entries = {child.communicate(timeout=600)[0].strip() for child in children}
    assert all(child.returncode == 0 for child in children)
    assert len(entries) == 1
    assert [p.name for p in build_cache.glob("zero_gemm-sm_100a-*")] == [Path(entries.pop()).name]
    # the cache is the session's, shared with the other xdist workers, whose builds stage there meanwhile
    assert [p for p in (build_cache / "tmp").iterdir() if p.name.startswith("zero_gemm-sm_100a-")] == []


def test_submission_time_is_reported_and_a_failure_fails(hgmma_report: BuildReport, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.build import submission_time

    monkeypatch.setenv("COLUMNS", "160")
    from nvfp4ctl.build.machine import Machine

    host = Machine(2, "Some CPU", 0.5)
    timed = submission_time.SubmissionTime(12.3, 20.5, "compiled-no-link", "", host)
    monkeypatch.setattr(submission_time, "time_submission", lambda source, arch: timed)
    result = runner.invoke(app, ["build", str(HGMMA_PROBE), "--submission-time"])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "python submission.py took 12.3 s (20.5 s CPU) (CPU-only torch" in output
    assert "on 2 logical CPUs (Some CPU), load 0.50 at start: within the leaderboard's 120 s limit" in output
    failed = submission_time.SubmissionTime(3.0, 2.0, "failed", "boom", host)
    monkeypatch.setattr(submission_time, "time_submission", lambda source, arch: failed)
    result = runner.invoke(app, ["build", str(HGMMA_PROBE), "--submission-time"])
    assert result.exit_code == 1, result.output
    assert "(FAILED)" in result.output



def test_submission_time_past_its_limit_is_a_timeout_in_one_line_and_ends_its_compiles(
        hgmma_report: BuildReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was a usage error (exit 2), and the child Python alone was stopped: its ninja and nvcc ran on."""
    from process_tree import wait_dead

    from nvfp4ctl.build import submission_time

    tool_pid = tmp_path / "tool.pid"
    monkeypatch.setattr(submission_time, "TIMEOUT_S", 1.0)
    monkeypatch.setattr(submission_time, "_CHILD", "import pathlib, subprocess, sys; tool = subprocess.Popen(['sleep', '60']);"
                        f" pathlib.Path({str(tool_pid)!r}).write_text(str(tool.pid)); tool.wait()")
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["build", str(HGMMA_PROBE), "--submission-time"])
    assert result.exit_code == 3, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error")]
    assert errors == ["error: hgmma_probe.cu: python submission.py ran past 1 s and was stopped (the limit is fixed)"]
    assert "Traceback" not in result.output
    assert wait_dead(int(tool_pid.read_text()), 5)
    monkeypatch.setattr(submission_time, "TIMEOUT_S", 600.0)  # the shipped limit is past the leaderboard's
    assert submission_time.timeout_line("k.cu") == ("k.cu: python submission.py ran past 600 s and was stopped"
                                                    " (the limit is fixed): OVER the leaderboard's 120 s limit")

def test_a_kernel_without_its_c_abi_entry_point_fails_the_build(tmp_path: Path) -> None:
    # it would link (a shared library may leave symbols open) and fail only at import, or on the server
    kernel = tmp_path / "no_entry.cu"
    kernel.write_text('// nvfp4ctl: no-tensor-op\n#include "nvfp4_gemv_api.h"\n__global__ void k(float* p) { p[0] = 1.f; }\n')
    result = runner.invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert result.exit_code == 1, result.output
    assert (f"{kernel}: defines no nvfp4_gemv_unsupported() or nvfp4_gemv_launch(), the C ABI nvfp4_gemv_binding.cpp"
            " calls") in " ".join(result.output.split())
    kernel.write_text(kernel.read_text() + 'const char* nvfp4_gemv_unsupported(int, int, int) { return nullptr; }\n')
    half = runner.invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert half.exit_code == 1 and "defines no nvfp4_gemv_launch(), the C ABI" in " ".join(half.output.split())


# A GEMV kernel whose launch takes a pointer where the API header declares a const reference.
POINTER_LAUNCH = ('// nvfp4ctl: no-tensor-op\n#include "nvfp4_gemv_api.h"\n'
                  'const char* nvfp4_gemv_unsupported(int, int, int) { return nullptr; }\n'
                  'cudaError_t nvfp4_gemv_launch(Nvfp4GemvArgs* args) { return cudaSuccess; }\n')


def test_a_c_abi_function_defined_with_other_parameters_fails_the_build(tmp_path: Path) -> None:
    # in C++ it is an overload: the declared function stays undefined and the import fails
    kernel = tmp_path / "pointer_launch.cu"
    kernel.write_text(POINTER_LAUNCH)
    result = runner.invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert result.exit_code == 1, result.output
    assert (f"{kernel}: defines nvfp4_gemv_launch(Nvfp4GemvArgs*), not nvfp4_gemv_launch(Nvfp4GemvArgs const&)"
            " as nvfp4_gemv_api.h declares and nvfp4_gemv_binding.cpp calls") in " ".join(result.output.split())
    kernel.write_text(kernel.read_text().replace("Nvfp4GemvArgs* args", "const Nvfp4GemvArgs& args"))
    fixed = runner.invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert fixed.exit_code == 0, fixed.output


def test_every_build_error_names_the_kernel_as_the_compiler_errors_do(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiler error names kernels/bad_syntax.cu:N (relative to the working folder, what editors and
    terminals link); the C ABI check named the same folder's kernel by its absolute path."""
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "bad_syntax.cu").write_text("__global__ void k(float* p) { p[0] = nope; }\n")
    (tmp_path / "kernels" / "no_entry.cu").write_text(
        '// nvfp4ctl: no-tensor-op\n#include "nvfp4_gemv_api.h"\n__global__ void k(float* p) { p[0] = 1.f; }\n')
    monkeypatch.chdir(tmp_path)
    said = {}
    for name in ("bad_syntax.cu", "no_entry.cu"):
        result = runner.invoke(app, ["build", str(tmp_path / "kernels" / name), "--arch", "sm_90a"])
        assert result.exit_code == 1, result.output
        said[name] = " ".join(result.output.split())
    assert "error: kernels/bad_syntax.cu:1: identifier \"nope\" is undefined" in said["bad_syntax.cu"]
    assert "error: kernels/no_entry.cu: defines no nvfp4_gemv_unsupported()" in said["no_entry.cu"]
    assert str(tmp_path) not in said["no_entry.cu"].split("error:", 1)[1]  # the header names it as typed


def test_the_c_abi_is_read_from_the_header_the_binding_includes_not_a_copy_beside_the_kernel(tmp_path: Path) -> None:
    """A kernel folder with its own, older copy of the API header: the kernel compiles against the copy,
    the binding against nvfp4ctl's (or your kernels/common's), and the import fails. The check reads the
    signatures from the binding's header, so the copy cannot vouch for the kernel."""
    from nvfp4ctl.build.sources import common_dir

    api = (common_dir() / "nvfp4_gemv_api.h").read_text()
    assert "const Nvfp4GemvArgs& args" in api
    (tmp_path / "nvfp4_gemv_api.h").write_text(api.replace("const Nvfp4GemvArgs& args", "Nvfp4GemvArgs* args"))
    kernel = tmp_path / "pointer_launch.cu"
    kernel.write_text(POINTER_LAUNCH)
    result = runner.invoke(app, ["build", str(kernel), "--arch", "sm_90a"])
    assert result.exit_code == 1, result.output
    assert "defines nvfp4_gemv_launch(Nvfp4GemvArgs*), not nvfp4_gemv_launch(Nvfp4GemvArgs const&)" in " ".join(result.output.split())


def test_a_kernel_of_no_arch_built_with_the_default_arch_all_is_told_which_archs_to_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--arch all (the default) was in effect, yet the error said "or pass --arch"."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_gemm.cu").write_text("__global__ void k() {}\n")
    for args in (["build", "my_gemm.cu"], ["build", "--arch", "all", "my_gemm.cu"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert " ".join(result.output.split()) == (
            "error: cannot tell which arch my_gemm.cu is for: put it under sm90/ or sm100/, add a line `// nvfp4ctl:"
            " arch=sm_90a`, or pass --arch sm_90a or --arch sm_100a (--arch all builds each kernel for its own arch)")
