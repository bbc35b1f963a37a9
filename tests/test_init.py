"""`nvfp4ctl init --problem NAME [DIR]`: task.yml, a correct starter submission.py, MEMORY.md; no overwrite."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_streams import separate_streams_runner

from nvfp4ctl.cli import app
from nvfp4ctl.problems import problem_names
from nvfp4ctl.task import load_task


@pytest.mark.parametrize("name", problem_names())
def test_init_writes_the_three_files(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "project"
    result = CliRunner().invoke(app, ["init", "--problem", name, str(folder)])
    assert result.exit_code == 0, result.output
    task = load_task(folder / "task.yml")
    assert task.problem == name and task.submission == (folder / "submission.py").resolve()
    submission = (folder / "submission.py").read_text()
    assert "def custom_kernel(data):" in submission and "stream" not in submission.lower()
    memory = (folder / "MEMORY.md").read_text()
    assert memory.startswith(f"# MEMORY: {name} notes") and "## Run log" not in memory


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("my notes\n")
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemv", str(tmp_path)])
    assert result.exit_code == 2
    assert (f"error: {tmp_path}: MEMORY.md is already there, so init wrote nothing (neither task.yml nor"
            " submission.py: it writes all three or none); init another folder, or rename or remove MEMORY.md"
            in " ".join(result.output.split()))
    assert not (tmp_path / "task.yml").exists() and (tmp_path / "MEMORY.md").read_text() == "my notes\n"


def test_init_beside_your_own_submission_says_what_it_did_not_write(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "submission.py").write_text("def custom_kernel(data): ...\n")
    (tmp_path / "task.yml").write_text("tests: []\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemv"])
    assert result.exit_code == 2
    assert result.output == ("error: .: task.yml and submission.py are already there, so init wrote nothing"
                             " (not MEMORY.md either: it writes all three or none); init another folder,"
                             " or rename or remove task.yml and submission.py\n")
    assert not (tmp_path / "MEMORY.md").exists()


def test_unknown_problem_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["init", "--problem", "gemv", str(tmp_path)])
    assert result.exit_code == 2 and "unknown problem 'gemv'" in result.output


@pytest.mark.parametrize("typo", ["nvfp4_group_gem", "nvfp4-group-gem"])
def test_a_mistyped_problem_is_offered_the_close_one(tmp_path: Path, typo: str) -> None:
    """Mistyped commands and options got click's "did you mean"; a mistyped --problem got only the list."""
    result = CliRunner().invoke(app, ["init", "--problem", typo, str(tmp_path)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert result.output.rstrip().endswith(f"unknown problem {typo!r} (known: nvfp4_gemm, nvfp4_dual_gemm,"
                                           " nvfp4_group_gemm, nvfp4_gemv); did you mean 'nvfp4_group_gemm'?")
    assert not (tmp_path / "task.yml").exists()
    far = CliRunner().invoke(app, ["init", "--problem", "xyz", str(tmp_path)])
    assert "did you mean" not in far.output


@pytest.mark.parametrize("word, meant", [
    ("dual_gemm", "'nvfp4_dual_gemm'"), ("dual-gemm", "'nvfp4_dual_gemm'"), ("gemv", "'nvfp4_gemv'"),
    ("group_gemm", "'nvfp4_group_gemm'"), ("grouped", "'nvfp4_group_gemm'"), ("gemm", "'nvfp4_gemm'"),
    ("GEMV", "'nvfp4_gemv'"), ("gem", "'nvfp4_gemm' or 'nvfp4_gemv'"),
])
def test_a_problem_named_without_its_prefix_is_offered_the_problem_it_names(tmp_path: Path, word: str,
                                                                             meant: str) -> None:
    """`--problem dual_gemm` (gemv, group_gemm, grouped) said "unknown problem" with no did-you-mean: only a
    near spelling of a whole name (nvfp4_dual_gem) got one."""
    result = CliRunner().invoke(app, ["init", "--problem", word, str(tmp_path)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.rstrip().endswith(f"; did you mean {meant}?"), result.output


@pytest.mark.parametrize("below", ["sub", "sub/deeper"])
def test_a_folder_below_a_file_is_refused_in_exports_words(tmp_path: Path, below: str) -> None:
    """`init afile/sub` said `cannot write into afile/sub: Not a directory`, where export -o afile/x.py says
    which file is in the way: one wording for both."""
    afile = tmp_path / "afile"
    afile.write_text("")
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(afile / below)])
    assert (result.exit_code, " ".join(result.output.split())) == (
        2, f"error: {afile}: not a folder, so {afile / below} cannot be written: nothing was written")
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert sorted(tmp_path.iterdir()) == [afile] and afile.read_text() == ""


def test_init_reads_the_starter_from_the_wheels_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed wheel has no kernels/ beside the package, only nvfp4ctl/_shipped/kernels: init must
    read the starter there (it read <site-packages>/kernels/..., so init failed in every pip install)."""
    import shutil

    from nvfp4ctl import project, scaffold

    shipped = tmp_path / "_shipped"
    root = Path(__file__).resolve().parents[1]
    shutil.copytree(root / "kernels" / "torch_dequant", shipped / "kernels" / "torch_dequant")
    (shipped / "kernels" / "torch_dequant" / "nvfp4_gemv_submission.py").write_text(
        "def custom_kernel(data):  # the wheel's copy\n    return data[-1]\n")
    monkeypatch.setattr(project, "SHIPPED_DIR", shipped)
    monkeypatch.setattr(project, "REPO_DIR", tmp_path / "site-packages")  # no checkout around the package
    monkeypatch.setattr(scaffold, "REPO_DIR", tmp_path / "site-packages", raising=False)
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemv", str(tmp_path / "project")])
    assert result.exit_code == 0, result.output
    assert "the wheel's copy" in (tmp_path / "project" / "submission.py").read_text()


def test_init_twice_in_one_folder_is_one_line(tmp_path: Path) -> None:
    """The three files all there (init run before) raised an IndexError with a traceback."""
    assert CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(tmp_path)]).exit_code == 0
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: {tmp_path}: task.yml, submission.py and MEMORY.md are already there (its"
                             " task.yml is for nvfp4_gemm), so init wrote nothing; init another folder, or rename or"
                             " remove task.yml, submission.py and MEMORY.md\n")


def test_init_of_another_problem_in_a_folder_names_the_folders_problem(tmp_path: Path) -> None:
    """`init --problem nvfp4_gemm` in a GEMV folder said only "already there", not that the folder is the GEMV's."""
    assert CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemv", str(tmp_path)]).exit_code == 0
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert (f"error: {tmp_path}: task.yml, submission.py and MEMORY.md are already there (its task.yml is for"
            " nvfp4_gemv, not nvfp4_gemm), so init wrote nothing") in " ".join(result.output.split())
    (tmp_path / "task.yml").write_text("tests: [\n")  # a task.yml that cannot be read names no problem
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(tmp_path)])
    assert result.exit_code == 2 and "already there, so init wrote nothing" in " ".join(result.output.split())


def test_the_next_step_needs_no_cd_in_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemv"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "nvfp4_gemv: `nvfp4ctl check` runs submission.py on every test"


@pytest.mark.parametrize("folder, typed", [("a b/c", "'a b/c'"), ("it's", "'it'\"'\"'s'"), ("-x", "./-x"),
                                           ("plain", "plain")])
def test_the_next_step_can_be_pasted_into_a_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str,
                                                  typed: str) -> None:
    """A folder with a space was printed as `cd a b/c`, which the shell reads as two arguments."""
    import subprocess

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemv", "--", folder])
    assert result.exit_code == 0, result.output
    line = result.output.splitlines()[-1]
    assert line == f"nvfp4_gemv: `cd {typed} && nvfp4ctl check` runs submission.py on every test"
    pasted = line.split("`")[1].replace("nvfp4ctl check", "pwd")
    done = subprocess.run(["sh", "-c", pasted], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str((tmp_path / folder).resolve())


@pytest.mark.parametrize("name, rule", [
    ("nvfp4_group_gemm", "sfasfb_reordered_tensors (index 2); index 1 holds the reference scales"),
    ("nvfp4_dual_gemm", "sfb2_permuted (index 8); indices 3, 4, 5 are the reference scales"),
])
def test_memory_skeleton_names_the_reference_scales_in_the_problems_terms(name: str, rule: str) -> None:
    from nvfp4ctl.problems import get_problem
    from nvfp4ctl.scaffold import memory_skeleton

    assert rule in memory_skeleton(get_problem(name))


@pytest.mark.parametrize("spelled, name", [("nvfp4-gemv", "nvfp4_gemv"), ("nvfp4-dual-gemm", "nvfp4_dual_gemm"),
                                           ("nvfp4-group-gemm", "nvfp4_group_gemm")])
def test_init_takes_gpu_modes_own_spelling_of_a_problem(tmp_path: Path, spelled: str, name: str) -> None:
    """GPU MODE's task files say `# name: nvfp4-gemv`: init said unknown problem to that name."""
    result = CliRunner().invoke(app, ["init", "--problem", spelled, str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    assert load_task(tmp_path / "p" / "task.yml").problem == name


def test_a_task_file_may_name_its_problem_as_gpu_mode_does(tmp_path: Path) -> None:
    from nvfp4ctl.problems import get_problem

    task = tmp_path / "task.yml"
    task.write_text(get_problem("nvfp4_gemv").task_file.read_text().replace("problem: nvfp4_gemv", "problem: nvfp4-gemv"))
    assert "problem: nvfp4-gemv" in task.read_text()
    assert load_task(task).problem == "nvfp4_gemv"


def test_init_says_where_runs_are_logged_when_the_setting_names_another_log(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder's MEMORY.md is written for its notes; without a word its run log never filled."""
    shared = tmp_path / "notes" / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(shared))
    result = separate_streams_runner().invoke(app, ["init", "--problem", "nvfp4_gemv", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "p" / "MEMORY.md").is_file()
    said = " ".join(result.stderr.split())
    assert f"runs are logged to {shared} (NVFP4CTL_MEMORY), not to {tmp_path / 'p' / 'MEMORY.md'}" in said
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "q" / "MEMORY.md"))  # the folder's own: nothing to say
    quiet = separate_streams_runner().invoke(app, ["init", "--problem", "nvfp4_gemv", str(tmp_path / "q")])
    assert quiet.exit_code == 0 and "runs are logged" not in quiet.stderr


@pytest.mark.parametrize("null", ["/dev/null", "/dev/../dev/null"])
def test_init_says_runs_are_not_logged_when_the_setting_is_the_null_device(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, null: str) -> None:
    """NVFP4CTL_MEMORY=/dev/null keeps no run log, as every other command takes it; init said "runs are logged
    to /dev/null (NVFP4CTL_MEMORY), not to p/MEMORY.md"."""
    monkeypatch.setenv("NVFP4CTL_MEMORY", null)
    result = separate_streams_runner().invoke(app, ["init", "--problem", "nvfp4_gemv", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert said == (f"runs are not logged (NVFP4CTL_MEMORY={null}): unset NVFP4CTL_MEMORY to log them in"
                    f" {tmp_path / 'p' / 'MEMORY.md'} beside these notes"), said


class _FailingWrites:
    """A file whose every write fails as `failure` (a full disk, a Ctrl-C while it is written)."""

    def __init__(self, handle, failure: BaseException) -> None:
        self._handle, self._failure = handle, failure

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self._handle.close()

    def write(self, text: str) -> int:
        raise self._failure


@pytest.mark.parametrize("failure, exit_code", [(OSError(28, "No space left on device"), 2), (KeyboardInterrupt(), 130)],
                         ids=["disk-full", "interrupted"])
def test_an_init_that_fails_part_way_leaves_nothing_and_the_next_one_writes_all_three(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException, exit_code: int) -> None:
    """It wrote task.yml and an empty submission.py, then stopped; the next init refused: "already there"."""
    folder = tmp_path / "new" / "project"
    real_open = Path.open
    made: list[str] = []

    def second_file_fails(self, mode="r", *args, **kwargs):
        handle = real_open(self, mode, *args, **kwargs)
        if "x" in mode:
            made.append(self.name)
            if len(made) == 2:
                return _FailingWrites(handle, failure)
        return handle

    with monkeypatch.context() as patched:
        patched.setattr(Path, "open", second_file_fails)
        result = separate_streams_runner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(folder)])
    assert result.exit_code == exit_code, result.output
    assert made == ["task.yml", "submission.py"]
    assert not (tmp_path / "new").exists(), sorted(p.name for p in tmp_path.rglob("*"))
    again = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(folder)])
    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in folder.iterdir()) == ["MEMORY.md", "submission.py", "task.yml"]


def test_a_failed_init_keeps_the_folder_it_found_and_what_was_in_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    real_open = Path.open

    def memory_fails(self, mode="r", *args, **kwargs):
        handle = real_open(self, mode, *args, **kwargs)
        return _FailingWrites(handle, OSError(28, "No space left on device")) if self.name == "MEMORY.md" else handle

    with monkeypatch.context() as patched:
        patched.setattr(Path, "open", memory_fails)
        result = separate_streams_runner().invoke(app, ["init", "--problem", "nvfp4_gemv", str(tmp_path)])
    assert result.exit_code == 2
    assert "No space left on device" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("points_to", ["nonexistent/target", "proj"], ids=["dangling", "loop"])
def test_a_failed_init_into_a_users_broken_symlink_keeps_the_symlink(tmp_path: Path, points_to: str) -> None:
    """The symlink did not exist as far as exists() could tell, so it was counted as made and unlinked."""
    link = tmp_path / "proj"
    link.symlink_to(tmp_path / points_to)
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(link)])
    assert result.exit_code == 2, result.output
    assert "cannot write into" in result.output and "Traceback" not in result.output
    assert link.is_symlink() and str(link.readlink()) == str(tmp_path / points_to)


@pytest.mark.parametrize("points_to, below", [("nonexistent/target", ""), ("proj", ""), ("nonexistent/target", "sub")],
                         ids=["dangling", "loop", "below-a-dangling-one"])
def test_an_init_through_a_broken_symlink_names_it(tmp_path: Path, points_to: str, below: str) -> None:
    """mkdir's "File exists" left the user to guess which part of the path was in the way."""
    link = tmp_path / "proj"
    link.symlink_to(tmp_path / points_to)
    folder = link / below if below else link
    result = CliRunner().invoke(app, ["init", "--problem", "nvfp4_gemm", str(folder)])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert f"{link} is a symlink to {tmp_path / points_to} that leads to no folder" in said, said
    assert link.is_symlink()
