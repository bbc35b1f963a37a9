"""NV403 where the reference scales go to a load_inline function whose C++ is in the file: quiet where
its definition never names the parameter they land in, reported where it does; NV401 where it reads the
parameter's data, naming the C++ line."""

from __future__ import annotations

import textwrap

import pytest

from nvfp4ctl.lint.engine import lint_text

SUBMISSION = '''\
    from torch.utils.cpp_extension import load_inline
    CPP = "torch::Tensor gemm(torch::Tensor a, torch::Tensor b, torch::Tensor sfa_ref, torch::Tensor sfb_ref, torch::Tensor sfa, torch::Tensor sfb, torch::Tensor c);"
    CUDA = r"""
    __global__ void kernel(const void* a, const void* b, const void* sfa, const void* sfb, void* c) {}
    torch::Tensor gemm(torch::Tensor a, torch::Tensor b, torch::Tensor sfa_ref, torch::Tensor sfb_ref,
                       torch::Tensor sfa, torch::Tensor sfb, torch::Tensor c) {
        // sfa_ref and sfb_ref stay in the signature for the reference check
        kernel<<<1, 128>>>(a.data_ptr(), b.data_ptr(), sfa.data_ptr(), sfb.data_ptr(), c.data_ptr());
        return c;
    }
    """
    mod = load_inline("gemm", cpp_sources=CPP, cuda_sources=CUDA, functions=["gemm"])
    def custom_kernel(data):
        a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c = data
        return mod.gemm(a, b, sfa_ref, sfb_ref, sfa_permuted, sfb_permuted, c)
    '''


def _nv403(source: str) -> list[tuple[int, int]]:
    return [(d.line, d.col) for d in lint_text(textwrap.dedent(source)) if d.code == "NV403"]


def test_reference_scales_the_visible_cpp_never_reads_are_not_reported() -> None:
    assert _nv403(SUBMISSION) == []


def _findings(source: str) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.col, d.message) for d in lint_text(textwrap.dedent(source))
            if d.code in ("NV401", "NV403")]


KERNEL_LAUNCH = "kernel<<<1, 128>>>(a.data_ptr(), b.data_ptr(), sfa.data_ptr(), sfb.data_ptr(), c.data_ptr());"


@pytest.mark.parametrize("read", ["sfa_ref.data_ptr()", "sfa_ref.data_ptr<uint8_t>()", "sfa_ref.const_data_ptr()",
                                  "sfa_ref.mutable_data_ptr()", "sfa_ref.data<uint8_t>()",
                                  "sfa_ref . data_ptr < at::Float8_e4m3fn > ()", "sfa_ref.accessor<uint8_t, 3>()",
                                  "sfa_ref.packed_accessor32<uint8_t, 3, torch::RestrictPtrTraits>()"])
def test_a_reference_scale_whose_data_the_visible_cpp_reads_is_nv401_naming_the_line(read: str) -> None:
    reads_one = SUBMISSION.replace("sfa.data_ptr(), sfb.data_ptr()", f"{read}, sfb.data_ptr()")
    launch = KERNEL_LAUNCH.replace("sfa.data_ptr()", read)
    assert _findings(reads_one) == [
        ("NV401", 15, 27, "sfa_ref (the reference scale sfa_ref) is passed to mod.gemm, whose C++ reads its data as "
                          f"sfa_ref at line 8 ({launch}): the timed path reads the reference scale; the kernel must "
                          "read index 4 (sfa_permuted)")]


def test_the_read_is_found_by_the_definitions_names_whatever_the_declaration_calls_them() -> None:
    unnamed = SUBMISSION.replace("torch::Tensor sfa_ref, torch::Tensor sfb_ref, torch::Tensor sfa, torch::Tensor sfb, "
                                 "torch::Tensor c);", "torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor, "
                                 "torch::Tensor);")
    reads_one = unnamed.replace("sfa.data_ptr(), sfb.data_ptr()", "sfa_ref.data_ptr(), sfb.data_ptr()")
    assert unnamed != SUBMISSION
    assert [(code, line, col) for code, line, col, _ in _findings(reads_one)] == [("NV401", 15, 27)]


def test_sources_whose_lines_are_not_the_files_quote_the_cpp_line_without_a_number() -> None:
    joined = SUBMISSION.replace('CUDA = r"""', 'CUDA = "" + r"""').replace(
        "sfa.data_ptr(), sfb.data_ptr()", "sfa_ref.data_ptr(), sfb.data_ptr()")
    (finding,) = _findings(joined)
    assert finding[0] == "NV401"
    assert "whose C++ reads its data as sfa_ref (kernel<<<1, 128>>>(a.data_ptr(), b.data_ptr(), " \
           "sfa_ref.data_ptr(), " in finding[3]


@pytest.mark.parametrize("use", [
    "TORCH_CHECK(sfa_ref.size(0) == a.size(0));",
    "const int64_t groups = sfa_ref.numel();",
    'TORCH_CHECK(sfa_ref.dtype() == torch::kFloat8_e4m3fn, "sfa_ref dtype");',
    "TORCH_CHECK(sfa_ref.data_ptr() != nullptr);",
    "auto shape = sfa_ref.sizes(); (void)shape;",
])
def test_a_reference_scale_the_visible_cpp_names_without_reading_its_data_stays_nv403(use: str) -> None:
    named = SUBMISSION.replace("        return c;", f"        {use}\n        return c;")
    assert named != SUBMISSION
    assert [(code, line, col) for code, line, col, _ in _findings(named)] == [("NV403", 16, 27)]


def test_a_body_pointing_the_name_at_another_tensor_before_the_read_stays_nv403() -> None:
    repointed = SUBMISSION.replace("        kernel<<<", "        sfa_ref = sfa;\n        kernel<<<").replace(
        "sfa.data_ptr(), sfb.data_ptr()", "sfa_ref.data_ptr(), sfb.data_ptr()")
    assert [(code, line, col) for code, line, col, _ in _findings(repointed)] == [("NV403", 16, 27)]


def test_sources_lint_cannot_read_leave_both_reported() -> None:
    built = SUBMISSION.replace('cuda_sources=CUDA,', 'cuda_sources=make_cuda(),')
    assert _nv403(built) == [(15, 27), (15, 36)]


def test_an_overloaded_function_leaves_both_reported() -> None:
    overloaded = SUBMISSION.replace('    """\n    mod', '    torch::Tensor gemm(torch::Tensor a) { return a; }\n    """\n    mod')
    assert _nv403(overloaded) == [(16, 27), (16, 36)]  # one line more above the call


def test_a_read_written_only_in_a_comment_leaves_the_scale_unread() -> None:
    commented = SUBMISSION.replace("        return c;", "        // sfa_ref.data_ptr() is the reference\n        return c;")
    assert commented != SUBMISSION
    assert _findings(commented) == []


@pytest.mark.parametrize(("bound", "read"), [
    ("auto s = sfa_ref;", "s.data_ptr()"),
    ("const at::Tensor& s = sfa_ref;", "s.data_ptr()"),
    ("auto s = sfa_ref;\n        auto& t = s;", "t.data_ptr<uint8_t>()"),
    ("bool flag = a.size(0) > 1;", "(flag ? sfa_ref : sfa).data_ptr()"),
    ("auto s = a.size(0) > 1 ? sfa : (sfa_ref);", "s.data_ptr()"),
    ("// a cast hands on the tensor itself", "static_cast<at::Tensor>(sfa_ref).data_ptr()"),
    # direct- and brace-initialisation bind a name as `=` does
    ("at::Tensor s(sfa_ref);", "s.data_ptr()"),
    ("auto s{sfa_ref};", "s.data_ptr()"),
    ("torch::Tensor s{sfa_ref};", "s.data_ptr<uint8_t>()"),
    ("const at::Tensor& s(sfa_ref);", "s.data_ptr()"),
    ("auto s{sfa_ref};\n        at::Tensor t(s);", "t.data_ptr()"),
    ("at::Tensor s((a.size(0) > 1 ? sfa : sfa_ref));", "s.data_ptr()"),
])
def test_a_read_through_a_local_alias_or_a_ternary_that_may_pick_the_reference_scale_is_nv401(
        bound: str, read: str) -> None:
    aliased = SUBMISSION.replace("        kernel<<<", f"        {bound}\n        kernel<<<").replace(
        "sfa.data_ptr(), sfb.data_ptr()", f"{read}, sfb.data_ptr()")
    [(code, _, col, message)] = _findings(aliased)
    assert (code, col) == ("NV401", 27)
    assert f"whose C++ reads its data as sfa_ref at line {9 + bound.count(chr(10))} (kernel<<<1, 128>>>(a.data_ptr(), " \
           f"b.data_ptr(), {read}, " in message


@pytest.mark.parametrize(("bound", "read"), [
    ("auto s = sfa_ref;\n        s = sfa;", "s.data_ptr()"),  # bound twice: may hold the permuted one
    ("auto s = sfa_ref;\n        TORCH_CHECK(s.data_ptr() != nullptr);", "sfa.data_ptr()"),
    ("auto s = sfa_ref;\n        TORCH_CHECK(s.size(0) == a.size(0));", "sfa.data_ptr()"),
    ("const int64_t n = sfa_ref.numel();", "sfa.data_ptr()"),
    # a call's arguments are no parenthesised expression: these make another tensor of the scale's shape
    ("// sfa stays unread", "at::empty_like(sfa_ref).data_ptr()"),
    ("// sfa stays unread", "torch::zeros_like(sfa_ref).data_ptr<uint8_t>()"),
    ("at::Tensor s(at::empty_like(sfa_ref));", "s.data_ptr()"),
    ("auto s{torch::zeros_like(sfa_ref)};", "s.data_ptr()"),
    ("at::Tensor s(sfa_ref);\n        s = sfa;", "s.data_ptr()"),
    ("auto s{sfa_ref};\n        auto s2 = s.size(0);", "sfa.data_ptr()"),
])
def test_an_alias_bound_twice_or_read_only_for_metadata_stays_nv403(bound: str, read: str) -> None:
    aliased = SUBMISSION.replace("        kernel<<<", f"        {bound}\n        kernel<<<").replace(
        "sfa.data_ptr(), sfb.data_ptr()", f"{read}, sfb.data_ptr()")
    assert [code for code, _, _, _ in _findings(aliased)] == ["NV403"]


def test_a_ternary_between_other_tensors_leaves_a_reference_scale_the_cpp_never_names_unreported() -> None:
    picked = SUBMISSION.replace("        kernel<<<", "        bool flag = a.size(0) > 1;\n        kernel<<<").replace(
        "sfa.data_ptr(), sfb.data_ptr()", "(flag ? sfa : sfb).data_ptr(), sfb.data_ptr()")
    assert _findings(picked) == []
