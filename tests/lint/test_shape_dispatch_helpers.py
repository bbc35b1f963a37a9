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
    """Lines of NV702 in a submission with the module constants above, the helper, and custom_kernel
    whose fast path sits under branch (its last line an if)."""
    body = ["def custom_kernel(data):",
            "    a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data",
            "    m, n = a.shape[0], b.shape[0]",
            *("    " + line for line in branch.splitlines()),
            "        return mod.gemm_big(a, b, sfa_permuted, sfb_permuted, c)",
            "    return mod.gemm(a, b, sfa_permuted, sfb_permuted, c)"]
    source = textwrap.dedent(HEAD) + helper + "\n".join(body) + "\n"
    return [d.line for d in lint_text(source) if d.code == "NV702"]


def test_a_branch_on_module_constants_holding_a_benchmark_shape_is_reported() -> None:
    assert _nv702("", "if (m, n) == (BENCH_M, BENCH_N):") == [8]


def test_a_branch_on_what_a_helper_returning_those_constants_gives_is_reported() -> None:
    assert _nv702("def bench():\n    return BENCH_M, BENCH_N\n", "if (m, n) == bench():") == [10]
    assert _nv702("def bench_m():\n    return BENCH_M\n", "if m == bench_m() and n == 7168:") == [10]


def test_a_helper_whose_returns_are_not_all_numbers_is_not_followed() -> None:
    assert _nv702("def bench(m):\n    return m, BENCH_N\n", "if (m, n) == bench(m):") == []


def test_a_helper_returning_one_constant_or_another_on_the_shape_is_a_code_path_where_the_caller_tests_it() -> None:
    named = "def tiles(m, n):\n    return BIG if (m, n) == (128, 7168) else SMALL\n"
    assert _nv702(named, "if tiles(m, n) == BIG:") == [6]
    assert _nv702(named, "t = tiles(m, n)\nif t == BIG:") == [6]
    literal = "def tiles(m, n):\n    return 256 if (m, n) == (128, 7168) else 128\n"
    assert _nv702(literal, "if tiles(m, n) == 256:") == [6]


def test_a_helper_returning_one_constant_or_another_on_the_shape_that_no_caller_tests_picks_a_config() -> None:
    named = "def tiles(m, n):\n    return BIG if (m, n) == (128, 7168) else SMALL\n"
    assert _nv702(named, "mod.tile(tiles(m, n))\nif False:") == []
