"""The collection guard itself: what it reports, and that the repository is clean by its rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import collection_guard
from collection_guard import FLOOR_FILE, TESTS_DIR, problems, read_floor, test_files_on_disk


def test_a_file_left_out_of_the_collection_is_named(tmp_path: Path) -> None:
    kept, skipped = tmp_path / "tests" / "test_a.py", tmp_path / "tests" / "build" / "test_b.py"
    lines = problems({kept, skipped}, {kept}, count=10, floor=10, root=tmp_path)
    assert lines == ["tests/build/test_b.py was not collected (norecursedirs? a collect_ignore? a typo in the name?)"]


def test_fewer_tests_than_the_floor_fail() -> None:
    lines = problems(set(), set(), count=598, floor=600, root=TESTS_DIR.parent)
    assert len(lines) == 1 and "collected 598 tests, fewer than the floor of 600" in lines[0]


def test_a_complete_collection_has_no_problem(tmp_path: Path) -> None:
    files = {tmp_path / "test_a.py"}
    assert problems(files, files, count=600, floor=600, root=tmp_path) == []


def test_the_floor_file_reads_past_comments(tmp_path: Path) -> None:
    floor = tmp_path / "floor.txt"
    floor.write_text("# a comment\n\n612  # why\n")
    assert read_floor(floor) == 612
    assert read_floor(FLOOR_FILE) > 0


def test_tests_build_is_on_disk_and_would_be_checked() -> None:
    """tests/build/ is the folder pytest's default norecursedirs skipped."""
    on_disk = test_files_on_disk()
    assert any(path.parent.name == "build" for path in on_disk)
    assert Path(collection_guard.__file__).resolve() not in on_disk


def test_pytest_does_not_skip_folders_named_build(pytestconfig) -> None:
    assert "build" not in pytestconfig.getini("norecursedirs")


def test_an_xdist_controller_counts_what_its_first_worker_collected(tmp_path, monkeypatch) -> None:
    """The controller of `pytest -n 4` collects nothing itself: the guard read 0 tests collected and
    failed a whole-suite run whatever its tests did. It counts the node ids the first worker reports."""
    monkeypatch.setattr(collection_guard, "_collected_files", set())
    monkeypatch.setattr(collection_guard, "_collected_count", [0])
    ids = ["tests/test_a.py::test_one", "tests/test_a.py::test_two[1]", "tests/build/test_b.py::test_three"]
    collection_guard.record_node_ids(ids, tmp_path)
    collection_guard.record_node_ids(ids + ["tests/test_c.py::test_four"], tmp_path)  # another worker: the same
    on_disk = {tmp_path / "tests" / "test_a.py", tmp_path / "tests" / "build" / "test_b.py"}
    assert collection_guard._collected_count == [3]
    assert problems(on_disk, collection_guard._collected_files, 3, floor=3, root=tmp_path) == []


def test_a_bare_pytest_collects_the_files_that_import_tests_as_a_package() -> None:
    """The README's `pytest` is a script: unlike `python3 -m pytest` it puts no current folder on sys.path, so a
    test file's `from tests.cli_streams import ...` resolves only through pyproject.toml's pythonpath. -I keeps
    the child's sys.path as the script's (no current folder, no PYTHONPATH)."""
    collect = "import sys, pytest; sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', " \
              "'tests/build/test_cutlass_lookup.py', 'tests/kernels/test_own_code_doc.py']))"
    done = subprocess.run([sys.executable, "-I", "-c", collect], cwd=TESTS_DIR.parent,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
