"""Forms met in real GPU MODE submissions that lint must read as their authors meant them."""

from __future__ import annotations

import textwrap

from nvfp4ctl.lint.config import LintConfig
from nvfp4ctl.lint.engine import lint_text
from tests.lint.test_cpp_rules import found

GROUP = LintConfig(problem="nvfp4_group_gemm")
DUAL = LintConfig(problem="nvfp4_dual_gemm")


def _codes(source: str, config: LintConfig) -> list[tuple[int, str]]:
    return found(source, "submission.py", config)


def test_a_kernel_from_the_subscripted_compile_form_is_a_compiled_kernel_to_keep() -> None:
    source = """\
        import cutlass.cute as cute
        _compiled = {}
        def compile_kernel(problem_sizes):
            key = f"{len(problem_sizes)}"
            if key in _compiled:
                return _compiled[key]
            fn = cute.compile[cute.GenerateLineInfo(True)](my_kernel, problem_sizes, len(problem_sizes))
            _compiled[key] = fn
            return fn
        def custom_kernel(data):
            abc, _, sfs, problem_sizes = data
            compile_kernel(problem_sizes)(abc, sfs)
            return [c for _, _, c in abc]
        """
    assert not [code for code in _codes(source, GROUP) if code[1] in ("NV301", "NV302")]
    # a subscripted callee that is no compile keeps what it always was: a value computed from the input
    kept = source.replace("cute.compile[cute.GenerateLineInfo(True)]", "kernels[0]")
    assert (6, "NV301") in _codes(kept, GROUP)
    # nor one whose name only holds the word: a kept kernel called out of a dict returns a result
    for held in ("_compiled_kernels[0]", "runner.compiled_fns[len(problem_sizes)]"):
        assert (6, "NV301") in _codes(source.replace("cute.compile[cute.GenerateLineInfo(True)]", held), GROUP), held


def test_an_unpacking_under_a_length_test_that_excludes_the_tasks_tuple_is_not_said_to_raise() -> None:
    by_name = """\
        def custom_kernel(data):
            data_len = len(data)
            if data_len == 10:
                a, b1, b2, _, _, _, sfa, sfb1, sfb2, c = data
            elif data_len == 4:
                abc, _, sfs, problem_sizes = data
                return run_groups(abc, sfs)
            return run(a, b1, b2, sfa, sfb1, sfb2, c)
        """
    assert not [code for code in _codes(by_name, DUAL) if code[1] == "NV403"]
    direct = by_name.replace("data_len == 4", "len(data) == 4")
    assert not [code for code in _codes(direct, DUAL) if code[1] == "NV403"]
    # a test that lets the task's own 10 through still reaches the unpacking, which then raises
    loose = by_name.replace("data_len == 4", "data_len >= 4")
    assert (6, "NV403") in _codes(loose, DUAL)
    # a name bound to anything else too is not the input's length
    rebound = by_name.replace("data_len = len(data)", "data_len = len(data)\n            data_len = 4")
    assert (7, "NV403") in _codes(rebound, DUAL)


def test_a_shape_branch_names_only_the_dimensions_it_compares() -> None:
    source = """\
        def custom_kernel(data):
            abc, _, sfs, problem_sizes = data
            ns = tuple(n for _, n, _, _ in problem_sizes)
            ks = tuple(k for _, _, k, _ in problem_sizes)
            if len(problem_sizes) == 8 and all(n == 4096 for n in ns) and all(k == 7168 for k in ks):
                return fast(abc, sfs)
            return slow(abc, sfs)
        """
    config = LintConfig(problem="nvfp4_group_gemm", benchmark_shapes=((80, 4096, 7168), (40, 7168, 2048)))
    [message] = [d.message for d in lint_text(textwrap.dedent(source), config=config) if d.code == "NV702"]
    assert message.startswith("branches on the benchmark shape n=4096 k=7168: "), message
    kernel = "void launch(int m, int n, int k) {\n  if (n == 4096 && k == 7168) { run_fast(); }\n}\n"
    [message] = [d.message for d in lint_text(kernel, "kernel.cu", config) if d.code == "NV702"]
    assert message.startswith("branches on the benchmark shape n=4096 k=7168: "), message


def test_a_helper_returning_module_constants_for_benchmark_shapes_picks_a_tuned_config() -> None:
    source = """\
        _EVICT_NORMAL = 0x1000000000000000
        _EVICT_FIRST = 0x12F0000000000000
        def _cache_policy(problem_sizes):
            ns = tuple(n for _, n, _, _ in problem_sizes)
            ks = tuple(k for _, _, k, _ in problem_sizes)
            if len(problem_sizes) == 2 and all(n == 3072 for n in ns) and all(k == 4096 for k in ks):
                return _EVICT_FIRST
            return _EVICT_NORMAL
        def custom_kernel(data):
            abc, _, sfs, problem_sizes = data
            policy = _cache_policy(problem_sizes)
            return run(abc, sfs, policy)
        """
    config = LintConfig(problem="nvfp4_group_gemm", benchmark_shapes=((192, 3072, 4096),))
    assert not [code for code in _codes(source, config) if code[1] == "NV702"]
    # a constant set to anything else too (here a function of this file) is not a number the helper returns
    path = source.replace("_EVICT_FIRST = 0x12F0000000000000", "_EVICT_FIRST = 0x12F0000000000000\n        _EVICT_FIRST = fast")
    assert (7, "NV702") in _codes(path, config)
    # and a caller testing what it returns picks a path by it
    tested = source.replace("return run(abc, sfs, policy)", "return fast(abc) if policy == _EVICT_FIRST else run(abc, sfs)")
    assert (6, "NV702") in _codes(tested, config)
    # a parameter of the helper named like the constant is no constant: it returns what the caller passed
    shadowed = source.replace("def _cache_policy(problem_sizes):", "def _cache_policy(problem_sizes, _EVICT_FIRST=None):")
    assert (6, "NV702") in _codes(shadowed, config)
