"""`nvfp4ctl log --trend` marks where the target's content changed on one commit (edits not committed), as it
marks a new commit."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from nvfp4ctl import runlog
from nvfp4ctl.bench import trend
from nvfp4ctl.bench.history import Timing, result_line
from nvfp4ctl.cli import app
from nvfp4ctl.workspace import memory_path

B200 = "NVIDIA B200 (sm_100)"
SHAPE = "128x7168x2048"


def bench(minute: int, mean: float, commit: str, digest: str) -> runlog.RunEntry:
    target = f"submission.py@{digest}"  # "@" and no hash: a line that logged none
    return runlog.RunEntry(f"2026-11-26T01:{minute:02d}:00Z", "nvfp4ctl bench", target, commit, B200, "0",
                           result_line(Timing(mean, 0.01), [(SHAPE, Timing(mean, 0.01))]))


# three edits of submission.py on 2dc615a, not committed, the third undoing the second; then a commit
EDITS = [bench(0, 20.0, "2dc615a", "256b699e0000"), bench(10, 19.0, "2dc615a+dirty", "648be36e0000"),
         bench(20, 18.0, "2dc615a+dirty", "9a0c11f20000"), bench(30, 19.0, "2dc615a+dirty", "648be36e0000"),
         bench(40, 17.0, "5e81d04", "77aa0b3c0000")]


def test_a_change_of_the_targets_content_on_one_commit_is_marked(tmp_path: Path) -> None:
    """Three runs of `2dc615a+dirty` with other content hashes had no mark: the code seemed unchanged."""
    found = trend.collect(EDITS, tmp_path)[0]
    assert found.changes() == [True, False, False, False, True]
    assert found.content_changes() == [False, True, True, True, False]  # a new commit is marked "^" alone
    assert trend.plot(found.series(SHAPE), found.changes(), height=3,
                      content_changes=found.content_changes())[-1].strip() == "^ ~ ~ ~ ^"
    assert trend.commit_legend(found) == [
        "^ run 1: 2dc615a (2026-11-26 01:00:00)",
        "~ run 2: content @648be36e on 2dc615a+dirty (2026-11-26 01:10:00)",
        "~ run 3: content @9a0c11f2 on 2dc615a+dirty (2026-11-26 01:20:00)",
        "~ run 4: content @648be36e, as run 2, on 2dc615a+dirty (2026-11-26 01:30:00)",
        "^ run 5: 5e81d04 (2026-11-26 01:40:00)"]


def test_the_same_content_or_a_line_with_no_hash_is_not_marked(tmp_path: Path) -> None:
    same = [bench(0, 20.0, "2dc615a", "256b699e0000"), bench(10, 19.0, "2dc615a", "256b699e0000"),
            bench(20, 18.0, "2dc615a", ""), bench(30, 18.0, "2dc615a", "648be36e0000")]
    found = trend.collect(same, tmp_path)[0]
    assert found.content_changes() == [False] * 4
    assert trend.commit_legend(found) == ["^ run 1: 2dc615a (2026-11-26 01:00:00)"]


def test_log_trend_shows_the_edits_marks_and_names_the_new_hashes() -> None:
    memory = memory_path()
    for entry in EDITS:
        runlog.append(entry, memory)
    result = CliRunner().invoke(app, ["log", "--trend"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    axis = next(index for index, line in enumerate(lines) if "└─" in line)
    assert lines[axis + 1].strip() == "^ ~ ~ ~ ^", result.output
    assert "  ~ run 3: content @9a0c11f2 on 2dc615a+dirty (2026-11-26 01:20:00)" in lines
