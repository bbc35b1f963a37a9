"""A submission whose custom_kernel unpacks another problem's input on every call (lint's NV006: the grouped
GEMM's 4 names, the dual GEMM's 10) is refused by `check` and `bench` before any test, in one line, exit 2,
naming the problem it looks like and the task to run it on; where the count fits several problems (the GEMV's 7
are the GEMM's too) the run goes on as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem
from nvfp4ctl.project import kernels_dir
from nvfp4ctl.workspace import memory_path

from chosen_task import WAYS, choose_task


@pytest.fixture
def no_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """No child to run a test: a run that gets that far says so and stops."""
    # check.run first: imported while runner.worker's is patched, it would keep the stand-in after the test
    monkeypatch.setattr("nvfp4ctl.check.run.Worker", _NoChild)
    monkeypatch.setattr("nvfp4ctl.runner.worker.Worker", _NoChild)


class _NoChild:
    """Stands in for the child: a run that gets this far was not refused."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        from nvfp4ctl.errors import UsageError

        raise UsageError("no child in this test")


def _own(problem: str) -> str:
    """init's starter for the problem, its docstring's first line the user's own: it names no problem."""
    starter = (kernels_dir() / get_problem(problem).fallback_submission).read_text()
    first, rest = starter.split("\n", 1)
    return f'"""My own kernel.\n{rest}'


def _unpacking_line(text: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), start=1) if line.strip().endswith("= data"))


def _run(*args: str) -> tuple[Result, str]:
    result = CliRunner().invoke(app, list(args))
    return result, " ".join(result.output.split())


@pytest.mark.usefixtures("no_child")
@pytest.mark.parametrize("command", ["check", "bench"])
@pytest.mark.parametrize("problem, named", [("nvfp4_group_gemm", 4), ("nvfp4_dual_gemm", 10)])
def test_another_problems_submission_with_no_task_yml_is_refused_naming_its_problem(
        empty: Path, command: str, problem: str, named: int) -> None:
    """It ran on the GEMM's shipped tests, each reported as a crash (ValueError: too many values to unpack), exit 4."""
    text = _own(problem)
    (empty / "sub.py").write_text(text)
    result, said = _run(command, "--submission", "sub.py")
    assert result.exit_code == 2, said
    shipped = get_problem(problem).task_file
    assert said == (f"error: --submission sub.py looks like an {problem} submission (custom_kernel unpacks {named} names"
                    f" from the input on every call, line {_unpacking_line(text)}; {problem}'s input has {named},"
                    " nvfp4_gemm's 7, so it cannot take nvfp4_gemm's input), and no task.yml names its problem"
                    f" (nvfp4_gemm's shipped task stands in): pass --task {shipped} (nvfp4ctl's), or the one"
                    f" `nvfp4ctl init --problem {problem} DIR` writes; nothing was run"), said
    assert runlog.read(memory_path())[-1].exit_code == "2"


@pytest.mark.usefixtures("no_child")
def test_the_refusal_is_true_of_a_submission_that_checks_the_inputs_length_first(empty: Path) -> None:
    """`assert len(data) == 4` before the unpacking raises AssertionError on every test, not the ValueError the
    refusal said every test would raise."""
    (empty / "sub.py").write_text("def custom_kernel(data):\n    assert len(data) == 4\n"
                                  "    abc_tensors, sfasfb, sfasfb_reordered, sizes = data\n    return abc_tensors\n")
    result, said = _run("check", "--submission", "sub.py")
    assert result.exit_code == 2, said
    assert ("nvfp4_group_gemm's input has 4, nvfp4_gemm's 7, so it cannot take nvfp4_gemm's input), and no task.yml"
            in said and "ValueError" not in said), said


@pytest.mark.usefixtures("no_child")
def test_a_submission_py_found_here_is_refused_too(empty: Path) -> None:
    (empty / "submission.py").write_text(_own("nvfp4_group_gemm"))
    result, said = _run("check")
    assert result.exit_code == 2, said
    assert said.startswith("error: submission.py (current folder) looks like an nvfp4_group_gemm submission"), said


@pytest.mark.usefixtures("no_child")
@pytest.mark.parametrize("how", WAYS)
def test_a_task_of_another_problem_that_the_user_chose_is_named_in_the_refusal(
        empty: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """On a GEMM task.yml of the user's it crashed in every test as well; the refusal names that task."""
    (empty / "sub.py").write_text(_own("nvfp4_group_gemm"))
    gemm_task = empty.parent / "gemm.yml"
    gemm_task.write_text(get_problem("nvfp4_gemm").task_file.read_text())
    result, said = _run("check", "--submission", "sub.py", *choose_task(how, gemm_task, empty, monkeypatch))
    assert result.exit_code == 2, said
    named = "task.yml" if how == "task.yml here" else str(gemm_task)
    assert said.startswith("error: --submission sub.py looks like an nvfp4_group_gemm submission"), said
    assert said.endswith(f"but {named} is for nvfp4_gemm: pass --task with an nvfp4_group_gemm task.yml;"
                         " nothing was run"), said


def test_the_task_of_its_own_problem_runs_it(empty: Path) -> None:
    (empty / "sub.py").write_text(_own("nvfp4_group_gemm"))
    task = get_problem("nvfp4_group_gemm").task_file
    result, said = _run("check", "--submission", "sub.py", "--task", str(task), "--only", "1", "--no-probe")
    assert result.exit_code == 0 and "1/1 pass" in said, said


@pytest.mark.usefixtures("no_child")
def test_a_count_that_fits_the_stand_ins_problem_too_runs_as_before(empty: Path) -> None:
    """The GEMV's 7 names are the GEMM's count: nothing tells the file from a GEMM submission, so the shipped GEMM
    task stands in as it did."""
    (empty / "sub.py").write_text(_own("nvfp4_gemv"))
    result, said = _run("check", "--submission", "sub.py")
    assert result.exit_code == 2 and "no child in this test" in said, said
    assert "check · nvfp4_gemm · target sub.py (--submission)" in said and "looks like" not in said, said
