"""The one-line summary and exit code of a check run: timeout 3 > crash 4 > failure 1 > 0."""

from __future__ import annotations

import pytest

from fake_problem import FakeCase
from nvfp4ctl.bounded_text import MAX_CAUSE
from nvfp4ctl.check.result import FIRST_CALL, PROBE_FRESH, REUSED, CaseResult, Comparison, Mismatch
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


def _comparison(mismatched: int = 3, max_abs_err: float = 0.03125, got: float = 0.5, unwritten: int = 0,
                **fields: object) -> Comparison:
    return Comparison(shape=(128, 128, 1), mismatched=mismatched, max_abs_err=max_abs_err, max_rel_err=0.1,
                      nan_got=0, inf_got=0, nan_want=0, inf_want=0, unwritten=unwritten,
                      first=(Mismatch((0, 17, 0), got, 0.25),), tile_wrong=((mismatched,),), tile_size=((16384,),),
                      **fields)


LONG = "output dtype is torch.float32, expected torch.float16 " + "x" * 80


def _failed(*results: CaseResult | None) -> CheckReport:
    items = [CheckItem(str(i), FakeCase(128, 128, 256), "m=128 n=128 k=256") for i in range(1, len(results) + 2)]
    return CheckReport([ItemOutcome(items[0], PASS)]
                       + [ItemOutcome(item, FAIL, result=result) for item, result in zip(items[1:], results)])


@pytest.mark.parametrize("result, summary", [
    (CaseResult(False, FIRST_CALL, comparison=_comparison()),
     "1/2 pass, 1 fail (test 2: max abs err 0.0312, first wrong at (0, 17, 0))"),
    (CaseResult(False, FIRST_CALL, comparison=_comparison(nonfinite_wrong=3, got=float("inf"))),
     "1/2 pass, 1 fail (test 2: inf at (0, 17, 0))"),
    (CaseResult(False, FIRST_CALL, comparison=_comparison(unwritten=3, nonfinite_wrong=3, got=float("nan"))),
     "1/2 pass, 1 fail (test 2: 3 elements never written, first at (0, 17, 0))"),
    (CaseResult(False, FIRST_CALL, comparison=_comparison(output="group 3 c")),
     "1/2 pass, 1 fail (test 2: group 3 c: max abs err 0.0312, first wrong at (0, 17, 0))"),
    (CaseResult(False, PROBE_FRESH, (f"{REUSED}: a fresh input tuple (seed 7) was passed, and ...",), _comparison()),
     f"1/2 pass, 1 fail (test 2: {REUSED})"),
    (CaseResult(False, FIRST_CALL, (LONG,)), f"1/2 pass, 1 fail (test 2: {LONG[:MAX_CAUSE - 1]}…)"),
    (None, "1/2 pass, 1 fail (test 2)"),
])
def test_a_failed_tests_cause_is_in_the_summary_the_run_log_keeps(result: CaseResult | None, summary: str) -> None:
    """The run log said "9/10 pass, 1 fail (test 3)": what was wrong (the error's size and where, NaN or Inf,
    poison never written, a reused result) went with the terminal's scrollback."""
    assert _failed(result).summary == summary
    assert len(summary) - len("1/2 pass, 1 fail (test 2: )") <= MAX_CAUSE


def test_several_failed_tests_name_the_one_whose_cause_is_given() -> None:
    report = _failed(CaseResult(False, FIRST_CALL, comparison=_comparison()),
                     CaseResult(False, FIRST_CALL, comparison=_comparison(max_abs_err=2.0)))
    assert report.summary == "1/3 pass, 2 fail (tests 2, 3; test 2: max abs err 0.0312, first wrong at (0, 17, 0))"


def _ended(*outcomes: tuple[str, str | None]) -> CheckReport:
    """A report of one test per (verdict, cause), numbered from 1."""
    items = [CheckItem(str(i), FakeCase(128, 128, 256), "m=128 n=128 k=256") for i in range(1, len(outcomes) + 1)]
    return CheckReport([ItemOutcome(item, verdict, cause=cause) for item, (verdict, cause) in zip(items, outcomes)])


@pytest.mark.parametrize("outcomes, summary", [
    ([(RAISED, "RuntimeError: shape mismatch in my tiling")],
     "0/1 pass, 1 raised (test 1: RuntimeError: shape mismatch in my tiling)"),
    ([(RAISED, "anti-cache probe: ValueError: no tile"), (RAISED, "KeyError: 3")],
     "0/2 pass, 2 raised (tests 1, 2; test 1: anti-cache probe: ValueError: no tile)"),
    ([(PASS, None), (UNSUPPORTED, "m must be a multiple of 128 (the kernel's tile M)")],
     "1/2 pass, 1 unsupported (test 2: m must be a multiple of 128 (the kernel's tile M))"),
    ([(CRASH, "killed by SIGSEGV"), (CRASH, "exit code 3")], "0/2 pass, 2 crash (tests 1, 2; test 1: killed by SIGSEGV)"),
    ([(CRASH, "RuntimeError: CUDA error: an illegal memory access was encountered")],
     "0/1 pass, 1 crash (test 1: RuntimeError: CUDA error: an illegal memory access was encountered)"),
    ([(TIMEOUT, "no result after 180 s"), (NOT_RUN, None)], "timeout in test 1 (no result after 180 s)"),
    ([(RAISED, "KeyError: 3"), (TIMEOUT, "computing the reference ran past 1.5 s"), (NOT_RUN, None)],
     "timeout in test 2 (computing the reference ran past 1.5 s), 1 raised (test 1: KeyError: 3)"),
    ([(FAIL, "the check itself failed: ValueError: bad seed\n  more")],
     "0/1 pass, 1 fail (test 1: the check itself failed: ValueError: bad seed more)"),
    ([(RAISED, LONG)], f"0/1 pass, 1 raised (test 1: {LONG[:MAX_CAUSE - 1]}…)"),
])
def test_each_kind_of_failed_test_gives_its_cause_in_the_summary_the_run_log_keeps(outcomes, summary) -> None:
    """The run log said "0/1 pass, 1 raised (test 1)" and "timeout in test 1": which exception, which signal
    or exit, how many seconds went with the terminal's scrollback; only a wrong result (FAIL) gave its cause."""
    assert _ended(*outcomes).summary == summary


@pytest.mark.parametrize("before", range(70, 80))
def test_a_long_cause_is_never_cut_inside_an_escape(before: int) -> None:
    """A cause is escaped before it is cut to MAX_CAUSE: a U+202E near the end was cut to `\\u20…`, a half
    escape in the last line and the run log's cell. The cut now falls before an escape it would split."""
    cause = "RuntimeError: " + "x" * (before - len("RuntimeError: ")) + "\u202e\x1b" + "y" * 20
    said = _ended((RAISED, cause)).summary
    given = said.removeprefix("0/1 pass, 1 raised (test 1: ").removesuffix(")")
    assert len(given) <= MAX_CAUSE and given.endswith("…"), said
    kept = given.removesuffix("…")
    whole = "RuntimeError: " + "x" * (before - len("RuntimeError: ")) + "\\u202e\\x1b" + "y" * 20
    assert whole.startswith(kept), said
    # what is kept ends at the x's, after the whole \u202e, or after the whole \x1b, never inside one
    assert kept.endswith(("x", "\\u202e", "\\x1b", "y")), said


@pytest.mark.parametrize("columns", [40, 10])
def test_a_narrow_terminal_gets_the_check_tables_values_whole(columns: int, monkeypatch, capsys) -> None:
    """check's table prints only on a GPU; at a width that would fold a shape or a verdict inside it, it is
    one record per test, every value whole, through the console's one rule. At 40 columns the table holds
    each word, wrapping a shape between its sizes: it stays a table."""
    from table_words import has_a_table, missing_words, printed_at

    from nvfp4ctl.commands.check import _show
    from nvfp4ctl.console import get_console

    report = _report(PASS, PASS, PASS)
    wide, narrow = (printed_at(width, lambda: _show(get_console(), report), monkeypatch, capsys)
                    for width in (400, columns))
    assert has_a_table(wide) and has_a_table(narrow) == (columns == 40)
    assert missing_words(narrow, wide) == []
