"""With no task.yml of the user's, `check` and `bench` run a submission on the shipped task of the problem the
file names itself, as `build` and `lint` judge it (an export header, a file name starting with a problem's
name), and say why on their first line; a plain submission stays on the GEMM with the stand-in said, and a
task chosen on purpose (--task, $NVFP4CTL_TASK) or a task.yml of the user's stays as it was. A --kernel's first
line names the API header that picked its task."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from nvfp4ctl import export, runlog
from nvfp4ctl.cli import app
from nvfp4ctl.problems import get_problem
from nvfp4ctl.project import kernels_dir
from nvfp4ctl.runner.targets import STAND_IN
from nvfp4ctl.workspace import memory_path

from chosen_task import WAYS, choose_task

DUAL_TEST_2 = "m=256 n=512 k=256"  # the dual GEMM's smallest test (task.yml's 2nd)


def _starter(problem: str) -> str:
    return (kernels_dir() / get_problem(problem).fallback_submission).read_text()


def _exported_dual(path: Path) -> Path:
    """The dual GEMM's exact plain-torch submission under the first line `nvfp4ctl export` writes (its
    embedded CUDA needs a GPU to load; what check reads of the file is that line)."""
    header = export._TEMPLATE.split("\n", 1)[0].format(function="nvfp4_dual_gemm", kernel="nvfp4_dual_gemm_naive.cu",
                                                       arch="sm_100a", digest="0123456789ab")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{header}\n"""\n\n{_starter("nvfp4_dual_gemm")}')
    return path


def _cuda_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl.build import toolchain

    monkeypatch.setattr(toolchain, "torch_build", lambda: toolchain.TorchBuild("2.13.0+cu130", "13.0"))


def _run(*args: str) -> tuple[Result, str]:
    result = CliRunner().invoke(app, list(args))
    return result, " ".join(result.output.split())


@pytest.mark.parametrize("named", [True, False], ids=["--submission", "submission.py here"])
def test_an_exported_dual_gemm_runs_the_dual_gemms_tests(empty: Path, named: bool) -> None:
    """`check --submission dual.py` from a folder with no task.yml handed the exported dual GEMM the shipped
    GEMM task's inputs in every test ("check · nvfp4_gemm"); it runs the dual GEMM's own tests now."""
    if named:
        _exported_dual(empty.parent / "x" / "dual.py")
        result, said = _run("check", "--submission", "../x/dual.py", "--only", "2", "--no-probe")
    else:
        _exported_dual(empty / "submission.py")
        result, said = _run("check", "--only", "2", "--no-probe")
    assert result.exit_code == 0, said
    assert "check · nvfp4_dual_gemm · target" in said, said
    assert "nvfp4_dual_gemm/task.yml (shipped with nvfp4ctl) (its nvfp4ctl export header) (1 of" in said, said
    assert DUAL_TEST_2 in said and "1/1 pass" in said, said
    assert runlog.read(memory_path())[-1].problem == "nvfp4_dual_gemm"


def test_a_file_named_for_the_gemv_runs_the_gemvs_tests(empty: Path) -> None:
    (empty / "nvfp4_gemv_x.py").write_text(_starter("nvfp4_gemv"))
    result, said = _run("check", "--submission", "nvfp4_gemv_x.py", "--only", "1", "--no-probe")
    assert result.exit_code == 0, said
    assert "check · nvfp4_gemv · target nvfp4_gemv_x.py (--submission)" in said, said
    assert "nvfp4_gemv/task.yml (shipped with nvfp4ctl) (its file name) (1 of" in said and "1/1 pass" in said, said


def test_a_plain_submission_stays_on_the_gemm_and_says_it_stands_in(empty: Path) -> None:
    """A file that names no problem (its own docstring, not a starter's): the GEMM's shipped task stands in."""
    own = _starter("nvfp4_gemm").replace("for GPU MODE's nvfp4_gemm in plain torch", "of mine", 1)
    (empty / "submission.py").write_text(own)
    result, said = _run("check", "--only", "1", "--no-probe")
    assert result.exit_code == 0, said
    assert "check · nvfp4_gemm · target submission.py (current folder)" in said, said
    assert f"task.yml (shipped with nvfp4ctl) ({STAND_IN}) (1 of" in said, said


@pytest.mark.parametrize("how", WAYS)
def test_a_task_chosen_on_purpose_or_the_users_own_is_never_swapped(empty: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   how: str) -> None:
    """The exported dual GEMM on a GEMM task the user chose: no shipped task takes its place; the file, whose
    header names the dual GEMM, is refused on it in one line (it failed every test on the GEMM's inputs)."""
    dual = _exported_dual(empty.parent / "x" / "dual.py")
    gemm_task = get_problem("nvfp4_gemm").task_file
    args = ["check", "--submission", str(dual), "--only", "1", "--no-probe"]
    result, said = _run(*args, *choose_task(how, gemm_task, empty, monkeypatch))
    assert result.exit_code == 2, said
    assert (f"error: --submission {dual} is an nvfp4_dual_gemm submission (its nvfp4ctl export header), but"
            in said and "is for nvfp4_gemm: pass --task with an nvfp4_dual_gemm task.yml; nothing was run" in said), said
    assert "shipped with nvfp4ctl" not in said and "check ·" not in said, said


def _exported_gemm(path: Path) -> Path:
    """The GEMM's exact plain-torch submission under the first line `nvfp4ctl export` writes."""
    header = export._TEMPLATE.split("\n", 1)[0].format(function="nvfp4_gemm", kernel="nvfp4_gemm_sm100_tc.cu",
                                                       arch="sm_100a", digest="0123456789ab")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{header}\n"""\n\n{_starter("nvfp4_gemm")}')
    return path


@pytest.fixture
def gemm_linked_into_gemv(empty: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """gemm/ with its task.yml and an exported GEMM submission.py; gemv/ with the GEMV's task.yml and s.py, a link
    to ../gemm/submission.py; the current folder gemv/."""
    for problem, folder in (("nvfp4_gemm", empty / "gemm"), ("nvfp4_gemv", empty / "gemv")):
        folder.mkdir()
        (folder / "task.yml").write_text(get_problem(problem).task_file.read_text())
    _exported_gemm(empty / "gemm" / "submission.py")
    (empty / "gemv" / "s.py").symlink_to("../gemm/submission.py")
    monkeypatch.chdir(empty / "gemv")
    return empty / "gemv"


@pytest.mark.parametrize("command", ["check", "bench"])
def test_a_submission_of_another_problem_than_the_tasks_is_refused_before_any_test(
        gemm_linked_into_gemv: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    """`check --submission s.py` in gemv/ ran the GEMM export on the GEMV's tests, each failing or crashing."""
    monkeypatch.setattr("nvfp4ctl.runner.worker.Worker", _NoChild)
    result, said = _run(command, "--submission", "s.py")
    assert result.exit_code == 2, said
    gemm_task = gemm_linked_into_gemv.parent / "gemm" / "task.yml"
    assert said == (f"error: --submission s.py is an nvfp4_gemm submission (its nvfp4ctl export header), but task.yml"
                    f" is for nvfp4_gemv: pass --task {gemm_task}; nothing was run"), said
    assert runlog.read(memory_path())[-1].exit_code == "2"


def test_a_found_submission_of_another_problem_is_refused_too(gemm_linked_into_gemv: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nvfp4ctl.runner.worker.Worker", _NoChild)
    (gemm_linked_into_gemv / "submission.py").symlink_to("../gemm/submission.py")
    result, said = _run("check")
    assert result.exit_code == 2, said
    # named as check's first line names it: the file the link leads to
    assert said.startswith(f"error: {gemm_linked_into_gemv.parent / 'gemm' / 'submission.py'} (beside task.yml) is an"
                           " nvfp4_gemm submission (its nvfp4ctl export header)"), said
    assert "but task.yml is for nvfp4_gemv: pass --task" in said, said


def test_the_task_of_the_submissions_own_problem_runs_it(gemm_linked_into_gemv: Path) -> None:
    gemm_task = gemm_linked_into_gemv.parent / "gemm" / "task.yml"
    result, said = _run("check", "--submission", "s.py", "--task", str(gemm_task), "--only", "1", "--no-probe")
    assert result.exit_code == 0 and "check · nvfp4_gemm · target s.py (--submission)" in said, said


class _NoChild:
    """Stands in for the child: the header line is said before it starts, and nothing here needs it to run."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        from nvfp4ctl.errors import UsageError

        raise UsageError("no child in this test")


class _IdleChild:
    """Stands in for the child where what is handed to it is looked at, not what it does with it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def __enter__(self) -> _IdleChild:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def test_bench_times_an_exported_dual_gemm_as_the_dual_gemm(empty: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The header names the dual GEMM and why, and the timing is handed the dual GEMM's problem (its inputs and
    reference) and the shape asked for. The file's run is check's test above (1/1 pass); the dual GEMM's timing
    loop on CPU is tests/bench/test_bench_family.py's."""
    from nvfp4ctl.bench.session import BenchPlan
    from nvfp4ctl.errors import UsageError

    handed: list[BenchPlan] = []

    def no_timing(plan: BenchPlan, *args: object, **kwargs: object) -> None:
        handed.append(plan)
        raise UsageError("no timing in this test")

    monkeypatch.setattr("nvfp4ctl.runner.worker.Worker", _IdleChild)
    monkeypatch.setattr("nvfp4ctl.bench.session.run_bench", no_timing)
    _exported_dual(empty / "dual.py")
    result, said = _run("bench", "--submission", "dual.py", "--shape", "128,256,256", "--max-repeats", "3")
    assert result.exit_code == 2 and "no timing in this test" in said, said
    assert "bench · nvfp4_dual_gemm · target dual.py (--submission) · task" in said, said
    assert "(shipped with nvfp4ctl) (its nvfp4ctl export header) · 1 shape" in said, said
    (plan,) = handed
    assert plan.problem == "nvfp4_dual_gemm" and plan.max_repeats == 3
    assert [(case.m, case.n, case.k) for case in plan.cases] == [(128, 256, 256)]


@pytest.mark.parametrize("command", ["check", "bench"])
@pytest.mark.parametrize("kernel, problem, because", [
    ("nvfp4_gemv_naive.cu", "nvfp4_gemv", "it includes nvfp4_gemv_api.h"),
    ("nvfp4_dual_gemm_naive.cu", "nvfp4_dual_gemm", "it includes nvfp4_dual_gemm_api.h"),
])
def test_a_kernel_with_no_task_of_yours_names_the_api_header_that_picked_its_task(
        empty: Path, monkeypatch: pytest.MonkeyPatch, command: str, kernel: str, problem: str, because: str) -> None:
    """`check --kernel my_gemv.cu` from a folder with no task.yml ran the GEMV's shipped tests and its first line
    named that task with no reason, where a submission's says which header or name picked it."""
    monkeypatch.setattr("nvfp4ctl.check.run.Worker", _NoChild)
    monkeypatch.setattr("nvfp4ctl.runner.worker.Worker", _NoChild)
    _cuda_torch(monkeypatch)  # a kernel target needs one, on CPU runs too
    source = empty / "mine.cu"
    source.write_text((kernels_dir() / "naive" / kernel).read_text())
    (empty / "naive_decode.cuh").write_text((kernels_dir() / "naive" / "naive_decode.cuh").read_text())
    result, said = _run(command, "--kernel", "mine.cu")
    assert result.exit_code == 2 and "no child in this test" in said, said
    assert f"{command} · {problem} · target mine.cu (--kernel) · task" in said, said
    assert f"{problem}/task.yml (shipped with nvfp4ctl) ({because}) " in said, said


def test_a_kernel_without_an_api_header_says_it_is_called_as_the_gemm(empty: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nvfp4ctl.check.run.Worker", _NoChild)
    _cuda_torch(monkeypatch)
    (empty / "mine.cu").write_text("__global__ void k() {}\n")
    result, said = _run("check", "--kernel", "mine.cu")
    assert result.exit_code == 2, said
    assert ("check · nvfp4_gemm · target mine.cu (--kernel) · task" in said
            and "task.yml (shipped with nvfp4ctl) (it includes no problem's API header:"
            " the GEMM's C ABI calls it) (") in said, said
