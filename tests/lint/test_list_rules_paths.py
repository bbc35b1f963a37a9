"""`lint --list-rules PATH` tells the rules in the words of the problem lint judges PATH's files by: the task.yml
above the path, as a run from the folder above (`lint dual`) judges them, never the current folder's silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_streams import separate_streams_runner
from nvfp4ctl.cli import app

runner = CliRunner()
TESTS = "tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n"


@pytest.fixture
def monorepo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for folder, problem in (("gemm", "nvfp4_gemm"), ("dual", "nvfp4_dual_gemm")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "task.yml").write_text(f"problem: {problem}\n{TESTS}")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _listed_problem(args: list[str]) -> str:
    result = runner.invoke(app, ["lint", "--list-rules", "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["problem"]


def test_a_folder_is_listed_by_its_own_task(monorepo: Path) -> None:
    assert _listed_problem(["dual"]) == "nvfp4_dual_gemm"
    assert _listed_problem(["dual/"]) == "nvfp4_dual_gemm"
    assert _listed_problem(["gemm"]) == "nvfp4_gemm"


def test_from_inside_another_folder_the_path_still_decides(monorepo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(monorepo / "dual")
    assert _listed_problem([]) == "nvfp4_dual_gemm"
    assert _listed_problem(["../gemm"]) == "nvfp4_gemm"


def test_the_table_names_the_paths_problem(monorepo: Path) -> None:
    result = runner.invoke(app, ["lint", "--list-rules", "dual"])
    assert result.exit_code == 0 and "lint rules · nvfp4_dual_gemm" in result.output


def test_paths_of_two_problems_are_one_line_and_exit_2(monorepo: Path) -> None:
    result = separate_streams_runner().invoke(app, ["lint", "--list-rules", "gemm", "dual"])
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: --list-rules lists one problem's rules: gemm is nvfp4_gemm's and dual is"
                                     " nvfp4_dual_gemm's; name paths of one problem")
    assert result.stdout == ""


def test_a_missing_path_is_exit_2(monorepo: Path) -> None:
    result = separate_streams_runner().invoke(app, ["lint", "--list-rules", "nosuch"])
    assert result.exit_code == 2 and result.stderr.strip() == "error: no such file or folder: nosuch"


def _submission(folder: Path) -> None:
    (folder / "submission.py").write_text("def custom_kernel(data):\n    return data\n")


@pytest.fixture
def workspace(monorepo: Path) -> Path:
    """Three problems' folders under one without a task.yml, each with a submission lint checks."""
    (monorepo / "gemv").mkdir()
    (monorepo / "gemv" / "task.yml").write_text("problem: nvfp4_gemv\ntests:\n  - {m: 128, k: 256, l: 1, seed: 1111}\n")
    for folder in ("gemm", "dual", "gemv"):
        _submission(monorepo / folder)
    return monorepo


def test_a_folder_whose_files_lint_judges_by_several_problems_is_refused(workspace: Path) -> None:
    """`--list-rules .` listed nvfp4_gemm's rules (the default, exit 0), where lint judges the files below by
    three problems and `--list-rules dual gemm` refuses them."""
    result = separate_streams_runner().invoke(app, ["lint", "--list-rules", "."])
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stderr.strip() == (
        "error: --list-rules lists one problem's rules: dual/submission.py is nvfp4_dual_gemm's, gemm/submission.py is"
        " nvfp4_gemm's and gemv/submission.py is nvfp4_gemv's; name paths of one problem")
    assert result.stdout == ""


def test_a_folder_whose_files_are_of_one_problem_lists_its_rules(workspace: Path) -> None:
    """No task.yml above the folder: its files' own (dual/task.yml) decides, not the default GEMM."""
    (workspace / "gemm" / "task.yml").write_text(f"problem: nvfp4_dual_gemm\n{TESTS}")
    (workspace / "gemv" / "task.yml").write_text(f"problem: nvfp4_dual_gemm\n{TESTS}")
    assert _listed_problem(["."]) == "nvfp4_dual_gemm"


def test_a_folder_lint_finds_nothing_in_keeps_the_task_above_it(workspace: Path) -> None:
    (workspace / "dual" / "empty").mkdir()
    assert _listed_problem(["dual/empty"]) == "nvfp4_dual_gemm"
