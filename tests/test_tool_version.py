"""Which nvfp4ctl ran (tool_version), and its place on a run-log line: read back by this version, and left
alone by the readers of versions before it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from nvfp4ctl import __version__, commit_stamp, runlog, tool_version
from nvfp4ctl.cli import app
from nvfp4ctl.runlog import SEPARATOR, RunEntry, split_target
from nvfp4ctl.tool_version import checkout_commit, installed_version, stamped_commit

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def _repo(root: Path, head: str = "ref: refs/heads/main\n") -> Path:
    git = root / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(head)
    return git


def test_a_branch_checked_out_gives_its_loose_refs_commit(tmp_path: Path) -> None:
    git = _repo(tmp_path)
    (git / "refs" / "heads" / "main").write_text(COMMIT + "\n")
    assert checkout_commit(tmp_path) == "0123456"


def test_a_packed_branch_and_a_detached_head_give_their_commits(tmp_path: Path) -> None:
    packed, detached = tmp_path / "packed", tmp_path / "detached"
    git = _repo(packed)
    (git / "packed-refs").write_text(f"# pack-refs with: peeled fully-peeled sorted\n{OTHER} refs/heads/other\n"
                                     f"{COMMIT} refs/heads/main\n")
    assert checkout_commit(packed) == "0123456"
    _repo(detached, head=OTHER + "\n")
    assert checkout_commit(detached) == "fedcba9"


def test_a_linked_worktree_reads_its_branch_from_the_main_repository(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main")
    (main / "refs" / "heads" / "feature").write_text(COMMIT + "\n")
    own = main / "worktrees" / "wt"
    own.mkdir(parents=True)
    (own / "HEAD").write_text("ref: refs/heads/feature\n")
    (own / "commondir").write_text("../..\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {own}\n")
    assert checkout_commit(tree) == "0123456"


@pytest.mark.parametrize("head", ["ref: refs/heads/gone\n", "not a commit\n", "ref: refs/heads/\udcff\n"])
def test_no_checkout_or_an_unreadable_one_gives_no_commit(tmp_path: Path, head: str) -> None:
    assert checkout_commit(tmp_path) is None  # site-packages: no .git beside the package
    git = _repo(tmp_path / "broken")
    (git / "HEAD").write_bytes(head.encode("utf-8", "surrogateescape"))  # the last: no UTF-8
    assert checkout_commit(tmp_path / "broken") is None
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / ".git").write_text("something else\n")
    assert checkout_commit(tmp_path / "odd") is None


def test_the_version_is_the_installed_ones_with_the_checkouts_commit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tool_version, "_CHECKOUT", tmp_path)
    tool_version.tool_version.cache_clear()
    try:
        assert tool_version.tool_version() == installed_version()  # an install: no commit
        (_repo(tmp_path) / "refs" / "heads" / "main").write_text(COMMIT + "\n")
        tool_version.tool_version.cache_clear()
        assert tool_version.tool_version() == f"{installed_version()} (0123456)"
    finally:
        tool_version.tool_version.cache_clear()


def test_a_wheel_without_a_checkout_gives_the_commit_stamped_at_build_time(tmp_path: Path, monkeypatch) -> None:
    site_packages, stamp = tmp_path / "site-packages", tmp_path / "site-packages" / "nvfp4ctl" / "_shipped" / "BUILD_COMMIT"
    stamp.parent.mkdir(parents=True)
    stamp.write_text(COMMIT + "\n")
    monkeypatch.setattr(tool_version, "_CHECKOUT", site_packages)
    monkeypatch.setattr(tool_version, "_BUILD_STAMP", stamp)
    tool_version.tool_version.cache_clear()
    try:
        assert tool_version.tool_version() == f"{installed_version()} (0123456)"
        (_repo(site_packages) / "refs" / "heads" / "main").write_text(OTHER + "\n")
        tool_version.tool_version.cache_clear()
        assert tool_version.tool_version() == f"{installed_version()} (fedcba9)"  # a checkout's own .git wins
    finally:
        tool_version.tool_version.cache_clear()


def test_a_stamp_of_a_tree_with_changes_says_dirty_as_the_run_log_does(tmp_path: Path) -> None:
    stamp = tmp_path / "BUILD_COMMIT"
    stamp.write_text(COMMIT + "+dirty\n")
    assert stamped_commit(stamp) == "0123456+dirty"


@pytest.mark.parametrize("text", [None, "", "not a commit\n", COMMIT[:7] + "\n", COMMIT + "+dirt\n"])
def test_a_missing_or_unreadable_stamp_gives_no_commit(tmp_path: Path, text: str | None) -> None:
    stamp = tmp_path / "BUILD_COMMIT"
    if text is not None:
        stamp.write_text(text)
    assert stamped_commit(stamp) is None
    stamp.unlink(missing_ok=True)
    stamp.write_bytes(b"\xff" * 40)
    assert stamped_commit(stamp) is None


def _setup_module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """setup.py as a module, its setup() call left out (it would build): its stamp helpers to call."""
    import setuptools

    monkeypatch.setattr(setuptools, "setup", lambda **_: None)
    spec = importlib.util.spec_from_file_location("nvfp4ctl_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_setup_py_stamps_with_the_names_tool_version_reads_them_by(monkeypatch) -> None:
    """setup.py kept its own copy of the commit patterns and the stamp's file name; a change to one side
    alone would stamp wheels with what tool_version cannot read, or read what setup.py never writes."""
    setup = _setup_module(monkeypatch)
    assert setup.BUILD_COMMIT == commit_stamp.STAMP_FILE == tool_version._BUILD_STAMP.name
    assert setup._STAMP.pattern == commit_stamp.STAMP.pattern
    assert setup._OBJECT_NAME.pattern == commit_stamp.OBJECT_NAME.pattern
    assert setup.DIRTY == commit_stamp.DIRTY


def test_a_wheels_stamp_leaves_out_every_run_log_as_the_run_logs_commit_cell_does(tmp_path: Path, monkeypatch) -> None:
    """setup.py left out only the top-level MEMORY.md: a line a run appended to gemm/MEMORY.md stamped the
    wheel "+dirty", where the run log's commit cell called the same tree clean."""
    import subprocess

    from nvfp4ctl.workspace import MEMORY_FILE

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path,
                              check=True, capture_output=True, text=True).stdout.strip()

    setup = _setup_module(monkeypatch)
    assert setup.RUN_LOGS_LEFT_OUT == commit_stamp.RUN_LOGS_LEFT_OUT
    assert commit_stamp.RUN_LOGS_LEFT_OUT.endswith("/" + MEMORY_FILE)
    monkeypatch.setattr(setup, "ROOT", tmp_path)
    git("init", "-q")
    (tmp_path / "gemm").mkdir()
    for tracked in ("MEMORY.md", "gemm/MEMORY.md", "gemm/submission.py"):
        (tmp_path / tracked).write_text("# start\n")
    git("add", "."), git("commit", "-qm", "start")
    commit = git("rev-parse", "--short", "HEAD")
    for log in ("MEMORY.md", "gemm/MEMORY.md"):
        (tmp_path / log).write_text("# start\n- a run\n")
    assert not setup._tracked_files_changed() and runlog.git_state(tmp_path) == commit
    (tmp_path / "gemm" / "submission.py").write_text("# changed\n")
    assert setup._tracked_files_changed() and runlog.git_state(tmp_path) == commit + commit_stamp.DIRTY


@pytest.mark.parametrize("text", [COMMIT, COMMIT + "+dirty", "ab" * 32, "ab" * 32 + "+dirty", "", "not a commit",
                                  COMMIT[:7], COMMIT + "+dirt", COMMIT.upper(), COMMIT + "0"])
def test_an_sdists_stamp_is_kept_by_setup_py_where_tool_version_reads_it(tmp_path: Path, monkeypatch,
                                                                       text: str) -> None:
    """A wheel built from an sdist (no .git: PKG-INFO at its root) stamps the sdist's commit again only where
    it is one tool_version reads back."""
    setup = _setup_module(monkeypatch)
    monkeypatch.setattr(setup, "ROOT", tmp_path)
    (tmp_path / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: nvfp4ctl\n")
    (tmp_path / commit_stamp.STAMP_FILE).write_text(text + "\n")
    read = stamped_commit(tmp_path / commit_stamp.STAMP_FILE)
    assert setup.source_commit() == (text if read is not None else None)
    if read is not None:
        assert read == text[:7] + ("+dirty" if text.endswith("+dirty") else "")


def test_a_package_not_installed_gives_its_own_version(monkeypatch) -> None:
    from importlib import metadata

    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    assert installed_version() == __version__


def _entry(target: str, tool: str = "0.1.0 (abc1234)", problem: str = "nvfp4_gemm") -> RunEntry:
    return RunEntry("2026-11-25T10:00:00Z", "nvfp4ctl check", target, "1234567", "NVIDIA H100 (sm_90)", "0",
                    "10/10 pass", problem, tool)


def _as_older_versions_read(line: str) -> tuple[str, str] | None:
    """How nvfp4ctl read a line before it logged its version: 7 or 8 cells, and a target's path and hash
    from the cell cut at its last " [" (split_target, unchanged); None where it left the line out."""
    cells = line[2:].rstrip("\n").split(SEPARATOR)
    if len(cells) not in (7, 8):
        return None
    return split_target(cells[2])


@pytest.mark.parametrize("target", ["./submission.py@a7cbea65f00d [beside task.yml]", "./k.cu@a7cbea65f00d",
                                    "kernels [in kernels/ (beside task.yml)]", "-",
                                    "./sub.py@a7cbea65f00d [nvfp4ctl's shipped task stands in]"])
@pytest.mark.parametrize("problem", ["nvfp4_gemm", ""])
def test_the_version_rides_in_the_targets_bracket_where_older_readers_cut_it_off(target: str, problem: str) -> None:
    line = _entry(target, problem=problem).to_line()
    assert "nvfp4ctl 0.1.0 (abc1234)]" in line.split(SEPARATOR)[2]
    assert _as_older_versions_read(line) == split_target(target)  # the same path and hash, no cell more
    assert RunEntry.from_line(line) == _entry(target, problem=problem)  # read back whole


def test_older_lines_read_as_before_with_no_version() -> None:
    for target in ("./submission.py@a7cbea65f00d [beside task.yml]", "-", "k.cu@abc"):
        older = _entry(target, tool="")
        line = older.to_line()
        assert "nvfp4ctl 0" not in line
        assert RunEntry.from_line(line) == older and RunEntry.from_line(line).target == target


def test_each_new_line_names_the_nvfp4ctl_that_wrote_it(tmp_path: Path, monkeypatch) -> None:
    args = ["bench", "--only", "0"]  # refused at once, and logged
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.setattr(sys, "argv", ["nvfp4ctl", *args])
    result = CliRunner().invoke(app, args, prog_name="nvfp4ctl")
    assert result.exit_code == 2, result.output
    assert runlog.read(tmp_path / "MEMORY.md")[-1].tool == tool_version.tool_version()
    assert f"nvfp4ctl {tool_version.tool_version()}]" in (tmp_path / "MEMORY.md").read_text()
