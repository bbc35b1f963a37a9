"""The one-line summary and exit code of a check run: timeout 3 > crash 4 > failure 1 > 0."""

from __future__ import annotations

import pytest

from fake_problem import FakeCase
from nvfp4ctl.check.run import CRASH, FAIL, NOT_RUN, PASS, TIMEOUT, CheckItem, CheckReport, ItemOutcome
from nvfp4ctl.errors import ExitCode
from nvfp4ctl.runner.raised import RAISED, UNSUPPORTED


def _report(*verdicts: str) -> CheckReport:
    items = [CheckItem(str(i), FakeCase(128, 128, 256), "m=128 n=128 k=256") for i in range(1, len(verdicts) + 1)]
    return CheckReport([ItemOutcome(item, verdict) for item, verdict in zip(items, verdicts)])


@pytest.mark.parametrize(
    "verdicts, exit_code, summary",
    [
        ([PASS] * 10, ExitCode.OK, "10/10 pass"),
        ([PASS, PASS, FAIL] + [PASS] * 7, ExitCode.FAILURES, "9/10 pass, 1 fail (test 3)"),
        ([PASS, FAIL, CRASH, FAIL], ExitCode.CRASH, "1/4 pass, 2 fail (tests 2, 4), 1 crash (test 3)"),
        ([PASS, PASS, TIMEOUT, NOT_RUN], ExitCode.TIMEOUT, "timeout in test 3"),
        ([FAIL, CRASH, PASS, PASS, PASS, TIMEOUT, NOT_RUN], ExitCode.TIMEOUT,
         "timeout in test 6, 1 fail (test 1), 1 crash (test 2)"),
        ([RAISED, TIMEOUT], ExitCode.TIMEOUT, "timeout in test 2, 1 raised (test 1)"),
        ([PASS, UNSUPPORTED, PASS], ExitCode.FAILURES, "2/3 pass, 1 unsupported (test 2)"),
        ([FAIL, UNSUPPORTED, RAISED], ExitCode.CRASH, "0/3 pass, 1 fail (test 1), 1 unsupported (test 2), 1 raised (test 3)"),
    ],
)
def test_exit_code_precedence_and_summary(verdicts, exit_code, summary):
    report = _report(*verdicts)
    assert report.exit_code == exit_code
    assert report.summary == summary


def test_shape_cases_are_named_by_label():
    report = CheckReport([ItemOutcome(CheckItem("s1", FakeCase(128, 128, 256), "m=128 n=128 k=256"), FAIL)])
    assert report.summary == "0/1 pass, 1 fail (shape 1)"


def test_a_target_that_cannot_load_is_a_crash():
    report = _report(NOT_RUN, NOT_RUN)
    report.load_error = "cannot load submission.py: ModuleNotFoundError: No module named 'x'"
    assert report.exit_code == ExitCode.CRASH
    assert report.summary == "crash: cannot load submission.py: ModuleNotFoundError: No module named 'x'"


def test_the_parent_never_imports_torch():
    import subprocess
    import sys

    code = (
        "import sys, nvfp4ctl.cli, nvfp4ctl.check.run, nvfp4ctl.check.render, nvfp4ctl.runner.worker\n"
        "assert 'torch' not in sys.modules, 'torch imported in the parent'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_only_identical_crashes_count_as_repeats() -> None:
    from types import SimpleNamespace

    from nvfp4ctl.check.render import repeated_crashes

    def outcome(test: int, verdict: str, message: str, tail: tuple[str, ...]) -> SimpleNamespace:
        item = SimpleNamespace(label=f"test {test}", shape=f"m={test}")
        return SimpleNamespace(item=item, verdict=verdict, message=message, log_tail=tail)

    outcomes = [
        outcome(1, "crash", "test 1 (m=1) crashed: the child died (exit code -11)", ("boom",)),
        outcome(2, "pass", "", ()),
        outcome(3, "crash", "test 3 (m=3) crashed: the child died (exit code -11)", ("boom",)),
        outcome(4, "crash", "test 4 (m=4) crashed: the child died (exit code -11)", ("other",)),
        outcome(5, "crash", "test 5 (m=5) crashed: the child died (exit code -11)", ("other",)),
    ]
    assert repeated_crashes(outcomes) == {2: "test 1", 4: "test 4"}
