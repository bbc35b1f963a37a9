"""The sm_90a kernel built for a GPU it shares with other work (docs/own_code.md): with shared A and
splits without a cluster compiled out, no launch of any task shape waits for CTAs that another
kernel's blocks could keep off the GPU (the launch-wide barrier, persistent loops, spanning and
software splits all meet through flags in memory and trap after 2 s), whatever the dispatch table says,
and every result stays exact."""

from __future__ import annotations

import pytest

from tests.kernels.test_sm90_kernel import TASK_TESTS, launched_kernels, run_and_compare, sm90_module

torch = pytest.importorskip("torch")

# The defines docs/own_code.md gives for such a build (tests/test_own_code_doc.py checks it names them).
SHARING_DEFINES = ("NVFP4_SM90_SHARED_A=0", "NVFP4_SM90_SOFT_SPLIT=0")
TEMPLATE = "nvfp4_gemm_sm90_kernel<"  # <kClusterK, kSharedA, kSoftSplit, kSpan, kPersistent, kTileM>


@pytest.fixture(scope="module")
def sharing_build():
    return sm90_module(SHARING_DEFINES)


def flag_meetings(name: str) -> list[str]:
    """Which of shared A, software split, spanning split and persistent loop a kernel's name says it runs."""
    arguments = name.split(TEMPLATE, 1)[1].split(">", 1)[0].split(", ")
    labels = ("shared A", "software split", "spanning split", "persistent")
    return [label for label, value in zip(labels, arguments[1:5], strict=True) if value != "false"]


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,l", TASK_TESTS)
def test_no_launch_waits_for_ctas_outside_a_cluster(sharing_build, m: int, n: int, k: int, l: int) -> None:
    names = [name for name in launched_kernels(sharing_build, m, n, k, l) if "nvfp4_gemm_sm90" in name]
    assert names, f"{m=}, {n=}, {k=}: no sm_90a kernel launched"
    meeting = {name: flag_meetings(name) for name in names if TEMPLATE in name and flag_meetings(name)}
    assert not meeting, f"{m=}, {n=}, {k=}: {meeting}"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,l", TASK_TESTS)
def test_matches_reference(sharing_build, m: int, n: int, k: int, l: int) -> None:
    run_and_compare(sharing_build, m, n, k, l, seed=1111, scales="generator")
