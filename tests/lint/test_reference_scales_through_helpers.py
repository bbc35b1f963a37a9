"""NV401 through a helper of the file: reported at each call that passes a reference scale, naming it."""

from __future__ import annotations

import textwrap

from nvfp4ctl.lint import lint_text

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
