"""Which problem a task file is: `problem:`, else GPU MODE's unchanged task.yml read from its content."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.errors import UsageError
from nvfp4ctl.problems import get_problem, problem_names
from nvfp4ctl.task import load_task, parse_task

GEMM_ENTRY = '  - {"m": 128, "n": 256, "k": 256, "l": 1, "seed": 1111}\n'
GEMV_ENTRY = '  - {"m": 128, "k": 256, "l": 1, "seed": 1111}\n'
GROUP_ENTRY = '  - {"m": [96, 128], "n": [128, 256], "k": [256, 512], "g": 2, "seed": 1111}\n'


def gpu_mode_file(first_line: str, description: str, entry: str) -> str:
    """GPU MODE's task.yml shape (files, lang, description, config, tests, ranking_by), shortened."""
    head = f"{first_line}\n\n" if first_line else ""
    return (f'{head}files:\n  - {{"name": "submission.py", "source": "@SUBMISSION@"}}\n\nlang: "py"\n\n'
            f"description: |\n  You will implement a {description} kernel optimized for NVIDIA B200.\n"
            f'config:\n  main: "eval.py"\n\ntests:\n{entry}\nbenchmarks:\n{entry}\nranking_by: "geom"\n')


@pytest.mark.parametrize(
    "text, problem",
    [
        (gpu_mode_file("", "block scaled matrix-matrix multiplication", GEMM_ENTRY), "nvfp4_gemm"),
        (gpu_mode_file("# name: nvfp4-dual-gemm", "block scaled dual matrix-matrix multiplication with silu activation",
                       GEMM_ENTRY), "nvfp4_dual_gemm"),
        # the grouped GEMM's first line says nvfp4-block-scaled-gemm: its description and list keys decide
        (gpu_mode_file("# name: nvfp4-block-scaled-gemm", "block scaled group matrix-matrix multiplication",
                       GROUP_ENTRY), "nvfp4_group_gemm"),
        (gpu_mode_file("", "batched matrix-vector multiplication", GEMV_ENTRY), "nvfp4_gemv"),
        ("tests:\n" + GROUP_ENTRY, "nvfp4_group_gemm"),  # keys alone: g and lists
        ("tests:\n" + GEMV_ENTRY, "nvfp4_gemv"),  # keys alone: no n
        ("tests:\n" + GEMM_ENTRY, "nvfp4_gemm"),  # GEMM-shaped keys and nothing else: the default
        ("# name: nvfp4-dual-gemm\ntests:\n" + GEMM_ENTRY, "nvfp4_dual_gemm"),
    ],
)
def test_gpu_mode_files_are_recognised(text: str, problem: str) -> None:
    task = parse_task(text, Path("task.yml"))
    assert task.problem == problem


def test_reference_beside_the_file_decides_between_gemm_shaped_problems(tmp_path: Path) -> None:
    (tmp_path / "task.yml").write_text("tests:\n" + GEMM_ENTRY)
    (tmp_path / "reference.py").write_text("def ref_kernel(data):\n    return silu(r1) * r2  # _scaled_mm twice\n")
    assert load_task(tmp_path / "task.yml").problem == "nvfp4_dual_gemm"


@pytest.mark.parametrize("preamble", ["#!/usr/bin/env yaml\n", "\ufeff#!/usr/bin/env yaml\n", "\ufeff"])
def test_the_name_comment_is_read_past_a_shebang_line_and_a_byte_order_mark(preamble: str) -> None:
    """Past the same preamble export and lint read past (past_preamble); a `#!` line hid the comment."""
    text = preamble + "# name: nvfp4-dual-gemm\ntests:\n" + GEMM_ENTRY
    assert parse_task(text, Path("task.yml")).problem == "nvfp4_dual_gemm"


@pytest.mark.parametrize(
    "text, message",
    [
        # a dual name comment on GEMV-shaped tests: nothing fits
        ("# name: nvfp4-dual-gemm\ntests:\n" + GEMV_ENTRY, "task.yml: fits none of the problems ("),
        (gpu_mode_file("", "batched matrix-vector multiplication", GEMM_ENTRY), "task.yml: fits none of the problems ("),
        # the misleading comment alone fits the GEMM and the grouped GEMM alike
        ("# name: nvfp4-block-scaled-gemm\ntests: []\n", "task.yml: fits nvfp4_gemm and nvfp4_group_gemm alike; add `problem: NAME`"),
    ],
)
def test_a_file_fitting_none_or_two_is_one_line(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_task(text, Path("task.yml"))
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_problem_key_wins_over_the_content() -> None:
    text = gpu_mode_file("# name: nvfp4-dual-gemm", "dual matrix-matrix multiplication", GEMM_ENTRY)
    assert parse_task("problem: nvfp4_gemm\n" + text).problem == "nvfp4_gemm"


@pytest.mark.parametrize("name", problem_names())
def test_shipped_task_files_load_with_speed_of_light(name: str) -> None:
    problem = get_problem(name)
    task = load_task(problem.task_file)
    assert task.problem == name and len(task.tests) == 10
    assert all(problem.sol_us(case) for case in task.benchmarks)
    text = problem.task_file.read_text()
    assert parse_task(text.replace(f"problem: {name}\n", "")).problem == name  # recognised without the key too


def test_group_entries_are_validated_per_group() -> None:
    bad = 'problem: nvfp4_group_gemm\ntests:\n  - {"m": [96], "n": [128, 256], "k": [256, 512], "g": 2, "seed": 1}\n'
    with pytest.raises(UsageError, match=r"^task.yml:3: tests\[0\].m: expected a list of 2 positive integers"):
        parse_task(bad, Path("task.yml"))
    bad_k = bad.replace('"m": [96]', '"m": [96, 128]').replace("[256, 512]", "[256, 500]")
    with pytest.raises(UsageError, match=r"^task.yml:3: tests\[0\].k\[1\]: expected a multiple of 16"):
        parse_task(bad_k, Path("task.yml"))


def test_gemv_k_must_be_a_multiple_of_64() -> None:
    text = 'problem: nvfp4_gemv\ntests:\n  - {"m": 128, "k": 96, "l": 1, "seed": 1}\n'
    with pytest.raises(UsageError, match=r"^task.yml:3: tests\[0\].k: expected a multiple of 64"):
        parse_task(text, Path("task.yml"))


GPU_MODE_DIR = Path(__file__).resolve().parents[2] / "build" / "gpu_mode"  # ignored; see gpu_mode_digests.py


@pytest.mark.parametrize("name", problem_names())
def test_gpu_mode_task_files_unchanged_are_recognised(name: str) -> None:
    """GPU MODE's own task.yml beside its reference.py (extracted by gpu_mode_digests.py --extract)."""
    path = GPU_MODE_DIR / name / "task.yml"
    if not path.is_file():
        pytest.skip(f"{path} not extracted (tests/problems/gpu_mode_digests.py --extract GIT_DIR build/gpu_mode)")
    task = load_task(path)
    assert task.problem == name
    assert len(task.tests) == 10 and all(get_problem(name).sol_us(case) for case in task.benchmarks)


def test_keys_that_fit_no_problem_are_named_with_what_each_takes() -> None:
    """A GEMM entry without `l` (a common slip) said only "test keys disagree" four times."""
    with pytest.raises(UsageError) as caught:
        parse_task('tests:\n  - {"m": 128, "n": 256, "k": 256, "seed": 1111}\n', Path("task.yml"))
    message = str(caught.value)
    assert message.startswith("task.yml: fits none of the problems (the tests' keys: m, n, k; ")
    assert "nvfp4_gemm: test keys (it takes m, n, k, l) disagree" in message
    assert "nvfp4_group_gemm: test keys (it takes g, m, n, k: m, n, k as lists of g values) disagree" in message
    assert "nvfp4_gemv: test keys (it takes m, k, l) disagree" in message
    assert message.endswith("add `problem: NAME`") and "\n" not in message
