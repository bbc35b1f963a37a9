"""Scales worked out from the permuted ones and kept across calls: one rule and one message, however kept."""

from __future__ import annotations

import textwrap

from nvfp4ctl.lint.engine import lint_text

IN_CUSTOM_KERNEL = """\
    import torch
    _cache = {}
    def custom_kernel(data):
        a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
        key = (sfa_permuted.data_ptr(), sfb_permuted.data_ptr())
        if key not in _cache:
            _cache[key] = (sfa_permuted.view(torch.uint8).float(), sfb_permuted.view(torch.uint8).float())
        sa, sb = _cache[key]
        return mod.gemm(a, b, sa, sb, c)
    """

IN_A_HELPER = """\
    import torch
    _cache = {}
    def _scales(sfa_permuted, sfb_permuted):
        key = (sfa_permuted.data_ptr(), sfb_permuted.data_ptr())
        if key not in _cache:
            _cache[key] = (sfa_permuted.view(torch.uint8).float(), sfb_permuted.view(torch.uint8).float())
        return _cache[key]
    def custom_kernel(data):
        a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
        sa, sb = _scales(sfa_permuted, sfb_permuted)
        return mod.gemm(a, b, sa, sb, c)
    """


def _kept(source: str) -> list[tuple[int, str, str]]:
    return [(d.line, d.code, d.message) for d in lint_text(textwrap.dedent(source))
            if d.code in ("NV301", "NV302")]


def test_a_helper_keeping_the_permuted_scales_is_reported_as_custom_kernel_keeping_them_is() -> None:
    direct, helper = _kept(IN_CUSTOM_KERNEL), _kept(IN_A_HELPER)
    assert [(line, code) for line, code, _ in direct] == [(7, "NV302")]
    assert [(line, code) for line, code, _ in helper] == [(6, "NV302")]  # the store, as in custom_kernel
    assert direct[0][2] == helper[0][2]
    assert "keyed by the input's address" in helper[0][2]


def test_a_helper_whose_kept_scales_custom_kernel_returns_hands_back_a_result() -> None:
    returned = IN_A_HELPER.replace("    sa, sb = _scales(sfa_permuted, sfb_permuted)\n        return mod.gemm(a, b, sa, sb, c)",
                                   "    return _scales(sfa_permuted, sfb_permuted)")
    assert [(line, code) for line, code, _ in _kept(returned)] == [(7, "NV301")]


def test_a_helper_keeping_a_product_of_the_inputs_still_returns_a_result() -> None:
    product = """\
        import torch
        _cache = {}
        def _product(x, y):
            key = (x.data_ptr(), y.data_ptr())
            if key not in _cache:
                _cache[key] = torch.matmul(x.float(), y.float().t())
            return _cache[key]
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            p = _product(a, b)
            return mod.scale(p, sfa_permuted, sfb_permuted, c)
        """
    assert [(line, code) for line, code, _ in _kept(product)] == [(7, "NV301")]
