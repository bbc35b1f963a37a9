"""Trimming compiler output to the first real error (logs captured from nvcc 13.0 and gcc)."""

from __future__ import annotations

from pathlib import Path

from nvfp4ctl.build.compiler_errors import count_errors, first_error

TEMPLATE_LOG = """\
[1/3] /usr/local/cuda/bin/nvcc -gencode=arch=compute_90a,code=sm_90a -c /src/k.cu -o k.cuda.o
/src/k.cu(3): error: no instance of overloaded function "make_layout" matches the argument list
            argument types are: (cute::C<3>, float, const char [2])
    auto x = make_layout(t, 3.5f, "x");
             ^
/site/cutlass_library/source/include/cute/layout.hpp(335): note #3322-D: number of parameters of function template "cute::make_layout(const Shape &, const Stride &)" does not match the call
  make_layout(Shape const& shape, Stride const& stride)
  ^
          detected during instantiation of "void f(T) [with T=cute::C<3>]" at line 4

/site/cutlass_library/source/include/cute/layout.hpp(90): error: static assertion failed
          detected during:
            instantiation of "void cute::g<T>() [with T=int]" at line 12 of "/src/k.cu"

2 errors detected in the compilation of "/src/k.cu".
ninja: build stopped: subcommand failed.
"""


def test_first_error_keeps_message_continuation_and_caret_and_drops_notes() -> None:
    shown = first_error(TEMPLATE_LOG)
    assert shown is not None
    lines = shown.splitlines()
    assert lines[0] == '/src/k.cu:3: no instance of overloaded function "make_layout" matches the argument list'
    assert "argument types are" in lines[1] and lines[3].strip() == "^"
    assert "note" not in shown and "detected during" not in shown
    assert lines[-1] == "(1 more error; -v shows the full compiler output)"


def test_an_error_inside_a_library_header_names_the_users_line() -> None:
    header_error = TEMPLATE_LOG[TEMPLATE_LOG.index("/site/cutlass_library/source/include/cute/layout.hpp(90)") :]
    shown = first_error(header_error, (Path("/src/k.cu"),))
    assert shown is not None
    assert shown.splitlines()[0].endswith("cute/layout.hpp:90: static assertion failed")
    assert "(instantiated from /src/k.cu:12)" in shown


def test_gcc_ptxas_and_linker_errors() -> None:
    gcc = "In file included from x.cpp:1:\n/src/torch_binding.cpp:12:5: error: 'foo' was not declared in this scope\n   12 |     foo();\n"
    assert first_error(gcc).splitlines()[0] == "/src/torch_binding.cpp:12: 'foo' was not declared in this scope"  # type: ignore[union-attr]
    ptxas = "ptxas /tmp/x.ptx, line 42; error   : Instruction 'wgmma' not supported on .target 'sm_90'\nptxas fatal   : Ptx assembly aborted due to errors\n"
    assert first_error(ptxas).splitlines()[0] == "/tmp/x.ptx:42: Instruction 'wgmma' not supported on .target 'sm_90'"  # type: ignore[union-attr]
    linker = "FAILED: m.so\n/usr/bin/ld: cannot find -lc10_cuda: No such file or directory\ncollect2: error: ld returned 1 exit status\n"
    assert first_error(linker).splitlines()[0] == "cannot find -lc10_cuda: No such file or directory"  # type: ignore[union-attr]


def test_no_recognizable_error() -> None:
    assert first_error("ninja: build stopped\n") is None
    assert count_errors(TEMPLATE_LOG) == 2


def test_a_ptxas_error_in_inline_asm_names_the_users_line(tmp_path: Path) -> None:
    kernel = tmp_path / "k.cu"
    kernel.write_text('__global__ void k() {\n  asm volatile("bogus.instr;");\n}\n')
    log = "ptxas /tmp/tmpxft_0001_00000000-6_k.ptx, line 23; error   : Unknown modifier '.instr'\n"
    assert first_error(log, (kernel,)) == f"{kernel}:2: ptxas (PTX line 23): Unknown modifier '.instr'"
    unknown = "ptxas /tmp/tmpxft_0001_00000000-6_k.ptx, line 9; error   : Arguments mismatch for instruction 'mov'\n"
    assert first_error(unknown, (kernel,)) == "ptxas (line 9 of the PTX nvcc made): Arguments mismatch for instruction 'mov'"
    twice = tmp_path / "twice.cu"
    twice.write_text('asm("bogus.instr;");\nasm("bogus.instr;");\n')
    assert first_error(log, (twice,)).startswith("ptxas (line 23 of the PTX nvcc made)")  # type: ignore[union-attr]
    assert count_errors(log + "ptxas fatal   : Ptx assembly aborted due to errors\n") == 1


SM100A_ONLY = '''import torch
from torch.utils.cpp_extension import load_inline

CUDA = r"""
__global__ void decode(const unsigned short* in, unsigned* out) {
  unsigned r;
  asm volatile("{ .reg .b8 lo; mov.b16 {lo, _}, %1; cvt.rn.f16x2.e2m1x2 %0, lo; }" : "=r"(r) : "h"(in[0]));
  out[0] = r;
}
"""
m = load_inline(name="fp4", cpp_sources="", cuda_sources=CUDA,
                extra_cuda_cflags=["-gencode=arch=compute_100,code=sm_100"])
'''


def test_an_sm100a_only_instruction_on_sm100_names_the_py_line_and_the_a_arch(tmp_path: Path) -> None:
    """ptxas's 'cvt with .e2m1x2' is cvt.rn.f16x2.e2m1x2 in the CUDA string; the error named only a line of
    the PTX nvcc made (the quoted 'sm_100' would have named the flags' line), and no hint said sm_100a."""
    submission = tmp_path / "submission.py"
    submission.write_text(SM100A_ONLY)
    log = ("ptxas /tmp/tmpxft_00003df0_00000000-6_k.ptx, line 134; error   : Instruction 'cvt with .e2m1x2' not"
           " supported on .target 'sm_100'\nptxas fatal   : Ptx assembly aborted due to errors\n")
    assert first_error(log, (submission,)) == (
        f"{submission}:7: ptxas (PTX line 134): Instruction 'cvt with .e2m1x2' not supported on .target 'sm_100'\n"
        "  hint: the instruction needs sm_100a, the `a` arch: .target 'sm_100' leaves out the instructions only that"
        " GPU has; compile with -gencode=arch=compute_100a,code=sm_100a")
    on_hopper = log.replace("'sm_100'", "'sm_90'")
    assert first_error(on_hopper, (submission,)).splitlines()[1] == (  # type: ignore[union-attr]
        "  hint: .target 'sm_90' leaves out the instructions only that GPU has: if this is one of sm_90a's,"
        " compile with -gencode=arch=compute_90a,code=sm_90a")
    assert first_error(log.replace("'sm_100'", "'sm_100a'"), (submission,)).count("\n") == 0  # type: ignore[union-attr]
