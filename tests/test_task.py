"""task.yml parsing: our file, GPU MODE's file unchanged, and one clear line for every mistake."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from nvfp4ctl.errors import UsageError
from nvfp4ctl.project import REPO_DIR
from nvfp4ctl.task import (RUN_TIMEOUT_KEYS, Case, TaskFileError, load_task, parse_task, run_limit,
                           task_path)

FACTS_TESTS = [
    (128, 256, 256), (128, 1536, 7168), (128, 3072, 1536), (256, 7168, 256), (256, 7168, 2048),
    (2304, 4608, 7168), (384, 7168, 2304), (512, 512, 7168), (512, 4096, 512), (512, 1536, 7168),
]  # fmt: skip

# GPU MODE's problems/nvidia/nvfp4_gemm/task.yml, shortened (description cut, fewer tests), keys unchanged
GPU_MODE_TASK = """\
files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "task.py", "source": "task.py"}
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
  - {"m": 128, "n": 1536, "k": 7168, "l": 1, "seed": 1111}

benchmarks:
  - {"m": 128, "n": 7168, "k": 16384, "l": 1, "seed": 1111}

ranking_by: "geom"
"""

MINIMAL = 'tests:\n  - {"m": 128, "n": 256, "k": 256, "l": 1, "seed": 1111}\n'


def test_repository_task_yml_has_the_leaderboard_cases() -> None:
    task = load_task(REPO_DIR / "task.yml")
    assert [(case.m, case.n, case.k) for case in task.tests] == FACTS_TESTS
    assert all((case.l, case.seed) == (1, 1111) for case in task.tests + task.benchmarks)
    assert [(case.m, case.n, case.k, case.sol_us) for case in task.benchmarks] == [
        (128, 7168, 16384, 8.994),
        (128, 4096, 7168, 2.354),
        (128, 7168, 2048, 1.333),
    ]
    assert (task.problem, task.rtol, task.atol, task.ranking, task.timeout_s) == ("nvfp4_gemm", 1e-3, 1e-3, "geom", 180.0)
    assert task.submission is None and dict(task.lint) == {}
    assert task.path == REPO_DIR / "task.yml"


def test_gpu_mode_task_yml_loads_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "task.yml"
    path.write_text(GPU_MODE_TASK)
    task = load_task(path)
    assert task.tests == (Case(128, 256, 256, 1, 1111), Case(128, 1536, 7168, 1, 1111))
    assert task.benchmarks == (Case(128, 7168, 16384, 1, 1111),)
    assert (task.rtol, task.atol, task.timeout_s, task.ranking, task.submission) == (1e-3, 1e-3, 180.0, "geom", None)
    assert [task.timeout_for(run) for run in RUN_TIMEOUT_KEYS] == [None, None, None]
    assert task.warnings == ()


def test_a_timeout_set_to_the_default_is_told_from_none(tmp_path: Path) -> None:
    path = tmp_path / "task.yml"
    path.write_text(MINIMAL + "timeout: 180\n")
    assert load_task(path).timeout_for("test_timeout") == (180.0, "timeout")


def test_gpu_mode_limits_are_read_per_run_ahead_of_our_timeout() -> None:
    """GPU MODE's grouped GEMM sets ranked_timeout: 300 alone; its test and benchmark runs keep kernelbot's
    180 s default. Each run's own key comes first, then `timeout:`, which applies to every run."""
    gpu_modes = parse_task(GPU_MODE_TASK + "ranked_timeout: 300\n", Path("task.yml"))
    assert [gpu_modes.timeout_for(run) for run in RUN_TIMEOUT_KEYS] == [None, None, (300.0, "ranked_timeout")]
    ours = parse_task(MINIMAL + "timeout: 60\ntest_timeout: 120\n", Path("task.yml"))
    assert [ours.timeout_for(run) for run in RUN_TIMEOUT_KEYS] == [(120.0, "test_timeout"), (60.0, "timeout"),
                                                                    (60.0, "timeout")]


def test_a_run_s_timeout_is_resolved_by_the_task_under_its_file_s_name(tmp_path: Path, monkeypatch) -> None:
    """check, bench and tune ask the task alone: --timeout > NVFP4CTL_TIMEOUT > the run's key > 180."""
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)
    monkeypatch.chdir(tmp_path)  # messages name the file by its short path
    path = tmp_path / "mine.yml"
    path.write_text(MINIMAL + "timeout: 60\ntest_timeout: 120\n")
    task = load_task(path)
    assert [task.resolve_timeout(None, run) for run in RUN_TIMEOUT_KEYS] == [
        (120.0, "mine.yml test_timeout"), (60.0, "mine.yml timeout"), (60.0, "mine.yml timeout")]
    assert task.resolve_timeout(5.0, "test_timeout") == (5.0, "--timeout")
    assert parse_task(GPU_MODE_TASK, None).resolve_timeout(None, "benchmark_timeout") == (180.0, "default")
    monkeypatch.setenv("NVFP4CTL_TIMEOUT", "30")
    assert task.resolve_timeout(None, "test_timeout") == (30.0, "NVFP4CTL_TIMEOUT")
    with pytest.raises(UsageError, match="--timeout 0: expected a finite number of seconds > 0"):
        task.resolve_timeout(0.0, "test_timeout")


# A grouped-GEMM task.yml as an earlier `nvfp4ctl init` wrote it: GPU MODE's ranked limit as the generic key
OLD_GROUPED_TASK = """\
problem: nvfp4_group_gemm
tests:
  - {"m": [96, 128], "n": [128, 256], "k": [256, 512], "g": 2, "seed": 1111}
benchmarks:
  - {"m": [192, 320], "n": [3072, 3072], "k": [4096, 4096], "g": 2, "seed": 1111, "sol_us": 2.406}
ranking_by: "geom"
tolerance: {rtol: 0.001, atol: 0.001}
timeout: 300  # GPU MODE's ranked_timeout for this problem
submission: submission.py
lint: {}
"""


def test_a_generic_timeout_that_is_not_gpu_modes_for_the_run_gets_one_note(tmp_path: Path, monkeypatch) -> None:
    """The old grouped task.yml's `timeout: 300` still applies to every run; where GPU MODE gives the run
    another limit (180 s for tests and benchmarks), the note names it and the key that would set it."""
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "task.yml"
    path.write_text(OLD_GROUPED_TASK)
    task = load_task(path)
    notes = {}
    for run in RUN_TIMEOUT_KEYS:
        seconds, source = task.resolve_timeout(None, run)
        assert (seconds, source) == (300.0, "task.yml timeout")  # the limit is unchanged
        notes[run] = task.gpu_mode_limit_note(run, source)
    assert notes == {
        "test_timeout": "GPU MODE gives this problem's test runs 180 s, not task.yml's timeout: 300: add"
                        " test_timeout: 180 to task.yml",
        "benchmark_timeout": "GPU MODE gives this problem's benchmark runs 180 s, not task.yml's timeout: 300:"
                             " add benchmark_timeout: 180 to task.yml",
        "ranked_timeout": None,  # GPU MODE's 300 s: the same
    }
    # the run's own key, --timeout or NVFP4CTL_TIMEOUT decides: nothing to say
    assert task.gpu_mode_limit_note("test_timeout", task.resolve_timeout(60.0, "test_timeout")[1]) is None
    monkeypatch.setenv("NVFP4CTL_TIMEOUT", "30")
    assert task.gpu_mode_limit_note("test_timeout", task.resolve_timeout(None, "test_timeout")[1]) is None
    monkeypatch.delenv("NVFP4CTL_TIMEOUT")
    path.write_text(OLD_GROUPED_TASK + "test_timeout: 180\n")
    task = load_task(path)
    assert task.gpu_mode_limit_note("test_timeout", task.resolve_timeout(None, "test_timeout")[1]) is None
    # a GEMM folder's `timeout: 180` is GPU MODE's for every run
    path.write_text(MINIMAL + "timeout: 180\n")
    task = load_task(path)
    assert all(task.gpu_mode_limit_note(run, task.resolve_timeout(None, run)[1]) is None for run in RUN_TIMEOUT_KEYS)
    # a grouped GEMM `timeout: 600` of the user's own choosing is no value GPU MODE gives any run: it stands unremarked
    path.write_text(OLD_GROUPED_TASK.replace("timeout: 300", "timeout: 600"))
    task = load_task(path)
    assert task.timeout_s == 600.0
    assert all(task.gpu_mode_limit_note(run, task.resolve_timeout(None, run)[1]) is None for run in RUN_TIMEOUT_KEYS)


# GPU MODE's limits per problem (gpu-mode/reference-kernels problems/nvidia/<name>/task.yml; kernelbot's 180 s
# where a file sets none): test, benchmark, ranked
GPU_MODE_LIMITS = {"nvfp4_gemm": (180, 180, 180), "nvfp4_dual_gemm": (180, 180, 180),
                   "nvfp4_group_gemm": (180, 180, 300), "nvfp4_gemv": (180, 180, 180)}


@pytest.mark.parametrize("problem", sorted(GPU_MODE_LIMITS))
def test_shipped_task_files_carry_gpu_modes_limits(problem: str) -> None:
    from nvfp4ctl.project import PACKAGE_DIR

    task = load_task(PACKAGE_DIR / "problems" / problem / "task.yml")
    assert tuple(task.timeout_for(run) for run in RUN_TIMEOUT_KEYS) == tuple(
        (float(seconds), run) for seconds, run in zip(GPU_MODE_LIMITS[problem], RUN_TIMEOUT_KEYS))


def test_extras_are_read(tmp_path: Path) -> None:
    path = tmp_path / "mine.yml"
    path.write_text(
        MINIMAL + "tolerance: {rtol: 1e-2, atol: 0.5}\ntimeout: 30\nsubmission: sub/submission.py\n"
        "lint: {ignore: [NV201]}\nproblem: nvfp4_gemm\n"
    )
    task = load_task(path)
    assert (task.rtol, task.atol, task.timeout_s) == (0.01, 0.5, 30.0)  # `1e-2` is a string to PyYAML
    assert task.submission == tmp_path / "sub" / "submission.py"
    assert dict(task.lint) == {"ignore": ["NV201"]}
    assert task.benchmarks == ()


def test_case_label() -> None:
    assert Case(128, 256, 256, 1, 1111).label() == "m=128 n=256 k=256 l=1 seed=1111"


BENCH = '\nbenchmarks:\n  - {"m": 128, "n": 7168, "k": 16384, "l": 1, "seed": 1111}\n  - {"m": 1, "n": 1, "k": 16, "l": 1, "seed": 1}\n'


@pytest.mark.parametrize(
    "text, message",
    [
        (MINIMAL + BENCH + '  - {"m": 128, "n": 7168, "k": -5, "l": 1, "seed": 1111}\n',
         "task.yml: benchmarks[2].k: expected a positive integer, got -5"),
        (MINIMAL.replace('"m": 128', '"m": "x"'), "task.yml: tests[0].m: expected a positive integer, got 'x'"),
        (MINIMAL.replace('"m": 128', '"m": 1.5'), "task.yml: tests[0].m: expected a positive integer, got 1.5"),
        (MINIMAL.replace('"l": 1', '"l": true'), "task.yml: tests[0].l: expected a positive integer, got true"),
        (MINIMAL.replace('"seed": 1111', '"seed": -1'), "task.yml: tests[0].seed: expected a non-negative integer, got -1"),
        (MINIMAL.replace(', "seed": 1111', ""), "task.yml: tests[0].seed: missing"),
        (MINIMAL.replace('"seed": 1111', '"seed": 99999999999999999999'),
         "task.yml: tests[0].seed: expected at most 9223372036854775807 (torch takes a 64-bit seed), got 99999999999999999999"),
        (MINIMAL.replace('"m": 128', '"m": 99999999999'),
         "task.yml: tests[0].m: expected at most 2147483647 (the kernels take int sizes), got 99999999999"),
        (MINIMAL.replace('"seed"', '"sedd"'), "task.yml: tests[0].sedd: unknown field (expected m, n, k, l, seed, sol_us)"),
        (MINIMAL.replace('"k": 256', '"k": 100'), "task.yml: tests[0].k: expected a multiple of 16 (one scale per 16 elements), got 100"),
        (MINIMAL.replace("}", ', "sol_us": 0}'), "task.yml: tests[0].sol_us: expected a positive number of microseconds, got 0"),
        ("tests:\n  - 5\n", "task.yml: tests[0]: expected a mapping with m, n, k, l, seed, got 5"),
        ("tests: []\n", "task.yml: tests: expected a non-empty list like [{m: 128, n: 256, k: 256, l: 1, seed: 1111}, ...], got []"),
        ("benchmarks: []\n", "task.yml: tests: expected a non-empty list like [{m: 128, n: 256, k: 256, l: 1, seed: 1111}, ...], got nothing"),
        (MINIMAL + "benchmarks: {m: 1}\n", "task.yml: benchmarks: expected a non-empty list like [{m: 128, n: 256, k: 256, l: 1, seed: 1111}, ...], got {'m': 1}"),
        (MINIMAL + "tolerance: {rtol: abc}\n", "task.yml: tolerance.rtol: expected a non-negative number, got 'abc'"),
        (MINIMAL + "tolerance: {atol: -1}\n", "task.yml: tolerance.atol: expected a non-negative number, got -1"),
        (MINIMAL + "tolerance: {rtl: 1}\n", "task.yml: tolerance.rtl: unknown field (expected rtol, atol)"),
        (MINIMAL + "tolerance: 0.001\n", "task.yml: tolerance: expected a mapping like {rtol: 0.001, atol: 0.001}, got 0.001"),
        (MINIMAL + "timeout: 0\n", "task.yml: timeout: expected a positive number of seconds, got 0"),
        (MINIMAL + "timeout: .inf\n", "task.yml: timeout: expected a positive number of seconds, got .inf"),
        (MINIMAL + "timeout: true\n", "task.yml: timeout: expected a positive number of seconds, got true"),
        (MINIMAL + "timeout: -.inf\n", "task.yml: timeout: expected a positive number of seconds, got -.inf"),
        (MINIMAL + "ranked_timeout: 0\n", "task.yml: ranked_timeout: expected a positive number of seconds, got 0"),
        (MINIMAL + "test_timeout: soon\n", "task.yml: test_timeout: expected a positive number of seconds, got 'soon'"),
        (MINIMAL + "submission: [a, false, null]\n", "task.yml: submission: expected a path to a submission.py, got ['a', false, null]"),
        (MINIMAL + "tolerance: {rtol: no}\n", "task.yml: tolerance.rtol: expected a non-negative number, got false"),
        (MINIMAL + "ranking_by: median\n", "task.yml: ranking_by: expected one of geom, mean, last, got 'median'"),
        (MINIMAL + "problem: gemv\n", "task.yml: problem: expected one of nvfp4_gemm, nvfp4_dual_gemm, nvfp4_group_gemm, nvfp4_gemv, got 'gemv'; did you mean 'nvfp4_gemv'?"),
        (MINIMAL + "problem: xyz\n", "task.yml: problem: expected one of nvfp4_gemm, nvfp4_dual_gemm, nvfp4_group_gemm, nvfp4_gemv, got 'xyz'"),
        (MINIMAL + "problem: [gemv]\n", "task.yml: problem: expected one of nvfp4_gemm, nvfp4_dual_gemm, nvfp4_group_gemm, nvfp4_gemv, got ['gemv']"),
        (MINIMAL + "submission: [a]\n", "task.yml: submission: expected a path to a submission.py, got ['a']"),
        (MINIMAL + "lint: [NV201]\n", "task.yml: lint: expected a mapping of lint options, got ['NV201']"),
        ("", "task.yml: expected a mapping with tests and benchmarks, got an empty file"),
        ("- 1\n", "task.yml: expected a mapping with tests and benchmarks, got list"),
        ("tests: a: b\n", "task.yml: invalid YAML: mapping values are not allowed here"),
    ],
)  # fmt: skip
def test_malformed_task_is_one_line_naming_the_field(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_task(text, Path("task.yml"))
    # the line and the case's number are test_errors_give_the_line_and_the_cases_number's subject
    field_part = re.sub(r" \((?:test|benchmark) #\d+\)$", "", re.sub(r"^task\.yml:\d+(?::\d+)?:", "task.yml:", str(caught.value)))
    assert field_part == message
    assert "\n" not in str(caught.value)


def test_errors_give_the_line_and_the_cases_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = MINIMAL + '  - {"m": 128, "n": 256, "k": 250, "l": 1, "seed": 1111}\n' + BENCH
    with pytest.raises(UsageError) as caught:
        parse_task(text, Path("task.yml"))
    assert str(caught.value) == ("task.yml:3: tests[1].k: expected a multiple of 16 (one scale per 16 elements),"
                                 " got 250 (test #2)")
    with pytest.raises(UsageError, match=r"^task\.yml:6: benchmarks\[1\]\.k: .* \(benchmark #2\)$"):
        parse_task(MINIMAL + BENCH.replace('"k": 16,', '"k": 17,'), Path("task.yml"))
    with pytest.raises(UsageError, match=r"^task\.yml:4: tolerance\.rtol: expected a non-negative number, got 'abc'$"):
        parse_task(MINIMAL + "tolerance:\n  rtol: abc\n", Path("task.yml"))
    deeper = tmp_path / "sub" / "deeper"  # run from below the project: the file is named in full
    deeper.mkdir(parents=True)
    (tmp_path / "task.yml").write_text(text)
    monkeypatch.chdir(deeper)
    with pytest.raises(UsageError, match=f"^{re.escape(str(tmp_path / 'task.yml'))}:3: tests\\[1\\]"):
        load_task(tmp_path / "task.yml")


def test_anchors_and_merge_keys_still_load() -> None:
    text = ('base: &b {"m": 128, "n": 256, "k": 256, "l": 1, "seed": 1111}\n'
            "tests:\n  - *b\n  - <<: *b\n    seed: 7\n")
    assert [case.seed for case in parse_task(text, Path("task.yml")).tests] == [1111, 7]


@pytest.mark.parametrize("text, message", [
    (MINIMAL + MINIMAL, "task.yml:3:1: invalid YAML: duplicate key 'tests', first on line 1"),
    ('tests:\n  - {"m": 128, "m": 256, "n": 256, "k": 256, "l": 1, "seed": 1111}\n',
     "task.yml:2:16: invalid YAML: duplicate key 'm', first on line 2"),
    ("tests: " + "[" * 5000 + "]" * 5000 + "\n", "task.yml: invalid YAML: nested too deeply"),
])
def test_duplicate_keys_and_deep_nesting_are_one_line(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_task(text, Path("task.yml"))
    assert str(caught.value) == message


def test_unreadable_files_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"missing\.yml: cannot read the task file \(No such file or directory\)"):
        load_task(tmp_path / "missing.yml")
    with pytest.raises(UsageError, match="cannot read the task file"):
        load_task(tmp_path)  # a folder
    binary = tmp_path / "task.yml"
    binary.write_bytes(b"\xff\xfe\x00tests")
    with pytest.raises(UsageError, match="not a UTF-8 text file"):
        load_task(binary)


def test_an_unreadable_task_file_from_the_environment_names_the_variable(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stale NVFP4CTL_TASK in the shell: the line must say where the path came from."""
    monkeypatch.setenv("NVFP4CTL_TASK", str(tmp_path / "gone.yml"))
    with pytest.raises(UsageError) as caught:
        load_task()
    assert str(caught.value) == f"NVFP4CTL_TASK={tmp_path}/gone.yml: cannot read the task file (No such file or directory)"


def test_task_path_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = tmp_path / "explicit.yml"
    monkeypatch.setenv("NVFP4CTL_TASK", str(tmp_path / "from_env.yml"))
    assert task_path(explicit) == explicit
    assert task_path() == tmp_path / "from_env.yml"
    monkeypatch.delenv("NVFP4CTL_TASK")
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "task.yml").write_text(MINIMAL)
    monkeypatch.chdir(project / "sub")
    assert task_path() == project / "task.yml"
    assert load_task().source == "found from the current folder" and load_task().is_users
    monkeypatch.chdir(tmp_path)
    assert task_path() == REPO_DIR / "task.yml"
    assert load_task().source == "shipped with nvfp4ctl" and not load_task().is_users


def test_a_key_that_looks_like_a_typo_is_warned_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvfp4ctl import task as task_module

    text = MINIMAL + "timout: 5\ntolerence: {rtol: 0.5}\nmulti_gpu: true\n"  # GPU MODE may add keys: no warning
    assert parse_task(text, Path("task.yml")).warnings == (
        "task.yml:3: unknown key 'timout' ignored; did you mean 'timeout'?",
        "task.yml:4: unknown key 'tolerence' ignored; did you mean 'tolerance'?")
    said: list[str] = []
    monkeypatch.setattr(task_module, "get_console", lambda: type("C", (), {"warn": staticmethod(said.append)})())
    (tmp_path / "task.yml").write_text(text)
    monkeypatch.chdir(tmp_path)
    load_task(tmp_path / "task.yml")
    load_task(tmp_path / "task.yml")
    assert said == ["task.yml:3: unknown key 'timout' ignored; did you mean 'timeout'?",
                    "task.yml:4: unknown key 'tolerence' ignored; did you mean 'tolerance'?"]


def test_a_misspelt_tests_key_is_named_at_its_line_with_a_did_you_mean() -> None:
    """`test:` for `tests:` read "tests: ... got nothing", with no line and no hint: the near-miss warning
    comes after parsing, which the missing tests stopped."""
    text = "problem: nvfp4_gemm\ntimeout: 5\ntest:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n"
    with pytest.raises(UsageError) as raised:
        parse_task(text, Path("task.yml"))
    assert str(raised.value) == ("task.yml:3: unknown key 'test'; did you mean 'tests'? (tests is required: a non-empty"
                                 " list like [{m: 128, n: 256, k: 256, l: 1, seed: 1111}, ...])")


def test_each_command_in_one_process_says_the_task_ymls_typos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task.yml's warnings were said once per process: the second `nvfp4ctl lint` run in one (tests,
    lint_paths called again) read the same typo'd key and said nothing. workspace.reset() forgets them now."""
    from cli_streams import separate_streams_runner
    from nvfp4ctl.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntimout: 5\n" + MINIMAL)
    (tmp_path / "submission.py").write_text("def custom_kernel(data):\n    a, b, _, _, sfa, sfb, c = data\n    return c\n")
    for _ in range(2):
        result = separate_streams_runner().invoke(app, ["lint"])
        assert result.exit_code == 0, result.output
        assert "task.yml:2: unknown key 'timout' ignored; did you mean 'timeout'?" in result.stderr, result.stderr


def test_a_near_miss_is_warned_before_an_error_that_stops_the_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A typo'd key beside another mistake: the error stopped the parse before the warnings were made, so
    the user saw the error alone; a misspelt key the error names already is not warned again."""
    from nvfp4ctl import task as task_module

    said: list[str] = []
    monkeypatch.setattr(task_module, "get_console", lambda: type("C", (), {"warn": staticmethod(said.append)})())
    monkeypatch.setattr(task_module, "_WARNED", set())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntimout: 5\ntolerance: {rtol: -1}\nbenchmark:\n"
                                       "  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\nconfig: {mian: eval.py}\n" + MINIMAL)
    with pytest.raises(UsageError) as raised:
        load_task(tmp_path / "task.yml")
    assert str(raised.value) == "task.yml:3: tolerance.rtol: expected a non-negative number, got -1"
    assert said == ["task.yml:2: unknown key 'timout' ignored; did you mean 'timeout'?",
                    "task.yml:4: unknown key 'benchmark' ignored; did you mean 'benchmarks'?",
                    "task.yml:6: unknown key 'mian' in config ignored (known: main, sources, include_dirs, defines,"
                    " compile_flags); did you mean 'main'?"]
    said.clear()
    task_module._WARNED.clear()  # once per command: the same typo in a new file is said again here
    (tmp_path / "task.yml").write_text("problem: nvfp4_gemm\ntimout: 5\ntest:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n")
    with pytest.raises(UsageError) as raised:
        load_task(tmp_path / "task.yml")
    assert str(raised.value).startswith("task.yml:3: unknown key 'test'; did you mean 'tests'?")
    assert said == ["task.yml:2: unknown key 'timout' ignored; did you mean 'timeout'?"]


@pytest.mark.parametrize("text, message", [
    ("tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n\tbad: 1\n",
     "task.yml:3:1: invalid YAML: found character '\\t' that cannot start any token"),
    ("tests: [\n", "task.yml:2:1: invalid YAML: expected the node content, but found '<stream end>'"),
    (MINIMAL + "---\n" + MINIMAL,
     "task.yml:3:1: invalid YAML: expected a single document in the stream, but found another document"),
    # a control character stopped PyYAML before its parse: that was a traceback
    (MINIMAL + "lang: p\x01y\n", "task.yml:3:8: invalid YAML: unacceptable character #x0001: special characters"
                                  " are not allowed"),
])  # fmt: skip
def test_invalid_yaml_is_one_line_at_file_line_column(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_task(text, Path("task.yml"))
    assert str(caught.value) == message


def test_near_misses_are_warned_beside_invalid_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task.yml that is not YAML said its parse error alone: the user fixed it and met `test:` next.
    The root mapping's keys read before the error are warned, then the `name:` lines at column 0 from
    the error's line on; a key inside a quoted scalar is no key."""
    from nvfp4ctl import task as task_module

    said: list[str] = []
    monkeypatch.setattr(task_module, "get_console", lambda: type("C", (), {"warn": staticmethod(said.append)})())
    monkeypatch.setattr(task_module, "_WARNED", set())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "task.yml").write_text(
        'description: "two lines,\ntimout: 5 is text"\ntest:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n'
        "tolerance: {rtol: 0.1\n  bad\nbenchmark:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\nrankingby: geom\n")
    with pytest.raises(UsageError) as raised:
        load_task(tmp_path / "task.yml")
    assert str(raised.value) == "task.yml:7:10: invalid YAML: expected ',' or '}', but got ':'"
    assert said == ["task.yml:3: unknown key 'test'; did you mean 'tests'?",
                    "task.yml:7: unknown key 'benchmark'; did you mean 'benchmarks'?",
                    "task.yml:9: unknown key 'rankingby'; did you mean 'ranking_by'?"]


def test_near_misses_are_warned_beside_a_control_character() -> None:
    text = "test:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\nlang: p\x00y\ntimout: 5\n"
    with pytest.raises(TaskFileError) as raised:
        parse_task(text, Path("task.yml"))
    assert str(raised.value).startswith("task.yml:3:8: invalid YAML: unacceptable character #x0000")
    assert raised.value.warnings == ("task.yml:1: unknown key 'test'; did you mean 'tests'?",
                                     "task.yml:4: unknown key 'timout'; did you mean 'timeout'?")


def test_a_key_read_through_a_control_character_is_not_named() -> None:
    """The rest of the file is read with a space for the control character; a key that space made
    ('bench marks' from bench\\x01marks) is not the file's, so it is not named."""
    text = "bench\x01marks:\n  - {m: 128}\ntest:\n  - {m: 128}\n"
    with pytest.raises(TaskFileError) as raised:
        parse_task(text, Path("task.yml"))
    assert raised.value.warnings == ("task.yml:3: unknown key 'test'; did you mean 'tests'?",)


def test_a_cli_command_on_invalid_yaml_warns_then_exits_2_in_one_line(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from nvfp4ctl import task as task_module
    from nvfp4ctl.cli import app

    monkeypatch.setattr(task_module, "_WARNED", set())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "log" / "MEMORY.md"))
    (tmp_path / "log").mkdir()  # a folder the setting names is not made
    (tmp_path / "task.yml").write_text("test:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\ntimeout: [5\n")
    (tmp_path / "submission.py").write_text("def custom_kernel(data):\n    return data[0]\n")
    result = CliRunner().invoke(app, ["lint", "submission.py"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert " ".join(result.output.split()) == ("warning: task.yml:1: unknown key 'test'; did you mean 'tests'?"
                                               " error: task.yml:4:1: invalid YAML: expected ',' or ']', but got"
                                               " '<stream end>'")


def test_a_near_miss_with_a_block_value_is_warned_at_its_key_line() -> None:
    text = MINIMAL + "benchmark:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1}\n"  # the list starts a line below
    assert parse_task(text, Path("task.yml")).warnings == (
        "task.yml:3: unknown key 'benchmark' ignored; did you mean 'benchmarks'?",)


def test_a_missing_field_is_named_at_its_entrys_line() -> None:
    with pytest.raises(UsageError) as caught:
        parse_task(MINIMAL + '  - {"m": 128, "n": 256, "l": 1, "seed": 1111}\n', Path("task.yml"))
    assert str(caught.value) == "task.yml:3: tests[1].k: missing (test #2)"


@pytest.mark.parametrize("text, message", [
    (MINIMAL + "true: 1\n", "task.yml:3: true: a key YAML reads as the boolean true, not a field name"
                            " (quote it to mean the text 'true')"),
    (MINIMAL + "1: a\ntrue: b\n", "task.yml:3: 1: a key YAML reads as the integer 1, not a field name"
                                  " (quote it to mean the text '1')"),
    ('tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111, on: 2}\n',
     "task.yml:2: tests[0].on: a key YAML reads as the boolean true, not a field name"
     " (quote it to mean the text 'on') (test #1)"),
    (MINIMAL + "tolerance: {1.0: 0.1, true: 2}\n", "task.yml:3: tolerance.1.0: a key YAML reads as the number 1.0,"
                                                   " not a field name (quote it to mean the text '1.0')"),
    (MINIMAL + "lint: {null: [NV201]}\n", "task.yml:3: lint.null: a key YAML reads as null, not a field name"
                                          " (quote it to mean the text 'null')"),
    (MINIMAL + "2026-01-01: x\n", "task.yml:3: 2026-01-01: a key YAML reads as the date 2026-01-01, not a field"
                                  " name (quote it to mean the text '2026-01-01')"),
    (MINIMAL + "config: {1: a, true: b}\n",  # GPU MODE's section: its keys are not ours, but True == 1 is a duplicate
     "task.yml:3:16: invalid YAML: duplicate key 'true': YAML reads it as true, the same key as '1' on line 3"),
])  # fmt: skip
def test_keys_yaml_reads_as_no_name_are_one_line_naming_the_key(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_task(text, Path("task.yml"))
    assert str(caught.value) == message


def test_keys_that_are_no_names_are_allowed_in_gpu_modes_sections_and_quoted_ones_are_names() -> None:
    task = parse_task(MINIMAL + "config: {1: a}\ntemplates: {true: b}\n'on': c\n", Path("task.yml"))
    assert len(task.tests) == 1


def test_unknown_keys_in_gpu_modes_fixed_sections_are_warned_with_the_known_ones() -> None:
    text = GPU_MODE_TASK.replace('"source": "task.py"', '"sorce": "task.py"').replace(
        '  main: "eval.py"', '  mian: "eval.py"').replace('  Python: "template.py"', '  Pyton: "template.py"\n  Rust: "t.rs"')
    assert parse_task(text, Path("task.yml")).warnings == (
        "task.yml:3: unknown key 'sorce' in files[1] ignored (known: name, source); did you mean 'source'?",
        "task.yml:11: unknown key 'mian' in config ignored (known: main, sources, include_dirs, defines,"
        " compile_flags); did you mean 'main'?",
        "task.yml:14: unknown key 'Pyton' in templates ignored (known: CUDA, Python, Triton, HIP, CuteDSL);"
        " did you mean 'Python'?",
        "task.yml:15: unknown key 'Rust' in templates ignored (known: CUDA, Python, Triton, HIP, CuteDSL)")


def test_every_key_gpu_mode_uses_loads_without_a_warning() -> None:
    # a CUDA task's config, every template language, and the top-level keys kernelbot reads besides
    text = MINIMAL + (
        'lang: "cu"\nfiles:\n  - name: submission.cu\n    source: "@SUBMISSION@"\n'
        'config:\n  sources: ["eval.cu", "submission.cu"]\n  include_dirs: []\n  defines: {N: "1"}\n'
        "  compile_flags: [-O3]\n"
        'templates: {CUDA: t.cu, Python: t.py, Triton: t.py, HIP: t.py, CuteDSL: t.py}\n'
        "validation: {version: v1, script: validate.py}\n"
        "libraries: [cutlass]\nseed: 5\nmulti_gpu: false\ngpus: [B200]\n"
        "test_timeout: 10\nbenchmark_timeout: 10\nranked_timeout: 10\ndescription: x\nproblem: nvfp4_gemm\n")
    assert parse_task(text, Path("task.yml")).warnings == ()


def test_a_near_miss_of_a_gpu_mode_top_level_key_is_warned() -> None:
    warnings = parse_task(MINIMAL + "multi_gpus: true\n", Path("task.yml")).warnings
    assert warnings == ("task.yml:3: unknown key 'multi_gpus' ignored; did you mean 'multi_gpu'?",)


def test_check_bench_and_tune_take_a_run_s_limit_its_source_and_gpu_mode_s_note_in_one_call(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("NVFP4CTL_TIMEOUT", raising=False)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "task.yml"
    path.write_text(OLD_GROUPED_TASK)
    task = load_task(path)
    assert run_limit(task, None, "test_timeout") == (
        300.0, "task.yml timeout", "GPU MODE gives this problem's test runs 180 s, not task.yml's timeout: 300: add"
                                   " test_timeout: 180 to task.yml")
    assert run_limit(task, None, "ranked_timeout") == (300.0, "task.yml timeout", None)
    assert run_limit(task, 60.0, "test_timeout") == (60.0, "--timeout", None)


GROUPED_TEST = 'problem: nvfp4_group_gemm\ntests:\n  - {"m": [128], "n": [256], "k": [256], "g": 1, "seed": 1111}\n'


def test_a_grouped_test_may_carry_the_gemms_l_of_1_and_no_other() -> None:
    """`"l": 1` copied from the GEMM's entries was refused as an unknown field, though it is what the grouped
    GEMM has: it is accepted and changes nothing; another l is one line."""
    plain = parse_task(GROUPED_TEST, Path("task.yml")).tests[0]
    with_l = parse_task(GROUPED_TEST.replace('"g": 1,', '"g": 1, "l": 1,'), Path("task.yml")).tests[0]
    assert with_l == plain and with_l.l == 1
    for written, got in (('"l": 2', "2"), ('"l": true', "true"), ('"l": [1]', "[1]")):
        with pytest.raises(UsageError) as caught:
            parse_task(GROUPED_TEST.replace('"g": 1,', f'"g": 1, {written},'), Path("task.yml"))
        assert str(caught.value) == ("task.yml:3: tests[0].l: expected 1 (GPU MODE's grouped GEMM has one batch per"
                                     f" group; l may be left out), got {got} (test #1)")


@pytest.mark.parametrize("g, lists, expected", [
    (1, "[128, 64]", "a list of 1 positive integer (one per group), got [128, 64]"),
    (2, "[128]", "a list of 2 positive integers (one per group), got [128]"),
])
def test_a_grouped_tests_list_of_the_wrong_length_is_counted_in_words(g: int, lists: str, expected: str) -> None:
    """"expected a list of 1 positive integers" where g is 1."""
    text = GROUPED_TEST.replace('"m": [128]', f'"m": {lists}').replace('"g": 1', f'"g": {g}')
    with pytest.raises(UsageError) as caught:
        parse_task(text, Path("task.yml"))
    assert str(caught.value) == f"task.yml:3: tests[0].m: expected {expected} (test #1)"


@pytest.fixture()
def never_blocked():
    """An alarm that raises in a read left waiting (a FIFO's open waits for a writer) so no test hangs."""
    import signal

    def blocked(*_: object) -> None:
        raise RuntimeError("the task file's read blocked")  # no OSError: the read's own handling would take it

    before = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, before)


def _fed_fifo(path: Path, text: str) -> None:
    """A FIFO at `path` that a writer thread fills with `text`, as `--task <(cat task.yml)` gives one; the writer
    gives up without a word where the reader closes first (a cap reached: a broken pipe)."""
    import os
    import threading

    os.mkfifo(path)

    def write() -> None:
        try:
            with path.open("w", encoding="utf-8") as fifo:
                fifo.write(text)
        except BrokenPipeError:
            pass

    threading.Thread(target=write, daemon=True).start()  # daemon: a test that never opens it leaves no thread


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes are POSIX")
def test_a_task_file_that_is_a_fifo_with_a_writer_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          never_blocked: None) -> None:
    """`--task <(cat task.yml)` (a FIFO, /dev/fd/63) is read as a file is, flag or NVFP4CTL_TASK."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    text = "problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 128, k: 256, l: 1, seed: 1}\n"
    _fed_fifo(tmp_path / "direct.yml", text)
    assert load_task(tmp_path / "direct.yml").tests[0].m == 128
    (tmp_path / "s.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    monkeypatch.chdir(tmp_path)
    _fed_fifo(tmp_path / "flag.yml", text)
    result = CliRunner().invoke(app, ["lint", "--task", "flag.yml", "s.py"])
    assert result.exit_code == 0, result.output
    _fed_fifo(tmp_path / "env.yml", text)
    monkeypatch.setenv("NVFP4CTL_TASK", "env.yml")
    result = CliRunner().invoke(app, ["lint", "s.py"])
    assert result.exit_code == 0, result.output


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes are POSIX")
def test_a_task_file_that_is_a_fifo_no_process_writes_is_refused_after_the_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, never_blocked: None) -> None:
    """`mkfifo f1; lint --task f1 s.py` hung for ever, the open waiting for a writer; it is refused once the
    writer's wait (as long as the atomic writer's for a reader) is over."""
    import os
    import signal
    import time

    from typer.testing import CliRunner

    from nvfp4ctl.cli import app
    from nvfp4ctl.fifo_read import FIFO_WRITER_WAIT_S

    signal.alarm(int(FIFO_WRITER_WAIT_S) + 3)  # the fixture's alarm, sooner: a hang fails the test in seconds
    os.mkfifo(tmp_path / "f1")
    (tmp_path / "s.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    monkeypatch.chdir(tmp_path)
    began = time.monotonic()
    result = CliRunner().invoke(app, ["lint", "--task", "f1", "s.py"])
    took = time.monotonic() - began
    assert (result.exit_code, " ".join(result.output.split())) == (2, "error: no process opened f1 for writing within 2 s")
    assert FIFO_WRITER_WAIT_S <= took < FIFO_WRITER_WAIT_S + 2, took


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes are POSIX")
def test_a_named_fifo_whose_writer_opened_it_is_read_however_slow_the_writer(tmp_path: Path,
                                                                             never_blocked: None) -> None:
    """The wait is for a writer to open the FIFO: one that has, then sends after the 2 s, is read, where a
    poll for data refused it as no writer at all."""
    import os
    import threading
    import time

    os.mkfifo(tmp_path / "f1")

    def write_late() -> None:
        with (tmp_path / "f1").open("w", encoding="utf-8") as fifo:  # opens at once, once the reader is there
            time.sleep(3)
            fifo.write("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 128, k: 256, l: 1, seed: 1}\n")

    threading.Thread(target=write_late, daemon=True).start()
    assert load_task(tmp_path / "f1").tests[0].m == 128


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self/fd"), reason="the fd links are Linux's")
@pytest.mark.parametrize("folder", ["/proc/self/fd", "/dev/fd"])
def test_a_task_file_that_is_an_anonymous_pipe_is_read_however_slow_its_writer(
        folder: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, never_blocked: None) -> None:
    """`--task <(sleep 8; cat task.yml)` was refused after 2 s as a FIFO no process writes, though its writer
    was there, only slow: a process substitution's pipe is open already, its writer there or gone, so the read
    ends without a wait of its own."""
    import os
    import threading
    import time

    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    text = "problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 128, k: 256, l: 1, seed: 1}\n"
    (tmp_path / "s.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    monkeypatch.chdir(tmp_path)
    for read in (lambda path: load_task(Path(path)).tests[0].m == 128,
                 lambda path: CliRunner().invoke(app, ["lint", "--task", path, "s.py"]).exit_code == 0):
        reading, writing = os.pipe()

        def write_late(writing: int = writing) -> None:
            time.sleep(3)  # past the 2 s a named FIFO's writer is given to open it
            with os.fdopen(writing, "w", encoding="utf-8") as pipe:
                pipe.write(text)

        threading.Thread(target=write_late, daemon=True).start()
        began = time.monotonic()
        try:
            assert read(f"{folder}/{reading}")
        finally:
            os.close(reading)
        assert time.monotonic() - began >= 3


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes are POSIX")
def test_a_fifo_or_device_past_the_cap_is_refused_having_read_that_far(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       never_blocked: None) -> None:
    """A stream that never ends (/dev/zero) stops at the cap; a FIFO fed past 1 MiB stands for it here, so a
    read that ignored the cap would end, not fill memory."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    over_the_cap = "problem: nvfp4_gemm\n" + "#" * (2**20 + 4096) + "\n"
    _fed_fifo(tmp_path / "direct.yml", over_the_cap)
    with pytest.raises(UsageError) as caught:
        load_task(tmp_path / "direct.yml")
    assert str(caught.value) == (f"{tmp_path / 'direct.yml'}: over 1 MiB, which no task file is (GPU MODE's are a few"
                                 " KiB), so not read as one (name a task.yml)")
    (tmp_path / "s.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    monkeypatch.chdir(tmp_path)
    _fed_fifo(tmp_path / "flag.yml", over_the_cap)
    result = CliRunner().invoke(app, ["lint", "--task", "flag.yml", "s.py"])
    assert (result.exit_code, " ".join(result.output.split())) == (
        2, "error: flag.yml: over 1 MiB, which no task file is (GPU MODE's are a few KiB), so not read as one (name a"
           " task.yml)")
    _fed_fifo(tmp_path / "env.yml", over_the_cap)
    monkeypatch.setenv("NVFP4CTL_TASK", "env.yml")
    result = CliRunner().invoke(app, ["dump", "--layout"])
    assert (result.exit_code, " ".join(result.output.split())) == (
        2, "error: NVFP4CTL_TASK=env.yml: over 1 MiB, which no task file is (GPU MODE's are a few KiB), so not read as"
           " one (name a task.yml)")


@pytest.fixture
def short_folder() -> Iterator[Path]:
    """A folder of /tmp with a short path: a Unix socket's path is limited to about 100 bytes."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _bound_socket(path: Path) -> socket.socket:
    bound = socket.socket(socket.AF_UNIX)
    bound.bind(str(path))
    return bound


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets are POSIX")
def test_a_task_file_that_is_a_socket_is_refused_in_the_readers_words(short_folder: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """--task, NVFP4CTL_TASK and a folder's task.yml naming a Unix socket: its open's raw ENXIO ("No such device or
    address") was the reason given, and a folder's task.yml that was one was passed over for the shipped task."""
    from cli_streams import separate_streams_runner

    from nvfp4ctl.cli import app

    (short_folder / "submission.py").write_text("def custom_kernel(data):\n    return data[6]\n")
    monkeypatch.chdir(short_folder)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    monkeypatch.setenv("NVFP4CTL_MEMORY", "/dev/null")
    reason = "cannot read the task file (a socket, which cannot be opened as a file)"
    with _bound_socket(short_folder / "t.sock"):
        with pytest.raises(UsageError) as caught:
            load_task(short_folder / "t.sock")
        assert str(caught.value) == f"{short_folder / 't.sock'}: {reason}"
        result = separate_streams_runner().invoke(app, ["check", "--task", "t.sock"])
        assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"error: t.sock: {reason}\n")
        monkeypatch.setenv("NVFP4CTL_TASK", "t.sock")
        result = separate_streams_runner().invoke(app, ["check"])
        assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"error: NVFP4CTL_TASK=t.sock: {reason}\n")
    monkeypatch.delenv("NVFP4CTL_TASK")
    with _bound_socket(short_folder / "task.yml"):
        for command in (["check"], ["lint"]):
            result = separate_streams_runner().invoke(app, command)
            assert (result.exit_code, result.stdout) == (2, ""), result.output
            assert result.stderr == f"error: {short_folder / 'task.yml'}: {reason}\n"


def test_a_task_file_larger_than_any_is_refused_not_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nvfp4ctl.task

    monkeypatch.setattr(nvfp4ctl.task, "LARGEST_TASK_FILE", 2**20, raising=False)
    huge = tmp_path / "task.yml"
    huge.write_text("problem: nvfp4_gemm\n" + "#" * 2**20 + "\n")
    with pytest.raises(UsageError) as caught:
        load_task(huge)
    assert str(caught.value) == (f"{huge}: over 1 MiB, which no task file is (GPU MODE's are a few KiB), so not read"
                                 " as one (name a task.yml)")
