"""NV702 looks for the task's problem's own benchmark shapes, named by that problem's dimensions."""

from __future__ import annotations

from pathlib import Path

from nvfp4ctl.lint.config import LintConfig
from nvfp4ctl.lint.engine import lint_text
from nvfp4ctl.lint.targets import plan

GEMV = LintConfig(problem="nvfp4_gemv")
GEMV_SUBMISSION = """\
def custom_kernel(data):
    a, b, sfa, sfb, sfa_p, sfb_p, c = data
    m, k, l = c.shape[0], a.shape[1] * 2, c.shape[2]
    if m == 4096 and l == 8:
        return fast(data)
    if (m, k) == (128, 16384):
        return fast(data)
    return run(a, b, sfa_p, sfb_p, c)
"""
GEMV_KERNEL = """\
#include "nvfp4_gemv_api.h"
int pick(Args args) {
  if (args.m == 4096 && args.l == 8) { return launch_fast(); }
  if (args.m == 128 && args.k == 16384) { return launch_fast(); }
  return 0;
}
"""


def _shape_branches(text: str, config: LintConfig, path: str) -> list[tuple[int, str]]:
    return [(d.line, d.message) for d in lint_text(text, path=path, config=config) if d.code == "NV702"]


def test_a_gemv_branch_on_its_benchmark_is_named_in_its_dimensions() -> None:
    for text, path, line in ((GEMV_SUBMISSION, "submission.py", 4), (GEMV_KERNEL, "k.cu", 3)):
        found = _shape_branches(text, GEMV, path)
        # (128, 16384) is the GEMM's first benchmark's m and k, no GEMV benchmark's
        assert [(at, message.split(":")[0]) for at, message in found] == \
            [(line, "branches on the benchmark shape m=4096 l=8")], path


def test_a_gemv_config_without_shapes_takes_the_gemvs_shipped_ones() -> None:
    assert GEMV.shape_dims == ("m", "k", "l")
    assert GEMV.benchmark_shapes == ((7168, 16384, 1), (4096, 7168, 8), (7168, 2048, 4))


def test_a_literal_one_counts_for_no_dimension() -> None:
    text = "def custom_kernel(data):\n    if data[6].shape[0] == 7168 and data[0].stride(1) == 1:\n        return fast(data)\n" \
           "    return run(data)\n"
    assert _shape_branches(text, GEMV, "submission.py") == []


def test_a_gemv_task_gives_lint_its_benchmarks(tmp_path: Path, monkeypatch) -> None:
    from nvfp4ctl.problems import get_problem

    (tmp_path / "task.yml").write_text(get_problem("nvfp4_gemv").task_file.read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NVFP4CTL_TASK", raising=False)
    config = plan([tmp_path]).config
    assert (config.problem, config.shape_dims) == ("nvfp4_gemv", ("m", "k", "l"))
    assert (4096, 7168, 8) in config.benchmark_shapes


def test_the_gemms_shapes_stay_its_m_n_k() -> None:
    text = "def custom_kernel(data):\n    m, n = 128, 4096\n    if (m, n) == (128, 4096):\n        return fast(data)\n" \
           "    return run(data)\n"
    found = _shape_branches(text, LintConfig(), "submission.py")
    assert [message.split(":")[0] for _, message in found] == ["branches on the benchmark shape m=128 n=4096"]
