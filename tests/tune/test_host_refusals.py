"""A compile-only tune asks the kernel's own `_unsupported` on the host which task shapes it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4ctl.build import toolchain
from nvfp4ctl.errors import UsageError
from nvfp4ctl.tune.host_refusals import HostRefusals, host_refusals, refusal_notes

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


def test_what_cannot_be_asked_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _nvcc()
    monkeypatch.chdir(tmp_path)
    broken = host_refusals(_kernel(tmp_path, REFUSING + "this is no C++;\n"), "sm_90a", [(128, 256, 256, 1)])
    assert broken.refused == {} and broken.unknown is not None and "did not compile" in broken.unknown
    gemv = host_refusals(_kernel(tmp_path, '#include "nvfp4_gemv_api.h"\n'), "sm_90a", [(128, 256, 256, 1)])
    assert gemv == HostRefusals({}, "nvfp4_gemv_unsupported takes no (m, n, k, l)")
    assert refusal_notes(gemv, "nvfp4_gemv_unsupported") == [
        "compile-only cannot tell which shapes the kernel refuses (nvfp4_gemv_unsupported takes no (m, n, k, l)):"
        " a timed tune does"]


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
