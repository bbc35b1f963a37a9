"""Two builds of one kernel at once: the second waits for the cache lock and then finds the entry the first made.
Its row says so (`hit (built by another nvfp4ctl meanwhile)`, its time the wait, labelled `(waited)`), where it
read `hit` beside the wait's 21.7 s as if that were reading a hit. The other nvfp4ctl is a stand-in: a lock
that, while this build waits on it, lands the entry."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import builder, cache, submission_build
from nvfp4ctl.build.report import BuildReport, TensorOpCheck
from nvfp4ctl.cli import app
from nvfp4ctl.kernel_cells import BUILT_MEANWHILE
from stand_in_units import KERNEL, SUBMISSION, flat

runner = CliRunner()


def _said(output: str) -> str:
    """The output flat, its table's cell borders left out."""
    return flat(output.replace("│", " "))


@pytest.fixture()
def other_builds_meanwhile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entries another nvfp4ctl lands while this one waits for their lock."""
    landed: list[str] = []

    @contextmanager
    def locked(entry: Path, building: str | None = None) -> Iterator[None]:
        entry.mkdir(parents=True)
        BuildReport(source=tmp_path / "other", arch="sm_90a", key=entry.name, entry=entry, module_name=None,
                    functions=(), tensor_op=TensorOpCheck(expected="HGMMA", found=(), match=None, checked=True),
                    compile_s=21.0).save()
        landed.append(entry.name)
        yield

    def no_compile(*args: object, **kwargs: object) -> object:
        raise AssertionError("compiled what another nvfp4ctl built")

    monkeypatch.setattr(cache, "locked", locked)
    monkeypatch.setattr(builder, "build_mode", lambda: builder.DEVICE)
    monkeypatch.setattr(builder, "_compile_and_inspect", no_compile)
    monkeypatch.setattr(submission_build, "_command", lambda *args: [sys.executable, "-c", "raise SystemExit(1)"])
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(tmp_path / "MEMORY.md"))
    monkeypatch.setenv("COLUMNS", "300")
    return landed


def test_a_kernel_another_nvfp4ctl_built_meanwhile_says_so(tmp_path: Path, other_builds_meanwhile: list[str]) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    result = runner.invoke(app, ["build", str(tmp_path / "k.cu")])
    said = _said(result.output)
    assert result.exit_code == 0 and len(other_builds_meanwhile) == 1, said
    assert f"s (waited) {BUILT_MEANWHILE}" in said, said


def test_a_submission_unit_another_nvfp4ctl_built_meanwhile_says_so(tmp_path: Path,
                                                                    other_builds_meanwhile: list[str]) -> None:
    (tmp_path / "submission.py").write_text(SUBMISSION)
    result = runner.invoke(app, ["build", str(tmp_path / "submission.py")])
    said = _said(result.output)
    assert result.exit_code == 0 and len(other_builds_meanwhile) == 1, said
    assert f"s (waited) {BUILT_MEANWHILE}" in said, said


def test_a_hit_found_without_waiting_is_a_plain_hit(tmp_path: Path, other_builds_meanwhile: list[str]) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    runner.invoke(app, ["build", str(tmp_path / "k.cu")])
    again = _said(runner.invoke(app, ["build", str(tmp_path / "k.cu")]).output)
    assert len(other_builds_meanwhile) == 1 and "waited" not in again and BUILT_MEANWHILE not in again, again
    assert " s hit" in again, again
