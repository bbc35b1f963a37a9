"""NV401 and NV403 where a reference scale travels inside a starred literal, a **mapping or a loop's name."""

from __future__ import annotations

import textwrap

from nvfp4ctl.lint import lint_text

BUILT = """\
from torch.utils.cpp_extension import load_inline
mod = load_inline(name="gemm_ext", cpp_sources="", cuda_sources="")
"""


def _scales(text: str) -> list[tuple[int, int, str]]:
    return [(d.line, d.col, d.code) for d in lint_text(textwrap.dedent(text), "submission.py")
            if d.code in ("NV401", "NV403")]


def test_a_starred_literal_to_an_imported_function_is_one_nv401_at_the_scale() -> None:
    assert _scales("""\
        import ext
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            ext.gemm(*(a, b, sfa_ref))
            return c
        """) == [(4, 22, "NV401")]


def test_a_starred_literal_to_a_built_extension_is_judged_by_what_else_it_passes() -> None:
    found = lint_text(BUILT + textwrap.dedent("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            mod.gemm(*(a, b, sfa_ref))
            mod.gemm(*[a, b, sfa_ref, sfa])
            return c
        """), "submission.py")
    assert [(d.line, d.col, d.code) for d in found if d.code in ("NV401", "NV403")] == [
        (5, 22, "NV401"), (6, 22, "NV403")]
    assert next(d for d in found if d.code == "NV401").message.startswith(
        "sfa_ref (the reference scale sfa_ref) is passed to mod.gemm without index 4")


def test_a_loop_over_a_literal_gives_its_name_each_item() -> None:
    # t holds sfa_ref and then sfb_ref: judged where t is used, its shape alone reads no scale
    assert _scales(BUILT + textwrap.dedent("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            dims = [t.shape for t in (sfa, sfb)]
            for t in (sfa_ref, sfb_ref):
                dims.append(t.shape)
            for name, t in (("a", sfa_ref),):
                mod.scale(t, sfa)
            return c
        """)) == [(9, 19, "NV403")]


def test_a_name_bound_again_by_a_loop_or_with_target_no_longer_holds_the_scale() -> None:
    assert _scales(BUILT + textwrap.dedent("""\
        def custom_kernel(data):
            a, b, sf, _, sfa, sfb, c = data
            for i, sf in enumerate((sfa, sfb)):
                mod.scale(sf)
            a, b, ref, _, sfa, sfb, c = data
            with open("cfg.json") as ref:
                mod.configure(ref)
            return c
        """)) == []


def test_a_mapping_splatted_into_a_helper_is_followed_to_the_call() -> None:
    found = [d for d in lint_text(textwrap.dedent("""\
        from cutlass.cute.runtime import make_ptr
        def _ptr(dtype, t, align):
            return make_ptr(dtype, t.data_ptr(), align)
        def _dims(dtype, t, align):
            return t.shape
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            kw = dict(dtype=1, t=sfb_ref, align=32)
            _ptr(**kw)
            shaped = {"dtype": 1, "t": sfa_ref, "align": 32}
            _dims(**shaped)
            return c
        """), "submission.py") if d.code in ("NV401", "NV403")]
    assert [(d.line, d.col, d.code) for d in found] == [(9, 10, "NV401")]
    assert found[0].message.startswith("**kw (read as t in _ptr) is the reference scale sfb_ref (input index 3)")


def test_a_mapping_splatted_into_an_extension_is_judged_by_what_it_holds() -> None:
    found = [d for d in lint_text(BUILT + textwrap.dedent("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            alone = dict(sfa=sfa_ref)
            mod.gemm(a, b, c, **alone)
            both = {"ref": sfa_ref, "sfa": sfa}
            mod.gemm(a, b, c, **both)
            return c
        """), "submission.py") if d.code in ("NV401", "NV403")]
    assert [(d.line, d.col, d.code) for d in found] == [(6, 23, "NV401"), (8, 23, "NV403")]
    assert found[0].message.startswith("**alone (sfa=sfa_ref) (the reference scale sfa_ref) is passed to mod.gemm"
                                       " without index 4")


def test_a_mapping_used_otherwise_or_bound_twice_is_reported_where_the_scale_is_put_in() -> None:
    assert _scales(BUILT + textwrap.dedent("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            kw = dict(sfa=sfa_ref)
            kw["sfb"] = sfb
            mod.gemm(a, b, c, **kw)
            again = {"sfa": sfa_ref}
            again = {"sfa": sfa}
            mod.gemm(a, b, c, **again)
            return c
        """)) == [(5, 19, "NV401"), (8, 21, "NV401")]


def _findings(text: str) -> list[tuple[int, str, str]]:
    return [(d.line, d.code, d.message) for d in lint_text(BUILT + textwrap.dedent(text), "submission.py")
            if d.code in ("NV401", "NV403")]


def test_a_literal_passed_whole_to_an_extension_is_one_finding_as_its_starred_form_is() -> None:
    whole = _findings("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            args = (a, sfa_ref)
            return mod.gemm(args)
        """)
    starred = _findings("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            args = (a, sfa_ref)
            return mod.gemm(*args)
        """)
    assert [(line, code) for line, code, _ in whole] == [(line, code) for line, code, _ in starred] == [(6, "NV401")]
    assert whole[0][2] == starred[0][2].replace("*args", "args", 1)
    assert whole[0][2].startswith("args passes the reference scales (sfa_ref) to mod.gemm without the permuted ones")


def test_a_literal_passed_whole_with_the_permuted_scale_too_is_nv403_and_one_changed_after_is_not_judged() -> None:
    assert [(line, code) for line, code, _ in _findings("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            args = [a, sfa_ref, sfa]
            return mod.gemm(args)
        """)] == [(6, "NV403")]
    assert _findings("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            args = [a, sfa_ref]
            args[1] = sfa
            return mod.gemm(args)
        """) == []


def test_the_starred_name_of_the_unpacking_passed_whole_is_judged_by_the_elements_its_place_gives_it() -> None:
    assert [(line, code) for line, code, _ in _findings("""\
        def custom_kernel(data):
            a, b, *rest = data
            return mod.gemm(rest)
        """)] == [(5, "NV403")]
    alone = _findings("""\
        def custom_kernel(data):
            a, b, *refs, sfa, sfb, c = data
            mod.gemm(a, b, refs)
            return c
        """)
    assert [(line, code) for line, code, _ in alone] == [(5, "NV401")]
    assert alone[0][2].startswith("refs passes the reference scales (sfa_ref, sfb_ref) to mod.gemm without the "
                                  "permuted ones")


def test_a_list_built_by_appends_of_names_is_judged_as_the_literal_of_its_items() -> None:
    appended = _findings("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            args = []
            args.append(a)
            args.append(sfa_ref)
            return mod.gemm(args)
        """)
    literal = _findings("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            args = [a, sfa_ref]
            return mod.gemm(args)
        """)
    assert [(code, message) for _, code, message in appended] == [(code, message) for _, code, message in literal]
    assert [(line, code) for line, code, _ in appended] == [(8, "NV401")]
    assert [(line, code) for line, code, _ in _findings("""\
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            args = []
            args.append(sfa_ref)
            args.append(sfa)
            return mod.gemm(*args)
        """)] == [(8, "NV403")]


def test_a_list_appended_to_in_a_branch_or_changed_otherwise_keeps_the_finding_at_the_append() -> None:
    for change in ("if a.shape[0]:\n    args.append(sfa_ref)", "args.append(sfa_ref)\nargs.extend([sfa])"):
        assert [(code, message.split(" ")[0]) for _, code, message in _findings(
            "def custom_kernel(data):\n    a, b, sfa_ref, sfb_ref, sfa, sfb, c = data\n    args = []\n"
            + textwrap.indent(change, "    ") + "\n    return mod.gemm(args)\n")] == [("NV401", "sfa_ref")]


def test_a_mapping_item_a_helper_takes_in_its_kwargs_is_reported_at_the_call_naming_the_keys_it_reads() -> None:
    found = _findings("""\
        def _launch(a, **opts):
            return mod.gemm(a, opts["x"], opts.get("y"))
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            kw = {"x": sfa_ref, "y": sfb_ref}
            return _launch(a, **kw)
        """)
    assert found == [(8, "NV401", "**kw (read as opts['x'], opts['y'] in _launch) (the reference scales sfa_ref, "
                                  "sfb_ref) is passed to mod.gemm without indices 4, 5 (sfa_permuted, sfb_permuted): "
                                  "the kernel can only be reading the reference scales; "
                                  "pass sfa_permuted, sfb_permuted")]
    handed_on = _findings("""\
        def _launch(a, **opts):
            return mod.gemm(a, **opts)
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            kw = dict(sf=sfa_ref, sp=sfa)
            return _launch(a, **kw)
        """)
    assert [(line, code) for line, code, _ in handed_on] == [(8, "NV403")]
    assert handed_on[0][2].startswith("**kw (read as opts['sf'] in _launch) (the reference scale sfa_ref) is passed "
                                      "to mod.gemm: fine only if it ignores it")


def test_a_mapping_item_no_parameter_of_the_helper_takes_is_reported_where_it_is_put_in() -> None:
    assert [(line, code, message.split(" ")[0]) for line, code, message in _findings("""\
        def _launch(a, t=None):
            return mod.gemm(a, t)
        def custom_kernel(data):
            a, b, sfa_ref, sfb_ref, sfa, sfb, c = data
            kw = {"t": sfa, "sf": sfa_ref}
            return _launch(a, **kw)
        """)] == [(7, "NV401", "sfa_ref")]


def test_kwargs_handed_on_to_a_second_helper_are_judged_where_that_helper_reads_them() -> None:
    # run's **kw only hands sfa on: inner's float() of it is the read, named at the call that put it in
    assert _findings("""\
        def inner(sfa, **_):
            return sfa.float()
        def run(**kw):
            return inner(**kw)
        def custom_kernel(data):
            return run(sfa=data[2])
        """) == [(8, "NV401", "data[2] (read as sfa in inner) is the reference scale sfa_ref (input index 2): "
                              "use index 4 (sfa_permuted)")]
    assert [message.split(" (")[1].partition(")")[0] for _, _, message in _findings("""\
        def inner(**o):
            return o["sfa"].float()
        def mid(**k):
            return inner(**k)
        def run(**kw):
            return mid(**kw)
        def custom_kernel(data):
            return run(sfa=data[2])
        """)] == ["read as o['sfa'] in inner"]


def test_kwargs_handed_on_to_a_second_helper_that_reads_only_metadata_or_other_keys_stay_quiet() -> None:
    for inner in ("def inner(sfa, **_):\n    return sfa.shape[0]", "def inner(a, **_):\n    return a.float()",
                  "def inner(**o):\n    return o['a'].float()"):
        assert _findings(inner + """
def run(**kw):
    return inner(**kw)
def custom_kernel(data):
    return run(a=data[0], sfa=data[2])
""") == [], inner
