"""`build submission.py`, the CPU part: which sources, flags and arch a submission's load_inline /
load calls compile, read from the AST of the three fixture styles (hand-written PTX, CUTLASS, CuTe
DSL) and of tricky expressions; the generated .cu maps its lines back to the .py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build.submission_build import generated_cu
from nvfp4ctl.build.submission_sources import find_sources
from nvfp4ctl.cli import app

SUBMISSIONS = Path(__file__).parent / "submissions"


def test_ptx_submission_sources_flags_and_arch() -> None:
    sources = find_sources(SUBMISSIONS / "ptx_tcgen05_submission.py")
    (extension,) = sources.extensions
    assert extension.name == "nvfp4_ptx_tcgen05" and extension.call == "load_inline"
    assert "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16" in extension.cuda_text
    assert "constexpr int BLOCK_N = 128;" in extension.cuda_text  # the f-string's placeholder resolved
    assert extension.cpp and not extension.notes
    assert "-gencode=arch=compute_100a,code=sm_100a" in extension.cuda_flags
    assert sources.arch(None) == ("sm_100a", "nvfp4_ptx_tcgen05's flag -gencode=arch=compute_100a,code=sm_100a")


def test_cutlass_submission_arch_from_torch_cuda_arch_list() -> None:
    sources = find_sources(SUBMISSIONS / "cutlass_submission.py")
    (extension,) = sources.extensions
    assert '#include "cutlass/gemm/collective/collective_builder.hpp"' in extension.cuda_text
    assert "torch::Tensor nvfp4_gemm(" in extension.cuda_text  # GEMM_TYPES + GEMM_RUN joined
    assert extension.include_paths == ["/opt/cutlass/include", "/opt/cutlass/tools/util/include"]
    assert sources.env_arch_list == "10.0a"
    assert sources.arch(None)[0] == "sm_100a"


def test_cute_dsl_submission_is_recognized() -> None:
    sources = find_sources(SUBMISSIONS / "cute_dsl_submission.py")
    assert sources.cute_dsl and not sources.extensions


def test_lines_of_the_generated_cu_point_at_the_py(tmp_path: Path) -> None:
    path = SUBMISSIONS / "ptx_tcgen05_submission.py"
    (extension,) = find_sources(path).extensions
    py_lines = path.read_text().splitlines()
    current = None
    for line in generated_cu(extension, path).splitlines():
        if match := re.match(r'#line (\d+) "', line):
            current = int(match.group(1))
            continue
        if current is not None:
            if line.strip():  # every non-blank line of the .cu is the .py line #line says it is
                assert py_lines[current - 1].strip() == line.strip() or "{" in py_lines[current - 1], (current, line)
            current += 1


def test_tricky_expressions(tmp_path: Path) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text('''
import textwrap
from torch.utils.cpp_extension import load_inline, load
TILE = 64
SRC = textwrap.dedent("""
    __global__ void k() {}
""")
SRC += "// tail " "joined\\n"
OTHER = f"constexpr int T = {TILE};" + SRC
FLAGS = ["-O3", "-arch=sm_90a"]
m = load_inline(name="ext", cpp_sources=[""], cuda_sources=[OTHER], extra_cuda_cflags=FLAGS)
n = load(name="from_files", sources=["kernel.cu", "bind.cpp"], extra_cuda_cflags=["-DX=1"])
''')
    sources = find_sources(submission)
    first, second = sources.extensions
    assert first.cuda_text == "constexpr int T = 64;\n__global__ void k() {}\n// tail joined\n"
    assert sources.arch(None) == ("sm_90a", "ext's flag -arch=sm_90a")
    assert [p.name for p in second.files] == ["kernel.cu", "bind.cpp"]


def test_load_source_files_are_the_files_the_build_compiles(tmp_path: Path) -> None:
    """lint reads a load() call's files for a problem's API header (load_source_files): the same files,
    found in the submission's folder, as find_sources gives the build; torch.load and a source list that
    is no static expression give none."""
    import ast

    from nvfp4ctl.build.submission_sources import load_source_files

    submission = tmp_path / "submission.py"
    submission.write_text("import torch\nfrom torch.utils import cpp_extension\nKERNEL = 'kernels/k.cu'\n"
                          "weights = torch.load('w.pt')\nm = cpp_extension.load('a', [KERNEL, '/abs/bind.cpp'])\n"
                          "n = torch.utils.cpp_extension.load('b', sources=pick())\n")
    written = load_source_files(ast.parse(submission.read_text()), tmp_path)
    assert written == [("kernels/k.cu", tmp_path / "kernels" / "k.cu"), ("/abs/bind.cpp", Path("/abs/bind.cpp"))]
    assert [path for _, path in written] == [path for e in find_sources(submission).extensions for path in e.files]


def test_no_arch_anywhere_is_the_b200s_sm_100_for_portable_code(tmp_path: Path) -> None:
    """It said "cannot tell the arch ...; pass --arch", exit 2, where torch compiles the call for the GPU it
    runs on (10.0+PTX on the B200), as build takes -arch=native."""
    submission = tmp_path / "submission.py"
    submission.write_text('from torch.utils.cpp_extension import load_inline\n'
                          'load_inline(name="x", cpp_sources="", cuda_sources="__global__ void k() {}")\n')
    assert find_sources(submission).arch(None) == ("sm_100", "no arch named: the GPU it runs on, the B200's")
    assert find_sources(submission).arch("sm_90a") == ("sm_90a", "--arch")


@pytest.mark.parametrize("functions, undeclared", [
    ('["gemm", "gemm_v2"]', ["gemm_v2"]),
    ('"gemm_v2"', ["gemm_v2"]),
    ('{"gemm": "doc", "warm": "doc"}', ["warm"]),
    ("NAMES", ["gemm_v2"]),  # bound to a module-level list
    ('["gemm"]', []),
    ('["plan"]', []),  # declared through a comment-free multi-line declaration
    ("None", []),
    ("make_names()", []),  # not static: nothing to check
])
def test_functions_the_cpp_sources_never_declare_are_named(tmp_path: Path, functions: str, undeclared: list[str]) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(
        "from torch.utils.cpp_extension import load_inline\n"
        'NAMES = ["gemm", "gemm_v2"]\n'
        'CPP = "void gemm(torch::Tensor a);  // gemm_v2(torch::Tensor a) is next\\nint plan\\n  (int m);"\n'
        f'mod = load_inline(name="ext", cpp_sources=[CPP], cuda_sources=["__global__ void k() {{}}"], functions={functions})\n')
    (extension,) = find_sources(submission).extensions
    assert extension.undeclared_functions() == undeclared


def test_build_fails_a_submission_whose_functions_are_not_declared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # load_inline writes m.def("gemm_v2", gemm_v2) into its main.cpp, which then does not compile;
    # build compiles the device code only, so it must say so itself
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text(
        "from torch.utils.cpp_extension import load_inline\n"
        'mod = load_inline("ext", "void gemm(torch::Tensor a);", functions=["gemm", "gemm_v2"],\n'
        '                  extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])\n')
    result = CliRunner().invoke(app, ["build", "submission.py"])
    assert result.exit_code == 1, result.output
    assert ("submission.py:2: ext's functions= names gemm_v2, which its cpp_sources never declare: load_inline's"
            " generated binding fails to compile") in " ".join(result.output.split())


def _undeclared(tmp_path: Path, cpp: str, functions: list[str]) -> list[str]:
    """undeclared_functions() of a load_inline with these cpp_sources (a Python string literal's body) and functions=."""
    submission = tmp_path / "submission.py"
    submission.write_text(
        "from torch.utils.cpp_extension import load_inline\n"
        f'mod = load_inline(name="ext", cpp_sources=["{cpp}"], cuda_sources=["__global__ void k() {{}}"],'
        f" functions={functions!r})\n")
    (extension,) = find_sources(submission).extensions
    return extension.undeclared_functions()


@pytest.mark.parametrize("cpp", ['#include \\"decl.h\\"', "using impl::gemm;", "using impl::gemm_v2;\\nvoid gemm(torch::Tensor a);"])
def test_functions_a_header_or_a_using_declaration_may_declare_are_not_judged(tmp_path: Path, cpp: str) -> None:
    """cpp_sources that include a header (found through extra_include_paths) or name the function with a
    using-declaration declare it where this text scan cannot see: no error for a valid submission."""
    assert _undeclared(tmp_path, cpp, ["gemm", "gemm_v2"]) == []


@pytest.mark.parametrize("cpp", ["#include <torch/extension.h>\\nvoid gemm2(torch::Tensor a);",
                                 "using T = float;\\nvoid gemm2(T a);"])
def test_torch_includes_and_type_aliases_do_not_hide_an_undeclared_function(tmp_path: Path, cpp: str) -> None:
    """Most cpp_sources include <torch/extension.h>; that (or a type alias) declares none of the user's names."""
    assert _undeclared(tmp_path, cpp, ["gemm"]) == ["gemm"]


def _concatenation(tmp_path: Path, terms: int, first: str = '"// nvfp4ctl: no-tensor-op\\n"') -> Path:
    """A submission whose cuda_sources is `terms` strings joined with +, inline in the call."""
    submission = tmp_path / "submission.py"
    chain = " + ".join([first, *['"__global__ void k(int* p) { p[0] = 1; }\\n"'] * (terms - 1)])
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          f'm = load_inline(name="long", cpp_sources="", cuda_sources={chain})\n')
    return submission


@pytest.mark.parametrize("terms", [25, 2000])
def test_a_long_concatenation_is_read_whole(tmp_path: Path, terms: int) -> None:
    """Each + was a level of recursion, and past 20 the sources were 'not a static string expression'."""
    (extension,) = find_sources(_concatenation(tmp_path, terms)).extensions
    assert extension.unreadable is None
    assert extension.cuda_text.count("__global__") == terms - 1 and len(extension.cuda) == terms


def test_an_expression_too_deep_for_the_parser_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Python's parser gives up on an expression of some thousands of terms (a RecursionError): build
    said so with a traceback and exit 1."""
    from typer.testing import CliRunner

    from nvfp4ctl.cli import app

    submission = _concatenation(tmp_path, 20_000)
    result = CliRunner().invoke(app, ["build", str(submission), "--arch", "sm_90a"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
    # where a Python's parser says so itself it is a SyntaxError, read as such
    assert "nested too deeply for Python's parser" in result.output or "not valid Python" in result.output
    assert not isinstance(result.exception, RecursionError)


def test_a_long_expression_that_is_not_static_is_named_shortly(tmp_path: Path) -> None:
    """The error names the expression in one short line; ast.unparse of 2000 terms was a RecursionError."""
    (extension,) = find_sources(_concatenation(tmp_path, 2000, first="load_header()")).extensions
    assert extension.unreadable is not None
    line, what = extension.unreadable
    assert what.startswith("cuda_sources `load_header() + '__global__ void k(") and what.endswith("…`")
    assert len(what) == len("cuda_sources ``") + 60


@pytest.mark.parametrize(("flags", "says"), [
    ('["-O3", 3]', "q's extra_cuda_cflags hold 3, an int, not a str: torch calls .strip() on each flag and fails"),
    ('["-O3", LEVEL]', "q's extra_cuda_cflags hold LEVEL, an int, not a str"),
    ('BASE + [None]', "q's extra_cuda_cflags hold None, which is no str: torch calls .strip() on each flag and fails"),
    ('["-O3", b"-lineinfo"]', "q's extra_cuda_cflags hold b'-lineinfo', bytes, not a str: torch looks for \"arch\""),
    ('["-O3", BASE]', "q's extra_cuda_cflags hold BASE, a list, not a str: torch hashes each flag and fails (TypeError:"
                      " unhashable type: 'list'); add its flags to the list instead ([...] + BASE)"),
    ('["-O3", ("-lineinfo",)]', "q's extra_cuda_cflags hold ('-lineinfo',), a tuple, not a str: torch calls .strip()"),
    ('["-O3", {"-lineinfo": 1}]', "q's extra_cuda_cflags hold {'-lineinfo': 1}, a dict, not a str: torch hashes"),
    ('["-O3", ["-lineinfo"] + BASE]', "q's extra_cuda_cflags hold ['-lineinfo'] + BASE, a list, not a str"),
    ('BASE + [[f"-DL={LEVEL}"]]', "q's extra_cuda_cflags hold [f'-DL={LEVEL}'], a list, not a str"),
    ('"-O3 -Xptxas -v"', "q's extra_cuda_cflags is a str ('-O3 -Xptxas -v'), not a list: torch reads each of its"
                         " characters as a flag"),
    ('"-O" + "3"', "q's extra_cuda_cflags is a str ('-O3')")])
def test_flags_torch_itself_fails_on_are_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             flags: str, says: str) -> None:
    """["-O3", 3] read as no flags at all (every flag dropped without a word) and a str of flags was split
    into three words, where torch fails on both: .strip() of an int, each character of a str a flag."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\nLEVEL = 3\nBASE = ['-O3']\n"
                          'm = load_inline(name="q", cpp_sources="", cuda_sources="__global__ void k() {}",\n'
                          f"                extra_cuda_cflags={flags})\n")
    monkeypatch.setenv("COLUMNS", "300")
    result = CliRunner().invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and f"submission.py:5: {says}" in said, said
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("flags", "read"), [('["-O" + LEVEL, "-Xptxas", "-v"]', ["-O3", "-Xptxas", "-v"]),
                                             ('("-O3",) + (f"-DL={LEVEL}",)', ["-O3", "-DL=3"]), ('""', []), ("None", [])])
def test_flags_torch_takes_are_read_flag_by_flag(tmp_path: Path, flags: str, read: list[str]) -> None:
    """An element made of two pieces ("-O" + LEVEL) was read as two flags, -O and 3."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\nLEVEL = '3'\n"
                          f'm = load_inline(name="q", cpp_sources="", cuda_sources="", extra_cuda_cflags={flags})\n')
    (extension,) = find_sources(submission).extensions
    assert extension.cuda_flags == read and extension.unusable_flags is None


def test_flags_that_are_not_static_are_said_to_be_left_out(tmp_path: Path) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text("import os\nfrom torch.utils.cpp_extension import load_inline\n"
                          'm = load_inline(name="q", cpp_sources="", cuda_sources="", extra_cuda_cflags=os.environ["F"].split())\n')
    (extension,) = find_sources(submission).extensions
    assert extension.cuda_flags == [] and any("extra_cuda_cflags is not a static expression" in note for note in extension.notes)


def test_a_submission_that_is_not_utf8_is_the_same_line_for_check_and_build(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """check said Python's words (not valid Python ((unicode error) 'utf-8' codec can't decode ...)),
    build its own, naming the file by its absolute path: one reader now says it for both."""
    (tmp_path / "submission.py").write_bytes(b"import torch\ndef custom_kernel(data):\n    return '\xff'\n")
    monkeypatch.chdir(tmp_path)
    line = "error: submission.py:3: not UTF-8 text (invalid start byte at byte 50)\n"
    for command in (["check"], ["build"], ["build", "submission.py"]):
        result = CliRunner().invoke(app, command)
        assert (result.exit_code, result.output) == (2, line), (command, result.output)


def test_bytes_that_are_not_utf8_above_a_valid_coding_line_are_said_where_they_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python refuses line 1's bytes before it reads line 2's coding line; the line blamed the coding line."""
    (tmp_path / "submission.py").write_bytes(b"# \xe9\xe9\n# coding: latin-1\nimport torch\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check"])
    assert (result.exit_code, result.output) == (2, "error: submission.py:1: not UTF-8 text (invalid continuation"
                                                    " byte at byte 2)\n"), result.output


@pytest.mark.parametrize("head, line, reason", [
    (b"# coding: nosuch\n", 1, "unknown encoding: nosuch"),
    (b"#!/usr/bin/env python\n# -*- coding: nosuch -*-\n", 2, "unknown encoding: nosuch"),
    (b"\xef\xbb\xbf# coding: latin-1\n", 1, "encoding problem: latin-1 with BOM"),
])
def test_a_coding_line_python_refuses_is_the_same_line_for_check_and_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, head: bytes, line: int, reason: str) -> None:
    """Reading UTF-8 whatever a coding line says let one that Python refuses through check's early
    refusal (it went on to look for a GPU), and build said check runs the file: python stops at it."""
    (tmp_path / "submission.py").write_bytes(head + b"import torch\ndef custom_kernel(data):\n    return data\n")
    monkeypatch.chdir(tmp_path)
    expected = f"error: submission.py:{line}: not valid Python ({reason})\n"
    for command in (["check"], ["build", "submission.py"]):
        result = CliRunner().invoke(app, command)
        assert (result.exit_code, result.output) == (2, expected), (command, result.output)


def test_a_submission_with_a_utf8_byte_order_mark_is_read(tmp_path: Path) -> None:
    """Python drops the mark; build kept it, and ast.parse refused it: invalid non-printable character U+FEFF."""
    submission = tmp_path / "submission.py"
    submission.write_bytes(b"\xef\xbb\xbfimport torch\ndef custom_kernel(data):\n    return data\n")
    assert not find_sources(submission).extensions


def test_a_file_of_many_calls_is_read_in_linear_time(tmp_path: Path) -> None:
    """Each call named load (torch.load, model.load) walked the whole file to tell whether load came from
    cpp_extension, and the reads of the expressions and of TORCH_CUDA_ARCH_LIST walked it a dozen times more:
    1,000 such calls (3,000 lines) took 29 s of CPU, 2,000 took 119 s. The reads share one walk of the file."""
    import time

    calls = "".join(f"state{i} = model.load(paths[{i}])\nif state{i}:\n    flags{i} = [f'-O{{LEVEL}}', NAME]\n"
                    for i in range(1_000))
    submission = tmp_path / "submission.py"
    submission.write_text("import os\nfrom torch.utils.cpp_extension import load_inline\nLEVEL = 3\nNAME = 'x'\n" + calls
                          + 'os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0a"\n'
                          'm = load_inline(name="m", cpp_sources="", cuda_sources="__global__ void k() {}")\n')
    began = time.process_time()
    sources = find_sources(submission)
    spent = time.process_time() - began
    (extension,) = sources.extensions
    assert sources.arch_list_for(extension) == "10.0a" and extension.line == 3_006
    assert spent < 3, f"{spent:.2f} s of CPU for a 3,000-line file"


def test_a_file_rebinding_its_names_before_each_call_is_read_in_n_log_n(tmp_path: Path) -> None:
    """Each read of a name scanned every binding of it: a file rebinding SRC and flags before each of 4,000
    load_inline calls took 10 s of CPU, 8,000 took 100 s. A read bisects the name's binding lines."""
    import time

    calls = "".join(f"SRC = '__global__ void k{i}() {{}}'\nflags = ['-O{i % 4}']\n"
                    f"m{i} = load_inline(name='m{i}', cpp_sources='', cuda_sources=SRC, extra_cuda_cflags=flags)\n"
                    for i in range(6_000))
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n" + calls)
    began = time.process_time()
    sources = find_sources(submission)
    spent = time.process_time() - began
    assert len(sources.extensions) == 6_000
    last = sources.extensions[-1]
    assert [piece.text for piece in last.cuda] == ["__global__ void k5999() {}"] and last.cuda_flags == ["-O3"]
    assert spent < 6, f"{spent:.2f} s of CPU for an 18,000-line file"


def test_a_file_of_many_functions_reading_a_list_changed_in_place_is_read_in_linear_time(tmp_path: Path) -> None:
    """Each read of a list changed in place scanned every function (a lambda is one) for the one around the
    read: 6,000 reads in a file of 25,000 lambdas took 11 s of CPU. The functions are indexed by line once."""
    import time

    lambdas = ", ".join(f"lambda: {i}" for i in range(25_000))
    calls = "".join(f"m{i} = load_inline(name='m{i}', cpp_sources='', cuda_sources='__global__ void k() {{}}',"
                    " extra_cuda_cflags=flags)\n" for i in range(6_000))
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\nflags = ['-O3']\n"
                          f"flags.append('-lineinfo')\nHELPERS = [{lambdas}]\n" + calls)
    began = time.process_time()
    sources = find_sources(submission)
    spent = time.process_time() - began
    assert len(sources.extensions) == 6_000 and sources.extensions[-1].cuda_flags == ["-O3", "-lineinfo"]
    assert spent < 6, f"{spent:.2f} s of CPU for 6,000 reads among 25,000 functions"


def test_a_binding_after_a_branch_replaces_the_one_inside_it(tmp_path: Path) -> None:
    """The binding a read got was the last in ast.walk's order, which is breadth-first: SRC bound inside an
    `if` beat SRC bound after it at module level, and build compiled the source the file had replaced."""
    submission = tmp_path / "submission.py"
    submission.write_text('from torch.utils.cpp_extension import load_inline\n'
                          'USE_A = False\n'
                          'if USE_A:\n'
                          '    SRC = "__global__ void a() {}"\n'
                          'SRC = "__global__ void b() {}"\n'
                          'm = load_inline(name="m", cpp_sources="", cuda_sources=SRC)\n')
    (extension,) = find_sources(submission).extensions
    assert [piece.text for piece in extension.cuda] == ["__global__ void b() {}"]
