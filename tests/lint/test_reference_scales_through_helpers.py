"""NV401 through a helper of the file: reported at each call that passes a reference scale, naming it."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from nvfp4ctl.lint import lint_text
from nvfp4ctl.lint.config import LintConfig
from nvfp4ctl.lint.python import call_sites
from nvfp4ctl.lint.python.index import Function, ModuleIndex, passed_arguments
from nvfp4ctl.problems import get_problem
from nvfp4ctl.scaffold import init_project

CUTE_POINTERS = """\
    from cutlass.cute.runtime import make_ptr
    _compiled = {}
    def _ptr(dtype, t, align):
        return make_ptr(dtype, t.data_ptr(), cute.AddressSpace.gmem, assumed_align=align)
    def custom_kernel(data):
        a, b, sfa_ref, sfb_ref, _, _, c = data
        key = a.shape
        if key not in _compiled:
            _compiled[key] = cute.compile(gemm_host, _ptr(AB, a, 16), _ptr(SF, sfa_ref, 32), _ptr(SF, sfb_ref, 32))
        _compiled[key](_ptr(AB, a, 16), _ptr(SF, sfa_ref, 32), _ptr(SF, sfb_ref, 32), _ptr(CT, c, 16))
        return c
    """


def _nv401(text: str) -> list[tuple[int, int, str]]:
    return [(d.line, d.col, d.message) for d in lint_text(textwrap.dedent(text), "submission.py") if d.code == "NV401"]


def test_each_call_passing_a_reference_scale_to_a_pointer_helper_is_reported_there() -> None:
    found = _nv401(CUTE_POINTERS)
    assert [(line, col) for line, col, _ in found] == [(9, 76), (9, 99), (10, 46), (10, 69)]
    assert found[0][2] == ("sfa_ref (read as t in _ptr) is the reference scale sfa_ref (input index 2): use index 4"
                           " (sfa_permuted)")
    assert found[1][2].startswith("sfb_ref (read as t in _ptr) is the reference scale sfb_ref (input index 3)")


def test_a_helper_given_only_the_permuted_scales_is_fine() -> None:
    fixed = CUTE_POINTERS.replace("a, b, sfa_ref, sfb_ref, _, _, c = data", "a, b, _, _, sfa_ref, sfb_ref, c = data")
    assert _nv401(fixed) == []


def test_a_helper_passing_its_parameter_on_is_followed_to_the_call_that_gave_the_scale() -> None:
    found = _nv401("""\
        def _ptr(t):
            return make_ptr(t.data_ptr())
        def _scales(x, y):
            return _ptr(x), _ptr(y)
        def custom_kernel(data):
            a, b, sfa, sfb, sfa_p, sfb_p, c = data
            run(*_scales(sfa, sfb_p))
            return c
        """)
    assert [(line, col) for line, col, _ in found] == [(7, 18)]
    assert found[0][2].startswith("sfa (read as t in _ptr) is the reference scale sfa_ref")


def test_a_reference_scale_bound_in_the_helper_itself_is_reported_where_it_is_read() -> None:
    found = _nv401("""\
        def launch(inputs):
            scale = inputs[2]
            return kernel(scale.data_ptr())
        def custom_kernel(data):
            return launch(data)
        """)
    assert [(line, col) for line, col, _ in found] == [(3, 19)]


def _helpers_calling_each_other(count: int, scale: str) -> str:
    """`count` pointer helpers, each calling the one before it, each called by custom_kernel with `scale`
    (the shape of a CuTe DSL submission with one helper per operand and tile)."""
    lines = ["from cutlass.cute.runtime import make_ptr, from_dlpack"]
    for i in range(count):
        passed_on = f"_h{i - 1}(dtype, t, align) if {i} > 100000 else p" if i else "p"
        lines += [f"def _h{i}(dtype, t, align=16):", f"    p = make_ptr(dtype, t.data_ptr() + {i}, assumed_align=align)",
                  "    z = from_dlpack(t).mark_layout_dynamic()", f"    return {passed_on}"]
    lines += ["def custom_kernel(data):", "    a, b, sfa_ref, sfb_ref, sfa_p, sfb_p, c = data"]
    lines += [f"    r{i} = _h{i}(1, {scale}, 32)" for i in range(count)]
    lines += ["    return c"]
    return "\n".join(lines) + "\n"


def test_each_function_s_callees_are_found_once_however_many_reads_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each read of a helper's parameter asks for every call to the helper; finding them afresh each time
    # made a 5,500-line file of such helpers take 25 s (2 s without the call-site rule).
    found_for: list[int] = []
    find = ModuleIndex._find_callees

    def counted(self: ModuleIndex, function: Function):  # type: ignore[no-untyped-def]
        found_for.append(id(function.node))
        return find(self, function)

    placed: list[ast.Call] = []

    def counted_placing(callee: Function, call: ast.Call) -> dict[str, ast.expr] | None:
        placed.append(call)
        return passed_arguments(callee, call)

    monkeypatch.setattr(ModuleIndex, "_find_callees", counted)
    monkeypatch.setattr(call_sites, "passed_arguments", counted_placing)
    findings = _nv401(_helpers_calling_each_other(40, "sfa_ref"))
    assert len(findings) >= 40
    assert len(found_for) == len(set(found_for)) <= 41
    assert len(placed) <= 2 * 2 * 40  # each call to a helper placed once for the parameter read (80 calls)


def test_a_chain_of_helpers_passing_the_parameter_on_is_followed_to_the_end() -> None:
    found = _nv401("""\
        def _ptr(t):
            return make_ptr(1, t.data_ptr())
        def h1(t):
            return _ptr(t)
        def h2(t):
            return h1(t)
        def h3(t):
            return h2(t)
        def h4(t):
            return h3(t)
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_p, sfb_p, c = data
            run(h4(sfa_ref), sfa_p, sfb_p)
            return c
        """)
    assert [(line, col) for line, col, _ in found] == [(13, 12)]
    assert found[0][2].startswith("sfa_ref (read as t in _ptr) is the reference scale sfa_ref")


def test_helpers_calling_each_other_are_reported_at_the_call_that_gives_the_scale_alone() -> None:
    found = _nv401("""\
        def _ptr(dtype, t, align=16):
            return make_ptr(dtype, t.data_ptr(), assumed_align=align)
        def _f(t, n):
            return _g(t, n - 1) if n else _ptr(1, t)
        def _g(t, n):
            return _f(t, n)
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_p, sfb_p, c = data
            run(_f(sfa_ref, 3), sfa_p, sfb_p)
            return c
        """)
    assert [(line, col) for line, col, _ in found] == [(9, 12)]


def test_a_call_passing_a_reference_scale_through_starred_arguments_is_reported_beside_one_that_names_it() -> None:
    found = _nv401("""\
        def _ptr(dtype, t, align=16):
            return make_ptr(dtype, t.data_ptr(), assumed_align=align)
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_p, sfb_p, c = data
            args = (1, sfa_ref, 32)
            x = _ptr(*args)
            y = _ptr(1, sfa_ref)
            z = _ptr(*(1, sfa_p))
            run(x, y, z, sfa_p, sfb_p)
            return c
        """)
    assert [(line, col) for line, col, _ in found] == [(6, 14), (7, 17)]
    assert found[0][2].startswith("*args (read as t in _ptr) is the reference scale sfa_ref (input index 2)")


def test_a_starred_tuple_handing_a_helper_both_reference_scales_is_one_finding_naming_both() -> None:
    found = _nv401("""\
        def _two(t, u):
            return t.data_ptr() + u.data_ptr()
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_p, sfb_p, c = data
            pair = (sfa_ref, sfb_ref)
            y = _two(*pair)
            run(y, sfa_p, sfb_p)
            return c
        """)
    assert found == [(6, 14, "*pair (read as t, u in _two) is the reference scales sfa_ref, sfb_ref (input indices"
                              " 2, 3): use indices 4, 5 (sfa_permuted, sfb_permuted)")]


def test_a_starred_literal_handing_a_helper_a_reference_scale_is_one_finding_per_call() -> None:
    found = _nv401("""\
        def _ptr(dtype, t, align):
            return t.data_ptr()
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_p, sfb_p, c = data
            z = _ptr(*[1, sfb_ref], 32)
            w = _ptr(1, *(sfb_ref,), align=32)
            run(z, w, sfa_p, sfb_p)
            return c
        """)
    assert [(line, col) for line, col, _ in found] == [(5, 14), (6, 17)]
    assert found[0][2].startswith("*[1, sfb_ref] (read as t in _ptr) is the reference scale sfb_ref")


def test_a_nested_def_shadowing_a_module_function_is_the_one_called_inside_its_function() -> None:
    found = _nv401("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_p, sfb_p, c = data
            def _ptr(t):
                return t.data_ptr()
            run(_ptr(sfb_ref), sfa_p, sfb_p)
            return c
        def _ptr(t):
            return 0
        """)
    assert [(line, col) for line, col, _ in found] == [(5, 14)]
    assert found[0][2].startswith("sfb_ref (read as t in _ptr) is the reference scale sfb_ref")


def _dual_starter(tmp_path: Path) -> str:
    """The plain-torch submission `nvfp4ctl init --problem nvfp4_dual_gemm` writes: dequantize(packed,
    permuted_scales, dtype) hands its scales to gather_scales, which reads them, for a, b1 and b2."""
    init_project(get_problem("nvfp4_dual_gemm"), tmp_path)
    return (tmp_path / "submission.py").read_text(encoding="utf-8")


def _dual_nv401(text: str) -> list[tuple[int, str]]:
    return [(d.line, d.message) for d in lint_text(text, "submission.py", LintConfig(problem="nvfp4_dual_gemm"))
            if d.code == "NV401"]


def test_a_reference_scale_the_dual_starter_hands_through_two_helpers_is_reported_at_the_call(tmp_path: Path) -> None:
    # dequantize's parameter is given three scales (one per operand): each reaches gather_scales, which was
    # told none of them, so data[3] there passed where gather_scales(data[3], ...) itself was reported
    starter = _dual_starter(tmp_path)
    assert _dual_nv401(starter) == []
    given = "a_values = dequantize(a, sfa_permuted, torch.float32)"
    assert given in starter
    lines = starter.replace(given, "a_values = dequantize(a, data[3], torch.float32)").splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "dequantize(a, data[3]" in text)
    assert _dual_nv401("\n".join(lines) + "\n") == [
        (line, "data[3] (read as permuted in gather_scales) is the reference scale sfa_ref (input index 3): use index 6"
               " (sfa_permuted)")]
    by_name = starter.replace("dequantize(b2, sfb2_permuted,", "dequantize(b2, _sfb2_ref,")
    assert [message for _, message in _dual_nv401(by_name)] == [
        "_sfb2_ref (read as permuted in gather_scales) is the reference scale sfb2_ref (input index 5): use index 8"
        " (sfb2_permuted)"]
