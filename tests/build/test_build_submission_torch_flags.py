"""`build submission.py` compiles with torch's own nvcc flags for the extension, as the installed torch
writes them into its ninja file: above all the C++ standard, which torch appends where the submission's
flags name none and which changes between releases (c++17, then c++20: 2.13 appends -std=c++20)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from nvfp4ctl.build import flag_problems, submission_build, torch_nvcc
from nvfp4ctl.build.submission_sources import Extension, find_sources
from nvfp4ctl.cli import app

runner = CliRunner()
NVCC_COMMAND = submission_build._command  # the real one: the compiles fixture stands in for it
cpp_extension = pytest.importorskip("torch.utils.cpp_extension")

CXX20 = '''from torch.utils.cpp_extension import load_inline
CUDA = r"""// nvfp4ctl: no-tensor-op
#include <concepts>
struct Tile { int rows; int cols; };
template <std::integral T> __device__ T twice(T value) { return value * 2; }
__global__ void k(int* p) { constexpr Tile tile{.rows = 128, .cols = 64}; p[0] = twice(tile.rows * tile.cols); }
"""
m = load_inline(name="modern", cpp_sources="", cuda_sources=CUDA, extra_cuda_cflags=[FLAGS])
'''


@pytest.fixture(autouse=True)
def fresh_probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test reads torch's flags afresh (the probe is cached per process)."""
    monkeypatch.setattr(torch_nvcc, "_FALLBACK_REASONS", [])
    torch_nvcc.extension_flags.cache_clear()
    yield
    torch_nvcc.extension_flags.cache_clear()


def _extension(tmp_path: Path, flags: str) -> Extension:
    submission = tmp_path / "submission.py"
    submission.write_text(CXX20.replace("FLAGS", flags))
    (extension,) = find_sources(submission).extensions
    return extension


def _command(tmp_path: Path, flags: str) -> list[str]:
    return submission_build._command(_extension(tmp_path, flags), tmp_path / "modern.cu", "sm_100a", "", tmp_path)


def test_a_cxx20_kernel_builds_with_the_standard_torch_builds_with(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """torch 2.13 appends -std=c++20 to an extension's nvcc flags that name no standard; the build gave
    -std=c++17, and a kernel with concepts and designated initialisers failed here while it builds on
    the leaderboard. A real compile, without load_inline's torch prelude to keep it short."""
    standard = torch_nvcc.extension_flags("modern", ("-O3",), "-gencode=arch=compute_100a,code=sm_100a").trailing
    if standard != ("-std=c++20",):
        pytest.skip(f"the installed torch appends {standard}, not -std=c++20")
    submission = tmp_path / "submission.py"
    submission.write_text(CXX20.replace("FLAGS", repr("-O3")))
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(submission_build, "PRELUDE", "")
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    assert result.exit_code == 0, result.output
    assert "built" in next(line for line in result.output.splitlines() if "modern.cu:" in line)
    assert [flag for flag in _command(tmp_path, repr("-O3")) if flag.startswith("-std")] == ["-std=c++20"]


def _write_cxx20(tmp_path: Path, flags: list[str]) -> Path:
    submission = tmp_path / "submission.py"
    submission.write_text(CXX20.replace("[FLAGS]", repr(flags)))
    return submission


def _build_with_flags(tmp_path: Path, flags: list[str]) -> Result:
    """`nvfp4ctl build` of the C++20 submission with these extra_cuda_cflags, for sm_100a."""
    return runner.invoke(app, ["build", str(_write_cxx20(tmp_path, flags)), "--arch", "sm_100a"])


def _ninja_writer(standard: str) -> Callable[..., None]:
    """A stand-in for torch's _write_ninja_file_to_build_library of another release: its own parameters
    (no SYCL ones, as before 2.7) and its own standard, appended where the flags name none."""

    def write(path: str, name: str, sources: list[str], extra_cflags: list[str], extra_cuda_cflags: list[str],
              extra_ldflags: list[str], extra_include_paths: list[str], with_cuda: bool, is_standalone: bool) -> None:
        flags = [f"-DTORCH_EXTENSION_NAME={name}", "-isystem /torch/include", "-D__CUDA_NO_HALF_OPERATORS__",
                 "-gencode=arch=compute_90,code=sm_90", "--compiler-options", "'-fPIC'", *extra_cuda_cflags]
        if not any(flag.startswith("-std=") for flag in flags):
            flags.append(standard)
        Path(path).write_text(f"nvcc = /cuda/bin/nvcc\ncuda_cflags = {' '.join(flags)}\ncuda_post_cflags = \n")

    return write


def test_the_standard_and_flags_are_the_ones_the_installed_torch_writes(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever standard the installed torch's ninja file gives (here a release's c++23), once, after
    the submission's flags; a standard of the submission's own is the only one. Torch's arch (the GPUs
    it sees) is not taken: the build's gencode decides it."""
    monkeypatch.setattr(cpp_extension, "_write_ninja_file_to_build_library", _ninja_writer("-std=c++23"))
    command = _command(tmp_path, repr("-O3"))
    assert [flag for flag in command if flag.startswith("-std")] == ["-std=c++23"]
    assert command.index("-std=c++23") == command.index("-O3") + 1
    assert command[command.index("-isystem") + 1] == "/torch/include"
    assert "-DTORCH_EXTENSION_NAME=modern" in command and "-D__CUDA_NO_HALF_OPERATORS__" in command
    assert "-gencode=arch=compute_90,code=sm_90" not in command and "-gencode=arch=compute_100a,code=sm_100a" in command
    assert command[command.index("--compiler-options") + 1] == "-fPIC"
    own = _command(tmp_path, repr("-std=c++17"))
    assert [flag for flag in own if flag.startswith("-std")] == ["-std=c++17"]


def test_a_torch_whose_ninja_file_cannot_be_read_gives_the_standard_its_source_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ninja writer is private to torch: where a release's cannot be called as here, the flags are
    torch's public ones with the standard its writer's source names, and the build says so."""

    def _write_ninja_file_to_build_library(path: str, *, layout: object) -> None:
        flags = ["-std=c++23"]  # what this release would append
        raise AssertionError(flags)

    monkeypatch.setattr(cpp_extension, "_write_ninja_file_to_build_library", _write_ninja_file_to_build_library)
    command = _command(tmp_path, repr("-O3"))
    assert [flag for flag in command if flag.startswith("-std")] == ["-std=c++23"]
    assert "-D__CUDA_NO_HALF_CONVERSIONS__" in command
    assert "torch's nvcc flags could not be read" in (torch_nvcc.fallback_note() or "")


@pytest.mark.parametrize("earlier", [3, 5])
def test_an_entry_of_the_earlier_command_is_not_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        compiles: list[str], earlier: int) -> None:
    """Entries built with -std=c++17 where torch gives c++20 (layout 3), or with each flag one argv
    element and a -gencode where a flag holds "arch" (layout 5), hold a build the leaderboard does not
    make (a failure is never cached, but the registers and spills of the other build are)."""
    submission = tmp_path / "submission.py"
    submission.write_text(CXX20.replace("FLAGS", repr("-O3")))
    layout = submission_build.COMMAND_LAYOUT
    monkeypatch.setattr(submission_build, "COMMAND_LAYOUT", earlier)
    assert runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"]).exit_code == 0
    monkeypatch.setattr(submission_build, "COMMAND_LAYOUT", layout)
    assert runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"]).exit_code == 0
    assert compiles == ["modern.cu"] * 2


@pytest.mark.parametrize("host_compiler", ["ccache gcc", "/usr/bin/gcc -m64", "gcc"])
def test_a_host_compiler_of_several_words_leaves_nothing_of_itself_in_the_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_compiler: str) -> None:
    """torch writes `-ccbin $CC` unquoted into its ninja file: with CC="ccache gcc" a lone `gcc` reached
    nvcc ("A single input file is required for a non-link phase") and every submission build failed.
    The probe runs without $CC, and puts it back after."""
    monkeypatch.setenv("CC", host_compiler)
    command = _command(tmp_path, repr("-O3"))
    assert "-ccbin" not in command
    assert not set(host_compiler.split()) & set(command), command
    assert torch_nvcc.fallback_note() is None
    assert submission_build.os.environ["CC"] == host_compiler


def test_a_flag_holding_spaces_reaches_nvcc_as_the_words_the_shell_makes_of_it(tmp_path: Path) -> None:
    """torch joins extra_cuda_cflags with spaces into its ninja file's command, which a shell runs: "-Xptxas
    -v" is two words there, and quotes and backslashes inside a flag are the shell's. Passed as one argv
    element, nvcc refused it ("Unknown option '-Xptxas -v'") where the leaderboard's build takes it."""
    flags = ", ".join(repr(flag) for flag in ["-Xptxas -v", "-DTAG='a b'", r"-DSPACED=x\ y", " -O3 "])
    command = _command(tmp_path, flags)
    user = command[command.index("-Xptxas"):]
    assert user[:5] == ["-Xptxas", "-v", "-DTAG=a b", "-DSPACED=x y", "-O3"], command
    assert "-Xptxas -v" not in command


def test_a_standard_torch_does_not_see_is_followed_by_torchs_own(tmp_path: Path) -> None:
    """torch looks for a flag that starts with -std= among the flags as written: --std=c++17, or -std=c++17
    inside a flag of several words, is not one, so torch appends its own standard after it and nvcc uses
    the last ('incompatible redefinition for option std, the last value of this option was used')."""
    standard = torch_nvcc.extension_flags("modern", ("-O3",), "-gencode=arch=compute_100a,code=sm_100a").trailing
    for flags in [repr("--std=c++17"), repr("-O3 -std=c++17")]:
        command = _command(tmp_path, flags)
        assert [flag for flag in command if "std" in flag][-len(standard):] == list(standard), (flags, command)
    assert [flag for flag in _command(tmp_path, repr(" -std=c++17")) if "std" in flag] == ["-std=c++17"]


@pytest.mark.parametrize(("flags", "says"), [
    (["-DTAG='a b"], "unclosed quote"), (["-I$HOME/cutlass"], "a $"), (["-DA=1;B"], "unquoted ';'"),
    (["-DTAG=`date`"], "backquote")])
def test_flags_the_shell_would_not_run_as_written_are_one_line_and_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], says: str) -> None:
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "300")
    result = _build_with_flags(tmp_path, flags)
    assert result.exit_code == 2, result.output
    assert says in result.output and "submission.py:8: modern's extra_cuda_cflags" in result.output, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("flags", "named"), [(["--std=c++17"], "--std=c++17"), (["-O3 -std=c++17"], "-std=c++17"),
                                              (["-std", "c++17"], "-std c++17"), (["--std c++17"], "--std c++17")])
def test_a_standard_torch_does_not_see_is_said_not_to_apply(tmp_path: Path, compiles: list[str],
                                                            flags: list[str], named: str) -> None:
    """The build said nothing where the submission's standard is overridden by torch's, so a C++17-only
    kernel's failure under torch's c++20 was a puzzle; said once per extension."""
    result = _build_with_flags(tmp_path, flags)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert said.count(f"extra_cuda_cflags' {named} does not apply: torch appends its own -std=") == 1, said


def test_a_standard_torch_sees_is_said_nothing_of(tmp_path: Path, compiles: list[str]) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(CXX20.replace("[FLAGS]", repr([" -std=c++17", "-Xptxas -v"])))
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    assert result.exit_code == 0 and "does not apply" not in result.output, result.output


@pytest.mark.parametrize("flags", [["-Xcompiler -std=c++17"], ["-Xcompiler", "--std=c++17"], ["-Xcompiler=-std=c++17"],
                                   ["--compiler-options -std=c++17"], ["--compiler-options=-std=c++17"]])
def test_a_standard_given_to_the_host_compiler_is_said_nothing_of(tmp_path: Path, compiles: list[str],
                                                                  flags: list[str]) -> None:
    """-Xcompiler -std=c++17 is the host compiler's standard: the build told the user it "does not apply"
    and to give -std=c++NN as a flag of its own, which would change the device code's standard instead."""
    result = _build_with_flags(tmp_path, flags)
    assert result.exit_code == 0 and "does not apply" not in result.output, result.output
    assert torch_nvcc.overridden_standard([*flags, "--std=c++14"]) == "--std=c++14"


def test_the_fallback_appends_torchs_standard_after_one_torch_does_not_see(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Where torch's ninja file cannot be read, the flags model torch's own test (a flag that starts with
    -std=): --std=c++17 counted as a standard given, and the command lacked the -std=c++20 that torch
    appends after it and nvcc uses."""

    def _write_ninja_file_to_build_library(path: str, *, layout: object) -> None:
        flags = ["-std=c++23"]  # what this release would append
        raise AssertionError(flags)

    monkeypatch.setattr(cpp_extension, "_write_ninja_file_to_build_library", _write_ninja_file_to_build_library)
    command = _command(tmp_path, repr("--std=c++17"))
    assert torch_nvcc.extension_flags("modern", ("--std=c++17",), "-gencode=arch=compute_100a,code=sm_100a").fallback_reason
    assert [flag for flag in command if "std" in flag] == ["--std=c++17", "-std=c++23"]
    assert [flag for flag in _command(tmp_path, repr("-std=c++17")) if "std" in flag] == ["-std=c++17"]


def test_an_extensions_notes_are_said_once_whatever_its_units(tmp_path: Path, compiles: list[str]) -> None:
    """A load() of two .cu files said each of its extension's notes twice, once per file."""
    for name in ("a.cu", "b.cu"):
        (tmp_path / name).write_text("// nvfp4ctl: no-tensor-op\n__global__ void k(int* p) { p[0] = 1; }\n")
    submission = tmp_path / "submission.py"
    submission.write_text("import os\nfrom torch.utils.cpp_extension import load\n"
                          'm = load(name="two", sources=["a.cu", "b.cu"],\n'
                          '         extra_cuda_cflags=["--std=c++17", f"-DTAG={os.getpid()}"])\n')
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert said.count("does not apply") == 1 and said.count("placeholder is not a constant") == 1, said


def _unreadable_ninja_writer(path: str, *, layout: object) -> None:
    raise AssertionError("a release whose ninja writer takes other parameters")


def test_the_fallback_is_said_once_per_command_and_keyed_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               compiles: list[str]) -> None:
    """Where torch's flags could not be read, its warning was said once per compiled unit, and the entry
    built with the fallback flags was the one a later build with torch's real flags reused."""
    for name in ("a.cu", "b.cu"):
        (tmp_path / name).write_text("// nvfp4ctl: no-tensor-op\n__global__ void k(int* p) { p[0] = 1; }\n")
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load\n"
                          'm = load(name="two", sources=["a.cu", "b.cu"], extra_cuda_cflags=["-O3"])\n')
    real_writer = cpp_extension._write_ninja_file_to_build_library

    def build(writer: Callable[..., None]) -> str:
        monkeypatch.setattr(cpp_extension, "_write_ninja_file_to_build_library", writer)
        torch_nvcc.extension_flags.cache_clear()
        result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    assert build(_unreadable_ninja_writer).count("torch's nvcc flags could not be read") == 1
    assert compiles == ["a.cu", "b.cu"]
    assert build(_unreadable_ninja_writer).count("torch's nvcc flags could not be read") == 1  # its own entries
    assert compiles == ["a.cu", "b.cu"]
    said = build(real_writer)
    assert "could not be read" not in said and compiles == ["a.cu", "b.cu"] * 2, said
    build(real_writer)
    assert compiles == ["a.cu", "b.cu"] * 2


def test_a_flag_holding_arch_leaves_the_arch_to_nvcc_as_torch_does(tmp_path: Path) -> None:
    """torch adds its arch flag only where no flag holds the letters "arch" (_get_cuda_arch_flags): with
    -I/src/archive it adds none and nvcc compiles for its default arch. The build added -gencode for
    sm_100a all the same, and passed a kernel that fails to compile on the leaderboard."""
    command = _command(tmp_path, repr(f"-I{tmp_path / 'archive'}"))
    assert not [flag for flag in command if "gencode" in flag or flag.startswith("-arch")], command
    assert "-gencode=arch=compute_100a,code=sm_100a" in _command(tmp_path, repr("-O3"))


def test_a_flag_torch_takes_for_an_arch_is_said_so(tmp_path: Path, compiles: list[str]) -> None:
    archive = tmp_path / "archive"
    flags = repr(f"-I{archive}")
    submission = tmp_path / "submission.py"
    submission.write_text(CXX20.replace("FLAGS", flags))
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    said = " ".join(result.output.split())
    assert f"-I{archive} holds \"arch\": torch takes it for an arch flag and adds none of its own" in said, said


@pytest.mark.parametrize(("flags", "says"), [
    (["-O3", "# tuned"], "a # that starts a word, where the shell's comment begins"),
    (["-I ~/cutlass/include"], "hold ~/cutlass/include, whose ~ the shell expands to a home folder"),
    (["-I", "~"], "hold ~, whose ~ the shell expands"),
    (["-include c*"], "hold c*, a pattern the shell replaces with the files of torch's build folder it matches (cuda.cu"),
    (["-I", "/opt/cutlass-*/include"], "hold /opt/cutlass-*/include, a pattern the shell matches against the files"),
    (["-DA=1\n-DB=2"], "a line break")])
def test_words_the_shell_rewrites_are_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         compiles: list[str], flags: list[str], says: str) -> None:
    """torch's ninja command runs through sh: a word that starts with # comments out the rest of the line
    (the -c FILE -o OBJ after the flags: torch's build fails), a ~ that starts a word is a home folder
    and *, ? and [ make a pattern matched against the build folder's files. The build passed such words
    to nvcc as written and compiled what torch's build does not."""
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "400")
    result = _build_with_flags(tmp_path, flags)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert says in said and "submission.py:8: modern's extra_cuda_cflags" in said, said
    assert "Traceback" not in result.output and not compiles


@pytest.mark.parametrize(("flags", "words"), [
    (["-gencode=arch=compute_100a,code=[sm_100a,compute_100a]"], ["-gencode=arch=compute_100a,code=[sm_100a,compute_100a]"]),
    (["-gencode", "arch=compute_100a,code=[sm_100a,compute_100a]"], ["-gencode", "arch=compute_100a,code=[sm_100a,compute_100a]"]),
    (["-DPICK=c*", "-include 'c*'", "-DHASH=a#b", "-DHOME=x~", r"-DTILDE=\~"], ["-DPICK=c*", "-include", "c*", "-DHASH=a#b", "-DHOME=x~", "-DTILDE=~"]),
    (["-DQUOTED=\"#\"", "-Dz?"], ["-DQUOTED=#", "-Dz?"]),
    (["'|'", '";"', r"\&", "-DSEP='<>'", '"()"'], ["|", ";", "&", "-DSEP=<>", "()"])])
def test_words_the_shell_leaves_as_written_reach_nvcc_so(tmp_path: Path, flags: list[str], words: list[str]) -> None:
    """A pattern no file of torch's build folder matches stays as written (sh keeps it), a quoted or
    mid-word # ~ * is itself."""
    extension = _extension(tmp_path, ", ".join(repr(flag) for flag in flags))
    build_files = flag_problems.torch_build_files(extension)
    assert torch_nvcc.shell_words(extension.cuda_flags, build_files) == words


def test_a_pattern_is_matched_against_the_files_torch_writes_for_the_extension(tmp_path: Path) -> None:
    """load() compiles its sources where they are and writes NAME.cuda.o for a .cu into the build folder."""
    (tmp_path / "tile.cu").write_text("__global__ void k() {}\n")
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load\n"
                          'm = load(name="tiles", sources=["tile.cu"], extra_cuda_cflags=["-DX=t*"])\n')
    (extension,) = find_sources(submission).extensions
    build_files = flag_problems.torch_build_files(extension)
    assert {"tile.cuda.o", "tiles.so", "build.ninja"} <= build_files and "tile.cu" not in build_files
    with pytest.raises(ValueError, match=r"tile.cuda.o, tile.cuda.o.d, tiles.so"):
        torch_nvcc.shell_words(["t*"], build_files)
    assert torch_nvcc.shell_words(["-DX=t*"], build_files) == ["-DX=t*"]
    assert torch_nvcc.shell_words(["./x*", "q*"], build_files) == ["./x*", "q*"]
    assert torch_nvcc.shell_words(["*"], []) == ["*"]
    with pytest.raises(ValueError, match="build folder it matches"):
        torch_nvcc.shell_words(["./t*"], build_files)
    with pytest.raises(ValueError, match="files of the machine"):
        torch_nvcc.shell_words(["../t*"], build_files)
    assert torch_nvcc.shell_words(["*log"], build_files) == ["*log"]  # a * never matches the . that starts .ninja_log
    with pytest.raises(ValueError, match=r"\.ninja_deps, \.ninja_log"):
        torch_nvcc.shell_words([".ninja*"], build_files)


def test_a_host_code_extension_keeps_its_notes(tmp_path: Path, compiles: list[str]) -> None:
    """An extension without cuda_sources said only 'host code only' and dropped what its reading found (a
    placeholder left empty) and the standard torch does not see."""
    submission = tmp_path / "submission.py"
    submission.write_text("import os\nfrom torch.utils.cpp_extension import load_inline\n"
                          'm = load_inline(name="host", cpp_sources=f"int f() {{ return {os.getpid()}; }}",\n'
                          '                extra_cuda_cflags=["--std=c++17"])\n')
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    for note in ("host: line 3: an f-string placeholder is not a constant", "host: extra_cuda_cflags' --std=c++17 does not"
                 " apply", "host: no cuda_sources: host code only"):
        assert said.count(note) == 1, (note, said)
    assert not compiles


@pytest.fixture()
def compiled_arches(compiles: list[str], monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(unit, arch) of every unit compiled, the arch its entry, report and tensor-op check are made for."""
    arches: list[tuple[str, str]] = []
    command = submission_build._command

    def recorded(extension: Extension, unit: Path, arch: str, code: str, folder: Path) -> list[str]:
        arches.append((unit.name, arch))
        return command(extension, unit, arch, code, folder)

    monkeypatch.setattr(submission_build, "_command", recorded)
    return arches


def test_the_arch_shown_and_checked_is_nvccs_default_where_torch_adds_none(
        tmp_path: Path, compiled_arches: list[tuple[str, str]]) -> None:
    """With -I/src/archive torch adds no arch flag and nvcc compiles for its default (sm_75 in CUDA 13.0),
    but the line said "arch sm_100a (the code uses tcgen05 / SM100)" and the unit was keyed, reported and
    tensor-op checked as sm_100a. Another extension, whose flags hold no "arch", keeps the arch torch adds."""
    archive = tmp_path / "archive"
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          'CUDA = "// nvfp4ctl: no-tensor-op\\n__global__ void k(int* p) { asm(\\"tcgen05.fence::before_thread_sync;\\"); }"\n'
                          f'a = load_inline(name="odd", cpp_sources="", cuda_sources=CUDA, extra_cuda_cflags=["-I{archive}"])\n'
                          'b = load_inline(name="plain", cpp_sources="", cuda_sources=CUDA, extra_cuda_cflags=["-O3"])\n')
    sources = find_sources(submission)
    odd, plain = sources.extensions
    assert sources.extension_arches(odd, None) == (
        ("sm_75",), f"nvcc's default: odd's flag -I{archive} holds \"arch\", so torch adds none")
    assert sources.extension_arches(plain, None) == (("sm_100a",), "the code uses tcgen05 / SM100")
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert (f"odd: arch sm_75 (nvcc's default: odd's flag -I{archive} holds \"arch\", so torch adds none), plain: arch"
            " sm_100a (--arch)") in said, said
    assert "--arch sm_100a not used: the submission's own settings decide the arch, here sm_75" in said, said
    assert compiled_arches == [("odd.cu", "sm_75"), ("plain.cu", "sm_100a")]
    assert sorted(entry.name.split("-")[2] for entry in (tmp_path / "cache").glob("submission-*")) == ["sm_100a", "sm_75"]


@pytest.mark.parametrize(("flags", "arch"), [
    (["-gencode", "arch=compute_90a,code=sm_90a"], "sm_90a"), (["-arch sm_90a"], "sm_90a"),
    (["--generate-code=arch=compute_100a,code=[sm_100a,compute_100a]"], "sm_100a"),
    (["-DMODE=-arch=sm_90a"], "sm_75"),
    # nvcc uses the last -arch ("incompatible redefinition for option 'gpu-architecture', the last value of this
    # option was used"): the first was taken, sm_90a shown and checked where nvcc compiled sm_100a
    (["-arch=sm_90a", "-arch=sm_100a"], "sm_100a"), (["-arch sm_90a", "--gpu-architecture=sm_100a"], "sm_100a"),
    (["-arch=sm_100a", "-arch=native"], "sm_100")])  # native last: the B200's, for code any arch assembles
def test_the_arch_is_the_one_nvccs_words_name(tmp_path: Path, flags: list[str], arch: str) -> None:
    """The arch was read from each flag as written: `-gencode arch=...` as two flags named none (and so the
    code's sm_100a was shown), a define whose value reads -arch=sm_90a was taken for one."""
    extension = _extension(tmp_path, ", ".join(repr(flag) for flag in flags))
    assert find_sources(tmp_path / "submission.py").extension_arches(extension, "sm_100a")[0] == (arch,)


def test_the_arch_shown_and_compiled_is_the_last_arch_given(tmp_path: Path,
                                                            compiled_arches: list[tuple[str, str]]) -> None:
    """`-arch=sm_90a -arch=sm_100a` was labelled, keyed and checked as sm_90a while nvcc compiled sm_100a."""
    result = runner.invoke(app, ["build", str(_write_cxx20(tmp_path, ["-arch=sm_90a", "-arch=sm_100a"]))])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert "arch sm_100a (modern's flag -arch=sm_100a)" in said and "sm_90a" not in said, said
    assert compiled_arches == [("modern.cu", "sm_100a")]


@pytest.mark.parametrize(("arch_list", "arches"), [("10.0a", ("sm_100a",)), ("10.0", ("sm_100",)), ("9.0a+PTX", ("sm_90a",)),
                                                   ("9.0;10.0a", ("sm_90", "sm_100a")), ("9.0a 10.0a;9.0a", ("sm_90a", "sm_100a"))])
def test_torch_cuda_arch_list_is_read_as_torch_reads_it(tmp_path: Path, arch_list: str, arches: tuple[str, ...]) -> None:
    """TORCH_CUDA_ARCH_LIST=10.0 makes torch compile for sm_100, where tcgen05 does not assemble; the
    build compiled sm_100a and passed the kernel. It comes before another extension's flag: it is what
    torch reads for an extension whose flags name no arch."""
    submission = tmp_path / "submission.py"
    submission.write_text("import os\nfrom torch.utils.cpp_extension import load_inline\n"
                          f'os.environ["TORCH_CUDA_ARCH_LIST"] = "{arch_list}"\n'
                          'a = load_inline(name="a", cpp_sources="", cuda_sources="", extra_cuda_cflags=["-arch=sm_120a"])\n'
                          'b = load_inline(name="b", cpp_sources="", cuda_sources="", extra_cuda_cflags=["-O3"])\n')
    sources = find_sources(submission)
    assert sources.extension_arches(sources.extensions[0], None)[0] == ("sm_120a",)
    assert sources.extension_arches(sources.extensions[1], None)[0] == arches


def test_an_arch_list_entry_build_cannot_read_is_one_line_and_exit_2(tmp_path: Path) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text("import os\nfrom torch.utils.cpp_extension import load_inline\n"
                          'os.environ["TORCH_CUDA_ARCH_LIST"] = "Blackwell"\n'
                          'b = load_inline(name="b", cpp_sources="", cuda_sources="__global__ void k() {}")\n')
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 2 and "TORCH_CUDA_ARCH_LIST=Blackwell" in result.output, result.output


def test_host_code_alone_is_said_to_compile_nothing(tmp_path: Path, compiles: list[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A submission whose extensions are host code only printed an empty table, and its run-log result
    read '0 units built for sm_100a', an arch nothing was compiled for."""
    memory = tmp_path / "MEMORY.md"
    monkeypatch.setenv("NVFP4CTL_MEMORY", str(memory))
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          'm = load_inline(name="host", cpp_sources="int f();", extra_cuda_cflags=["-O3"])\n')
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    assert "unit: kernel" not in result.output and "compile: no device code to compile" in result.output, result.output
    logged = memory.read_text()
    assert "host code only: nothing to compile" in logged and "built for" not in logged, logged


def test_every_arch_of_torch_cuda_arch_list_is_compiled_and_reported(
        compiled_arches: list[tuple[str, str]], build_two_arch_list: Callable[..., Result]) -> None:
    """torch compiles every entry of TORCH_CUDA_ARCH_LIST ("9.0a;10.0a": both gencodes); the build compiled
    the first alone, so code that fails for sm_100a passed."""
    result = build_two_arch_list('["--std=c++17"]')
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert compiled_arches == [("both.cu", "sm_90a"), ("both.cu", "sm_100a")]
    assert "archs sm_90a, sm_100a (TORCH_CUDA_ARCH_LIST=9.0a;10.0a)" in said, said
    assert "both.cu (sm_90a)" in said and "both.cu (sm_100a)" in said and said.count("does not apply") == 1, said


@pytest.mark.parametrize(("flags", "says"), [
    (["-arch=native", "-code=sm_100"], "-arch=native with -code=sm_100: nvcc stops (\"Cannot use '-arch=native' with"),
    (["-arch", "all"], "-arch all compiles for every arch nvcc knows (12 archs with nvcc 13.0, sm_75 to sm_121) in one"
     " nvcc run, where the B200 runs the sm_100 one"),
    (["--gpu-architecture=all-major"], "--gpu-architecture=all-major compiles for every arch nvcc knows"),
    (["-code=sm_100a"], "-code=sm_100a without -arch: nvcc stops"),
    (["--gpu-code sm_90a", "-O3"], "--gpu-code sm_90a without -arch")])
def test_an_arch_build_cannot_know_is_one_line_and_exit_2(tmp_path: Path, compiles: list[str], flags: list[str],
                                                         says: str) -> None:
    """-arch=all, -arch=native with -code and a lone -code hold no arch build reads: they were shown, keyed
    and checked as nvcc's default sm_75 (or, for -code, torch's), which nvcc does not compile for them."""
    result = _build_with_flags(tmp_path, flags)
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and f"submission.py:8: modern's extra_cuda_cflags: {says}" in said, said
    assert "arch sm_75" not in said and not compiles and "Traceback" not in result.output


@pytest.mark.parametrize(("flags", "given"), [(["-arch=native"], ["-arch=sm_100"]),
                                             (["-O3", "--gpu-architecture", "native"], ["-O3", "--gpu-architecture", "sm_100"])])
def test_native_for_code_any_arch_assembles_builds_for_the_b200(tmp_path: Path, compiled_arches: list[tuple[str, str]],
                                                                flags: list[str], given: list[str]) -> None:
    """-arch=native is the GPU nvcc runs on: the B200's sm_100 on the leaderboard, where code without tcgen05 or
    wgmma builds and runs. It was refused with exit 2 as if it broke the build; nvcc here gets -arch=sm_100, as
    without a GPU nvcc 13.0 warns and compiles sm_75, and with one compiles for a GPU that is not the B200."""
    result = runner.invoke(app, ["build", str(_write_cxx20(tmp_path, flags))])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert "arch sm_100 (modern's flag" in said and "the GPU it runs on, the B200's" in said, said
    assert "holds \"arch\"" not in said and "sm_75" not in said, said
    assert compiled_arches == [("modern.cu", "sm_100")]
    command = NVCC_COMMAND(_extension(tmp_path, repr(flags)[1:-1]), tmp_path / "modern.cu", "sm_100", "", tmp_path)
    at = command.index(given[0])
    assert command[at:at + len(given)] == given and "native" not in command, command


def test_native_for_tcgen05_code_is_one_line_and_exit_2(tmp_path: Path, compiles: list[str]) -> None:
    """-arch=native gives the B200's sm_100 without the a, where tcgen05 does not assemble: the line says so,
    and what nvcc does without a GPU, and names sm_100a."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          'CUDA = "__global__ void k() { asm(\\"tcgen05.fence::before_thread_sync;\\"); }"\n'
                          'm = load_inline(name="g", cpp_sources="", cuda_sources=CUDA, extra_cuda_cflags=["-arch=native"])\n')
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and not compiles, said
    assert ("g's extra_cuda_cflags: -arch=native compiles for the GPU of the machine nvcc runs on, without the a: sm_100"
            " on the B200 that runs GPU MODE's NVFP4 problems (on a machine without a GPU, nvcc warns and compiles its"
            " default sm_75), where the code's tcgen05 / SM100 instructions do not assemble; name the arch"
            " (-gencode=arch=compute_100a,code=sm_100a)") in said, said


@pytest.mark.parametrize("comment", ["// TODO: replace this naive loop with wgmma.mma_async once it works",
                                     "/* TODO: tcgen05.mma (kind::mxf4nvf4) */"])
def test_native_for_code_whose_comment_names_tcgen05_builds(tmp_path: Path, compiled_arches: list[tuple[str, str]],
                                                            comment: str) -> None:
    """An instruction named in a comment is not in the code: build refused a plain kernel with -arch=native
    ("the code's tcgen05 / SM100 instructions do not assemble", exit 2) for a // TODO naming tcgen05.mma."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          f'CUDA = """// nvfp4ctl: no-tensor-op\n{comment}\n__global__ void k(int* p) {{ p[0] = 1; }}"""\n'
                          'm = load_inline(name="g", cpp_sources="", cuda_sources=CUDA, extra_cuda_cflags=["-arch=native"])\n')
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0 and "do not assemble" not in said, said
    assert [arch for _, arch in compiled_arches] == ["sm_100"], said


def test_native_beside_the_gencode_tcgen05_needs_is_to_be_dropped(tmp_path: Path, compiles: list[str]) -> None:
    """nvcc compiles both -arch=native's sm_100 and the -gencode's sm_100a, and tcgen05 fails in the first: the
    refusal stands, and says to drop -arch=native, where it told the user to add the -gencode they had."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          'CUDA = "__global__ void k() { asm(\\"tcgen05.fence::before_thread_sync;\\"); }"\n'
                          'm = load_inline(name="g", cpp_sources="", cuda_sources=CUDA,'
                          ' extra_cuda_cflags=["-arch=native", "-gencode=arch=compute_100a,code=sm_100a"])\n')
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and not compiles, said
    assert ("where the code's tcgen05 / SM100 instructions do not assemble; drop -arch=native:"
            " -gencode=arch=compute_100a,code=sm_100a already compiles sm_100a") in said, said


def test_native_beside_a_ptx_only_gencode_is_told_to_name_the_arch(tmp_path: Path, compiles: list[str]) -> None:
    """code=compute_100a is PTX, no sm_100a SASS: dropping -arch=native would leave no sm_100a compiled, where the
    refusal said the -gencode already compiled sm_100a."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          'CUDA = "__global__ void k() { asm(\\"tcgen05.fence::before_thread_sync;\\"); }"\n'
                          'm = load_inline(name="g", cpp_sources="", cuda_sources=CUDA,'
                          ' extra_cuda_cflags=["-arch=native", "-gencode=arch=compute_100a,code=compute_100a"])\n')
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and not compiles, said
    assert said.endswith("do not assemble; name the arch (-gencode=arch=compute_100a,code=sm_100a)"), said
    assert "already compiles" not in said, said


def test_an_arch_list_set_after_a_call_does_not_apply_to_it(tmp_path: Path) -> None:
    """TORCH_CUDA_ARCH_LIST set after a module-level load_inline does not reach it (torch reads it in the
    call); one set at module level reaches a call inside custom_kernel, which runs after the file's top."""
    submission = tmp_path / "submission.py"
    submission.write_text("import os\nfrom torch.utils.cpp_extension import load_inline\n"
                          'CUDA = "__global__ void k(int* p) { asm(\\"tcgen05.fence::before_thread_sync;\\"); }"\n'
                          'early = load_inline(name="early", cpp_sources="", cuda_sources=CUDA)\n'
                          "def custom_kernel(data):\n"
                          '    return load_inline(name="late", cpp_sources="", cuda_sources=CUDA)\n'
                          'os.environ["TORCH_CUDA_ARCH_LIST"] = "10.0"\n')
    sources = find_sources(submission)
    early, late = sources.extensions
    assert sources.extension_arches(early, None) == (("sm_100a",), "the code uses tcgen05 / SM100")
    assert sources.torch_picks_gpu_arch(early) and not sources.torch_picks_gpu_arch(late)
    assert sources.extension_arches(late, None) == (("sm_100",), "TORCH_CUDA_ARCH_LIST=10.0")


@pytest.mark.parametrize(("code", "flags", "warned"), [
    ("tcgen05.fence::before_thread_sync;", "-O3", True), ("wgmma.fence.sync.aligned;", "-O3", True),
    ("tcgen05.fence::before_thread_sync;", "-gencode=arch=compute_100a,code=sm_100a", False)])
def test_an_arch_torch_picks_from_the_gpu_is_said_once_with_the_fix(tmp_path: Path, compiles: list[str], code: str,
                                                                    flags: str, warned: bool) -> None:
    """With no arch named, torch compiles for the GPU it runs on (10.0+PTX on a B200: sm_100, no a, where
    tcgen05 does not assemble); the build inferred sm_100a from the code and passed without a word."""
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load_inline\n"
                          f'CUDA = "// nvfp4ctl: no-tensor-op\\n__global__ void k() {{ asm(\\"{code}\\"); }}"\n'
                          f'm = load_inline(name="g", cpp_sources="", cuda_sources=CUDA, extra_cuda_cflags=["{flags}"])\n')
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    if not warned:
        assert "no arch is named" not in said, said
        return
    number = "100" if "tcgen05" in code else "90"
    assert said.count("g: no arch is named for this call") == 1, said
    assert "torch compiles for the GPU it runs on, 10.0+PTX (sm_100, without the a) on the B200" in said, said
    assert (f'extra_cuda_cflags=["-gencode=arch=compute_{number}a,code=sm_{number}a"], or'
            f' os.environ["TORCH_CUDA_ARCH_LIST"] = "{number[:-1]}.0a" before the call') in said, said


@pytest.mark.parametrize("call", [
    'load_inline(name="host", cpp_sources="int f() { return 1; }", extra_cuda_cflags=FLAGS)',
    'load(name="host", sources=["host.cpp"], extra_cuda_cflags=FLAGS)'])
def test_an_arch_build_cannot_know_in_host_code_only_is_not_refused(tmp_path: Path, compiles: list[str],
                                                                    call: str) -> None:
    """Host code alone compiles with no nvcc, so torch never uses extra_cuda_cflags: -arch=native there was
    refused with exit 2 as if nvcc would compile for it."""
    (tmp_path / "host.cpp").write_text("int f() { return 1; }\n")
    submission = tmp_path / "submission.py"
    submission.write_text("from torch.utils.cpp_extension import load, load_inline\n"
                          f'FLAGS = ["-arch=native"]\nm = {call}\n')
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 0 and "compiles for the GPU of the machine" not in said and not compiles, said
    assert "host code only" in said, said
