"""lint applies the competition rules to submissions: which Python files count as one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.cli import app
from nvfp4ctl.lint import LintConfig, lint_paths
from nvfp4ctl.lint.submission import is_submission

GRAPH = "import torch\ng = torch.cuda.CUDAGraph()\n"


@pytest.mark.parametrize("name, text, expected", [
    ("submission.py", "", True),
    ("Submission_v2.py", "", True),
    ("kernel.py", "def custom_kernel(data):\n    return data[6]\n", True),
    ("kernel.py", "async def custom_kernel(data): ...\n", True),
    ("kernel.py", "if fast:\n    def custom_kernel(data):\n        return data[6]\n", True),
    ("kernel.py", "custom_kernel = build()\n", True),
    ("kernel.py", "custom_kernel: Callable = build()\n", True),
    ("kernel.py", "from impl import custom_kernel\n", True),
    ("kernel.py", "from impl import (helper, custom_kernel)\n", True),
    ("bench.py", '"""Times custom_kernel(data) for one variant."""\n', False),
    ("bench.py", "out = module.custom_kernel(data)\n", False),
    ("bench.py", "if custom_kernel == other: pass\n", False),
    ("bench.py", "def custom_kernel_helper(): ...\n", False),
])
def test_what_counts_as_a_submission(name: str, text: str, expected: bool) -> None:
    assert is_submission(Path(name), text) is expected


def _tree(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "bench_tool.py").write_text(GRAPH + 'open("task.yml")\n')  # a tool, not a submission
    (folder / "mine.py").write_text(GRAPH + "def custom_kernel(data):\n    return data[6]\n")
    (folder / "kernel.cu").write_text("__global__ void k() {}\n")
    return folder


def test_in_a_folder_only_submissions_and_cpp_are_checked(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    report = lint_paths([folder], LintConfig())
    assert sorted(p.name for p in report.files) == ["kernel.cu", "mine.py"]
    assert [p.name for p in report.not_submissions] == ["bench_tool.py"]
    assert {d.path.name for d in report.diagnostics} == {"mine.py"}


def test_a_named_file_is_always_checked(tmp_path: Path) -> None:
    folder = _tree(tmp_path)
    report = lint_paths([folder / "bench_tool.py"], LintConfig())
    assert [d.code for d in report.diagnostics] == ["NV201", "NV602"]
    assert report.not_submissions == ()


def test_the_cli_names_what_it_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    folder = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint", "work"])
    assert result.exit_code == 1
    assert "(2 checked; 1 Python file skipped, not a submission)" in result.output
    assert "bench_tool.py" not in result.output  # named only under -v
    verbose = CliRunner().invoke(app, ["-v", "lint", "work"])
    assert "bench_tool.py: skipped, not a submission" in verbose.output
    as_json = json.loads(CliRunner().invoke(app, ["lint", "--format", "json", "work"]).stdout)
    assert as_json["summary"]["not_submissions"] == [str(Path("work") / "bench_tool.py")]


def test_the_projects_own_kernels_and_benchmarks_pass() -> None:
    """The project's benchmark script is a tool, not a submission (it reads task.yml on purpose)."""
    root = Path(__file__).resolve().parents[2]
    report = lint_paths([root / "kernels", root / "benchmarks"], LintConfig())
    assert report.errors == 0, [f"{d.path.name}:{d.line} {d.code}" for d in report.diagnostics]
    assert any(p.name == "submission.py" for p in report.files)  # kernels/torch_dequant/submission.py
