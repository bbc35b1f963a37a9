"""A unit built for a plain arch (sm_100: torch's own on the B200 where a submission names no arch) is not asked
for the a-arch's op (tcgen05's UTCOMMA.4X needs sm_100a and never assembles for sm_100): it builds with a note
naming the -gencode that gets it, where it failed "no UTCOMMA.4X in the sm_100 SASS", exit 1. The compiler and
the SASS are stand-ins here."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build.report import BuildReport, TensorOpCheck, narrower_note, tensor_op_problem, without_a_note
from nvfp4ctl.build.resources import check_tensor_op

from plain_gemv import FFMA_SASS, PORTABLE, build_in_task

HMMA_SASS = "        /*0080*/                   HMMA.16816.F32 R4, R8, R12, R4 ;\n"


def test_plain_cuda_naming_no_arch_builds_for_sm_100_with_a_note(tmp_path: Path, compiles: list[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    code, said = build_in_task(tmp_path / "gemm", "nvfp4_gemm", PORTABLE, monkeypatch)
    assert code == 0, said
    assert "arch sm_100 (no arch named" in said
    assert "│ none (arch without the a) │" in said
    assert ("note: scaled.cu: built for sm_100, without the a: the B200's widest MMA, tcgen05.mma (UTCOMMA.4X),"
            " needs sm_100a and never assembles for sm_100, so none is asked of the build; to use it, name the arch:"
            " -gencode=arch=compute_100a,code=sm_100a") in said
    assert "error:" not in said and "no UTCOMMA.4X in the sm_100 SASS" not in said


def test_a_gemv_built_for_sm_100_gets_no_note_of_tensor_cores(tmp_path: Path, compiles: list[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The GEMV needs no tensor core: its row says so, and nothing points it at sm_100a's MMA."""
    code, said = build_in_task(tmp_path / "gemv", "nvfp4_gemv", PORTABLE, monkeypatch)
    assert code == 0, said
    assert "│ none (not needed) │" in said
    assert "note:" not in said and "error:" not in said


def test_the_plain_arch_is_checked_against_its_a_arch_op_without_demanding_it() -> None:
    plain = check_tensor_op("sm_100", FFMA_SASS)
    assert plain.expected == "UTCOMMA.4X" and plain.without_a and plain.passes
    assert tensor_op_problem(plain, "sm_100") is None
    own = check_tensor_op("sm_100a", FFMA_SASS)
    assert not own.without_a and not own.passes
    assert "no UTCOMMA.4X in the sm_100a SASS" in (tensor_op_problem(own, "sm_100a") or "")
    assert without_a_note(own, "sm_100a") is None
    assert "the H100's widest MMA, wgmma (HGMMA), needs sm_90a" in (without_a_note(check_tensor_op("sm_90", ""), "sm_90") or "")


def test_an_mma_sync_on_sm_100_is_named_narrower_than_sm_100as_mma() -> None:
    hmma = check_tensor_op("sm_100", HMMA_SASS)
    assert narrower_note(hmma, "sm_100") == ("its tensor-core op is HMMA.16816.F32 (mma.sync), not sm_100a's widest"
                                             " MMA UTCOMMA.4X (tcgen05.mma)")
    assert narrower_note(check_tensor_op("sm_100a", HMMA_SASS), "sm_100a").startswith(
        "its tensor-core op is HMMA.16816.F32 (mma.sync), not sm_100a's widest")


def test_a_cached_sm_100_report_is_read_as_without_the_a(tmp_path: Path) -> None:
    """An entry saved before without_a existed (an sm_100 build that failed then) is read by its arch."""
    saved = BuildReport(source=tmp_path / "k.cu", arch="sm_100", key="k", entry=tmp_path, module_name=None,
                        functions=(), tensor_op=TensorOpCheck(expected="UTCOMMA.4X", found=(), match=None, checked=True),
                        compile_s=1.0)
    saved.save()
    loaded = BuildReport.load(tmp_path, tmp_path / "k.cu")
    assert loaded.tensor_op.without_a and loaded.problems() == []
