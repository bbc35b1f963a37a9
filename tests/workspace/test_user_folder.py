"""Commands act on the user's files where the user works: a GPU MODE problem folder, an empty
folder, a folder with only a submission, and the nvfp4ctl project itself (CPU, NVFP4CTL_DEVICE=cpu)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl import runlog, workspace
from nvfp4ctl.cli import app
from nvfp4ctl.project import REPO_DIR

runner = CliRunner()
CORRECT = (REPO_DIR / "kernels" / "torch_dequant" / "submission.py").read_text()
# One 128x128 tile of C wrong: what a user's kernel with a tile-index bug returns.
WRONG_TILE = CORRECT + "\n\n_right = custom_kernel\n\ndef custom_kernel(data):\n    c = _right(data)\n    c[:128, 128:256] += 1\n    return c\n"
# Passes every test, but the leaderboard would reject the file: the word in a comment, and the
# reference scales (tuple indices 2, 3) feeding _scaled_mm in the timed path.
RULE_BREAKING = '''import torch
# upstream layout notes
def custom_kernel(data):
    a, b, sfa_ref, sfb_ref, _, _, c = data
    return torch._scaled_mm(a[:, :, 0], b[:, :, 0].T, sfa_ref, sfb_ref, out_dtype=torch.float16)
'''
# GPU MODE's own problems/nvidia/nvfp4_gemm/task.yml, shape for shape (its keys, unchanged).
GPU_MODE_TASK = '''files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "task.py", "source": "task.py"}
  - {"name": "utils.py", "source": "utils.py"}
  - {"name": "reference.py", "source": "reference.py"}
  - {"name": "eval.py", "source": "../eval_better_bench.py"}
lang: "py"
description: |
  You will implement a block scaled matrix-matrix multiplication kernel optimized for NVIDIA B200.
config:
  main: "eval.py"
templates:
  Python: "template.py"
tests:
  - {"m": 128, "n": 256, "k": 256, "l": 1, "seed": 1111}
  - {"m": 256, "n": 256, "k": 128, "l": 1, "seed": 1111}
benchmarks:
  - {"m": 128, "n": 128, "k": 64, "l": 1, "seed": 1111}
ranking_by: "geom"
'''


@pytest.fixture
def cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NVFP4CTL_DEVICE", "cpu")
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.delenv("NVFP4CTL_MEMORY", raising=False)  # the run log goes where the tool puts it


@pytest.fixture
def problem_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu: None) -> Path:
    """GPU MODE's layout: task.yml and the user's submission.py side by side; we work in it."""
    folder = tmp_path / "nvfp4_gemm"
    folder.mkdir()
    (folder / "task.yml").write_text(GPU_MODE_TASK)
    (folder / "submission.py").write_text(WRONG_TILE)
    monkeypatch.chdir(folder)
    return folder


def _log(folder: Path) -> list[runlog.RunEntry]:
    return runlog.read(folder / "MEMORY.md")


def test_check_runs_the_users_submission_and_finds_its_wrong_tile(problem_folder: Path) -> None:
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe"])
    assert result.exit_code == 1, result.output
    assert "target submission.py (beside task.yml)" in result.output
    assert "task task.yml (found from the current folder)" in result.output
    assert "torch_dequant" not in result.output  # never ours
    assert "wrong 128x128 tiles" in result.output
    entry = _log(problem_folder)[-1]  # MEMORY.md beside the task.yml in use
    assert entry.target.startswith("./submission.py@") and entry.target.endswith("[beside task.yml]")  # from MEMORY.md
    assert entry.exit_code == "1"


def test_check_from_a_subfolder_still_finds_the_submission_beside_task_yml(problem_folder: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (problem_folder / "notes").mkdir()
    monkeypatch.chdir(problem_folder / "notes")
    (problem_folder / "submission.py").write_text(CORRECT)
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe"])
    assert result.exit_code == 0, result.output
    assert "target ../submission.py (beside task.yml)" in result.output or "submission.py (beside task.yml)" in result.output
    assert (problem_folder / "MEMORY.md").is_file() and not (problem_folder / "notes" / "MEMORY.md").exists()


def test_task_yml_submission_key_wins_over_the_file_beside_it(problem_folder: Path) -> None:
    (problem_folder / "mine.py").write_text(CORRECT)
    (problem_folder / "task.yml").write_text(GPU_MODE_TASK + "submission: mine.py\n")
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe"])
    assert result.exit_code == 0, result.output
    assert "target mine.py (task.yml submission:)" in result.output


def test_the_target_s_reason_names_the_task_file_in_use(problem_folder: Path) -> None:
    """`--task other.yml`: the first line and the run log say "beside other.yml", not "beside task.yml"."""
    (problem_folder / "submission.py").write_text(CORRECT)
    (problem_folder / "other.yml").write_text((problem_folder / "task.yml").read_text())
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe", "--task", "other.yml"])
    assert result.exit_code == 0, result.output
    assert "target submission.py (beside other.yml)" in result.output
    assert _log(problem_folder)[-1].target.endswith("[beside other.yml]")
    (problem_folder / "mine.py").write_text(CORRECT)
    (problem_folder / "other.yml").write_text(GPU_MODE_TASK + "submission: mine.py\n")
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe", "--task", "other.yml"])
    assert result.exit_code == 0, result.output
    assert "target mine.py (other.yml submission:)" in result.output


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="the fd links are Linux's")
def test_a_piped_tasks_submission_is_the_current_folders(problem_folder: Path) -> None:
    """`check --task <(cat task.yml)` said `target submission.py (beside 63)` and logged `[beside 63]`, the
    pipe's file descriptor named as if it were a task file beside the submission."""
    (problem_folder / "submission.py").write_text(CORRECT)
    reading, writing = os.pipe()
    with os.fdopen(writing, "w", encoding="utf-8") as pipe:
        pipe.write(GPU_MODE_TASK)
    try:
        result = runner.invoke(app, ["check", "--only", "1", "--no-probe", "--task", f"/dev/fd/{reading}"])
    finally:
        os.close(reading)
    assert result.exit_code == 0, result.output
    assert "target submission.py (current folder)" in result.output and "beside" not in result.output
    assert _log(problem_folder)[-1].target.endswith("[current folder]")


@pytest.mark.parametrize("written, problem", [("nosuch.py", "no such file"),
                                              ("notes.txt", "expected a Python file (submission.py)")])
def test_a_task_yml_submission_that_is_no_file_names_its_line(problem_folder: Path, written: str, problem: str) -> None:
    (problem_folder / "notes.txt").write_text("todo\n")
    text = GPU_MODE_TASK + f"submission: {written}\n"
    (problem_folder / "task.yml").write_text(text)
    line = text.splitlines().index(f"submission: {written}") + 1
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe"])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said == f"error: task.yml:{line}: submission: {problem_folder.resolve() / written}: {problem}", said


def test_bench_times_the_users_submission(problem_folder: Path) -> None:
    (problem_folder / "submission.py").write_text(CORRECT)
    result = runner.invoke(app, ["bench", "--max-repeats", "3", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["target"] == "submission.py (beside task.yml)"
    entry = _log(problem_folder)[-1]
    assert entry.command.startswith("nvfp4ctl bench") or entry.result.startswith("geomean")
    assert entry.target.endswith("[beside task.yml]")


def test_lint_reads_the_users_submission_and_flags_what_the_leaderboard_rejects(problem_folder: Path) -> None:
    (problem_folder / "submission.py").write_text(RULE_BREAKING)
    result = runner.invoke(app, ["lint", "-v"])  # -v after the subcommand, as in git or ruff
    assert result.exit_code == 1, result.output
    assert "submission.py:2:" in result.output and "NV101" in result.output  # "stream" inside "upstream"
    assert "checked: submission.py" in result.output
    assert "(1 file checked)" in result.output or "(1 checked)" in result.output
    payload = json.loads(runner.invoke(app, ["lint", "--format", "json"]).stdout)
    assert payload["files"] == ["submission.py"]
    assert {d["code"] for d in payload["diagnostics"]} >= {"NV101", "NV401"}  # NV401: reference scales


def test_an_empty_folder_is_one_line_and_exit_2_for_every_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   cpu: None) -> None:
    monkeypatch.chdir(tmp_path)
    for args, message in ((["check"], "no submission to run"), (["bench"], "no submission to run"),
                          (["lint"], "nothing to lint"), (["build"], "nothing to build"),
                          (["export"], "no kernel to export")):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
    assert list(tmp_path.iterdir()) == []  # no MEMORY.md (or lock) left in a folder that has nothing of ours


def test_a_bare_build_in_an_empty_folder_names_where_nvfp4ctls_kernels_are(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl import project

    shipped = tmp_path / "site-packages" / "nvfp4ctl" / "_shipped"
    (shipped / "kernels").mkdir(parents=True)
    (shipped / "task.yml").write_bytes(project.shipped_task_path().read_bytes())
    monkeypatch.setattr(project, "SHIPPED_DIR", shipped)  # as installed from a wheel
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 2, result.output
    assert f"nvfp4ctl's own kernels are in {shipped / 'kernels'}" in " ".join(result.output.split())


def test_a_bare_submission_in_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu: None) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text(CORRECT)
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe"])
    assert result.exit_code == 0, result.output
    assert "target submission.py (current folder)" in result.output
    assert "task.yml (shipped with nvfp4ctl)" in result.output
    assert _log(tmp_path)[-1].target.endswith("[current folder]")


def test_ours_only_when_asked_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu: None) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe", "--kernel", "default"])
    assert result.exit_code == 0, result.output
    assert "torch_dequant/submission.py (exact torch fallback" in result.output


def test_inside_the_nvfp4ctl_project_the_default_is_ours(monkeypatch: pytest.MonkeyPatch, cpu: None) -> None:
    monkeypatch.chdir(REPO_DIR)
    monkeypatch.setenv("NVFP4CTL_MEMORY", os.devnull)  # not the project's own run log
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe"])
    assert result.exit_code == 0, result.output
    assert "target kernels/torch_dequant/submission.py (exact torch fallback" in result.output
    payload = json.loads(runner.invoke(app, ["lint", "--format", "json"]).stdout)
    assert payload["files"] and all(f.startswith("kernels/") for f in payload["files"])


def test_quiet_after_the_subcommand(problem_folder: Path) -> None:
    (problem_folder / "submission.py").write_text(CORRECT)
    result = runner.invoke(app, ["check", "--only", "1", "--no-probe", "-q"])
    assert result.exit_code == 0, result.output
    assert "target submission.py" not in result.output  # the config line is info: hidden by -q
    assert "1/1 pass" in result.output


def test_a_failure_before_anything_is_resolved_leaves_no_memory_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   cpu: None) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "--timeout", "-1", "--submission", "nope.py"])
    assert result.exit_code == 2
    assert not (tmp_path / "MEMORY.md").exists()


def test_build_reads_the_users_submission(problem_folder: Path) -> None:
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 0, result.output  # init's plain-torch starter is valid: nothing to compile
    assert "submission.py: no load_inline/load call" in result.output  # the user's file, not our kernels
    assert "nothing to compile" in result.output
    assert "[beside task.yml]" in _log(problem_folder)[-1].target  # why this file, as check logs it


@pytest.fixture
def logged_to(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The MEMORY.md each command's run-log line goes to, with nothing written."""
    paths: list[Path] = []
    monkeypatch.setattr(runlog, "append", lambda entry, memory: paths.append(memory))
    return paths


def test_a_kernel_of_another_problem_logs_where_a_gemm_kernel_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    cpu: None, logged_to: list[Path]) -> None:
    """`tune --kernel my_gemv.cu` with no task.yml of the user's runs on nvfp4ctl's GEMV task.yml; that file's
    folder is nvfp4ctl's package, so the run log goes where it goes for a GEMM kernel (the cache), not there."""
    from nvfp4ctl.project import cache_root

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_gemv.cu").write_text('#include "nvfp4_gemv_api.h"\n')
    result = runner.invoke(app, ["tune", "--kernel", "my_gemv.cu"])
    assert result.exit_code == 2 and "declares no knobs" in result.output, result.output
    assert logged_to == [cache_root() / "MEMORY.md"]


def test_lint_of_a_file_under_another_problems_task_logs_in_the_folder_in_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu: None, logged_to: list[Path]) -> None:
    """Judging a file by another problem's rules reads that problem's benchmark shapes from nvfp4ctl's own
    task.yml for it; the run log stays with the task in use, not beside that file in nvfp4ctl's package."""
    here, other = tmp_path / "gemv", tmp_path / "dual"
    for folder, problem in ((here, "nvfp4_gemv"), (other, "nvfp4_dual_gemm")):
        folder.mkdir()
        (folder / "task.yml").write_text(f"problem: {problem}\ntests:\n"
                                         + ("  - {m: 128, k: 256, l: 1, seed: 1}\n" if problem == "nvfp4_gemv"
                                            else "  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n"))
    (other / "submission.py").write_text("def custom_kernel(data):\n    return data[-1]\n")
    monkeypatch.chdir(here)
    result = runner.invoke(app, ["lint", "../dual/submission.py"])
    assert result.exit_code == 0, result.output
    assert logged_to == [here / "MEMORY.md"]


def test_a_kernel_given_by_path_logs_beside_the_task_yml_it_lies_under(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu: None, logged_to: list[Path]) -> None:
    """`build dual/kernels/k.cu` and `export --kernel dual/kernels/k.cu` from the folder above logged to the cache
    folder's MEMORY.md, and `build ../dual/kernels/k.cu` from gemm/ to gemm/MEMORY.md (with the dual GEMM as its
    problem), so `log --target` in dual/ never listed them: a kernel logs beside its own task.yml, as
    `build dual/submission.py` does. Kernels under two task.ymls, or nvfp4ctl's own, leave the log where it was."""
    from nvfp4ctl.project import cache_root

    dual, gemm = tmp_path / "dual", tmp_path / "gemm"
    for folder, problem in ((dual, "nvfp4_dual_gemm"), (gemm, "nvfp4_gemm")):
        (folder / "kernels").mkdir(parents=True)
        (folder / "task.yml").write_text(f"problem: {problem}\ntests:\n  - {{m: 128, n: 256, k: 256, l: 1, seed: 1}}\n")
        # no arch of its own: build stops before any compile, export at the header it cannot find
        (folder / "kernels" / "k.cu").write_text(f'#include "{problem}_api.h"\n#include "missing.cuh"\n')
    monkeypatch.chdir(tmp_path)
    for args in (["build", "dual/kernels/k.cu"], ["export", "--kernel", "dual/kernels/k.cu", "-o", "out.py"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
    assert logged_to == [dual / "MEMORY.md"] * 2
    logged_to.clear()
    monkeypatch.chdir(gemm)
    for args in (["build", "../dual/kernels/k.cu"], ["build", "kernels/k.cu", "../dual/kernels/k.cu"]):
        runner.invoke(app, args)
    assert logged_to == [dual / "MEMORY.md", gemm / "MEMORY.md"]
    logged_to.clear()
    monkeypatch.chdir(tmp_path)
    runner.invoke(app, ["build", "dual/kernels/k.cu", "gemm/kernels/k.cu"])
    assert logged_to == [cache_root() / "MEMORY.md"]
    workspace.reset()
    from nvfp4ctl.runner.targets import kernels_task_file

    # under nvfp4ctl's own task.yml: no one's
    assert kernels_task_file([REPO_DIR / "kernels" / "naive" / "nvfp4_gemv_naive.cu"], None) is None
    assert workspace.memory_path() == cache_root() / "MEMORY.md"


def test_every_command_logs_a_kernel_beside_the_task_it_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu: None, logged_to: list[Path]) -> None:
    """From gemm/, with gemm/v2/ holding a task.yml of the same problem: `build v2/kernels/k.cu` logged to
    v2/MEMORY.md while `check --kernel v2/kernels/k.cu` ran on gemm/task.yml (a warning said so) and logged to
    gemm/MEMORY.md, as export did: one kernel's runs split over two logs. Each logs beside the task check runs it
    on: gemm's, or with --task v2/task.yml, v2's."""
    gemm = tmp_path / "gemm"
    v2 = gemm / "v2"
    for folder in (gemm, v2):
        folder.mkdir(exist_ok=True)
        (folder / "task.yml").write_text("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n")
    (v2 / "kernels").mkdir()
    # no arch of its own: build stops before any compile, export at the header it cannot find, check with no CUDA
    (v2 / "kernels" / "k.cu").write_text('#include "nvfp4_gemm_api.h"\n#include "missing.cuh"\n')
    monkeypatch.chdir(gemm)
    kernel = "v2/kernels/k.cu"
    for args in (["build", kernel], ["check", "--kernel", kernel], ["export", "--kernel", kernel, "-o", "out.py"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
    assert logged_to == [gemm / "MEMORY.md"] * 3
    logged_to.clear()
    for args in (["build", "--task", "v2/task.yml", kernel], ["check", "--task", "v2/task.yml", "--kernel", kernel]):
        runner.invoke(app, args)
    assert logged_to == [v2 / "MEMORY.md"] * 2


@pytest.mark.skipif(not os.path.isdir("/dev/fd") or not hasattr(os, "mkfifo"), reason="the fd links are Linux's")
def test_a_task_file_piped_in_stands_for_the_current_folder_and_a_named_fifo_for_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/dev/fd/N leads to /proc/PID/fd/pipe:[N], in no folder: its parent was taken as the user's folder (check
    said "no submission to run in /proc/PID/fd" and logged to /proc/PID/fd/MEMORY.md)."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    reading, writing = os.pipe()
    try:
        for name in (f"/dev/fd/{reading}", f"/proc/self/fd/{reading}"):
            assert workspace.task_folder(Path(name)) == here.resolve()
            assert workspace.TaskFile(Path(name), workspace.FROM_FLAG).folder == here.resolve()
    finally:
        os.close(reading)
        os.close(writing)
    os.mkfifo(tmp_path / "task.fifo")
    assert workspace.task_folder(tmp_path / "task.fifo") == tmp_path.resolve()
    assert workspace.task_folder(tmp_path / "task.yml") == tmp_path.resolve()  # a file, there or not: its folder
