"""NV403 where the reference scales go to a load_inline function whose C++ is in the file: quiet where
its definition never names the parameter they land in, reported where it does."""

from __future__ import annotations

import textwrap

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


def test_a_reference_scale_the_visible_cpp_reads_is_reported() -> None:
    reads_one = SUBMISSION.replace("sfa.data_ptr(), sfb.data_ptr()", "sfa_ref.data_ptr(), sfb.data_ptr()")
    assert _nv403(reads_one) == [(15, 27)]


def test_sources_lint_cannot_read_leave_both_reported() -> None:
    built = SUBMISSION.replace('cuda_sources=CUDA,', 'cuda_sources=make_cuda(),')
    assert _nv403(built) == [(15, 27), (15, 36)]


def test_an_overloaded_function_leaves_both_reported() -> None:
    overloaded = SUBMISSION.replace('    """\n    mod', '    torch::Tensor gemm(torch::Tensor a) { return a; }\n    """\n    mod')
    assert _nv403(overloaded) == [(16, 27), (16, 36)]  # one line more above the call
