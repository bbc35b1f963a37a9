"""Worker tests: fake CPU targets written as submission files, jobs from runner_jobs.py."""

from __future__ import annotations

import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from nvfp4ctl.runner.targets import SUBMISSION, TargetSpec

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def _jobs_importable_in_child(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.syspath_prepend(str(HERE))  # spawn children start with the parent's sys.path
    # kept child logs (after a crash) land in the test's tmp folder, not in /tmp
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


@pytest.fixture
def make_target(tmp_path: Path) -> Callable[[str], TargetSpec]:
    """A submission whose custom_kernel has the given body (argument: data)."""

    def make(body: str, header: str = "") -> TargetSpec:
        path = tmp_path / "submission.py"
        source = textwrap.dedent(header) + "\n\ndef custom_kernel(data):\n" + textwrap.indent(textwrap.dedent(body), "    ")
        path.write_text(source)
        return TargetSpec(SUBMISSION, path, "submission.py")

    return make
