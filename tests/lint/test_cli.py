"""`nvfp4ctl lint` end to end through the Typer app: exit codes, formats, defaults, run log."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_streams import separate_streams_runner
from nvfp4ctl import runlog
from nvfp4ctl.cli import app

runner = CliRunner()
CLEAN = "def custom_kernel(data):\n    a, b, _, _, sfa, sfb, c = data\n    return c\n"
WARNS = "def custom_kernel(data):\n    print('hi')\n    return data[6]\n"
ERRS = "import torch\ng = torch.cuda.CUDAGraph()\n\ndef custom_kernel(data):\n    return data[6]\n"
TASK_YML = "tests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111}\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "warns.py").write_text(WARNS)
    (tmp_path / "errs.py").write_text(ERRS)
    return tmp_path


def test_clean_file_exits_0(project: Path) -> None:
    result = runner.invoke(app, ["lint", "clean.py"])
    assert result.exit_code == 0, result.output
    assert "All checks passed (1 file checked)" in result.output


def test_a_name_that_is_not_utf8_is_shown_as_the_run_log_writes_it(project: Path) -> None:
    """Python holds b"\\xff" of a file's name as the lone surrogate \\udcff: the finding and the missing
    file's error named `errs\\udcff.py`, where the run log writes `errs\\xff.py`."""
    (project / "errs\udcff.py").write_text(ERRS)
    result = separate_streams_runner().invoke(app, ["lint", "errs\udcff.py"])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("errs\\xff.py:2:") and "udcff" not in result.stdout, result.stdout
    missing = separate_streams_runner().invoke(app, ["lint", "gone\udcff.py"])
    assert (missing.exit_code, missing.stderr) == (2, "error: no such file or folder: gone\\xff.py\n")
    assert "error: no such file or folder: müde.py\n" == runner.invoke(app, ["lint", "müde.py"]).output


NAMES_SHOWN = (("a\x1b[31mb.py", "a\\x1b[31mb.py"), ("c[/]d.py", "c[/]d.py"))


@pytest.mark.parametrize(("name", "shown"), NAMES_SHOWN)
def test_a_name_holding_an_escape_or_markup_is_shown_as_written(project: Path, name: str, shown: str) -> None:
    """The error and info lines wrote a name's ESC to the terminal (`touch $'a\\e[31mb.py'` turned the rest of
    the line red), where the findings and tables show it as `\\x1b`; rich's markup (`[/]`) stays literal."""
    missing = separate_streams_runner().invoke(app, ["lint", f"gone/{name}"])
    assert (missing.exit_code, missing.stderr) == (2, f"error: no such file or folder: gone/{shown}\n")
    (project / name).parent.mkdir(exist_ok=True)  # `c[/]d.py`: the file `]d.py` in the folder `c[`
    (project / name).write_text(CLEAN)
    checked = separate_streams_runner().invoke(app, ["lint", "-v", name])
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.endswith(f"checked: {shown}\n") and "\x1b" not in checked.stdout, checked.stdout


def test_the_run_log_escapes_a_name_as_the_terminal_shows_it(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run log's line for a name with ESC holds `\\x1b`, as the console's message: it held the raw ESC, and
    `cat MEMORY.md` recoloured the terminal."""
    (project / "a\x1b[31mb.py").write_text(CLEAN)
    for line in (["lint", "gone\x1b[31m.py"], ["lint", "-v", "a\x1b[31mb.py"]):
        monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *line])  # the line the run log's entry names
        runner.invoke(app, line)
    text = Path(os.environ["NVFP4CTL_MEMORY"]).read_bytes().decode()
    assert "\x1b" not in text
    cells = [line.split(" · ")[1:] for line in text.splitlines()[-2:]]
    assert cells[0][0] == "`nvfp4ctl lint 'gone\\x1b[31m.py'`"
    assert cells[0][-1] == "error: no such file or folder: gone\\x1b[31m.py"
    assert cells[1][0] == "`nvfp4ctl lint -v 'a\\x1b[31mb.py'`"
    assert cells[1][1].startswith(f"{project / 'a'}\\x1b[31mb.py@")
    assert cells[1][-1] == "0 errors, 0 warnings (1 file checked)"


def test_a_named_file_that_is_not_a_source_says_only_the_word_rule_applies(project: Path) -> None:
    (project / "notes.md").write_text("the iostream header\n")
    (project / "plain.md").write_text("plain notes\n")
    result = runner.invoke(app, ["lint", "plain.md"])
    assert result.exit_code == 0
    assert 'plain.md: not a Python or C++ source: only NV101 (the word "stream") applies' in result.output
    assert runner.invoke(app, ["lint", "notes.md"]).exit_code == 1  # the server's check reads any text
    assert "not a Python or C++ source" not in runner.invoke(app, ["lint", "clean.py"]).output


def test_warnings_alone_exit_0_errors_exit_1(project: Path) -> None:
    assert runner.invoke(app, ["lint", "warns.py"]).exit_code == 0
    result = runner.invoke(app, ["lint", "errs.py", "warns.py"])
    assert result.exit_code == 1
    assert "errs.py:2:5: NV201 CUDA graph API" in result.output
    assert "Found 1 error, 1 warning in 2 files (2 checked)" in result.output


@pytest.mark.parametrize("args, message", [
    (["lint", "missing.py"], "no such file or folder: missing.py"),
    (["lint", "--select", "NV999", "clean.py"], "unknown rule code or prefix 'NV999'"),
    (["lint", "--ignore", "NV101", "clean.py"], "cannot be ignored"),
    (["lint", "--profile", "fast", "clean.py"], "--profile: expected one of"),
])
def test_usage_errors_exit_2_with_one_line(project: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_unreadable_file_exits_2(project: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    path = project / "locked.py"
    path.write_text(CLEAN)
    path.chmod(0)
    assert runner.invoke(app, ["lint", "locked.py"]).exit_code == 2


def test_json_format(project: Path) -> None:
    result = runner.invoke(app, ["lint", "--format", "json", "."])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["summary"] == {"errors": 1, "warnings": 1, "files_checked": 3, "files_with_findings": 2,
                                  "not_submissions": [], "compiler_outputs": [], "nothing_to_lint": [],
                                  "unknown_waivers": []}
    assert {d["code"] for d in payload["diagnostics"]} == {"NV201", "NV801"}


def test_json_format_stopped_by_an_error_is_a_json_document(project: Path) -> None:
    result = separate_streams_runner().invoke(app, ["lint", "--format", "json", "nosuch.py"])
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {"version": 1, "error": "no such file or folder: nosuch.py", "exit_code": 2}


def test_select_by_prefix_on_the_command_line(project: Path) -> None:
    result = runner.invoke(app, ["lint", "--select", "NV8", "."])
    assert result.exit_code == 0
    assert "NV801" in result.output and "NV201" not in result.output


def test_list_rules_table_and_json(project: Path) -> None:
    table = runner.invoke(app, ["lint", "--list-rules"])
    assert table.exit_code == 0
    assert "NV101" in table.output and "NV901" in table.output
    document = json.loads(runner.invoke(app, ["lint", "--list-rules", "--format", "json"]).stdout)
    assert list(document) == ["version", "problem", "rules"]  # the version first, as in every document of lint's
    assert document["version"] == 1 and document["problem"] == "nvfp4_gemm"
    rules = document["rules"]
    assert [r["code"] for r in rules][:14] == ["NV001", "NV002", "NV003", "NV004", "NV005", "NV006", "NV007", "NV008", "NV009",
                                               "NV010", "NV011", "NV012", "NV013", "NV101"]
    quiet = runner.invoke(app, ["-q", "lint", "--list-rules"])  # the table is what was asked for: -q keeps it
    assert quiet.exit_code == 0 and quiet.output == table.output


def test_no_path_checks_kernels_and_the_task_submission(project: Path) -> None:
    kernels = project / "kernels"
    (kernels / "sm90").mkdir(parents=True)
    (kernels / "sm90" / "k.cu").write_text("__global__ void k() { printf(\"x\"); }\n")
    (project / "task.yml").write_text(TASK_YML + "submission: errs.py\nlint: {ignore: [NV8]}\n")
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 1
    assert "errs.py:2:5: NV201" in result.output
    assert "NV802" not in result.output  # ignored by task.yml
    assert "(2 checked)" in result.output


def test_no_path_and_folder_walks_skip_what_nvcc_keep_leaves(project: Path) -> None:
    """x.cudafe1.cpp and the other -keep outputs are the compiler's rewrite of a kernel with every
    header inlined (1-28 MB each), not the user's source: skipped and counted, checked only when named."""
    sm100 = project / "kernels" / "sm100"
    sm100.mkdir(parents=True)
    (sm100 / "k.cu").write_text("__global__ void k(float* c) { c[0] = 1.0f; }\n")
    generated = 'static void* last_ptr;\nvoid f(void* p) { if (p == last_ptr) { return; } }\n'
    for name in ("k.cudafe1.cpp", "k.cudafe1.stub.c", "k.cpp1.ii", "k.ptx"):
        (sm100 / name).write_text(generated)
        (project / name).write_text(generated)
    (project / "task.yml").write_text(TASK_YML + "submission: clean.py\n")
    result = runner.invoke(app, ["lint", "-v"])
    assert result.exit_code == 0, result.output
    assert "All checks passed (2 files checked; 2 compiler intermediates skipped, nvcc -keep output)" in result.output
    assert "kernels/sm100/k.cudafe1.cpp: skipped, a compiler intermediate (nvcc -keep output)" in result.output
    assert "checked: clean.py, kernels/sm100/k.cu\n" in result.output
    walked = json.loads(runner.invoke(app, ["lint", "--format", "json", "kernels"]).stdout)
    assert walked["files"] == ["kernels/sm100/k.cu"]
    assert walked["summary"]["compiler_outputs"] == ["kernels/sm100/k.cudafe1.cpp"]
    named = runner.invoke(app, ["lint", "kernels/sm100/k.cudafe1.cpp"])
    assert named.exit_code == 1 and "NV301" in named.output  # a file named is always checked
    (sm100 / "k.cu").unlink()
    nothing = runner.invoke(app, ["lint", "kernels"])
    assert nothing.exit_code == 2
    assert "1 compiler intermediate skipped (nvcc -keep output; name one to check it)" in nothing.output


def test_missing_default_submission_is_a_warning(project: Path) -> None:
    kernels = project / "kernels"
    kernels.mkdir()
    (kernels / "k.cu").write_text("__global__ void k() {}  // fine\n")
    (project / "task.yml").write_text(TASK_YML + "submission: gone.py\n")
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 0
    assert "gone.py: no such file; not checked" in result.output


def test_run_log_records_the_counts(project: Path) -> None:
    runner.invoke(app, ["lint", "errs.py"])
    log = Path(os.environ["NVFP4CTL_MEMORY"]).read_text()
    assert "1 error, 0 warnings in 1 file (1 checked)" in log
    assert "errs.py@" in log  # the single target, hashed


def test_run_log_counts_the_files_with_findings_as_the_summary_does(project: Path) -> None:
    """A bare lint of a submission with findings and a clean kernel: "in 1 file (2 checked)" on the
    terminal, where the run log said "in 2 files" (those checked)."""
    sm100 = project / "kernels" / "sm100"
    sm100.mkdir(parents=True)
    (sm100 / "k.cu").write_text("__global__ void k() {}  // fine\n")
    (project / "task.yml").write_text(TASK_YML + "submission: errs.py\n")
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 1, result.output
    assert "Found 1 error, 0 warnings in 1 file (2 checked)" in result.output
    log = Path(os.environ["NVFP4CTL_MEMORY"]).read_text()
    assert " · 1 error, 0 warnings in 1 file (2 checked)" in log
    assert "in 2 files" not in log


def test_run_log_of_a_clean_lint_counts_the_files_checked(project: Path) -> None:
    runner.invoke(app, ["lint", "clean.py", "warns.py"])
    runner.invoke(app, ["lint", "clean.py"])
    log = Path(os.environ["NVFP4CTL_MEMORY"]).read_text()
    assert "0 errors, 1 warning in 1 file (2 checked)" in log
    assert "0 errors, 0 warnings (1 file checked)" in log


def test_broken_link_in_a_folder_is_a_warning_not_an_abort(project: Path) -> None:
    sm100 = project / "kernels" / "sm100"
    sm100.mkdir(parents=True)
    (sm100 / "k.cu").write_text("__global__ void k() { printf(\"x\"); }\n")
    (sm100 / "old.cu").symlink_to("gone.cu")
    (project / "task.yml").write_text(TASK_YML + "submission: clean.py\n")
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 0, result.output
    assert "kernels/sm100/old.cu: broken link (to gone.cu); not checked" in result.output
    assert "(2 checked)" in result.output  # clean.py and k.cu


def test_broken_submission_link_beside_the_task_is_a_warning(project: Path) -> None:
    (project / "submission_old.py").symlink_to("gone.py")
    (project / "task.yml").write_text(TASK_YML + "submission: clean.py\n")
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 0, result.output
    assert "submission_old.py: broken link (to gone.py); not checked" in result.output


def test_a_link_back_to_a_parent_folder_is_walked_once(project: Path) -> None:
    sm90 = project / "kernels" / "sm90"
    sm90.mkdir(parents=True)
    (sm90 / "k.cu").write_text("__global__ void k() {}\n")
    (sm90 / "up").symlink_to("..", target_is_directory=True)  # kernels/sm90/up/sm90/up/... never ends
    result = runner.invoke(app, ["lint", "kernels"])
    assert result.exit_code == 0, result.output
    assert "1 file checked" in result.output
    from nvfp4ctl.lint.source import _walk

    assert _walk(project / "kernels", []) == [sm90 / "k.cu"]  # not 40 levels of up/sm90/up/... until ELOOP


def test_a_linked_folder_that_sorts_first_does_not_lend_its_name(project: Path) -> None:
    real = project / "kernels" / "sm90"
    real.mkdir(parents=True)
    (real / "k.cu").write_text("__global__ void k() { printf(\"x\"); }\n")
    (project / "kernels" / "a_latest").symlink_to("sm90", target_is_directory=True)
    result = runner.invoke(app, ["-v", "lint", "kernels"])
    assert "kernels/sm90/k.cu:1:23: NV802" in result.output and "a_latest" not in result.output
    assert "(1 checked)" in result.output
    elsewhere = project / "elsewhere"  # a link to a folder outside the walk: found under the link
    elsewhere.mkdir()
    (elsewhere / "e.cu").write_text("__global__ void e() {}\n")
    (project / "kernels" / "b_outside").symlink_to(elsewhere, target_is_directory=True)
    from nvfp4ctl.lint.source import _walk

    assert _walk(project / "kernels", []) == [real / "k.cu", project / "kernels" / "b_outside" / "e.cu"]


def test_dotfiles_in_a_folder_are_skipped(project: Path) -> None:
    (project / ".#errs.py").symlink_to("root@host.1234:1700000000")  # an emacs lock file
    (project / ".hidden.cu").write_text("__global__ void k() { printf(\"x\"); }\n")
    result = runner.invoke(app, ["lint", "."])
    assert result.exit_code == 1, result.output  # errs.py's finding, nothing else stops the run
    assert "(3 checked)" in result.output
    assert ".hidden.cu" not in result.output and ".#errs.py" not in result.output


def test_named_broken_link_stays_a_usage_error(project: Path) -> None:
    (project / "old.cu").symlink_to("gone.cu")
    result = runner.invoke(app, ["lint", "old.cu"])
    assert result.exit_code == 2
    assert "old.cu: broken link (to gone.cu)" in result.output
    assert "Traceback" not in result.output


def test_missing_lint_paths_entry_is_a_usage_error_naming_it(project: Path) -> None:
    (project / "submission.py").write_text(CLEAN)
    (project / "task.yml").write_text(TASK_YML + "lint: {paths: [clean.py, nothere.py]}\n")
    (project / "sub").mkdir()
    for where, task_file in ((project, "task.yml"), (project / "sub", str(project / "task.yml"))):
        os.chdir(where)  # the path named as task.yml writes it, wherever lint runs; the task file as other errors name it
        result = runner.invoke(app, ["lint"])
        assert result.exit_code == 2, result.output
        assert result.output.strip() == f"error: {task_file}:3: lint.paths: nothere.py does not exist"


def test_lint_section_errors_name_the_task_file_in_use(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$NVFP4CTL_TASK=other.yml: its lint: section's mistakes name other.yml and the line (they said task.yml)."""
    (project / "other.yml").write_text(TASK_YML + "lint:\n  paths:\n    - clean.py\n    - nothere.py\n")
    monkeypatch.setenv("NVFP4CTL_TASK", "other.yml")
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == "error: other.yml:6: lint.paths: nothere.py does not exist"
    (project / "other.yml").write_text(TASK_YML + "lint:\n  select: [NV4, NV999]\n")
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 2 and result.output.startswith("error: other.yml:4: lint.select: unknown rule code"), result.output


def test_a_link_is_reported_under_its_own_name(project: Path) -> None:
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "real.py").write_text(ERRS)
    (project / "printf.cu").write_text("__global__ void k() { printf(\"x\"); }\n")
    (project / "kernels").mkdir()
    (project / "kernels" / "k.cu").symlink_to(project / "printf.cu")  # target inside the working folder
    (project / "alias.py").symlink_to("errs.py")
    named = runner.invoke(app, ["-v", "lint", "alias.py"])
    assert "alias.py:2:5: NV201" in named.output and "errs.py" not in named.output
    (project / "printf.cu").rename(elsewhere / "printf.cu")
    (project / "kernels" / "k.cu").unlink()
    (project / "kernels" / "k.cu").symlink_to(elsewhere / "printf.cu")
    (project / "task.yml").write_text(TASK_YML)
    (project / "submission.py").symlink_to(elsewhere / "real.py")  # target outside it
    default = runner.invoke(app, ["-v", "lint"])
    assert default.output.startswith("submission.py:2:5: NV201"), default.output
    assert "kernels/k.cu:1:23: NV802" in default.output
    assert "checked: submission.py, kernels/k.cu" in default.output
    payload = json.loads(runner.invoke(app, ["lint", "--format", "json"]).stdout)
    assert payload["files"] == ["submission.py", "kernels/k.cu"]
    assert [d["path"] for d in payload["diagnostics"]] == ["submission.py", "kernels/k.cu"]


@pytest.mark.parametrize("folder", ["mine", "./mine/"])
def test_a_named_folders_linked_submission_is_reported_under_the_folders_path(project: Path, folder: str) -> None:
    """`lint mine` where mine/submission.py links to a file elsewhere under another name: the findings, the
    file list and the JSON name mine/submission.py, the path as walked (as ruff does), with the target's text read."""
    (project / "versions").mkdir()
    (project / "versions" / "v3.py").write_text(ERRS)
    (project / "mine").mkdir()
    (project / "mine" / "submission.py").symlink_to(Path("..") / "versions" / "v3.py")
    result = runner.invoke(app, ["-v", "lint", folder])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("mine/submission.py:2:5: NV201"), result.output
    assert "checked: mine/submission.py" in result.output and "v3.py" not in result.output
    payload = json.loads(runner.invoke(app, ["lint", "--format", "json", folder]).stdout)
    assert payload["files"] == ["mine/submission.py"]
    assert {d["path"] for d in payload["diagnostics"]} == {"mine/submission.py"}


def test_default_lint_reports_the_submission_not_a_leftover_link_to_it(project: Path) -> None:
    (project / "task.yml").write_text(TASK_YML)
    (project / "submission.py").write_text(ERRS)
    (project / "submission_best.py").symlink_to("submission.py")  # sorts after it
    result = runner.invoke(app, ["-v", "lint"])
    assert "submission.py:2:5: NV201" in result.output and "submission_best.py" not in result.output


def test_a_file_and_a_link_to_it_in_a_folder_are_one_file_under_its_own_name(project: Path) -> None:
    (project / "a_link.py").symlink_to("errs.py")  # sorts before its target
    result = runner.invoke(app, ["-v", "lint", "."])
    assert "errs.py:2:5: NV201" in result.output and "a_link.py" not in result.output
    assert "checked: errs.py, clean.py, warns.py" in result.output


def test_a_submission_that_does_not_parse_fails_lint(project: Path) -> None:
    (project / "broken.py").write_text("def custom_kernel(data:\n    return data[6]\n")
    result = runner.invoke(app, ["lint", "broken.py"])
    assert result.exit_code == 1, result.output  # the leaderboard's `python submission.py` fails on it
    assert "broken.py:1:18: NV001 not valid Python 3." in result.output and "1 error" in result.output


def test_a_named_folder_with_nothing_to_check_is_exit_2_saying_what_was_looked_for(project: Path) -> None:
    (project / "emptydir").mkdir()
    empty = runner.invoke(app, ["lint", "emptydir/"])
    assert empty.exit_code == 2
    assert empty.output == ("error: nothing to lint in emptydir: no C++/CUDA source (.cu .cuh .cpp .h .hpp) and no"
                            " submission (a .py file that defines or imports custom_kernel, or is named submission*.py)\n")
    (project / "scripts").mkdir()
    (project / "scripts" / "plot.py").write_text("print('a helper, not a submission')\n")
    scripts = runner.invoke(app, ["lint", "scripts"])
    assert scripts.exit_code == 2
    assert scripts.output.endswith("; not submissions: 1 .py file (-v names them)\n")
    for folder in ("emptydir", "scripts"):  # -v: what was skipped, and no empty "checked: " line
        verbose = runner.invoke(app, ["-v", "lint", folder])
        assert verbose.exit_code == 2 and "checked:" not in verbose.output, verbose.output


def test_a_named_folder_with_nothing_to_check_among_others_is_said_and_exit_2(project: Path) -> None:
    for name, text in (("s01", CLEAN), ("s12", WARNS)):
        (project / name).mkdir()
        (project / name / "submission.py").write_text(text)
    (project / "s07").mkdir()
    (project / "s07" / "plot.py").write_text("print('a helper, not a submission')\n")
    result = separate_streams_runner().invoke(app, ["lint", "s01", "s07", "s12"])
    assert result.exit_code == 2, result.output  # as `lint s07` alone is
    assert ("warning: nothing to lint in s07: no C++/CUDA source (.cu .cuh .cpp .h .hpp) and no submission (a .py"
            " file that defines or imports custom_kernel, or is named submission*.py); not submissions: 1 .py file"
            " (-v names them)") in result.stderr
    assert "(2 checked;" in result.stdout  # the others are still checked and shown
    as_json = separate_streams_runner().invoke(app, ["lint", "--format", "json", "s01", "s07", "s12"])
    assert as_json.exit_code == 2
    assert json.loads(as_json.stdout)["summary"]["nothing_to_lint"] == ["s07"]
    both = runner.invoke(app, ["lint", "s01", "s12"])
    assert both.exit_code == 0, both.output  # nothing empty: the findings decide (a warning)
    assert "nothing to lint" not in both.output


def test_a_folder_checked_under_another_named_folders_name_is_not_empty(project: Path) -> None:
    (project / "s01").mkdir()
    (project / "s01" / "submission.py").write_text(CLEAN)
    (project / "same").symlink_to(project / "s01")
    result = runner.invoke(app, ["lint", "s01", "same"])
    assert result.exit_code == 0, result.output
    assert "nothing to lint" not in result.output


def test_bare_lint_with_nothing_to_check_points_at_the_folder_rule(project: Path) -> None:
    """Bare lint takes your submission*.py, kernels/ and C++; drafts under other names need `lint .`."""
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 2
    assert "`nvfp4ctl lint .` checks every .py that defines or imports custom_kernel" in result.output
    assert runner.invoke(app, ["lint", "."]).exit_code == 1  # clean.py, warns.py and errs.py: errs.py has errors


COPIES_B = ("def custom_kernel(data):\n    a, b, sfa, sfb, sfa_p, sfb_p, c = data\n"
            "    b_t = b.t().contiguous()\n    return c\n")


def test_a_folders_own_lint_settings_hold_when_linted_from_above(project: Path) -> None:
    """`lint gemm dual` from the repo root judged gemm/submission.py by gemm/task.yml's problem but not by
    its `lint: {ignore: [NV501]}`: clean with `cd gemm && nvfp4ctl lint`, a warning from the root."""
    for folder, ignore in (("gemm", "lint: {ignore: [NV501]}\n"), ("dual", "")):
        (project / folder).mkdir()
        (project / folder / "task.yml").write_text("problem: nvfp4_gemm\n" + TASK_YML + ignore)
        (project / folder / "submission.py").write_text(COPIES_B)
    os.chdir(project / "gemm")
    assert "All checks passed" in runner.invoke(app, ["lint"]).output
    os.chdir(project)
    result = runner.invoke(app, ["lint", "gemm", "dual"])
    assert result.exit_code == 0, result.output
    assert "dual/submission.py:3" in result.output and "NV501" in result.output
    assert "gemm/submission.py" not in result.output
    flagged = runner.invoke(app, ["lint", "gemm", "--ignore", "NV601"])  # --ignore replaces the folder's
    assert "gemm/submission.py:3" in flagged.output, flagged.output


def test_a_linked_file_or_folder_is_judged_by_the_task_yml_where_the_link_lies(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gemm/submission.py -> ../dual/submission.py was judged as the dual GEMM, by dual/task.yml, and from the root
    gemm/shared -> ../ext by no task.yml, where `cd gemm && nvfp4ctl lint shared/x.py` used gemm's: the folder
    the user named governs, and the run is logged beside its task.yml."""
    monkeypatch.delenv("NVFP4CTL_MEMORY")
    monkeypatch.setenv("NVFP4CTL_CACHE", str(project / "cache"))
    (project / "gemm").mkdir()
    (project / "gemm" / "task.yml").write_text("problem: nvfp4_gemm\n" + TASK_YML + "lint: {ignore: [NV501]}\n")
    (project / "dual").mkdir()
    (project / "dual" / "task.yml").write_text("problem: nvfp4_dual_gemm\n" + TASK_YML)
    (project / "dual" / "submission.py").write_text(COPIES_B)
    (project / "ext").mkdir()
    (project / "ext" / "submission_v2.py").write_text(COPIES_B)
    (project / "gemm" / "submission.py").symlink_to("../dual/submission.py")
    (project / "gemm" / "shared").symlink_to("../ext")
    for named in (["gemm/submission.py"], ["gemm/shared/submission_v2.py"], ["gemm"]):
        result = runner.invoke(app, ["-v", "lint", *named])
        assert result.exit_code == 0, result.output
        assert "All checks passed" in result.output and "nvfp4_dual_gemm" not in result.output, result.output
    assert (project / "gemm" / "MEMORY.md").read_text().count(" 0 errors, 0 warnings (") == 3
    assert not (project / "cache" / "MEMORY.md").exists()
    os.chdir(project / "gemm")
    for named in ("submission.py", "shared/submission_v2.py"):
        result = runner.invoke(app, ["-v", "lint", named])
        assert result.exit_code == 0 and "All checks passed" in result.output, result.output


@pytest.mark.parametrize("task_yml, said", [
    ("problem: nvfp4_gemm\ntests:\n  - {m: 128, n: 256, k: 256, l: 1, seed: 1111, bogus: 3}\n",
     "gemm/task.yml:3: tests[0].bogus: unknown field (expected m, n, k, l, seed, sol_us) (test #1)"),
    ("problem: nvfp4_gemmm\n" + TASK_YML, "gemm/task.yml:1: problem: expected one of nvfp4_gemm, nvfp4_dual_gemm,"
                                           " nvfp4_group_gemm, nvfp4_gemv, got 'nvfp4_gemmm'; did you mean 'nvfp4_gemm'?"),
])
@pytest.mark.parametrize("named", [["gemm"], ["gemm/submission.py"], ["gemm", "dual"]])
def test_a_folders_task_yml_that_does_not_parse_is_exit_2_from_above_as_in_its_folder(
        project: Path, monkeypatch: pytest.MonkeyPatch, task_yml: str, said: str, named: list[str]) -> None:
    """`lint gemm` from the folder above dropped a broken gemm/task.yml's settings in silence (NV501 warned, exit 0,
    logged to gemm/MEMORY.md) where `cd gemm && nvfp4ctl lint` said what is wrong with it, exit 2."""
    monkeypatch.delenv("NVFP4CTL_MEMORY")
    monkeypatch.setenv("NVFP4CTL_CACHE", str(project / "cache"))
    (project / "gemm").mkdir()
    (project / "gemm" / "task.yml").write_text(task_yml + "lint: {ignore: [NV501]}\n")
    (project / "gemm" / "submission.py").write_text(COPIES_B)
    (project / "dual").mkdir()
    (project / "dual" / "task.yml").write_text("problem: nvfp4_dual_gemm\n" + TASK_YML)
    result = separate_streams_runner().invoke(app, ["lint", *named])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"error: {said}", result.stderr
    assert not (project / "gemm" / "MEMORY.md").exists()


def test_a_linked_file_is_named_in_the_run_log_as_the_user_named_it(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lint gemm/submission.py`, a link to ../dual/submission.py, logged the file it leads to
    (/abs/dual/submission.py) in gemm/MEMORY.md, where the file linted, and judged, is gemm's submission.py."""
    from nvfp4ctl import runlog

    monkeypatch.delenv("NVFP4CTL_MEMORY")
    monkeypatch.setenv("NVFP4CTL_CACHE", str(project / "cache"))
    for folder, problem in (("gemm", "nvfp4_gemm"), ("dual", "nvfp4_dual_gemm")):
        (project / folder).mkdir()
        (project / folder / "task.yml").write_text(f"problem: {problem}\n" + TASK_YML)
    (project / "dual" / "submission.py").write_text(CLEAN)
    (project / "gemm" / "submission.py").symlink_to("../dual/submission.py")
    result = runner.invoke(app, ["lint", "gemm/submission.py"])
    assert result.exit_code == 0, result.output
    logged = runlog.read(project / "gemm" / "MEMORY.md")[-1]
    assert runlog.split_target(logged.target)[0] == "./submission.py", logged.target


def _tasks_logging_by_themselves(project: Path, monkeypatch: pytest.MonkeyPatch, folders: tuple[str, ...]) -> None:
    """A clean submission under its own task.yml in each of `folders`, with no NVFP4CTL_MEMORY to name the log."""
    monkeypatch.delenv("NVFP4CTL_MEMORY")
    monkeypatch.setenv("NVFP4CTL_CACHE", str(project / "cache"))
    for folder in folders:
        (project / folder).mkdir()
        (project / folder / "task.yml").write_text("problem: nvfp4_gemm\n" + TASK_YML)
        (project / folder / "submission.py").write_text(CLEAN)


def test_a_named_file_under_its_own_task_yml_logs_beside_it_as_build_does(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a folder with no task.yml, `build gemm/submission.py` logged to gemm/MEMORY.md but `lint
    gemm/submission.py` to $NVFP4CTL_CACHE/MEMORY.md: the task.yml in use for the file is gemm/task.yml."""
    _tasks_logging_by_themselves(project, monkeypatch, ("gemm", "dual"))
    for named in (["gemm/submission.py"], ["gemm"]):
        assert runner.invoke(app, ["lint", *named]).exit_code == 0
    assert (project / "gemm" / "MEMORY.md").read_text().count("· ./submission.py@") == 2
    assert not (project / "cache" / "MEMORY.md").exists()
    assert runner.invoke(app, ["lint", "gemm", "dual"]).exit_code == 0  # two task.ymls: neither folder's log
    assert "(2 files checked)" in (project / "cache" / "MEMORY.md").read_text()
    assert not (project / "dual" / "MEMORY.md").exists()


def test_a_folder_whose_files_lie_under_two_task_ymls_logs_to_neither(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lint gemm` logged to gemm/MEMORY.md though gemm/v2/submission.py was judged by gemm/v2/task.yml: files
    under two task.ymls go to the cache folder's log, whether named one by one (`lint gemm dual`) or in one folder."""
    _tasks_logging_by_themselves(project, monkeypatch, ("gemm", "gemm/v2"))
    assert runner.invoke(app, ["lint", "gemm"]).exit_code == 0
    assert "(2 files checked)" in (project / "cache" / "MEMORY.md").read_text()
    assert not (project / "gemm" / "MEMORY.md").exists() and not (project / "gemm" / "v2" / "MEMORY.md").exists()
    assert runner.invoke(app, ["lint", "gemm/v2"]).exit_code == 0  # one task.yml: beside it
    assert "(1 file checked)" in (project / "gemm" / "v2" / "MEMORY.md").read_text()


@pytest.mark.parametrize("named", [["gemm/submission.py"], ["gemm"]])
def test_a_file_judged_by_its_own_gemm_task_yml_logs_that_problem(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   named: list[str]) -> None:
    """`lint gemm/submission.py` from the folder above, gemm/task.yml naming nvfp4_gemm, logged no problem cell
    (inside gemm/ it had one, and a dual GEMM folder's from above too): a task.yml of the user's counted only
    where it named another problem than the shipped GEMM task standing in for the folder above."""
    _tasks_logging_by_themselves(project, monkeypatch, ("gemm",))
    assert runner.invoke(app, ["lint", *named]).exit_code == 0
    assert runlog.read(project / "gemm" / "MEMORY.md")[-1].problem == "nvfp4_gemm"


def test_an_export_under_its_own_task_yml_of_its_problem_is_not_warned_as_another_problems(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lint dual/submission.py` from the folder above, a dual GEMM export under dual/task.yml (nvfp4_dual_gemm),
    warned "checked as nvfp4_dual_gemm (its nvfp4ctl export header), not as nvfp4_gemm, the problem of the shipped
    task that stands in": that task.yml is the file's, and agrees. An export of another problem than its folder's
    task.yml is still warned."""
    header = ('"""GPU MODE {problem} submission: k.cu for sm_100a, exported by `nvfp4ctl export`'
              ' (kernel hash 0a: x)."""\n')
    body = "def custom_kernel(data):\n    return data[-1]\n"
    (project / "dual").mkdir()
    (project / "dual" / "task.yml").write_text("problem: nvfp4_dual_gemm\n" + TASK_YML)
    (project / "dual" / "submission.py").write_text(header.format(problem="nvfp4_dual_gemm") + body)
    (project / "dual" / "submission_gemv.py").write_text(header.format(problem="nvfp4_gemv") + body)
    result = separate_streams_runner().invoke(app, ["lint", "dual/submission.py"])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr, result.stderr
    result = runner.invoke(app, ["-v", "lint", "dual/submission.py"])  # said as a detail, as for a file it does not name
    assert "dual/submission.py: checked as nvfp4_dual_gemm (the task.yml above it)" in result.output, result.output
    result = separate_streams_runner().invoke(app, ["lint", "dual/submission_gemv.py"])
    assert "warning: dual/submission_gemv.py: checked as nvfp4_gemv (its nvfp4ctl export header)" in result.stderr


def test_a_file_with_no_task_yml_of_the_users_logs_no_problem(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where nvfp4ctl's shipped GEMM task stands in for a task.yml, the file's problem is a default, not named."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(project / "MEMORY.md"))
    assert runner.invoke(app, ["lint", "clean.py"]).exit_code == 0
    assert runlog.read(project / "MEMORY.md")[-1].problem == ""


def test_a_waiver_naming_no_rule_is_warned_once_and_the_exit_code_stands(project: Path) -> None:
    """`# nvfp4ctl: ignore[NV999] -- why` waived nothing and said nothing: a typo'd code left its finding
    reported with no word of why the waiver did not hold."""
    (project / "waived.py").write_text(
        "def custom_kernel(data):  # nvfp4ctl: ignore[NV999] -- why\n"
        "    print('hi')  # nvfp4ctl: ignore[NV999, NV3O1, NV8] -- typo'd\n    return data[6]\n")
    result = separate_streams_runner().invoke(app, ["lint", "waived.py", "--format", "json"])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if "names no rule" in line]
    assert warned == ["warning: waived.py:1: ignore[NV999] names no rule: it waives nothing (nvfp4ctl lint --list-rules"
                      " lists the codes)",
                      "warning: waived.py:2: ignore[NV3O1] names no rule: it waives nothing (nvfp4ctl lint --list-rules"
                      " lists the codes)"], result.stderr
    document = json.loads(result.stdout)
    assert document["summary"]["unknown_waivers"] == [{"path": "waived.py", "line": 1, "code": "NV999"},
                                                      {"path": "waived.py", "line": 2, "code": "NV3O1"}]
    clean = runner.invoke(app, ["lint", "clean.py"])
    assert clean.exit_code == 0 and "names no rule" not in clean.output
    (project / "errs_waived.py").write_text(ERRS.replace("CUDAGraph()", "CUDAGraph()  # nvfp4ctl: ignore[NV999]"))
    assert runner.invoke(app, ["lint", "errs_waived.py"]).exit_code == 1  # its finding stands, and so does exit 1


@pytest.mark.parametrize("columns", ["40", "10"])
def test_a_narrow_terminal_gets_every_rule_whole(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """--list-rules at COLUMNS=40 folded rule names and code a letter or two at a time; now each rule is
    a record, its words whole and its examples' lines as written."""
    from table_words import has_a_table, missing_words

    monkeypatch.setenv("COLUMNS", "400")  # wide enough for the table to hold each of its words
    wide = runner.invoke(app, ["lint", "--list-rules"])
    monkeypatch.setenv("COLUMNS", columns)
    narrow = runner.invoke(app, ["lint", "--list-rules"])
    assert (wide.exit_code, narrow.exit_code) == (0, 0)
    assert has_a_table(wide.output) and not has_a_table(narrow.output)
    assert missing_words(narrow.output, wide.output) == []
    assert "\n    good:\n        def custom_kernel(data):\n            return data[6]\n" in narrow.output


@pytest.fixture
def unreadable_entry(project: Path) -> Iterator[Path]:
    """lp/cwd, an entry whose stat fails with EACCES: a link into pid 1's cwd where that is hidden (as root in a
    container), else a link through a folder without search permission."""
    folder = project / "lp"
    folder.mkdir()
    (folder / "a.py").write_text(CLEAN)
    entry = folder / "cwd"
    locked = project / "locked"
    (locked / "inner").mkdir(parents=True)
    for target in (Path("/proc/1/cwd"), locked / "inner"):
        entry.unlink(missing_ok=True)
        entry.symlink_to(target)
        locked.chmod(0)
        try:
            if _stat_is_refused(entry):
                yield entry
                return
        finally:
            locked.chmod(0o755)
    pytest.skip("no entry here refuses stat() with EACCES")


def _stat_is_refused(path: Path) -> bool:
    try:
        path.stat()
    except PermissionError:
        return True
    except OSError:
        return False
    return False


def test_an_unreadable_entry_in_lint_paths_is_one_line_as_on_the_command_line(unreadable_entry: Path) -> None:
    """lint.paths naming the folder gave a PermissionError traceback from the walk (exit 1); the same folder
    named on the command line gave one line. Both now say the entry, exit 2."""
    named = runner.invoke(app, ["lint", "lp"])
    assert named.exit_code == 2 and named.output.strip() == "error: cannot read lp/cwd: Permission denied", named.output
    (unreadable_entry.parents[1] / "task.yml").write_text(TASK_YML + "lint: {paths: [lp]}\n")
    for args in (["lint"], ["lint", "--format", "json"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output and f"cannot read {unreadable_entry}: Permission denied" in result.output
    (unreadable_entry.parents[1] / "task.yml").write_text(TASK_YML + "lint: {paths: [lp/cwd]}\n")
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output


def test_an_unreadable_source_beside_the_task_is_one_line_and_one_without_a_source_name_is_passed_over(
        unreadable_entry: Path) -> None:
    project = unreadable_entry.parents[1]
    (project / "task.yml").write_text(TASK_YML + "submission: clean.py\n")
    (project / "cwd").symlink_to(unreadable_entry.readlink())
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 0 and "(1 file checked)" in result.output, result.output  # clean.py alone
    (project / "x.cu").symlink_to(unreadable_entry.readlink())
    result = runner.invoke(app, ["lint"])
    assert result.exit_code == 2 and result.output.strip() == f"error: cannot read {project / 'x.cu'}: Permission denied"


def _lint_within(seconds: int, args: list[str]):
    import signal

    def blocked(*_: object) -> None:
        raise RuntimeError("lint blocked on the FIFO")  # no OSError: the read's own handling would take it

    before = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(seconds)
    try:
        return runner.invoke(app, args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def test_a_fifo_in_a_linted_folder_is_refused_not_read(project: Path) -> None:
    """Its read waited for a writer: `lint DIR` hung for good."""
    (project / "lp").mkdir()
    (project / "lp" / "a.py").write_text(CLEAN)
    os.mkfifo(project / "lp" / "fifo.py")
    result = _lint_within(20, ["lint", "lp"])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == ("error: lp/fifo.py is not a regular file (a FIFO) in a folder lint reads: lint"
                                     " reads source files (move it out, or name the files to lint)")


def test_a_fifo_or_device_named_is_not_a_regular_file(project: Path) -> None:
    """It said `cannot read folder fifo.py: Not a directory`."""
    os.mkfifo(project / "fifo.py")
    result = _lint_within(20, ["lint", "fifo.py"])
    assert result.exit_code == 2 and result.output.strip() == "error: fifo.py is not a regular file (a FIFO): lint reads source files"
    result = runner.invoke(app, ["lint", "/dev/null"])
    assert result.exit_code == 2 and result.output.strip() == "error: /dev/null is not a regular file (a device): lint reads source files"


@contextlib.contextmanager
def _piped(text: str) -> Iterator[str]:
    """`<(cat task.yml)`: a pipe holding `text`, named as bash names it (/dev/fd/N)."""
    reading, writing = os.pipe()
    with os.fdopen(writing, "w", encoding="utf-8") as pipe:
        pipe.write(text)
    try:
        yield f"/dev/fd/{reading}"
    finally:
        os.close(reading)


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="the fd links are Linux's")
def test_a_task_piped_in_reads_its_lint_paths_from_the_current_folder_and_logs_there(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lint --task <(cat task.yml)` (/dev/fd/63) stands for the current folder, as check, bench and export take
    it: its lint.paths name files here and the run is logged here, not in /proc/PID/fd, the pipe's parent."""
    monkeypatch.delenv("NVFP4CTL_MEMORY")
    monkeypatch.setenv("NVFP4CTL_CACHE", str(project / "cache"))
    task_text = TASK_YML + "lint: {paths: [errs.py, warns.py]}\n"
    with _piped(task_text) as task_file:
        result = runner.invoke(app, ["lint", "--task", task_file])
    assert result.exit_code == 1, result.output
    assert "Found 1 error, 1 warning in 2 files (2 checked)" in result.output
    with _piped(task_text) as task_file:
        monkeypatch.setenv("NVFP4CTL_TASK", task_file)
        result = runner.invoke(app, ["lint"])
    assert result.exit_code == 1, result.output
    assert "Found 1 error, 1 warning in 2 files (2 checked)" in result.output
    logged = runlog.read(project / "MEMORY.md")
    assert [line.exit_code for line in logged] == ["1", "1"], logged
    assert not (project / "cache" / "MEMORY.md").exists()
