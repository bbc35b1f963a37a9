"""Which submission `build` builds and for which problem, resolved as `check` resolves them: a submission's own
task.yml, another problem's task.yml in use refused in one line naming the --task to pass, the target and why on
the header line, a submission.py here that is not built said. The compiler and the SASS are stand-ins here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.build import submission_build
from nvfp4ctl.build.report import BuildReport, FunctionUsage, TensorOpCheck
from nvfp4ctl.cli import app
from nvfp4ctl.errors import ExitCode
from nvfp4ctl.problems.base import PROBLEMS_DIR
from nvfp4ctl.project import kernels_dir

from plain_gemv import FFMA_SASS
from plain_gemv import SUB_CUDA as PLAIN_GEMV

SUB_CUDA = PLAIN_GEMV + '''

def custom_kernel(data):
    return data[-1]
'''
NONE_NEEDED = "none needed for nvfp4_gemv"


@pytest.fixture()
def ffma(compiles: list[str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: FFMA_SASS)
    return compiles


def _folder(path: Path, problem: str | None) -> Path:
    """A problem folder: that problem's task.yml (none: no task.yml) and the GEMV submission above."""
    path.mkdir()
    if problem is not None:
        (path / "task.yml").write_text((PROBLEMS_DIR / problem / "task.yml").read_text())
    (path / "submission.py").write_text(SUB_CUDA)
    return path


def _build(folder: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[Result, str]:
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(app, ["build", *args])
    return result, " ".join(result.output.split())


def _logged() -> runlog.RunEntry:
    return runlog.read(Path(os.environ["NVFP4CTL_MEMORY"]))[-1]


def test_a_submission_elsewhere_is_built_for_its_own_task(tmp_path: Path, ffma: list[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """From a folder with no task.yml, ../gemv/submission.py was judged by nvfp4ctl's shipped GEMM task (exit 1,
    no UTCOMMA.4X), where from its own folder it passed: check runs it on the task.yml beside it."""
    _folder(tmp_path / "gemv", "nvfp4_gemv")
    (tmp_path / "elsewhere").mkdir()
    result, said = _build(tmp_path / "elsewhere", monkeypatch, "../gemv/submission.py")
    assert result.exit_code == 0, said
    assert "build · nvfp4_gemv · target ../gemv/submission.py (given) · task" in said, said
    # given as build's argument, not as --submission, which build does not have: the header said "--submission"
    assert "(beside the submission given)" in said and "--submission" not in said, said
    assert NONE_NEEDED in said and "error:" not in said, said
    assert _logged().problem == "nvfp4_gemv"


def test_a_linked_submission_is_built_for_the_task_yml_where_the_link_lies(tmp_path: Path, ffma: list[str],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`build gemv/submission.py`, a link to ../gemm/submission.py, was judged by gemm/task.yml, the folder the link
    leads to (exit 1, no UTCOMMA.4X), and logged there, where lint judges it by gemv/task.yml and Python runs it as
    gemv/submission.py: built for the GEMV now, and logged in gemv/MEMORY.md under the name the user gave it."""
    monkeypatch.delenv("NVFP4CTL_MEMORY", raising=False)
    _folder(tmp_path / "gemm", "nvfp4_gemm")
    gemv = _folder(tmp_path / "gemv", "nvfp4_gemv")
    (gemv / "submission.py").unlink()
    (gemv / "submission.py").symlink_to("../gemm/submission.py")
    result, said = _build(tmp_path, monkeypatch, "gemv/submission.py")
    assert result.exit_code == 0, said
    assert "build · nvfp4_gemv · target gemv/submission.py (given) · task gemv/task.yml" in said, said
    assert NONE_NEEDED in said, said
    logged = runlog.read(gemv / "MEMORY.md")[-1]
    assert runlog.split_target(logged.target)[0] == "./submission.py", logged.target
    assert not (tmp_path / "gemm" / "MEMORY.md").exists()


def test_a_submission_of_another_problem_than_the_task_in_use_is_refused(tmp_path: Path, ffma: list[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`cd grp; build ../gemv/submission.py` judged the GEMV by the grouped GEMM's task.yml; check refuses
    that in one line naming the --task to pass, and so does build now, before compiling anything."""
    _folder(tmp_path / "gemv", "nvfp4_gemv")
    _folder(tmp_path / "grp", "nvfp4_group_gemm")
    result, said = _build(tmp_path / "grp", monkeypatch, "-v", "../gemv/submission.py")
    assert result.exit_code == 2, said
    assert ("error: ../gemv/submission.py: the task in use, task.yml (found from the current folder), is"
            " nvfp4_group_gemm, but the task.yml beside the submission") in said, said
    assert "is nvfp4_gemv; pass --task" in said and "UTCOMMA" not in said and ffma == []
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_a_lone_submission_names_the_problem_it_is_judged_by(tmp_path: Path, ffma: list[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """No task.yml anywhere: the shipped GEMM task stands in, and the header says so and how to name another."""
    folder = _folder(tmp_path / "lone", None)
    result, said = _build(folder, monkeypatch)
    assert result.exit_code == 1, said
    assert "build · nvfp4_gemm · target submission.py (current folder) · task" in said, said
    assert "nvfp4ctl's shipped task stands in; --task PATH names another problem's" in said, said
    assert _logged().problem == ""  # a stand-in, not a fact about the file


def test_a_lone_submission_that_includes_the_gemv_api_is_built_as_the_gemv(tmp_path: Path, ffma: list[str],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """As lint judges it: a file that uses one problem's C ABI is that problem's, whatever task stands in."""
    folder = _folder(tmp_path / "lone", None)
    (folder / "nvfp4_gemv_api.h").write_text("// the GEMV's C ABI\n")
    (folder / "submission.py").write_text(SUB_CUDA.replace('CUDA = r"""', 'CUDA = r"""#include "nvfp4_gemv_api.h"\n'))
    result, said = _build(folder, monkeypatch)
    assert result.exit_code == 0, said
    assert "build · nvfp4_gemv · target submission.py (current folder)" in said, said
    assert "(it includes nvfp4_gemv_api.h)" in said and NONE_NEEDED in said, said


def test_task_moves_the_target_and_says_so(tmp_path: Path, ffma: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`build --task ../gemv/task.yml` beside a submission.py of one's own built ../gemv's file (as check runs
    the submission beside the task.yml in use, documented) and said nothing: the header names it and why, and
    one line says how to build the one here."""
    _folder(tmp_path / "gemv", "nvfp4_gemv")
    _folder(tmp_path / "own", None)
    result, said = _build(tmp_path / "own", monkeypatch, "--task", "../gemv/task.yml")
    assert result.exit_code == 0, said
    gemv = tmp_path.resolve() / "gemv"
    assert f"target {gemv / 'submission.py'} (beside task.yml) · task ../gemv/task.yml (--task)" in said, said
    assert ("warning: submission.py here is not built (the target is") in said, said
    assert "`nvfp4ctl build submission.py` builds it" in said, said
    assert _logged().target.endswith("[beside task.yml]")


def test_task_with_kernels_names_the_folder_in_the_header_and_the_run_log(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """--task with a kernels/ folder beside it builds those kernels (bare build's documented rule); the run
    log named the kernel, or "kernels" for several, as though the current folder's, and nothing said whose."""
    gemv = _folder(tmp_path / "gemv", "nvfp4_gemv")
    kernel = gemv / "kernels" / "sm100" / "k.cu"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("// nvfp4ctl: no-tensor-op\n__global__ void k() {}\n")
    _folder(tmp_path / "own", None)
    no_op = TensorOpCheck(expected="UTCOMMA.4X", found=(), match=None, checked=True, declared_none=True)
    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", lambda source, arch, verbose=False: BuildReport(
        source=source, arch=arch, key="k", entry=tmp_path, module_name=None, functions=(), tensor_op=no_op,
        compile_s=0.0))
    result, said = _build(tmp_path / "own", monkeypatch, "--task", "../gemv/task.yml")
    assert result.exit_code == 0, said
    kernels = tmp_path.resolve() / "gemv" / "kernels"
    assert f"build · target {kernels}/ (beside ../gemv/task.yml (--task)) · task ../gemv/task.yml (--task)" in said, said
    assert "warning: submission.py here is not built" in said, said
    logged = _logged().target  # its one kernel, the folder it lies in, and whose folder that is
    assert "/gemv/kernels/sm100/k.cu@" in logged, logged
    assert logged.endswith(f" [in {kernels}/ (beside ../gemv/task.yml (--task))]"), logged


def _no_compile(monkeypatch: pytest.MonkeyPatch, entry: Path) -> None:
    no_op = TensorOpCheck(expected="UTCOMMA.4X", found=(), match=None, checked=True, declared_none=True)
    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", lambda source, arch, verbose=False: BuildReport(
        source=source, arch=arch, key="k", entry=entry, module_name=None, functions=(), tensor_op=no_op,
        compile_s=0.0))


GEMV_KERNEL = '#include "nvfp4_gemv_api.h"\n// nvfp4ctl: no-tensor-op\n__global__ void k() {}\n'


@pytest.mark.parametrize("task, reason", [("missing.yml", "No such file or directory"), (".", "Is a directory")])
def test_a_kernel_build_refuses_a_task_it_cannot_read_before_compiling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      task: str, reason: str) -> None:
    """`build --task missing.yml k.cu` built the kernel and exited 0, the --task never read (a kernel's API header
    decides its problem), where check and bench refuse it: one line, exit 2, and nothing compiled."""
    (tmp_path / "k.cu").write_text(GEMV_KERNEL)
    compiled: list[Path] = []
    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", lambda source, *args, **kwargs: compiled.append(source))
    result, said = _build(tmp_path, monkeypatch, "--task", task, "k.cu", "--arch", "sm_100a")
    assert result.exit_code == 2, said
    assert result.output == f"error: {task}: cannot read the task file ({reason})\n", said
    assert compiled == []


def test_a_kernel_build_refuses_an_nvfp4ctl_task_it_cannot_read_as_it_refuses_a_task_flag(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`NVFP4CTL_TASK=missing.yml build k.cu` built the kernel and exited 0, where `--task missing.yml` and check
    with the same setting refuse it: one line naming the setting, exit 2, and nothing compiled."""
    (tmp_path / "k.cu").write_text(GEMV_KERNEL)
    compiled: list[Path] = []
    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", lambda source, *args, **kwargs: compiled.append(source))
    monkeypatch.setenv("NVFP4CTL_TASK", "missing.yml")
    result, said = _build(tmp_path, monkeypatch, "k.cu", "--arch", "sm_100a")
    assert result.exit_code == 2, said
    assert result.output == "error: NVFP4CTL_TASK=missing.yml: cannot read the task file (No such file or directory)\n", said
    assert compiled == []


@pytest.mark.parametrize("args, reason", [
    ((), " [in kernels/ (beside task.yml)]"),  # the folder's reason, said of the file in it
    (("kernels/sm100/my_gemv.cu",), ""),  # a SOURCE typed: no reason, as before
])
def test_a_kernel_build_logs_the_problem_its_api_header_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              args: tuple[str, ...], reason: str) -> None:
    """After `init --problem nvfp4_gemv`, a kernel in kernels/sm100/ that includes nvfp4_gemv_api.h: its
    build's line had no problem cell, where a submission's has `nvfp4_gemv`, and bare build gave the file
    the folder's reason, [beside task.yml]."""
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemv", "k1"]).exit_code == 0
    kernel = tmp_path / "k1" / "kernels" / "sm100" / "my_gemv.cu"
    kernel.parent.mkdir(parents=True)
    kernel.write_text(GEMV_KERNEL)
    _no_compile(monkeypatch, tmp_path)
    result, said = _build(tmp_path / "k1", monkeypatch, *args)
    assert result.exit_code == 0, said
    logged = _logged()
    assert logged.problem == "nvfp4_gemv", logged
    assert "kernels/sm100/my_gemv.cu@" in logged.target and logged.target.endswith(f"@{runlog.file_digest(kernel)}{reason}"), logged


@pytest.mark.parametrize("kernels, args", [
    (("sm100/my_gemv.cu",), ()),  # kernels/ holds one kernel
    (("sm90/other.cu", "sm100/my_gemv.cu"), ("--arch", "sm_100a")),  # one of them for the arch asked
])
def test_a_bare_build_of_one_kernel_logs_that_kernel_built_or_interrupted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernels: tuple[str, ...], args: tuple[str, ...]) -> None:
    """A bare build of one kernel logged that kernel once built, but the kernels/ folder where Ctrl-C stopped its
    compile (each chose its own way): the kernel, with the folder it lies in as its reason, both times."""
    folder = _folder(tmp_path / "gemv", "nvfp4_gemv")
    for name in kernels:
        (folder / "kernels" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "kernels" / name).write_text(GEMV_KERNEL)
    kernel = folder / "kernels" / "sm100" / "my_gemv.cu"
    _no_compile(monkeypatch, tmp_path)
    result, said = _build(folder, monkeypatch, *args)
    assert result.exit_code == 0, said
    built = _logged().target
    assert built.endswith(f"/gemv/kernels/sm100/my_gemv.cu@{runlog.file_digest(kernel)} [in kernels/ (beside task.yml)]"), built

    def interrupted(source: Path, arch: str, verbose: bool = False) -> BuildReport:
        raise KeyboardInterrupt

    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", interrupted)
    result, said = _build(folder, monkeypatch, *args)
    assert result.exit_code == ExitCode.INTERRUPTED, said
    assert (_logged().result, _logged().target) == ("interrupted", built), _logged()


def test_a_kernel_build_that_fails_still_logs_its_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A GEMV kernel whose build spills (exit 1): the run log's problem cell held the spill's message, the last
    of the report's problems, where it names nvfp4_gemv as for a clean build."""
    folder = _folder(tmp_path / "gemv", "nvfp4_gemv")
    kernel = folder / "kernels" / "sm100" / "my_gemv.cu"
    kernel.parent.mkdir(parents=True)
    kernel.write_text(GEMV_KERNEL)
    no_op = TensorOpCheck(expected="UTCOMMA.4X", found=(), match=None, checked=True, declared_none=True)
    spilling = FunctionUsage(name="_Z1kv", entry=True, registers=255, spill_stores=64, spill_loads=64)
    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", lambda source, arch, verbose=False: BuildReport(
        source=source, arch=arch, key="k", entry=tmp_path, module_name=None, functions=(spilling,), tensor_op=no_op,
        compile_s=0.0))
    result, said = _build(folder, monkeypatch, "kernels/sm100/my_gemv.cu")
    assert result.exit_code == 1 and "register spills in" in said, said
    assert _logged().problem == "nvfp4_gemv", _logged()


def test_kernels_of_several_problems_log_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cell holds one problem: a GEMV kernel beside one that includes no API header (the GEMM's) names
    neither, and the folder keeps its own reason."""
    folder = _folder(tmp_path / "gemv", "nvfp4_gemv")
    (folder / "kernels" / "sm100").mkdir(parents=True)
    (folder / "kernels" / "sm100" / "a.cu").write_text(GEMV_KERNEL)
    (folder / "kernels" / "sm100" / "b.cu").write_text("// nvfp4ctl: no-tensor-op\n__global__ void k() {}\n")
    _no_compile(monkeypatch, tmp_path)
    result, said = _build(folder, monkeypatch)
    assert result.exit_code == 0, said
    logged = _logged()
    assert logged.problem == "" and logged.target == "kernels [beside task.yml]", logged


def test_lint_with_task_says_the_submission_here_is_not_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _folder(tmp_path / "gemv", "nvfp4_gemv")
    _folder(tmp_path / "own", None)
    monkeypatch.chdir(tmp_path / "own")
    result = CliRunner().invoke(app, ["lint", "--task", "../gemv/task.yml"])
    said = " ".join(result.output.split())
    gemv = tmp_path.resolve() / "gemv"
    assert f"warning: submission.py here is not checked (lint reads {gemv}, the task's folder);" in said, said
    assert "`nvfp4ctl lint submission.py` checks it" in said
    monkeypatch.chdir(tmp_path / "gemv")  # the task's own folder: nothing to say
    assert "not checked" not in CliRunner().invoke(app, ["lint"]).output


def test_quiet_keeps_a_result_line(tmp_path: Path, ffma: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`build -q submission.py` printed the compile-budget sentence alone, where a .cu build's -q keeps
    "1 kernel built (sm_100a), 0 B of spills": the units built, their spills and tensor op."""
    gemv = _folder(tmp_path / "gemv", "nvfp4_gemv")
    result, _ = _build(gemv, monkeypatch, "-q", "submission.py")
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("1 unit built for sm_100a in "), result.output
    assert last.endswith(", 0 B of spills, tensor op none (not needed)"), result.output
    assert "build ·" not in result.output  # the header is progress: -q drops it
    assert _logged().result == last


@pytest.mark.parametrize("kernel, first_line", [
    ("nvfp4_gemv_naive.cu", "build · nvfp4_gemv (it includes nvfp4_gemv_api.h) · target mine.cu (given)"),
    (None, "build · nvfp4_gemm (it includes no problem's API header: the GEMM's C ABI calls it) · target mine.cu (given)"),
])
def test_a_kernel_source_names_the_problem_it_is_built_for_and_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   kernel: str | None, first_line: str) -> None:
    """`build mine.cu` judged the GEMV's kernel as the GEMV (its missing tensor-core op a note) and said nothing
    of it before the table; the first line names the problem and the API header that decided, as check's does."""
    folder = tmp_path / "own"
    folder.mkdir()
    naive = kernels_dir() / "naive"
    code = (naive / kernel).read_text() if kernel else "// nvfp4ctl: no-tensor-op\n__global__ void k() {}\n"
    (folder / "mine.cu").write_text(code)
    (folder / "naive_decode.cuh").write_text((naive / "naive_decode.cuh").read_text())
    no_op = TensorOpCheck(expected="UTCOMMA.4X", found=(), match=None, checked=True, declared_none=True)
    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", lambda source, arch, verbose=False: BuildReport(
        source=source, arch=arch, key="k", entry=tmp_path, module_name=None, functions=(), tensor_op=no_op,
        compile_s=0.0))
    result, said = _build(folder, monkeypatch, "--arch", "sm_100a", "mine.cu")
    assert result.exit_code == 0, said
    assert said.startswith(first_line) or f" {first_line} " in said, said
    quiet, _ = _build(folder, monkeypatch, "-q", "--arch", "sm_100a", "mine.cu")
    assert "build ·" not in quiet.output  # the header is progress: -q drops it


def test_several_kernel_sources_each_name_the_problem_they_are_built_for(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`build gemv.cu gemm.cu` printed no first line at all, where `build gemv.cu` names its problem and the
    API header that decided: several kernels may each be another problem's, so each gets its own line."""
    folder = tmp_path / "own"
    folder.mkdir()
    naive = kernels_dir() / "naive"
    (folder / "gemv.cu").write_text((naive / "nvfp4_gemv_naive.cu").read_text())
    (folder / "naive_decode.cuh").write_text((naive / "naive_decode.cuh").read_text())
    (folder / "gemm.cu").write_text("// nvfp4ctl: no-tensor-op\n__global__ void k() {}\n")
    no_op = TensorOpCheck(expected="UTCOMMA.4X", found=(), match=None, checked=True, declared_none=True)
    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", lambda source, arch, verbose=False: BuildReport(
        source=source, arch=arch, key="k", entry=tmp_path, module_name=None, functions=(), tensor_op=no_op,
        compile_s=0.0))
    result, _ = _build(folder, monkeypatch, "--arch", "sm_100a", "gemv.cu", "gemm.cu")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("build ·")]
    assert lines == ["build · nvfp4_gemv (it includes nvfp4_gemv_api.h) · target gemv.cu (given)",
                     "build · nvfp4_gemm (it includes no problem's API header: the GEMM's C ABI calls it) · target"
                     " gemm.cu (given)"], result.output


def test_a_kernel_sources_problem_is_read_once_for_its_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run log's problem, the first line, the tensor-op judgement and its note each read the kernel and its
    headers again for its problem: four reads for one build."""
    from nvfp4ctl.build import sources

    folder = tmp_path / "own"
    folder.mkdir()
    naive = kernels_dir() / "naive"
    (folder / "gemv.cu").write_text((naive / "nvfp4_gemv_naive.cu").read_text())
    (folder / "naive_decode.cuh").write_text((naive / "naive_decode.cuh").read_text())
    no_op = TensorOpCheck(expected="UTCOMMA.4X", found=(), match=None, checked=True)
    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", lambda source, arch, verbose=False: BuildReport(
        source=source, arch=arch, key="k", entry=tmp_path, module_name=None, functions=(), tensor_op=no_op,
        compile_s=0.0))
    reads: list[Path] = []
    read = sources.kernel_problem
    monkeypatch.setattr(sources, "kernel_problem", lambda kernel: reads.append(kernel) or read(kernel))
    result, said = _build(folder, monkeypatch, "--arch", "sm_100a", "gemv.cu")
    assert result.exit_code == 0, said
    assert "build · nvfp4_gemv (it includes nvfp4_gemv_api.h)" in said and NONE_NEEDED in said, said
    assert reads == [(folder / "gemv.cu").resolve()], reads


def test_a_kernels_folder_without_sm90_or_sm100_falls_back_to_the_submission(tmp_path: Path, ffma: list[str],
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A problem folder whose kernels/ holds its kernel directly (kernels/my_gemv.cu), as a copy of
    kernels/naive lays it out: bare build said `no kernels to build in .../kernels/sm90 or sm100` (exit 2) where
    the documented rule falls back to the submission check would run. It builds that, saying why and how to
    build the kernel left out."""
    folder = _folder(tmp_path / "gemv", "nvfp4_gemv")
    (folder / "kernels").mkdir()
    (folder / "kernels" / "my_gemv.cu").write_text(GEMV_KERNEL)
    result, said = _build(folder, monkeypatch)
    assert result.exit_code == 0, said
    assert "build · nvfp4_gemv · target submission.py" in said, said
    assert ("note: kernels/ holds no kernel in sm90/ or sm100/, which a bare build builds: building the submission;"
            " 1 kernel in kernels/ itself (my_gemv.cu): `nvfp4ctl build kernels/my_gemv.cu` builds it") in said, said
    assert ffma, said  # the submission's CUDA was compiled
    assert "/gemv/submission.py@" in _logged().target


def test_a_kernels_folder_without_sm90_or_sm100_and_no_submission_names_the_kernels_in_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "gemv"
    (folder / "kernels").mkdir(parents=True)
    (folder / "kernels" / "my_gemv.cu").write_text(GEMV_KERNEL)
    result, said = _build(folder, monkeypatch)
    assert result.exit_code == 2, said
    kernels = folder.resolve() / "kernels"
    assert (f"error: no kernels to build in {kernels}/sm90 or sm100 ({kernels} itself holds my_gemv.cu: name it);"
            " pass a SOURCE") in said, said


GEMM_EXPORT_HEADER = ('"""GPU MODE nvfp4_gemm submission: k.cu for sm_100a, exported by `nvfp4ctl export` (kernel hash'
                      ' 0123456789ab: source and local headers).\n"""\n')


def test_a_linked_export_of_another_problem_is_built_as_its_own_and_said_as_lint_says_it(
        tmp_path: Path, ffma: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`cd gemv && ln -s ../gemm/submission.py sub_link.py && build sub_link.py` of a GEMM export: the header said
    `build · nvfp4_gemv`, nothing warned, and the run log's line named nvfp4_gemv, where lint warns the file is
    checked as nvfp4_gemm (its export header) and it builds the nvfp4_gemm extension."""
    gemm = _folder(tmp_path / "gemm", "nvfp4_gemm")
    (gemm / "submission.py").write_text(GEMM_EXPORT_HEADER + SUB_CUDA)
    gemv = _folder(tmp_path / "gemv", "nvfp4_gemv")
    (gemv / "sub_link.py").symlink_to("../gemm/submission.py")
    said_by_lint = ("warning: sub_link.py: checked as nvfp4_gemm (its nvfp4ctl export header), not as the task's"
                    " nvfp4_gemv")
    monkeypatch.chdir(gemv)
    assert said_by_lint in " ".join(CliRunner().invoke(app, ["lint", "sub_link.py"]).output.split())
    result, said = _build(gemv, monkeypatch, "sub_link.py")
    assert "build · nvfp4_gemm · target sub_link.py (given) · task task.yml" in said, said
    assert said_by_lint in said and NONE_NEEDED not in said, said
    assert result.exit_code == 1 and "no UTCOMMA.4X" in said, said  # judged as the GEMM: its tensor op is missing
    assert _logged().problem == "nvfp4_gemm"


def test_kernels_given_from_several_folders_log_the_folder_holding_them_all(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`build ../dual/kernels/a.cu ../gemv/kernels/b.cu` from gemm/ logged `kernels`, gemm's own folder, which
    nothing was built from; from a folder with no kernels/ it logged the first kernel's folder, which holds
    only one of them."""
    for folder, problem in (("gemm", "nvfp4_gemm"), ("dual", "nvfp4_dual_gemm"), ("gemv", "nvfp4_gemv")):
        kernel = _folder(tmp_path / folder, problem) / "kernels" / "sm100" / f"{folder}.cu"
        kernel.parent.mkdir(parents=True)
        kernel.write_text("// nvfp4ctl: no-tensor-op\n__global__ void k() {}\n")
    _no_compile(monkeypatch, tmp_path)
    # a folder is logged relative to the user's folder where it lies in it, as a bare build's kernels/ is
    for here, above, logged in ((tmp_path / "gemm", "../", str(tmp_path.resolve())), (tmp_path, "", ".")):
        result, said = _build(here, monkeypatch, "--arch", "sm_100a", f"{above}dual/kernels/sm100/dual.cu",
                              f"{above}gemv/kernels/sm100/gemv.cu")
        assert result.exit_code == 0, said
        assert _logged().target == logged, _logged()
    (tmp_path / "gemv" / "kernels" / "sm100" / "two.cu").write_text("// nvfp4ctl: no-tensor-op\n__global__ void k() {}\n")
    result, said = _build(tmp_path / "gemm", monkeypatch, "--arch", "sm_100a", "../gemv/kernels/sm100/gemv.cu",
                          "../gemv/kernels/sm100/two.cu")
    assert result.exit_code == 0, said
    assert _logged().target == str(tmp_path.resolve() / "gemv" / "kernels" / "sm100"), _logged()


def test_an_interrupted_build_of_kernels_from_several_folders_logs_the_folder_holding_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only one kernel given was noted before the compiles: Ctrl-C during several logged no target at all."""
    for folder in ("dual", "gemv"):
        kernel = tmp_path / folder / "kernels" / f"{folder}.cu"
        kernel.parent.mkdir(parents=True)
        kernel.write_text("// nvfp4ctl: no-tensor-op\n__global__ void k() {}\n")

    def interrupted(source: Path, arch: str, verbose: bool = False) -> BuildReport:
        raise KeyboardInterrupt

    monkeypatch.setattr("nvfp4ctl.build.builder.build_kernel", interrupted)
    result, said = _build(tmp_path, monkeypatch, "--arch", "sm_100a", "dual/kernels/dual.cu", "gemv/kernels/gemv.cu")
    assert result.exit_code != 0, said
    assert _logged().target == ".", _logged()
