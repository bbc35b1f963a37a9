"""NV702 through module constants and helpers: the benchmark shape a branch compares, however it is
written, and a helper's picked config, whether its branch is a statement or an expression."""

from __future__ import annotations

import textwrap

from nvfp4ctl.lint.engine import lint_text

HEAD = """\
    BIG = 256
    SMALL = 128
    BENCH_M = 128
    BENCH_N = 7168
    """


def _nv702(helper: str, branch: str) -> list[int]:
    source = textwrap.dedent(HEAD) + textwrap.dedent(helper) + textwrap.dedent(f"""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            m, n = a.shape[0], b.shape[0]
        {textwrap.indent(textwrap.dedent(branch), "    ")}
                return mod.gemm_big(a, b, sfa_permuted, sfb_permuted, c)
            return mod.gemm(a, b, sfa_permuted, sfb_permuted, c)
        """)
    return [d.line for d in lint_text(source) if d.code == "NV702"]


def test_a_branch_on_module_constants_holding_a_benchmark_shape_is_reported() -> None:
    assert _nv702("", "if (m, n) == (BENCH_M, BENCH_N):") == [8]


def test_a_branch_on_what_a_helper_returning_those_constants_gives_is_reported() -> None:
    assert _nv702("def bench():\n    return BENCH_M, BENCH_N\n", "if (m, n) == bench():") == [10]
    assert _nv702("def bench_m():\n    return BENCH_M\n", "if m == bench_m() and n == 7168:") == [10]


def test_a_helper_whose_returns_are_not_all_numbers_is_not_followed() -> None:
    assert _nv702("def bench(m):\n    return m, BENCH_N\n", "if (m, n) == bench(m):") == []
