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


KEYED_WORDS = ("stores data computed from an input in {holder}, keyed by the input's address (data_ptr()/id()/"
               "_version), so repeated calls over the same inputs skip that work")


def _dict_keyed_finding() -> tuple[str, str]:
    """The code and words of the dict-keyed form, the one the other forms are judged as."""
    dict_keyed = """\
        import torch
        _cache = {}
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            key = sfa_permuted.data_ptr()
            if key not in _cache:
                _cache[key] = sfa_permuted.float()
            return mod.gemm(a, b, _cache[key], sfb_permuted, c)
        """
    [(_, code, message)] = _kept(dict_keyed)
    return code, message


def test_scales_kept_through_setdefault_are_reported_as_a_keyed_store_is() -> None:
    setdefault = """\
        import torch
        _cache = {}
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            key = sfa_permuted.data_ptr()
            sa = _cache.setdefault(key, sfa_permuted.float())
            return mod.gemm(a, b, sa, sfb_permuted, c)
        """
    code, message = _dict_keyed_finding()
    assert _kept(setdefault) == [(6, code, message)]
    assert message == KEYED_WORDS.format(holder="_cache")


def test_scales_kept_in_a_function_attribute_with_their_address_are_reported_as_a_keyed_store_is() -> None:
    attribute = """\
        import torch
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            key = sfa_permuted.data_ptr()
            kept = getattr(custom_kernel, "sf", None)
            if kept is None or kept[0] != key:
                custom_kernel.sf = (key, sfa_permuted.float())
            sa = custom_kernel.sf[1]
            return mod.gemm(a, b, sa, sfb_permuted, c)
        """
    code, _ = _dict_keyed_finding()
    assert _kept(attribute) == [(7, code, KEYED_WORDS.format(holder="custom_kernel.sf"))]


def test_scales_kept_in_a_global_beside_the_address_they_were_made_for_are_reported_as_a_keyed_store_is() -> None:
    global_pair = """\
        import torch
        _sf = None
        _key = None
        def custom_kernel(data):
            global _sf, _key
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            if _key != sfa_permuted.data_ptr():
                _sf = sfa_permuted.float()
                _key = sfa_permuted.data_ptr()
            return mod.gemm(a, b, _sf, sfb_permuted, c)
        """
    code, _ = _dict_keyed_finding()
    assert _kept(global_pair) == [(8, code, KEYED_WORDS.format(holder="_sf"))]


def test_scales_worked_out_every_call_or_kept_from_no_input_are_not_reported() -> None:
    per_call_local = """\
        import torch
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            sa = sfa_permuted.float()
            return mod.gemm(a, b, sa, sfb_permuted, c)
        """
    module_constant = """\
        import torch
        _LUT = torch.arange(16, dtype=torch.float32)
        _kernel = None
        def custom_kernel(data):
            global _kernel
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            if _kernel is None:
                _kernel = compile_gemm(a.shape)
            return _kernel(a, b, _LUT[sfa_permuted.view(torch.uint8).long()], sfb_permuted, c)
        """
    scratch_global = """\
        import torch
        _sf = None
        def custom_kernel(data):
            global _sf
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            _sf = sfa_permuted.float()  # replaced by each call before it is read
            return mod.gemm(a, b, _sf, sfb_permuted, c)
        """
    assert _kept(per_call_local) == []
    assert _kept(module_constant) == []
    assert _kept(scratch_global) == []


CACHED_HELPER = """\
    import functools
    import torch
    @functools.lru_cache(maxsize=None)
    def _scales(sfa_permuted, sfb_permuted):
        return sfa_permuted.view(torch.uint8).float(), sfb_permuted.view(torch.uint8).float()
    def custom_kernel(data):
        a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
        sa, sb = _scales(sfa_permuted, sfb_permuted)
        return mod.gemm(a, b, sa, sb, c)
    """


def _decorated(source: str) -> list[tuple[int, str, str]]:
    return [(d.line, d.code, d.message) for d in lint_text(textwrap.dedent(source)) if d.code.startswith("NV30")]


def test_scales_kept_by_a_cache_decorator_on_a_helper_are_nv303_in_the_words_of_a_keyed_store() -> None:
    [(line, code, message)] = _decorated(CACHED_HELPER)
    assert (line, code) == (3, "NV303")
    assert message == ("@functools.lru_cache on _scales, which the timed path passes input tensors, "
                       + KEYED_WORDS.format(holder="its cache").replace("data_ptr()/id()/_version",
                                                                        "id(), the tensor's hash"))
    _, keyed = _dict_keyed_finding()
    assert keyed == KEYED_WORDS.format(holder="_cache")  # NV302 tells the same story of the dict-keyed store


def test_a_cache_decorator_on_a_helper_whose_result_is_handed_back_still_says_it_returns_the_first_result() -> None:
    returned = CACHED_HELPER.replace("    sa, sb = _scales(sfa_permuted, sfb_permuted)\n        return mod.gemm(a, b, sa, sb, c)",
                                     "    return _scales(sfa_permuted, sfb_permuted)")
    product = """\
        import functools
        @functools.lru_cache(maxsize=None)
        def _product(x, y):
            return x.float() @ y.float().t()
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
            return mod.scale(_product(a, b), sfa_permuted, sfb_permuted, c)
        """
    assert [(line, code) for line, code, _ in _decorated(returned)] == [(3, "NV303")]
    assert [(line, code) for line, code, _ in _decorated(product)] == [(2, "NV303")]
    for _, _, message in _decorated(returned) + _decorated(product):
        assert message.endswith(": a call with the same tensor objects returns the first call's result")
