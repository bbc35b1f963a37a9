"""NV302's words for a kept wrapper of an input (from_dlpack, a view, make_ptr): no work is skipped, a later
tensor at the same address gets the old wrapper."""

from __future__ import annotations

import ast
import textwrap

import pytest

from nvfp4ctl.lint import lint_text
from nvfp4ctl.lint.python import wrappers

KEYED = ("keeps an object made around an input (from_dlpack, a view, make_ptr) in {}, keyed by the input's address"
         " (data_ptr()/id()/_version): a new tensor at the same address gets the old wrapper, whose shape, strides"
         " and dtype may differ from its own")


def _nv302(text: str) -> list[tuple[int, str, str]]:
    return [(d.line, d.message, d.severity.value) for d in lint_text(textwrap.dedent(text), "snippet.py")
            if d.code == "NV302"]


def test_wrappers_kept_by_address_are_said_to_be_wrappers_not_skipped_work() -> None:
    found = _nv302("""\
        import torch
        from cutlass.cute.runtime import from_dlpack, make_ptr
        _args = {}
        _views = {}
        _ptrs = {}
        def _wrap(t, align=16):
            return from_dlpack(t, assumed_align=align).mark_layout_dynamic()
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            key = (a.data_ptr(), b.data_ptr(), c.data_ptr())
            args = _args.get(key)
            if args is None:
                args = (_wrap(a), _wrap(b), _wrap(sfa, 32), _wrap(sfb, 32), _wrap(c))
                _args[key] = args
            _views[b.data_ptr()] = b.view(torch.uint8)
            _ptrs[id(a)] = from_dlpack(a.view(torch.uint8)).mark_layout_dynamic()
            run(*args)
            return c
        """)
    assert found == [(14, KEYED.format("_args"), "warning"), (15, KEYED.format("_views"), "warning"),
                     (16, KEYED.format("_ptrs"), "warning")]


def test_computed_data_and_outputs_keep_their_words() -> None:
    found = _nv302("""\
        import torch
        from cutlass.cute.runtime import from_dlpack
        _bdq = {}
        _wrapped = {}
        _outs = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            _bdq[b.data_ptr()] = b.view(torch.uint8).float()
            _wrapped[a.data_ptr()] = from_dlpack(a.float()).mark_layout_dynamic()
            _outs[c.shape] = c
            return c
        """)
    assert [(line, message.split(" in ")[0]) for line, message, _ in found] == [
        (8, "stores data computed from an input"), (9, "stores data computed from an input"), (10, "stores an output")]


def test_a_wrapper_kept_by_shape_is_said_to_describe_the_old_input() -> None:
    found = _nv302("""\
        from cutlass.cute.runtime import from_dlpack
        _by_shape = {}
        def custom_kernel(data):
            a, b, _, _, sfa, sfb, c = data
            _by_shape[a.shape] = from_dlpack(a).mark_layout_dynamic()
            return c
        """)
    assert found == [(5, "keeps an object made around an input (from_dlpack, a view, make_ptr) in _by_shape, which"
                         " outlives the call: a later call may use it, and it still describes the old input's memory,"
                         " shape and strides", "warning")]


def test_a_helper_is_read_as_a_wrapper_once_however_many_calls_keep_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # every kept _wrap(...) asked again whether _wrap returns a wrapper of its parameter, walking its returns
    read_in_helper: list[int] = []
    wrapper = wrappers._wrapper

    def counted(value, scope, is_root, index, depth):  # type: ignore[no-untyped-def]
        if isinstance(scope, ast.FunctionDef) and scope.name == "_wrap":
            read_in_helper.append(depth)
        return wrapper(value, scope, is_root, index, depth)

    monkeypatch.setattr(wrappers, "_wrapper", counted)
    wrapped = ", ".join(f"_wrap(t{i})" for i in range(40))
    found = _nv302(f"""\
        from cutlass.cute.runtime import from_dlpack
        _args = {{}}
        def _wrap(t):
            return from_dlpack(t).mark_layout_dynamic()
        def custom_kernel(data):
            t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = t8 = t9 = data[0]
            t10 = t11 = t12 = t13 = t14 = t15 = t16 = t17 = t18 = t19 = data[1]
            t20 = t21 = t22 = t23 = t24 = t25 = t26 = t27 = t28 = t29 = data[4]
            t30 = t31 = t32 = t33 = t34 = t35 = t36 = t37 = t38 = t39 = data[6]
            _args[data[0].data_ptr()] = ({wrapped})
            return data[6]
        """)
    assert [line for line, _, _ in found] == [10]
    assert len(read_in_helper) <= 2  # its return and what from_dlpack wraps, once (80 when each call asked)
