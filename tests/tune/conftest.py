"""tune tests: the tiny fixture kernel copied for tests that rewrite its table (helpers: tune_fakes.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tune_fakes import FIXTURES


@pytest.fixture
def tiny_copy(tmp_path: Path) -> Path:
    """The tiny kernel, its config and its table copied, so a test may rewrite the table."""
    for name in ("tiny_knobs.cu", "tiny_config.cuh", "tiny_dispatch.cuh"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    return tmp_path / "tiny_knobs.cu"


@pytest.fixture
def tiny_without_table(tiny_copy: Path) -> Path:
    """The tiny kernel with no dispatch table: its config names none and includes none."""
    config = tiny_copy.with_name("tiny_config.cuh")
    config.write_text("".join(line for line in config.read_text().splitlines(keepends=True) if "dispatch" not in line))
    tiny_copy.with_name("tiny_dispatch.cuh").unlink()
    return tiny_copy
