"""What check runs: --only / --shape / --seed selection and the timeout's precedence."""

from __future__ import annotations

import math
import pytest

from check_fakes import SMALL_TESTS, FakeTask
from fake_problem import FakeCase
from nvfp4ctl.check import plan
from nvfp4ctl.errors import UsageError


@pytest.fixture(autouse=True)
def _no_timeout_in_the_environment(monkeypatch):
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)


TASK = FakeTask(tests=SMALL_TESTS)


def test_all_tests_by_default_numbered_from_1():
    items = plan.select_items(TASK, [], [], None)
    assert [i.id for i in items] == ["1", "2", "3"]
    assert [i.label for i in items] == ["test 1", "test 2", "test 3"]
    assert items[2].shape == "m=128 n=128 k=64 l=2"


def test_only_keeps_the_users_order_once_each():
    assert [i.id for i in plan.select_items(TASK, [3, 1, 3], [], None)] == ["3", "1"]


def test_shape_alone_runs_only_the_shape_and_seed_replaces_seeds():
    items = plan.select_items(TASK, [], ["256,512,1024", "128x128x256x2"], None)
    assert [(i.id, i.label) for i in items] == [("s1", "shape 1"), ("s2", "shape 2")]
    assert items[0].case == FakeCase(256, 512, 1024, 1, 1111)
    assert items[1].case == FakeCase(128, 128, 256, 2, 1111)
    assert plan.select_items(TASK, [2], [], 42)[0].case.seed == 42


@pytest.mark.parametrize(
    "only, message",
    [([11], "--only 11: task.yml has 3 tests (1-3)"), ([0], "--only 0: task.yml has 3 tests (1-3)"),
     ([-1], "--only -1: task.yml has 3 tests (1-3)")],
)
def test_bad_only(only, message):
    with pytest.raises(UsageError, match=f"^{message}$".replace("(", r"\(").replace(")", r"\)")):
        plan.select_items(TASK, only, [], None)


def test_messages_name_the_task_file_in_use(tmp_path, monkeypatch):
    """A task read from other.yml is named so (they said task.yml whatever the file)."""
    monkeypatch.chdir(tmp_path)
    task = FakeTask(tests=SMALL_TESTS, path=tmp_path / "tasks" / "other.yml")
    with pytest.raises(UsageError, match=r"^--only 4: tasks/other.yml has 3 tests \(1-3\)$"):
        plan.select_items(task, [4], [], None)
    with pytest.raises(UsageError, match=r"^nothing to check: tasks/other.yml has no tests; pass --shape "):
        plan.select_items(FakeTask(tests=(), path=tmp_path / "tasks" / "other.yml"), [], [], None)


@pytest.mark.parametrize("text", ["128,256", "1,2,3,4,5", "128,-1,256", "a,b,c", ""])
def test_bad_shape(text):
    with pytest.raises(UsageError, match="expected M,N,K or M,N,K,L as positive integers, e.g. --shape 128,7168,16384"):
        plan.parse_shape(text)


def test_timeout_precedence(monkeypatch):
    assert plan.resolve_timeout(None, None) == (180.0, "default")
    # set to the default's value: still the file's
    assert plan.resolve_timeout(None, (180.0, "timeout")) == (180.0, "task.yml timeout")
    assert plan.resolve_timeout(None, (60.0, "test_timeout")) == (60.0, "task.yml test_timeout")
    assert plan.resolve_timeout(None, (60.0, "timeout"), "other.yml") == (60.0, "other.yml timeout")  # the file in use
    monkeypatch.setenv("NVFP4CTL_TIMEOUT", "30")
    assert plan.resolve_timeout(None, (60.0, "timeout")) == (30.0, "NVFP4CTL_TIMEOUT")
    assert plan.resolve_timeout(5.0, (60.0, "timeout")) == (5.0, "--timeout")
    with pytest.raises(UsageError, match=r"^--timeout -1: expected a finite number of seconds > 0$"):
        plan.resolve_timeout(-1.0, (60.0, "timeout"))


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_timeout_that_never_fires_is_refused(value, monkeypatch):
    with pytest.raises(UsageError, match="expected a finite number of seconds > 0"):
        plan.resolve_timeout(value, (60.0, "timeout"))
    monkeypatch.setenv("NVFP4CTL_TIMEOUT", str(value))
    with pytest.raises(UsageError, match=f"^NVFP4CTL_TIMEOUT={value}: expected a finite number of seconds > 0$"):
        plan.resolve_timeout(None, (60.0, "timeout"))


def test_shapes_past_the_kernels_int_sizes_are_refused():
    with pytest.raises(UsageError, match=r"^--shape 99999999999,256,256: 99999999999 is more than 2147483647 \(the kernels take int sizes\)$"):
        plan.parse_shape("99999999999,256,256")


def test_the_fake_problem_is_a_real_problem():
    # production code talks to every problem through ProblemBase; the fake gets no fallbacks
    from fake_problem import PROBLEM

    from nvfp4ctl.problems.base import ProblemBase

    assert isinstance(PROBLEM, ProblemBase)
    assert PROBLEM.shape_text(FakeCase(128, 128, 64, 2)) == "m=128 n=128 k=64 l=2"
    assert PROBLEM.output_names(()) == ["c"] and PROBLEM.explain((), None, None, None, rtol=1e-3, atol=1e-3) == []
