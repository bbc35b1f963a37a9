"""A compile-only tune asks the kernel's own `_unsupported` on the host which task shapes it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import toolchain
from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.host_refusals import HOST_CALLS, HostRefusals, host_refusals, refusal_notes

SHIPPED_SM90 = Path(__file__).resolve().parents[2] / "kernels" / "sm90" / "nvfp4_gemm_sm90.cu"
REFUSING = '''#include "nvfp4_gemm_api.h"
const char* nvfp4_gemm_unsupported(int m, int n, int k, int l) {
  return m % 128 != 0 ? "m must be a multiple of 128 (the kernel's tile M)" : nullptr;
}
cudaError_t nvfp4_gemm_launch(const Nvfp4GemmArgs&) { return cudaSuccess; }
'''


def _nvcc() -> None:
    try:
        toolchain.nvcc_path()
    except UsageError:
        pytest.skip("no nvcc here")


def _kernel(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine" / "k.cu"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_shapes_the_kernels_own_check_refuses_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tune --compile-only` with a task shape the kernel refuses (100x200x320) built its candidates "for every
    shape" and said nothing of it, where a timed tune marks the shape unsupported."""
    _nvcc()
    monkeypatch.chdir(tmp_path)
    found = host_refusals(_kernel(tmp_path, REFUSING), "sm_90a", [(128, 256, 256, 1), (100, 200, 320, 1)])
    assert found == HostRefusals({(100, 200, 320, 1): "m must be a multiple of 128 (the kernel's tile M)"})
    assert refusal_notes(found, "nvfp4_gemm_unsupported") == [
        "the kernel does not take 100x200x320 (m must be a multiple of 128 (the kernel's tile M), as its"
        " nvfp4_gemm_unsupported says): a timed tune leaves it out; its candidates were built all the same"]


def test_an_angle_bracket_include_beside_the_kernel_is_not_found_as_the_build_does_not_find_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host check added -I<kernel folder>, which the build does not: it found an `#include <rule.cuh>`
    beside the kernel and named refusals of a kernel whose build fails on that line."""
    _nvcc()
    monkeypatch.chdir(tmp_path)
    kernel = _kernel(tmp_path, REFUSING.replace('#include "nvfp4_gemm_api.h"',
                                                '#include "nvfp4_gemm_api.h"\n#include <rule.cuh>'))
    (kernel.parent / "rule.cuh").write_text("#pragma once\n")
    found = host_refusals(kernel, "sm_90a", [(100, 200, 320, 1)])
    assert found.refused == {} and found.unknown is not None and "did not compile" in found.unknown


def test_what_cannot_be_asked_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _nvcc()
    monkeypatch.chdir(tmp_path)
    broken = host_refusals(_kernel(tmp_path, REFUSING + "this is no C++;\n"), "sm_90a", [(128, 256, 256, 1)])
    assert broken.refused == {} and broken.unknown is not None and "did not compile" in broken.unknown
    # a problem whose `_unsupported` the host program has no call for (one added to nvfp4ctl later, say)
    monkeypatch.delitem(HOST_CALLS, "nvfp4_gemv")
    gemv = host_refusals(NAIVE / "nvfp4_gemv_naive.cu", "sm_90a", [(128, None, 256, 1)])
    assert gemv == HostRefusals({}, "its host check does not know the arguments of nvfp4_gemv_unsupported")
    assert refusal_notes(gemv, "nvfp4_gemv_unsupported") == [
        "compile-only cannot tell which shapes the kernel refuses (its host check does not know the arguments of"
        " nvfp4_gemv_unsupported): a timed tune does"]



def test_the_notes_name_a_gemv_or_grouped_gemm_shape_by_its_sizes() -> None:
    """The GEMV's shape has no n and the grouped GEMM's sizes are per group: by tune's key (refusal_notes' default
    `shown`) the notes name 128x1x200x2 (the GEMV's c is m x 1) and 96x128x256+128x256x200 (each group's m x n x k),
    where they read 128xNonex200 and (96, 128)x(128, 256)x(256, 200)."""
    gemv = HostRefusals({(128, None, 200, 2): "k must be a multiple of 16"})
    assert refusal_notes(gemv, "nvfp4_gemv_unsupported")[0].startswith("the kernel does not take 128x1x200x2 (k must")
    groups = HostRefusals({((96, 128), (128, 256), (256, 200), 1): "every group's k must be a multiple of 16"})
    assert refusal_notes(groups, "nvfp4_group_gemm_unsupported")[0].startswith(
        "the kernel does not take 96x128x256+128x256x200 (every group's k")

NAIVE = Path(__file__).resolve().parents[2] / "kernels" / "naive"


def test_the_gemvs_own_check_is_asked_of_m_k_l(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """nvfp4_gemv_unsupported(m, k, l): compile-only said it could not tell, as the function takes no n."""
    _nvcc()
    monkeypatch.chdir(tmp_path)
    found = host_refusals(NAIVE / "nvfp4_gemv_naive.cu", "sm_90a",
                          [(128, None, 256, 1), (128, None, 200, 2), (0, None, 256, 1), (7168, None, 16384, 1)])
    assert found == HostRefusals({(128, None, 200, 2): "k must be a positive multiple of 16 (one scale per 16 elements)",
                                  (0, None, 256, 1): "m and l must be positive"})


def test_the_grouped_gemms_own_check_is_asked_of_each_groups_m_n_k(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """nvfp4_group_gemm_unsupported(problems, groups), a host array of the groups' shapes: compile-only said it
    could not tell. Groups of several sizes share one run of the host program, each answered on its own."""
    _nvcc()
    monkeypatch.chdir(tmp_path)
    refused_k = ((96, 128, 80), (128, 256, 384), (256, 512, 200), 1)  # the third group's k is no multiple of 16
    found = host_refusals(NAIVE / "nvfp4_group_gemm_naive.cu", "sm_90a",
                          [((96, 128), (128, 256), (256, 512), 1), refused_k, ((64,), (0,), (256,), 1)])
    assert found == HostRefusals({refused_k: "every group's k must be a positive multiple of 16",
                                  ((64,), (0,), (256,), 1): "every group needs m, n >= 1"})
    # the operands' pointers are null on the host: a check that reads them sees no memory, and says so
    reads_pointers = '''#include "nvfp4_group_gemm_api.h"
const char* nvfp4_group_gemm_unsupported(const Nvfp4GroupProblem* problems, int groups) {
  for (int g = 0; g < groups; ++g)
    if (problems[g].a != nullptr || problems[g].c != nullptr) return "a pointer the host check did not zero";
  return groups > 2 ? "at most 2 groups" : nullptr;
}
cudaError_t nvfp4_group_gemm_launch(const Nvfp4GroupGemmArgs&) { return cudaSuccess; }
'''
    three = ((1, 2, 3), (1, 2, 3), (16, 16, 16), 1)
    assert host_refusals(_kernel(tmp_path, reads_pointers), "sm_90a", [three, ((1, 1), (1, 1), (16, 16), 1)]) == \
        HostRefusals({three: "at most 2 groups"})


def test_a_compile_only_tune_reports_them_as_a_timed_tune_does(tiny_copy: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny fixture's nvfp4_gemm_unsupported refuses every shape: compile-only builds its candidates all
    the same, and now says which shapes a timed tune would leave out (the report's unsupported, in --json)."""
    from concurrent.futures import ThreadPoolExecutor

    from nvfp4ctl.task import Case
    from nvfp4ctl.tune.compile_pool import CompilePool
    from nvfp4ctl.tune.knobs import discover
    from nvfp4ctl.tune.search import start_configs
    from nvfp4ctl.tune.session import Evaluator, TuneReport, compile_only
    from nvfp4ctl.tune.state import TuneState
    from nvfp4ctl.tune.table import read_table
    from tune_fakes import fake_compile

    _nvcc()
    monkeypatch.chdir(tmp_path)
    knobs, shapes = discover(tiny_copy), [(128, 256, 256, 1)]
    report = TuneReport(knobs=knobs, shapes=shapes, compile_only=True)
    with CompilePool(tiny_copy, "sm_90a", compile_fn=fake_compile, executor=ThreadPoolExecutor(2)) as builds:
        evaluator = Evaluator(builds, None, TuneState(tmp_path / "state.json", "k"), {s: Case(*s, seed=1111) for s in shapes},
                              report, lambda _, done: None)
        compile_only(knobs, start_configs(knobs, shapes, read_table(knobs.dispatch, knobs)), evaluator, arch="sm_90a")
    assert report.unsupported == {(128, 256, 256, 1): "a fixture for tune's CPU tests"}
    assert ("the kernel does not take 128x256x256 (a fixture for tune's CPU tests, as its nvfp4_gemm_unsupported"
            " says): a timed tune leaves it out; its candidates were built all the same") in report.notes
    assert report.builds  # built all the same


def test_the_notes_name_a_shape_as_the_report_shows_it() -> None:
    """A compile-only tune's note names a GEMV shape by its label (TuneReport.shown), as its tables do."""
    gemv = HostRefusals({(128, None, 200, 2): "k must be a multiple of 16"})
    labels = {(128, None, 200, 2): "128x200 l=2"}
    assert refusal_notes(gemv, "nvfp4_gemv_unsupported", labels.__getitem__)[0].startswith(
        "the kernel does not take 128x200 l=2 (k must")
