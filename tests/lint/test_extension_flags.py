"""NV008 / NV009: extra_cuda_cflags `nvfp4ctl build` refuses (exit 2) as flags torch's build fails on (a str,
an element that is no str, words the shell cannot split) or an arch option whose arch the file does not tell
(-arch=native for tcgen05 or wgmma code, -arch=all, -code without -arch). lint passed such files with "All
checks passed"."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import submission_build
from nvfp4ctl.build.submission_sources import find_sources
from nvfp4ctl.cli import app
from nvfp4ctl.errors import UsageError
from nvfp4ctl.lint import lint_text

runner = CliRunner()

PLAIN = 'CUDA = r"""__global__ void k(float* x) { x[0] = 1.0f; }"""\n'
TCGEN05 = 'CUDA = r"""__global__ void k() { asm volatile("tcgen05.fence::before_thread_sync;"); }"""\n'
HEAD = "from torch.utils.cpp_extension import load_inline\n"
CALL = 'module = load_inline("gemm", "void k();", CUDA, extra_cuda_cflags={flags})\n'
ENTRY = "\n\ndef custom_kernel(data):\n    return data[-1]\n"


def _found(text: str) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.col, d.message) for d in lint_text(text) if d.code in ("NV005", "NV008", "NV009")]


def _submission(flags: str, cuda: str = PLAIN) -> str:
    return HEAD + cuda + CALL.format(flags=flags) + ENTRY


def test_a_str_of_flags_is_an_error_in_build_s_words() -> None:
    [(code, line, col, message)] = _found(_submission('"-O3 -gencode=arch=compute_100a,code=sm_100a"'))
    assert (code, line, col) == ("NV008", 3, 1)
    assert message == ("load_inline('gemm')'s extra_cuda_cflags is a str ('-O3 -gencode=arch=compute_100a,code=sm_100a'),"
                       " not a list: torch reads each of its characters as a flag and nvcc fails; give a list,"
                       " ['-O3', '-gencode=arch=compute_100a,code=sm_100a']")


@pytest.mark.parametrize(("flags", "said"), [
    ('["-O3", 3]', "3"),  # torch calls .strip() on each element
    ('["-DX=\'unclosed"]', "quote"),  # the shell running torch's build command fails on it
])
def test_flags_torch_s_build_fails_on_are_errors(flags: str, said: str) -> None:
    [(code, _, _, message)] = _found(_submission(flags))
    assert code == "NV008" and said in message, message


WGMMA = 'CUDA = r"""__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }"""\n'
SM100A_FIX = "-gencode=arch=compute_100a,code=sm_100a"
SM100_FIX = "-gencode=arch=compute_100,code=sm_100"  # the B200's, for code any arch assembles


@pytest.mark.parametrize(("flags", "cuda", "said", "fix"), [
    ('["-arch=native"]', TCGEN05, "-arch=native compiles for the GPU of the machine nvcc runs on, without the a: sm_100"
     " on the B200", SM100A_FIX),
    ('["--gpu-architecture=native"]', WGMMA, "--gpu-architecture=native compiles for the GPU of the machine",
     "-gencode=arch=compute_90a,code=sm_90a"),
    ('["-O3", "-arch=all"]', TCGEN05, "-arch=all compiles for every arch nvcc knows (12 archs with nvcc 13.0, sm_75 to"
     " sm_121), none of them an arch-specific (a) one", SM100A_FIX),
    # code any arch assembles: nvcc compiles every arch in the one run the leaderboard times
    ('["-O3", "-arch=all"]', PLAIN, "-arch=all compiles for every arch nvcc knows (12 archs", SM100_FIX),
    ('["-arch=native", "-code=sm_100a"]', PLAIN, "-arch=native with -code=sm_100a: nvcc stops", SM100_FIX),
    ('["-code=sm_100a"]', PLAIN, "-code=sm_100a without -arch", SM100_FIX),
    ('["-code=sm_100a"]', TCGEN05, "-code=sm_100a without -arch", SM100A_FIX),
])
def test_an_arch_the_file_does_not_tell_is_an_error_with_the_fix(flags: str, cuda: str, said: str, fix: str) -> None:
    [(code, line, _, message)] = _found(_submission(flags, cuda))
    assert (code, line) == ("NV009", 3)
    assert message.startswith(f"load_inline('gemm')'s extra_cuda_cflags: {said}"), message
    assert message.endswith(f"; name the arch ({fix})"), message


@pytest.mark.parametrize(("flags", "cuda", "fix"), [
    ('["-arch=native", "-gencode=arch=compute_100a,code=sm_100a"]', TCGEN05,
     "drop -arch=native: -gencode=arch=compute_100a,code=sm_100a already compiles sm_100a"),
    ('["-gencode", "arch=compute_90a,code=sm_90a", "-arch=all"]', WGMMA,
     "drop -arch=all: -gencode arch=compute_90a,code=sm_90a already compiles sm_90a"),
    ('["-arch=all-major", "-gencode=arch=compute_100,code=sm_100"]', PLAIN,
     "drop -arch=all-major: -gencode=arch=compute_100,code=sm_100 already compiles sm_100"),
    # a -gencode for another arch than the code needs: naming the one it needs is still the fix
    ('["-arch=native", "-gencode=arch=compute_90a,code=sm_90a"]', TCGEN05, f"name the arch ({SM100A_FIX})"),
    # code=compute_100a is PTX alone, no sm_100a SASS: the -gencode compiles no sm_100a, so dropping -arch=native
    # would leave none; a code list holding sm_100a does
    ('["-arch=native", "-gencode=arch=compute_100a,code=compute_100a"]', TCGEN05, f"name the arch ({SM100A_FIX})"),
    ('["-arch=all-major", "-gencode=arch=compute_100,code=compute_100"]', PLAIN, f"name the arch ({SM100_FIX})"),
    ('["-arch=native", "-gencode=arch=compute_100a,code=[compute_100a,sm_100a]"]', TCGEN05,
     "drop -arch=native: -gencode=arch=compute_100a,code=[compute_100a,sm_100a] already compiles sm_100a"),
])
def test_an_arch_option_beside_a_gencode_naming_the_arch_is_to_be_dropped(flags: str, cuda: str, fix: str) -> None:
    """nvcc compiles both the -gencode and -arch=native's GPU, where tcgen05 fails: the message told the user to
    name the -gencode they already had."""
    [(code, _, _, message)] = _found(_submission(flags, cuda))
    assert code == "NV009" and message.endswith(f"; {fix}"), message


@pytest.mark.parametrize("text", [
    _submission('["-O3", "-gencode=arch=compute_100a,code=sm_100a"]'),
    _submission('""'),  # torch reads `flags or []`: no flags
    # code any arch assembles: -arch=native is the B200's sm_100 where the leaderboard runs it
    _submission('["-O3", "-arch=native"]'),
    _submission('["-arch", "native"]'),
    # nvcc takes the last -arch ("incompatible redefinition"): sm_100a, not the GPU's
    _submission('["-arch=native", "-arch=sm_100a"]', TCGEN05),
    # host code only: torch runs no nvcc and never uses the flags' arch
    HEAD + 'module = load_inline("gemm", "void k() {}", extra_cuda_cflags=["-arch=native"])\n' + ENTRY,
])
def test_flags_build_takes_are_said_nothing_of(text: str) -> None:
    assert _found(text) == []


def test_a_call_whose_flags_are_refused_gets_no_arch_warning_besides() -> None:
    """A str is read as no flags at all: NV005 said the call named no arch though the str names sm_100a."""
    found = _found(_submission('"-gencode=arch=compute_100a,code=sm_100a"', TCGEN05))
    assert [code for code, *_ in found] == ["NV008"]
    assert [code for code, *_ in _found(_submission('["-arch=native"]', TCGEN05))] == ["NV009"]


@pytest.mark.parametrize(("flags", "code"), [('"-O3 -gencode=arch=compute_100a,code=sm_100a"', "NV008"),
                                           ('["-arch=all"]', "NV009")])
def test_lint_says_what_build_refuses_in_the_same_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      flags: str, code: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text(_submission(flags))
    sources = find_sources(tmp_path / "submission.py")
    (extension,) = sources.extensions
    with pytest.raises(UsageError) as refusal:
        submission_build.refuse_unsplittable(sources, extension)
        submission_build.refuse_unknown_arch(sources, extension)
    build_prefix = "submission.py:3: gemm's "
    assert str(refusal.value).startswith(build_prefix)
    result = runner.invoke(app, ["lint", "submission.py"])
    assert result.exit_code == 1, result.output
    said = f"submission.py:3:1: {code} load_inline('gemm')'s {str(refusal.value).removeprefix(build_prefix)}\n"
    assert said in result.output, result.output


STR_LISTS = HEAD + PLAIN + ('module = load_inline("gemm", "void k();", CUDA, extra_include_paths="some/dir",'
                            ' extra_cflags="-O3", extra_ldflags="-lcuda")\n') + ENTRY


def test_a_str_torch_iterates_as_a_list_is_an_error_at_each_argument() -> None:
    """NV010: torch reads extra_include_paths="some/dir" as the folders s, o, m, ... and never some/dir, fails the
    host compile on a str of C++ flags and fails on a str extra_ldflags; lint passed all three."""
    found = [(d.code, d.line, d.col, d.message) for d in lint_text(STR_LISTS) if d.code == "NV010"]
    called = "load_inline('gemm')'s"
    call = STR_LISTS.splitlines()[2]
    at = [call.index(value) + 1 for value in ('"some/dir"', '"-O3"', '"-lcuda"')]  # each at its value
    assert found == [
        ("NV010", 3, at[0], f"{called} extra_include_paths is a str ('some/dir'), not a list: torch reads each of its"
         " characters as a folder ('s', 'o', 'm', ...), so some/dir is never searched for headers; give a list,"
         " ['some/dir']"),
        ("NV010", 3, at[1], f"{called} extra_cflags is a str ('-O3'), not a list: torch reads each of its characters as"
         " a flag and the host compiler fails; give a list, ['-O3']"),
        ("NV010", 3, at[2], f"{called} extra_ldflags is a str ('-lcuda'), not a list: torch appends its own link flags"
         " to it and fails (AttributeError: 'str' object has no attribute 'append'); give a list, ['-lcuda']")]


@pytest.mark.parametrize("arguments", [
    'extra_include_paths=["some/dir"], extra_cflags=["-O3"], extra_ldflags=["-lcuda"]',
    'extra_include_paths=("some/dir",), extra_cflags="", extra_ldflags=None',
    'extra_include_paths="."',  # one character: the folder torch searches is the one it names
])
def test_lists_and_values_torch_reads_as_meant_are_said_nothing_of(arguments: str) -> None:
    text = HEAD + PLAIN + f'module = load_inline("gemm", "void k();", CUDA, {arguments})\n' + ENTRY
    assert [d.code for d in lint_text(text) if d.code == "NV010"] == []


def test_lint_says_what_build_refuses_of_a_str_in_the_same_words(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text(STR_LISTS)
    sources = find_sources(tmp_path / "submission.py")
    (extension,) = sources.extensions
    with pytest.raises(UsageError) as refusal:
        submission_build.refuse_strs_for_lists(sources, extension)
    build_prefix = "submission.py:3: gemm's "
    assert str(refusal.value).startswith(build_prefix)
    result = runner.invoke(app, ["lint", "submission.py"])
    assert result.exit_code == 1, result.output
    said = f"NV010 load_inline('gemm')'s {str(refusal.value).removeprefix(build_prefix)}\n"
    assert said in result.output, result.output


# a plain kernel whose comments name the instructions it is to use one day: nvcc assembles it for any arch
COMMENTED = ('CUDA = r"""// TODO: replace this naive loop with {instruction} once it works\n'
             '/* then: asm volatile("{instruction};"); */\n'
             '__global__ void k(float* x) {{ x[0] = 1.0f; }}"""\n')
# the same instruction in an asm string below the comment: the code needs the arch
IN_ASM = ('CUDA = r"""// a comment first\n'
          '/* and a block\n   of two lines */\n'
          '__global__ void k() {{ asm volatile("{instruction};"); }}"""\n')


@pytest.mark.parametrize("instruction", ["tcgen05.mma.cta_group::1.kind::mxf4nvf4", "wgmma.mma_async.sync.aligned"])
@pytest.mark.parametrize("flags", ['["-O3", "-arch=native"]', '["-O3"]'])
def test_an_instruction_named_in_a_comment_only_is_said_nothing_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  instruction: str, flags: str) -> None:
    """A // TODO naming tcgen05.mma or wgmma in a plain kernel gave NV009 (exit 1) with -arch=native, NV005
    without, and build refused it, as if the comment were code."""
    text = _submission(flags, COMMENTED.format(instruction=instruction))
    assert _found(text) == []
    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text(text)
    (extension,) = find_sources(tmp_path / "submission.py").extensions
    submission_build.refuse_unknown_arch(find_sources(tmp_path / "submission.py"), extension)  # no refusal


@pytest.mark.parametrize(("instruction", "needs"), [("tcgen05.fence::before_thread_sync", "tcgen05 / SM100"),
                                                    ("wgmma.fence.sync.aligned", "wgmma / SM90")])
def test_an_instruction_in_an_asm_string_below_comments_counts_at_the_call_s_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instruction: str, needs: str) -> None:
    cuda = IN_ASM.format(instruction=instruction)
    call_line = 1 + cuda.count("\n") + 1
    [(code, line, col, message)] = _found(_submission('["-arch=native"]', cuda))
    assert (code, line, col) == ("NV009", call_line, 1) and f"the code's {needs} instructions" in message, message
    [(code, line, _, message)] = _found(_submission('["-O3"]', cuda))
    assert (code, line) == ("NV005", call_line) and f"its {needs} instructions" in message, message
    monkeypatch.chdir(tmp_path)
    (tmp_path / "submission.py").write_text(_submission('["-arch=native"]', cuda))
    sources = find_sources(tmp_path / "submission.py")
    (extension,) = sources.extensions
    with pytest.raises(UsageError) as refusal:
        submission_build.refuse_unknown_arch(sources, extension)
    assert str(refusal.value).startswith(f"submission.py:{call_line}: gemm's extra_cuda_cflags: -arch=native")
    assert f"the code's {needs} instructions do not assemble" in str(refusal.value)
