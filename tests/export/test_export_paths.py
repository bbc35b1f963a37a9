"""`export --kernel PATH` says what is wrong with the path given, refuses what is no kernel source
before writing anything, and refuses a kernel for another problem than the folder's task."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.problems.base import PROBLEMS_DIR
from nvfp4ctl.project import kernels_dir

DUAL_GEMM = kernels_dir() / "naive" / "nvfp4_dual_gemm_naive.cu"
runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())  # the console wraps long lines at the terminal's width


@pytest.mark.parametrize("name, message", [
    ("nothere.cu", "error: no such file: {path}"),
    ("folder", "error: {path} is a folder, not a kernel source"),
    ("config.cuh", "error: {path} is not a kernel source: a kernel is a .cu file; headers are compiled as part of"
                   " the kernel that includes them"),
])
def test_a_kernel_path_that_is_no_kernel_source_writes_nothing(tmp_path: Path, name: str, message: str) -> None:
    path = tmp_path / name
    if name == "folder":
        path.mkdir()
    elif name.endswith(".cuh"):
        path.write_text("#pragma once\nconstexpr int kTile = 128;\n")
    output = tmp_path / "d.py"
    result = runner.invoke(app, ["export", "--kernel", str(path), "-o", str(output)])
    assert result.exit_code == 2
    assert _flat(result.output).startswith(message.format(path=path))
    assert "pass --kernel" not in result.output and not output.exists()


GEMM_TC = kernels_dir() / "sm100" / "nvfp4_gemm_sm100_tc.cu"


def test_a_kernel_for_another_problem_than_the_task_is_refused_as_check_refuses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its custom_kernel reads the kernel's problem's tuple: it fails every test on the task's leaderboard.
    export wrote it with a warning (exit 0) where check refused the same mix (exit 2)."""
    for problem in ("nvfp4_gemm", "nvfp4_dual_gemm"):
        folder = tmp_path / problem
        assert runner.invoke(app, ["init", "--problem", problem, str(folder)]).exit_code == 0
        monkeypatch.chdir(folder)
        result = runner.invoke(app, ["export", "--kernel", str(DUAL_GEMM), "-o", "dual.py"])
        assert result.exit_code == (2 if problem == "nvfp4_gemm" else 0), result.output
        assert (folder / "dual.py").is_file() == (problem == "nvfp4_dual_gemm")
    monkeypatch.chdir(tmp_path / "nvfp4_dual_gemm")
    exported = runner.invoke(app, ["export", "--kernel", str(GEMM_TC), "-o", "gemm.py"])
    checked = runner.invoke(app, ["check", "--kernel", str(GEMM_TC)])
    refusal = (f"error: --kernel {GEMM_TC} is an nvfp4_gemm kernel (it includes nvfp4_gemm_api.h), but task.yml is"
               " for nvfp4_dual_gemm: pass --task with an nvfp4_gemm task.yml")
    assert exported.exit_code == checked.exit_code == 2, exported.output
    assert _flat(exported.output) == _flat(checked.output) == refusal
    assert not (tmp_path / "nvfp4_dual_gemm" / "gemm.py").exists()
    # --task names the problem the export is for, as it does for check
    gemm_task = str(tmp_path / "nvfp4_gemm" / "task.yml")
    result = runner.invoke(app, ["export", "--kernel", str(GEMM_TC), "-o", "gemm.py", "--task", gemm_task])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "nvfp4_dual_gemm" / "gemm.py").is_file()


def test_a_kernel_without_an_api_header_is_refused_for_another_problem(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "dual"
    assert runner.invoke(app, ["init", "--problem", "nvfp4_dual_gemm", str(folder)]).exit_code == 0
    monkeypatch.chdir(folder)
    kernel = folder / "bare.cu"
    kernel.write_text("// nvfp4ctl: arch=sm_100a\n__global__ void k() {}\n")
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", "bare.py"])
    assert result.exit_code == 2, result.output
    # the reason as check's and build's first lines give it (targets.kernel_because), where it stopped at "header"
    assert _flat(result.output) == (f"error: --kernel {kernel} is an nvfp4_gemm kernel (it includes no problem's API"
                                    " header: the GEMM's C ABI calls it), but task.yml is for nvfp4_dual_gemm: pass"
                                    " --task with an nvfp4_gemm task.yml")
    assert not (folder / "bare.py").exists()


def _user_folder(folder: Path, problem: str, sm100_kernels: dict[str, str]) -> Path:
    """`nvfp4ctl init --problem PROBLEM` in `folder`, with these kernels in its kernels/sm100/."""
    assert runner.invoke(app, ["init", "--problem", problem, str(folder)]).exit_code == 0
    (folder / "kernels" / "sm100").mkdir(parents=True)
    for name, text in sm100_kernels.items():
        (folder / "kernels" / "sm100" / name).write_text(text)
    return folder


def test_a_default_kernel_for_another_problem_is_refused_naming_the_file_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No --kernel typed: the refusal read "--kernel PATH is ...", as if the user had given one."""
    folder = _user_folder(tmp_path / "gemm", "nvfp4_gemm", {"nvfp4_gemm_sm100_tc.cu": DUAL_GEMM.read_text()})
    monkeypatch.chdir(folder)
    result = runner.invoke(app, ["export", "-o", "gemm.py"])
    assert result.exit_code == 2, result.output
    assert _flat(result.output) == (
        "error: kernels/sm100/nvfp4_gemm_sm100_tc.cu (export's default for nvfp4_gemm, no --kernel given) is an"
        " nvfp4_dual_gemm kernel (it includes nvfp4_dual_gemm_api.h), but task.yml is for nvfp4_gemm: pass --kernel"
        " PATH with an nvfp4_gemm kernel, or --task with an nvfp4_dual_gemm task.yml")
    assert not (folder / "gemm.py").exists()


def test_a_problem_without_a_shipped_b200_kernel_says_what_the_default_is_and_names_the_naive_kernel(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a folder with a kernels/ of its own, the message read as if that folder were ignored; then it said
    neither what the default is per problem nor that nvfp4ctl's plain-CUDA kernel for the problem is there."""
    folder = _user_folder(tmp_path / "dual", "nvfp4_dual_gemm",
                          {"my_dual.cu": DUAL_GEMM.read_text(), "other.cu": "__global__ void k() {}\n"})
    monkeypatch.chdir(folder)
    naive = f"or nvfp4ctl's plain-CUDA kernel: --kernel {DUAL_GEMM} --arch sm_100a"
    default = "export's default is kernels/sm100/nvfp4_gemm_sm100_tc.cu for nvfp4_gemm, none for the others"
    result = runner.invoke(app, ["export", "-o", "dual.py"])
    assert result.exit_code == 2, result.output
    assert _flat(result.output) == (
        f"error: no default kernel for nvfp4_dual_gemm: {default}, taken from kernels/ (yours) or nvfp4ctl's own"
        f" kernels; pass --kernel PATH (nvfp4_dual_gemm kernels there: kernels/sm100/my_dual.cu), {naive},"
        " or --kernel default for nvfp4ctl's exact plain-torch submission")
    assert not (folder / "dual.py").exists()


def test_kernel_default_without_a_shipped_b200_kernel_exports_the_plain_torch_submission(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README says `--kernel default` is the exact plain-torch submission where nvfp4ctl has no kernel
    for a problem, and check runs it; export was exit 2, "nvfp4ctl ships no B200 kernel for nvfp4_dual_gemm"."""
    folder = _user_folder(tmp_path / "dual", "nvfp4_dual_gemm", {"my_dual.cu": DUAL_GEMM.read_text()})
    monkeypatch.chdir(folder)
    starter = DUAL_GEMM.parent.parent / "torch_dequant" / "nvfp4_dual_gemm_submission.py"  # nvfp4ctl's kernels/
    result = runner.invoke(app, ["export", "--kernel", "default", "-o", "dual.py"])
    assert result.exit_code == 0, result.output
    assert _flat(result.output).startswith(
        "wrote dual.py (3.6 KiB): nvfp4_dual_gemm_submission.py, nvfp4ctl's exact plain-torch submission for"
        " nvfp4_dual_gemm (nvfp4ctl ships no B200 kernel for it) next: nvfp4ctl lint dual.py")
    first, body = (folder / "dual.py").read_text().split("\n", 1)
    assert "exported by `nvfp4ctl export`" in first and body == starter.read_text()
    again = runner.invoke(app, ["export", "--kernel", "default", "-o", "dual.py", "--arch", "sm_100a"])
    assert again.exit_code == 0, again.output  # an export of its own: replaced without --force
    assert "--arch sm_100a is not used: the plain-torch submission holds no CUDA to compile" in _flat(again.output)
    (folder / "mine.py").write_text("def custom_kernel(data):\n    return data[-1]\n")
    refused = runner.invoke(app, ["export", "--kernel", "default", "-o", "mine.py"])
    assert refused.exit_code == 2 and "mine.py is not an earlier export" in _flat(refused.output)


def test_no_kernels_folder_names_the_naive_kernel_of_the_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "task.yml").write_text((PROBLEMS_DIR / "nvfp4_gemv" / "task.yml").read_text())
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["export", "-o", "gemv.py"])
    assert result.exit_code == 2, result.output
    naive = kernels_dir() / "naive" / "nvfp4_gemv_naive.cu"
    assert _flat(result.output) == ("error: no kernel to export here (no kernels/ folder): pass --kernel PATH, or"
                                    f" nvfp4ctl's plain-CUDA kernel: --kernel {naive} --arch sm_100a, or --kernel"
                                    " default for nvfp4ctl's exact plain-torch submission")


def test_a_kernel_of_unknown_arch_is_told_to_pass_arch_which_export_takes(tmp_path: Path) -> None:
    kernel = tmp_path / "mine.cu"
    kernel.write_text("__global__ void k() {}\n")  # not under sm90/ or sm100/, no arch line
    output = tmp_path / "d.py"
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "-o", str(output)])
    assert result.exit_code == 2 and not output.exists()
    said = _flat(result.output)
    assert said.startswith(f"error: cannot tell which arch {kernel} is for: put it under sm90/ or sm100/, add a line")
    assert said.endswith("or pass --arch sm_90a or --arch sm_100a")  # the values, as build names them
    result = runner.invoke(app, ["export", "--kernel", str(kernel), "--arch", "sm_100a", "-o", str(output)])
    assert result.exit_code == 0, result.output
    assert "for sm_100a" in output.read_text().splitlines()[0]


HGMMA_PROBE = Path(__file__).parents[1] / "build" / "fixtures" / "hgmma_probe.cu"


@pytest.mark.parametrize("output, role", [
    ("task.yml", "the task file in use"),
    ("MEMORY.md", "the run log"),
    ("$NVFP4CTL_MEMORY", "the run log"),
    ("kernels/sm90/probe.cu", "the kernel being exported"),
    ("kernels/../kernels/sm90/probe.cu", "the kernel being exported"),
    ("kernels/sm90/tile.cuh", "a header this export embeds"),
    ("link.cuh", "a header this export embeds"),
])
def test_export_never_writes_over_the_task_the_run_log_or_its_own_inputs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str, role: str) -> None:
    """--force replaced task.yml, MEMORY.md or the kernel being exported with Python code, without a word."""
    folder = tmp_path / "project"
    assert runner.invoke(app, ["init", "--problem", "nvfp4_gemm", str(folder)]).exit_code == 0
    monkeypatch.chdir(folder)
    kernels = folder / "kernels" / "sm90"
    kernels.mkdir(parents=True)
    (kernels / "tile.cuh").write_text("#pragma once\nconstexpr int kTile = 128;\n")
    (kernels / "probe.cu").write_text(HGMMA_PROBE.read_text().replace('#include "nvfp4_gemm_api.h"',
                                                                        '#include "nvfp4_gemm_api.h"\n#include "tile.cuh"'))
    (folder / "link.cuh").symlink_to(kernels / "tile.cuh")
    if output == "MEMORY.md":
        monkeypatch.delenv("NVFP4CTL_MEMORY")  # the run log beside the task file
    elif output == "$NVFP4CTL_MEMORY":
        output = str(tmp_path / "notes.md")
        (tmp_path / "notes.md").write_text("# notes\n")
        monkeypatch.setenv("NVFP4CTL_MEMORY", output)
    run_log = Path(os.environ.get("NVFP4CTL_MEMORY") or folder / "MEMORY.md")
    before = {path: path.read_bytes() for path in [*folder.rglob("*"), run_log] if path.is_file()}
    result = runner.invoke(app, ["export", "--kernel", "kernels/sm90/probe.cu", "-o", output, "--force"])
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: -o {output} is {role}: export never writes over it, not even with --force;"
                             " nothing was written (-o another path)\n")
    for path, text in before.items():  # the run log gains the refusal's line, below what it held
        assert path.read_bytes() == text or (path == run_log and path.read_bytes().startswith(text)), path


def test_a_task_file_that_cannot_be_read_is_not_taken_for_the_gemms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its problem picks the kernel: read as no task, a GEMV folder's broken task.yml got the GEMM's kernel
    exported into it without a word. With --kernel PATH the kernel is exported as it is, and a warning
    says its problem went unchecked."""
    folder = tmp_path / "gemv"
    assert runner.invoke(app, ["init", "--problem", "nvfp4_gemv", str(folder)]).exit_code == 0
    (folder / "task.yml").write_text("")
    monkeypatch.chdir(folder)
    for args in (["--kernel", "default"], []):
        result = runner.invoke(app, ["export", "-o", "out.py", *args])
        assert result.exit_code == 2, result.output
        assert _flat(result.output) == ("error: task.yml: expected a mapping with tests and benchmarks, got an empty"
                                        " file; export picks its kernel by the task's problem: fix the task file, or"
                                        " pass --task PATH or --kernel PATH")
        assert not (folder / "out.py").exists()
    result = runner.invoke(app, ["export", "-o", "out.py", "--kernel", str(GEMM_TC)])
    assert result.exit_code == 0, result.output
    assert "the kernel's problem is not checked against the task" in _flat(result.output)


def test_a_plain_torch_export_keeps_the_shebang_line_put_above_the_earlier_one(tmp_path: Path) -> None:
    """It wrote its text over the file whole: the user's `#!` line above the earlier export was gone, and then the
    byte order mark before that line."""
    from nvfp4ctl.export import export_plain_torch

    starter = DUAL_GEMM.parent.parent / "torch_dequant" / "nvfp4_dual_gemm_submission.py"
    output = tmp_path / "dual.py"
    written = export_plain_torch(starter, output, "nvfp4_dual_gemm")
    output.write_text("\ufeff#!/usr/bin/env python3\n" + written, encoding="utf-8")
    assert export_plain_torch(starter, output, "nvfp4_dual_gemm") == "\ufeff#!/usr/bin/env python3\n" + written
    assert output.read_text(encoding="utf-8") == "\ufeff#!/usr/bin/env python3\n" + written


def _next_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("next: "))


@pytest.mark.parametrize("name, pasted", [("sp ace.py", "'sp ace.py'"), ("-x.py", "./-x.py"),
                                          ("it's.py", "'it'\"'\"'s.py'")])
def test_the_next_line_can_be_pasted_into_a_shell_whatever_the_output_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, pasted: str) -> None:
    """`-o 'sp ace.py'` said `nvfp4ctl lint sp ace.py && ...`: two files for the shell, neither the export."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["export", "--kernel", "default", "-o", name])
    assert result.exit_code == 0, result.output
    assert _next_line(result.output) == f"next: nvfp4ctl lint {pasted} && nvfp4ctl check --submission {pasted}"
    # the plain-torch export (no B200 kernel shipped for the problem) says it the same way
    folder = _user_folder(tmp_path / "dual", "nvfp4_dual_gemm", {})
    monkeypatch.chdir(folder)
    plain = runner.invoke(app, ["export", "--kernel", "default", "-o", name])
    assert plain.exit_code == 0, plain.output
    assert _next_line(plain.output) == _next_line(result.output)


def test_kernel_default_with_arch_sm_90a_exports_the_h100_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It wrote the sm_100a tcgen05 kernel "for sm_90a", exit 0, which traps on every call on an H100, with a
    warning that called it an sm_90a kernel."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["export", "--kernel", "default", "--arch", "sm_90a", "-o", "h100.py"])
    assert result.exit_code == 0, result.output
    said = _flat(result.output)
    assert "wrote h100.py" in said and "nvfp4_gemm_sm90.cu for sm_90a" in said
    assert ("warning: nvfp4_gemm_sm90.cu is an sm_90a kernel: the B200 leaderboard needs sm_100a; for the"
            " leaderboard, export a kernel written for sm_100a") in said
    assert "nvfp4_gemm_sm90.cu for sm_90a" in (tmp_path / "h100.py").read_text().splitlines()[0]


def test_a_kernel_written_for_another_arch_than_arch_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["export", "--kernel", str(GEMM_TC), "--arch", "sm_90a", "-o", "tc.py"])
    assert result.exit_code == 2 and not (tmp_path / "tc.py").exists()
    assert _flat(result.output) == ("error: nvfp4_gemm_sm100_tc.cu is an sm_100a kernel (its sm100/ folder), not one"
                                    " for --arch sm_90a: its tcgen05 / SM100 instructions would not run there; pass"
                                    " --arch sm_100a or a kernel written for sm_90a; nothing was written")


def test_a_link_to_a_kernel_is_judged_by_the_file_it_links_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build compiles the file linked to, so its folder says the arch: a link outside sm90/ to the H100
    kernel was exported for sm_100a (exit 0), an sm_90a kernel that traps on every call on a B200, where the
    file itself was refused."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.chdir(tmp_path)
    h100 = kernels_dir() / "sm90" / "nvfp4_gemm_sm90.cu"
    link = tmp_path / "mk" / "h100.cu"
    link.parent.mkdir()
    link.symlink_to(h100)
    result = runner.invoke(app, ["export", "--kernel", str(link), "--arch", "sm_100a", "-o", "h2.py"])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "h2.py").exists()
    assert _flat(result.output).startswith("error: h100.cu is an sm_90a kernel (its sm90/ folder, as h100.cu links"
                                           f" to {h100}), not one for --arch sm_100a")
    # with no --arch it is exported for the arch it is written for, and said to be an sm_90a kernel
    result = runner.invoke(app, ["export", "--kernel", str(link), "-o", "h1.py"])
    assert result.exit_code == 0, result.output
    assert "warning: h100.cu is an sm_90a kernel: the B200 leaderboard needs sm_100a" in _flat(result.output)


def test_export_where_no_task_yml_of_the_users_is_in_use_writes_submission_py_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no -o and no task.yml of the user's, export crashed (AttributeError, exit 1, logged as an internal
    error) where it writes ./submission.py; a kernel of theirs named by path likewise."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.chdir(tmp_path)
    for kernel in ("default", str(kernels_dir() / "naive" / "nvfp4_dual_gemm_naive.cu")):
        (tmp_path / "submission.py").unlink(missing_ok=True)
        result = runner.invoke(app, ["export", "--kernel", kernel, "--arch", "sm_100a"])
        assert result.exit_code == 0, result.output
        assert (tmp_path / "submission.py").is_file() and "wrote submission.py (" in _flat(result.output)
        assert "the task's submission" not in result.output


def test_export_from_a_subfolder_writes_the_submission_check_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cd kernels && nvfp4ctl export` wrote kernels/submission.py, which check and bench never run: they take the
    submission.py beside task.yml (or task.yml's `submission:`). An explicit -o is written where it says."""
    folder = tmp_path / "gemm"
    assert runner.invoke(app, ["init", "--problem", "nvfp4_gemm", str(folder)]).exit_code == 0
    (folder / "submission.py").unlink()  # init's starter, the user's own file, which export does not replace
    task_file = folder / "task.yml"
    task_file.write_text(task_file.read_text().replace("submission: submission.py\n", ""))
    (folder / "kernels").mkdir()
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.chdir(folder / "kernels")
    result = runner.invoke(app, ["export", "--kernel", "default"])
    assert result.exit_code == 0, result.output
    assert (folder / "submission.py").is_file() and not (folder / "kernels" / "submission.py").exists()
    said = _flat(result.output)
    assert "wrote ../submission.py (" in said and ("../submission.py is the task's submission (beside"
                                                            " ../task.yml), the file check and bench run") in said
    assert "nvfp4ctl check --submission ../submission.py" in said
    # task.yml's `submission:` names the file check runs, and so the one export writes
    with task_file.open("a") as task:
        task.write("submission: out/mine.py\n")
    (folder / "out").mkdir()
    result = runner.invoke(app, ["export", "--kernel", "default"])
    assert result.exit_code == 0, result.output
    assert (folder / "out" / "mine.py").is_file()
    assert "../out/mine.py is the task's submission (../task.yml's `submission:`)" in _flat(result.output)
    result = runner.invoke(app, ["export", "--kernel", "default", "-o", "here.py"])
    assert result.exit_code == 0 and (folder / "kernels" / "here.py").is_file(), result.output
    assert "the task's submission" not in result.output


def test_a_kernel_under_a_task_yml_of_its_own_is_exported_as_that_tasks_submission(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a folder with no task.yml, `export --kernel dual/kernels/k.cu` wrote ./submission.py, logged to dual/MEMORY.md,
    and its next line checked that copy on nvfp4ctl's shipped task, while check --kernel runs the kernel on
    dual/task.yml: it writes dual's submission, the file check and bench run there, and says so. -o is obeyed."""
    folder = tmp_path / "dual"
    assert runner.invoke(app, ["init", "--problem", "nvfp4_dual_gemm", str(folder)]).exit_code == 0
    (folder / "submission.py").unlink()  # init's starter, the user's own file, which export does not replace
    (folder / "kernels").mkdir()
    for source in (DUAL_GEMM, DUAL_GEMM.parent / "naive_decode.cuh"):
        (folder / "kernels" / source.name).write_text(source.read_text())
    monkeypatch.delenv("NVFP4CTL_MEMORY", raising=False)
    monkeypatch.chdir(tmp_path)
    kernel = f"dual/kernels/{DUAL_GEMM.name}"
    result = runner.invoke(app, ["export", "--kernel", kernel, "--arch", "sm_100a"])
    assert result.exit_code == 0, result.output
    assert (folder / "submission.py").is_file() and not (tmp_path / "submission.py").exists()
    said = _flat(result.output)
    assert "wrote dual/submission.py (" in said
    assert "dual/submission.py is the task's submission (dual/task.yml's `submission:`), the file check and bench run" in said
    assert "next: nvfp4ctl lint dual/submission.py && nvfp4ctl check --submission dual/submission.py" in said
    logged = (folder / "MEMORY.md").read_text().splitlines()[-1]  # the run, logged beside the task it is for
    assert "[--kernel; wrote ./submission.py@" in logged and logged.endswith("wrote submission.py from"
                                                                              f" {DUAL_GEMM.name} (sm_100a)")
    result = runner.invoke(app, ["export", "--kernel", kernel, "--arch", "sm_100a", "-o", "out.py"])
    assert result.exit_code == 0 and (tmp_path / "out.py").is_file(), result.output
    assert "the task's submission" not in result.output


def _last_target(run_log: Path) -> str:
    """The target cell of the run log's last line (`path@digest [why; nvfp4ctl ...]`)."""
    return run_log.read_text().splitlines()[-1].split(" · ")[2]


@pytest.mark.parametrize("refusal", ["another arch", "an output of the user's"])
def test_a_refused_export_logs_the_kernel_named_as_its_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusal: str) -> None:
    """It was logged with target `-`, so `log --target KERNEL` did not list it."""
    from nvfp4ctl.runlog import file_digest

    run_log = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(run_log))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("def custom_kernel(data): ...\n")
    flags = ["--arch", "sm_90a", "-o", "tc.py"] if refusal == "another arch" else ["-o", "mine.py"]
    result = runner.invoke(app, ["export", "--kernel", str(GEMM_TC), *flags])
    assert result.exit_code == 2, result.output
    assert _last_target(run_log).startswith(f"{GEMM_TC}@{file_digest(GEMM_TC)} [--kernel; nvfp4ctl ")
    listed = runner.invoke(app, ["log", "--target", str(GEMM_TC)])
    assert listed.exit_code == 0, listed.output
    assert "1 most recent run of" in _flat(listed.output) and "exit 2" in _flat(listed.output)


def test_a_refused_export_of_the_default_kernel_logs_it_and_how_it_was_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.runlog import file_digest

    run_log = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(run_log))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("def custom_kernel(data): ...\n")
    result = runner.invoke(app, ["export", "--kernel", "default", "-o", "mine.py"])
    assert result.exit_code == 2, result.output
    assert _last_target(run_log).startswith(f"{GEMM_TC}@{file_digest(GEMM_TC)} [--kernel default; nvfp4ctl ")


def test_a_written_export_logs_the_kernel_as_its_target_and_a_missing_kernel_no_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A written export logged the file it wrote as its target (`./tc.py@…`), a refused one the kernel: `log
    --target KERNEL` listed only the refusals. The file written stays in the reason, with its hash."""
    from nvfp4ctl.runlog import file_digest

    run_log = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(run_log))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["export", "--kernel", str(GEMM_TC), "-o", "tc.py"]).exit_code == 0
    assert _last_target(run_log).startswith(
        f"{GEMM_TC}@{file_digest(GEMM_TC)} [--kernel; wrote ./tc.py@{file_digest(tmp_path / 'tc.py')}; nvfp4ctl ")
    assert runner.invoke(app, ["export", "--kernel", str(GEMM_TC), "--arch", "sm_90a", "-o", "tc.py"]).exit_code == 2
    listed = runner.invoke(app, ["log", "--target", str(GEMM_TC)])
    assert listed.exit_code == 0, listed.output
    assert "2 most recent runs of" in _flat(listed.output), listed.output
    assert runner.invoke(app, ["export", "--kernel", "nothere.cu", "-o", "tc.py"]).exit_code == 2
    assert _last_target(run_log).startswith("- [nvfp4ctl ")


def test_a_written_export_of_the_default_logs_the_kernel_and_how_it_was_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default kernel of the GEMM, and the plain-torch submission written for a problem nvfp4ctl ships
    no B200 kernel for: each the target of its export, as its refusal logs it."""
    from nvfp4ctl.runlog import file_digest

    run_log = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(run_log))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["export", "--kernel", "default", "-o", "tc.py"]).exit_code == 0
    assert _last_target(run_log).startswith(f"{GEMM_TC}@{file_digest(GEMM_TC)} [--kernel default; wrote ./tc.py@")
    monkeypatch.chdir(_user_folder(tmp_path / "dual", "nvfp4_dual_gemm", {"my_dual.cu": DUAL_GEMM.read_text()}))
    result = runner.invoke(app, ["export", "--kernel", "default", "-o", "dual.py"])
    assert result.exit_code == 0, result.output
    plain = DUAL_GEMM.parent.parent / "torch_dequant" / "nvfp4_dual_gemm_submission.py"  # nvfp4ctl's kernels/
    assert _last_target(run_log).startswith(f"{plain}@{file_digest(plain)} [--kernel default; wrote ./dual/dual.py@")


GEMV_NAIVE = kernels_dir() / "naive" / "nvfp4_gemv_naive.cu"


def test_an_export_for_another_problem_is_not_replaced_without_force(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`ln -s ../gemm/submission.py gemv/submission.py`, then a GEMV export in gemv/: it wrote through the link
    (exit 0, no warning), and gemm's GEMM export became a GEMV submission."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    for problem in ("nvfp4_gemm", "nvfp4_gemv"):
        assert runner.invoke(app, ["init", "--problem", problem, str(tmp_path / problem)]).exit_code == 0
    gemm_export = tmp_path / "nvfp4_gemm" / "submission.py"
    gemm_export.unlink()
    monkeypatch.chdir(tmp_path / "nvfp4_gemm")
    assert runner.invoke(app, ["export", "--kernel", str(GEMM_TC)]).exit_code == 0
    before = gemm_export.read_text()
    link = tmp_path / "nvfp4_gemv" / "submission.py"
    link.unlink()
    link.symlink_to(Path("..") / "nvfp4_gemm" / "submission.py")
    monkeypatch.chdir(tmp_path / "nvfp4_gemv")
    result = runner.invoke(app, ["export", "--kernel", str(GEMV_NAIVE), "--arch", "sm_100a"])
    assert result.exit_code == 2, result.output
    assert _flat(result.output) == (
        f"error: {link} (a link to {gemm_export}) is an export for nvfp4_gemm, not for nvfp4_gemv, the problem of the"
        " kernel exported: nothing was written (--force writes over that file through the link, or -o another path)")
    assert gemm_export.read_text() == before and link.is_symlink()
    # nvfp4ctl's plain-torch GEMV export is refused alike; --force replaces it, and a GEMV export then freely
    result = runner.invoke(app, ["export", "--kernel", "default", "-o", str(gemm_export)])
    assert result.exit_code == 2 and "is an export for nvfp4_gemm, not for nvfp4_gemv" in _flat(result.output)
    assert gemm_export.read_text() == before
    assert runner.invoke(app, ["export", "--kernel", str(GEMV_NAIVE), "--arch", "sm_100a", "--force"]).exit_code == 0
    assert gemm_export.read_text().startswith('"""GPU MODE nvfp4_gemv submission:')
    result = runner.invoke(app, ["export", "--kernel", str(GEMV_NAIVE), "--arch", "sm_100a"])
    assert result.exit_code == 0, result.output


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="the fd links are Linux's")
def test_a_task_piped_in_exports_the_kernels_of_the_current_folder(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`export --task <(cat task.yml)` (/dev/fd/63) looked for kernels/ in /dev/fd, the pipe's "folder": no kernel
    to export here, exit 2. The folder is the current one, as check and bench take it for the same --task."""
    folder = _user_folder(tmp_path / "gemm", "nvfp4_gemm", {"nvfp4_gemm_sm100_tc.cu": GEMM_TC.read_text()})
    (folder / "submission.py").unlink()  # init's starter: the export is written where it was, beside task.yml
    monkeypatch.chdir(folder)
    reading, writing = os.pipe()
    with os.fdopen(writing, "w", encoding="utf-8") as pipe:
        pipe.write((folder / "task.yml").read_text())
    try:
        result = runner.invoke(app, ["export", "--task", f"/dev/fd/{reading}"])
    finally:
        os.close(reading)
    assert result.exit_code == 0, result.output
    assert "wrote submission.py (" in result.output and "nvfp4_gemm_sm100_tc.cu for sm_100a" in result.output
    assert (folder / "submission.py").is_file()
