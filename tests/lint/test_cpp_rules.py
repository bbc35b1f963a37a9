"""C++/CUDA rules on the lexer's code-only view, and C++ embedded in Python strings."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from nvfp4ctl.lint import LintConfig, lint_text
from nvfp4ctl.cpp_lexer import blank


def found(source: str, path: str = "kernel.cu", config: LintConfig | None = None) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in lint_text(textwrap.dedent(source), path, config)]


def test_lexer_blanks_comments_and_literals_but_keeps_offsets() -> None:
    text = 'int a = 1\'000; // cudaGraph\nconst char* s = "cudaGraph \\" x"; char q = \'"\';\n/* asm volatile( */ R"d(printf()d";\n'
    lexed = blank(text)
    assert len(lexed.code) == len(text)
    assert "cudaGraph" not in lexed.code and "asm" not in lexed.code and "printf" not in lexed.code
    assert lexed.code.count("\n") == text.count("\n")
    assert "1'000" in lexed.code and "char q = ' '" in lexed.code


CASES = {
    "graph api in code, not in comments or strings": ("""\
        // cudaGraphLaunch would hide the launch cost
        const char* msg = "cudaGraphInstantiate failed";
        cudaGraphExec_t exec;
        cuGraphLaunch(exec, 0);
        """, [(3, "NV201"), (4, "NV201")]),
    "device printf unless debug-guarded or before a trap": ("""\
        __device__ void f(int x) {
          printf("x=%d\\n", x);
          if (kDebug) printf("dbg\\n");
          if (x < 0) {
            printf("negative %d\\n", x);
            __trap();
          }
        #if NVFP4_DEBUG_LEVEL > 1
          printf("level 2\\n");
        #else
          printf("release path\\n");
        #endif
        }
        void host(int x) { printf("host %d\\n", x); }
        template <int N> CUTLASS_DEVICE void g() { printf("N=%d\\n", N); }
        """, [(2, "NV802"), (11, "NV802"), (15, "NV802")]),
    "printf in a macro only host code expands, or one calling exit, is not device printf": ("""\
        #include <cstdio>
        #define CUDA_CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \\
            printf("CUDA error %s\\n", cudaGetErrorString(e_)); exit(1); } } while (0)
        #ifndef LOG
        #define LOG(...) printf(__VA_ARGS__)
        #endif
        #define DEV_LOG(...) printf(__VA_ARGS__)
        #define UNUSED_LOG(...) printf(__VA_ARGS__)
        #define OUTER_LOG(...) LOG(__VA_ARGS__)
        __global__ void k() { DEV_LOG("tile\\n"); }
        __host__ __device__ void both() { OUTER_LOG("x\\n"); }
        void launch() {
          CUDA_CHECK(cudaGetLastError());
          LOG("launched\\n");
        }
        """, [(5, "NV802"), (7, "NV802"), (8, "NV802")]),
    "static last pointer that skips work": ("""\
        static const void* last_b = nullptr;
        static const void* desc_for = nullptr;
        void launch(const void* b) {
          if (b == last_b) return;
          if (b != desc_for) { desc_for = b; }
          last_b = b;
        }
        """, [(4, "NV301")]),
    "static pointer compared without returning is a warning": ("""\
        static uintptr_t prev_ptr = 0;
        void launch(uintptr_t p) {
          bool same = false;
          if (p == prev_ptr) same = true;
          prev_ptr = p;
        }
        """, [(4, "NV302")]),
    "benchmark shapes in host code": ("""\
        int pick(int m, int n, int k) {
          if (m == 128 && n == 7168 && k == 2048) return 1;
          if (m % 128 == 0 && n % 128 == 0) return 2;
          if (k == 7168) return 3;
          return 0;
        }
        """, [(2, "NV702")]),
    "a benchmark-shape branch that only sets config numbers is fine, another path is not": ("""\
        int pick(int m, int n, int k, Config& cfg) {
          int tile = (m == 128 && n == 7168) ? 128 : 64, stages = 3;
          if (m == 128 && n == 4096) { tile = 256; stages = 4; }
          else if (m == 128 && k == 2048) tile = 128;
          else cfg.split = 1;
          if (m == 128 && n == 7168) special = 1;
          auto run = special == 1 ? fast : slow;
          if (m == 128 && k == 16384) { tile = 32; warm(); }
          if (n == 4096 && k == 7168) tile = 16; else return slow(m);
          return tile;
        }
        """, [(6, "NV702"), (8, "NV702"), (9, "NV702")]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rule(name: str) -> None:
    source, expected = CASES[name]
    assert found(source) == expected


def test_asm_only_under_the_cutlass_only_profile() -> None:
    source = '__device__ void f() { asm volatile("fence.proxy.async;" ::: "memory"); }\n'
    assert found(source) == []
    assert found(source, config=LintConfig(profile="cutlass-only")) == [(1, "NV901")]


def test_embedded_cuda_maps_lines_back_to_the_python_file() -> None:
    source = '''\
        import torch
        from torch.utils.cpp_extension import load_inline

        HEADER = "#include <cuda_runtime.h>\\n__device__ void f() { printf(\\"%d\\\\n\\", 1); }"
        cuda_src = """
        __global__ void k(int* out) {
          printf("out=%p\\\\n", out);
        }
        """
        mod = load_inline(name="m", cpp_sources="static const void* last_ptr = 0; int g(const void* p) "
                                                "{ if (p == last_ptr) return 1; return 0; }",
                          cuda_sources=[cuda_src], functions=["g"])
        '''
    diagnostics = lint_text(textwrap.dedent(source), "snippet.py")
    assert [(d.line, d.code) for d in diagnostics] == [(4, "NV802"), (7, "NV802"), (11, "NV301")]
    pointed_at = [d.source_line[d.col - 1 :] for d in diagnostics]
    assert pointed_at[0].startswith("printf(") and pointed_at[1].startswith("printf(")
    assert pointed_at[2].startswith("== last_ptr) return 1;")  # the second piece of an implicit concatenation


def test_plain_prose_strings_are_not_treated_as_cpp() -> None:
    source = 'HELP = "we never call printf( in device code, nor cudaGraphLaunch"\n'
    assert found(source, "snippet.py") == []


@pytest.mark.parametrize("text", ["", "\n \t\n", "// to do: the sm_100a kernel\n", "/* later */\n// nothing yet\n",
                                  "/* an unterminated comment"])
def test_a_kernel_source_with_no_code_is_nv003(text: str) -> None:
    diagnostics = lint_text(text, "empty.cu")
    assert [(d.line, d.col, d.code, d.severity.value) for d in diagnostics] == [(1, 1, "NV003", "error")]
    assert diagnostics[0].message == ("empty.cu has no code (it is empty, or only comments): a kernel source defines"
                                      " the kernel and the C ABI functions the binding calls")


@pytest.mark.parametrize("path, text", [
    ("kernel.cu", '#include "nvfp4_gemm.h"\n'),  # code, however little: the build says what it lacks
    ("kernel.CU", "int x;\n"),
    ("empty.cuh", ""), ("empty.h", "// declarations to come\n"), ("empty.cpp", ""),  # only .cu kernel sources
    ("snippet.py", 'from torch.utils.cpp_extension import load_inline\n'
                   'mod = load_inline(name="m", cpp_sources="", cuda_sources="// later")\n'),
])
def test_only_a_cu_file_with_no_code_is_nv003(path: str, text: str) -> None:
    assert "NV003" not in [d.code for d in lint_text(text, path)]


def test_an_empty_kernel_source_named_on_the_command_line_fails_lint(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.cu").write_text("")
    (tmp_path / "empty.cuh").write_text("")
    result = CliRunner().invoke(app, ["lint", "empty.cu"])
    assert result.exit_code == 1 and "All checks passed" not in result.output
    assert "empty.cu:1:1: NV003 empty.cu has no code" in result.output
    assert CliRunner().invoke(app, ["lint", "empty.cuh"]).exit_code == 0
    waived = tmp_path / "todo.cu"
    waived.write_text("// nvfp4ctl: ignore[NV003] the kernel comes later\n")
    assert CliRunner().invoke(app, ["lint", "todo.cu"]).exit_code == 0


def test_a_literal_of_thousands_of_digits_in_a_condition_is_no_shape() -> None:
    """Python's int() refuses 4,300 digits: such a literal compared in an if is no benchmark dimension,
    and lint reads on (it stopped with a ValueError)."""
    long_literal = "1" * 5_000
    assert found(f"void f(int m, int n) {{ if (m == {long_literal} && n == 7168) {{ go(); }} }}\n") == []
    assert found(f"void f(int m, int n) {{ if (m == 128 && n == 7168 && k == {long_literal}) {{ go(); }} }}\n") \
        == [(1, "NV702")]
