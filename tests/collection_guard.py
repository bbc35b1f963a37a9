"""Fail a whole-suite run that collected less than it should.

pytest's default `norecursedirs` once skipped tests/build/ without a word (36 tests, CI green). So a
run over the whole tests/ tree checks, after collection:
- every tests/**/test_*.py on disk was collected (a skipped folder or a misnamed file shows here);
- at least FLOOR_FILE's number of tests was collected (raise it when you add tests; lower it only
  with the reason in the commit message).
A narrower run (a path below tests/, --ignore, --lf, --sw) is not checked: it means to skip things.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
FLOOR_FILE = TESTS_DIR / "collection_floor.txt"

_collected_files: set[Path] = set()
_collected_count = [0]


def read_floor(path: Path = FLOOR_FILE) -> int:
    """The first line that is a number; comments (#) and blank lines around it are allowed."""
    for line in path.read_text().splitlines():
        text = line.split("#", 1)[0].strip()
        if text:
            return int(text)
    raise ValueError(f"{path}: no number in it")


def test_files_on_disk(tests_dir: Path = TESTS_DIR) -> set[Path]:
    return {path.resolve() for path in tests_dir.rglob("test_*.py") if "__pycache__" not in path.parts}


test_files_on_disk.__test__ = False  # a helper, not a test, despite its name


def problems(on_disk: set[Path], collected: set[Path], count: int, floor: int, root: Path) -> list[str]:
    """What is wrong with a whole-suite collection, one line each; empty when nothing is."""
    lines = [f"{path.relative_to(root)} was not collected (norecursedirs? a collect_ignore? a typo in the name?)"
             for path in sorted(on_disk - collected)]
    if count < floor:
        lines.append(f"collected {count} tests, fewer than the floor of {floor} in "
                     f"{FLOOR_FILE.relative_to(root)}: tests were lost (lower the floor only on purpose)")
    return lines


def whole_suite(config: pytest.Config) -> bool:
    """True when this run collected everything under tests/ (the CI and README command)."""
    if config.getoption("ignore", None) or config.getoption("ignore_glob", None):
        return False
    if config.getoption("lf", False) or config.getoption("stepwise", False):
        return False
    base = config.invocation_params.dir
    args = [(base / arg.split("::", 1)[0]).resolve() for arg in config.args]
    return bool(args) and all(arg in (TESTS_DIR, TESTS_DIR.parent) for arg in args)


def record(report: pytest.CollectReport) -> None:
    """Called for every collector: remember test modules and count the items they produced."""
    path = Path(str(report.fspath)).resolve() if report.fspath else None
    if path is not None and path.suffix == ".py" and "::" not in report.nodeid:
        _collected_files.add(path)
    _collected_count[0] += sum(1 for node in report.result if isinstance(node, pytest.Item))


def record_node_ids(ids: list[str], root: Path = TESTS_DIR.parent) -> None:
    """pytest-xdist's controller collects nothing itself (each worker does): it counts what the first
    worker reported, node ids relative to the rootdir, the repository (every worker collects the same). Without this a
    whole-suite `pytest -n 4` read as 0 tests collected and failed however its tests went."""
    if _collected_count[0]:
        return
    _collected_files.update((root / node_id.split("::", 1)[0]).resolve() for node_id in ids)
    _collected_count[0] = len(ids)


def enforce(session: pytest.Session) -> None:
    config = session.config
    if hasattr(config, "workerinput") or not whole_suite(config):  # an xdist worker: its controller judges
        return
    found = problems(test_files_on_disk(), _collected_files, _collected_count[0], read_floor(), TESTS_DIR.parent)
    if not found:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for line in found:
        if reporter is not None:
            reporter.write_line(f"collection guard: {line}", red=True, bold=True)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
