"""What a submission unit's build reads beyond its own code: the local headers it includes (an edit to
one must rebuild the unit, not serve the old entry's registers and spills) and the include folders,
found where torch's load_inline finds them on the leaderboard."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import submission_build
from nvfp4ctl.build.submission_sources import find_sources
from nvfp4ctl.cli import app

runner = CliRunner()

INLINE = '''from torch.utils.cpp_extension import load_inline
CUDA = r"""// nvfp4ctl: no-tensor-op
#include "tile.cuh"
#include <shape.cuh>
// #include "commented.cuh"
#if 0
#include "disabled.cuh"
#endif
__global__ void k(float* p) { p[0] = TILE * SHAPE; }
"""
m = load_inline(name="plain", cpp_sources="", cuda_sources=CUDA, extra_include_paths=[INCLUDE],
                extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])
'''

LOAD = '''from torch.utils.cpp_extension import load
m = load(name="filed", sources=["k.cu"], extra_include_paths=[INCLUDE],
         extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])
'''


def _cache_column(submission: Path) -> str:
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if ".cu:" in line)
    return row.rstrip(" │").split("│")[-1].strip()


def test_an_edited_header_from_the_include_folders_rebuilds_the_unit(tmp_path: Path, compiles: list[str]) -> None:
    include = tmp_path / "include"
    include.mkdir()
    (include / "tile.cuh").write_text('#pragma once\n#include "tile_size.cuh"\n')  # found beside tile.cuh
    (include / "tile_size.cuh").write_text("#define TILE 128\n")
    (include / "shape.cuh").write_text("#define SHAPE 2\n")
    (include / "commented.cuh").write_text("#define UNUSED 1\n")
    (include / "disabled.cuh").write_text("#define UNUSED 1\n")
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE.replace("INCLUDE", repr(str(include))))
    assert _cache_column(submission) == "built"
    assert _cache_column(submission) == "hit"
    (include / "tile_size.cuh").write_text("#define TILE 256\n")  # included by an included header
    assert _cache_column(submission) == "built"
    (include / "shape.cuh").write_text("#define SHAPE 4\n")  # an <> include, found through the -I folder
    assert _cache_column(submission) == "built"
    # what the preprocessor never reads is not an input: an include in a comment or an #if 0 group
    (include / "commented.cuh").write_text("#define UNUSED 2\n")
    (include / "disabled.cuh").write_text("#define UNUSED 2\n")
    assert _cache_column(submission) == "hit"
    assert compiles == ["plain.cu"] * 3


def test_an_edited_header_beside_a_load_source_rebuilds_it(tmp_path: Path, compiles: list[str]) -> None:
    include = tmp_path / "include"
    include.mkdir()
    (include / "shape.cuh").write_text("#define SHAPE 2\n")
    (tmp_path / "tile.cuh").write_text("#define TILE 128\n")
    (tmp_path / "k.cu").write_text('// nvfp4ctl: no-tensor-op\n#include "tile.cuh"\n#include "shape.cuh"\n'
                                   "__global__ void k(float* p) { p[0] = TILE * SHAPE; }\n")
    submission = tmp_path / "submission.py"
    submission.write_text(LOAD.replace("INCLUDE", repr(str(include))))
    assert _cache_column(submission) == "built"
    (tmp_path / "tile.cuh").write_text("#define TILE 256\n")
    assert _cache_column(submission) == "built"
    (include / "shape.cuh").write_text("#define SHAPE 4\n")
    assert _cache_column(submission) == "built"
    assert _cache_column(submission) == "hit"
    assert compiles == ["k.cu"] * 3


def test_a_relative_include_folder_is_read_against_the_submissions_folder(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """torch makes each extra_include_paths entry os.path.abspath, against the working folder of
    `python submission.py`: the submission's own on the leaderboard. nvcc, run in the cache's staging
    folder, did not find "inc/" there. A real compile, without load_inline's torch prelude to keep it short."""
    folder = tmp_path / "nvfp4_gemm"
    (folder / "inc").mkdir(parents=True)
    (folder / "inc" / "tile.cuh").write_text("#define TILE 128\n")
    submission = folder / "submission.py"
    submission.write_text(INLINE.replace("INCLUDE", repr(" inc ")).replace("#include <shape.cuh>\n", "#define SHAPE 2\n"))
    (extension,) = find_sources(submission).extensions
    assert extension.include_paths == [str(folder / "inc")]
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(submission_build, "PRELUDE", "")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    assert "built" in next(line for line in result.output.splitlines() if "plain.cu:" in line)


def test_headers_through_an_include_flag_are_inputs_and_the_toolkits_are_not(tmp_path: Path) -> None:
    """-I in extra_cuda_cflags is an include folder too; the toolkit's and CUTLASS's headers are left to
    the toolchain's versions in the key (CUTLASS's hundreds would cost seconds on every lookup)."""
    from nvfp4ctl.build import toolchain
    from nvfp4ctl.build.submission_headers import flag_include_folders, header_digests

    (tmp_path / "tile.cuh").write_text("#define TILE 128\n")
    folders = flag_include_folders(["-O3", "-I", str(tmp_path), "-Irelative", f"--include-path={tmp_path}"])
    assert folders == [tmp_path, tmp_path]
    code = '#include "tile.cuh"\n#include <cuda_runtime.h>\n#include "cute/tensor.hpp"\n'
    toolkit = [toolchain.cuda_home() / "include", *(toolchain.cutlass_include_dirs() if toolchain.cutlass_root() else [])]
    (path, _), = header_digests(code, None, [*folders, *toolkit])
    assert path == str(tmp_path / "tile.cuh")


def test_system_include_folders_are_searched_after_the_include_folders(tmp_path: Path) -> None:
    """-isystem in extra_cuda_cflags adds a folder too, searched after every -I one wherever it stands on
    the line: a header there was not an input, so editing it served the stale build. Each spelling nvcc
    13.0 accepts names its folder: -isystem=DIR was read as a relative folder "=DIR" and dropped."""
    from nvfp4ctl.build.submission_headers import flag_include_folders

    system, included, spelled, listed = tmp_path / "system", tmp_path / "included", tmp_path / "spelled", tmp_path / "listed"
    flags = ["-isystem", str(system), f"-isystem={spelled}", f"-I={included}", f"--system-include={spelled}",
             "--system-include", str(system), f"-I{included},{listed}", "--include-path", str(listed),
             f"--include-path={included}", "-I", str(included), "-isystem", "relative", "-I", f"={included}"]
    assert flag_include_folders(flags) == [included, included, listed, listed, included, included,
                                           system, spelled, spelled, system]


def test_a_spelling_nvcc_refuses_names_no_folder(tmp_path: Path) -> None:
    """nvcc 13.0 refuses -isystemDIR and --system-includeDIR ("Unknown option"): the build fails there."""
    from nvfp4ctl.build.submission_headers import flag_include_folders

    assert flag_include_folders([f"-isystem{tmp_path}", f"--system-include{tmp_path}", f"--include-path{tmp_path}"]) == []


def _real_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, submission: Path) -> tuple[int, str]:
    """`build submission.py` with nvcc, without load_inline's torch prelude to keep it short: the exit
    code, and the unit's cache column when it built, else the output on one line."""
    monkeypatch.setenv("NVFP4CTL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(submission_build, "PRELUDE", "")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["build", str(submission)])
    row = next((line for line in result.output.splitlines() if ".cu: k" in line), None)
    return result.exit_code, row.rstrip(" │").split("│")[-1].strip() if row else " ".join(result.output.split())


@pytest.mark.parametrize("spelling", ["-isystem=", "--system-include="])
def test_an_edited_header_from_a_system_include_folder_rebuilds_the_unit(tmp_path: Path, spelling: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A real compile, so the spelling is one nvcc accepts (-isystemDIR, which it refuses, passed a
    test with a stand-in compiler); a header the -I folder shadows is not an input."""
    shadowed, system = tmp_path / "shadowed", tmp_path / "system"
    shadowed.mkdir()
    system.mkdir()
    (shadowed / "tile.cuh").write_text("#define TILE 128\n")
    (system / "tile.cuh").write_text("#define TILE 64\n")  # found in the -I folder first: not an input
    (system / "shape.cuh").write_text("#define SHAPE 2\n")
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE.replace("INCLUDE", repr(str(shadowed))).replace(
        '"-gencode=arch=compute_90a,code=sm_90a"', f'"{spelling}{system}", "-gencode=arch=compute_90a,code=sm_90a"'))
    assert _real_build(tmp_path, monkeypatch, submission) == (0, "built")
    (system / "shape.cuh").write_text("#define SHAPE 4\n")
    assert _real_build(tmp_path, monkeypatch, submission) == (0, "built")
    (system / "tile.cuh").write_text("#define TILE 32\n")
    assert _real_build(tmp_path, monkeypatch, submission) == (0, "hit")


def test_a_submission_header_named_like_one_of_torchs_is_the_submissions(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """torch gives extra_include_paths as -I and its own folders as -isystem, searched after every -I:
    the submission's fp16.h is the one its CUDA gets on the leaderboard, not torch/include/fp16.h."""
    include = tmp_path / "include"
    include.mkdir()
    (include / "fp16.h").write_text("#define TILE 128\n")
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE.replace("INCLUDE", repr(str(include))).replace('"tile.cuh"', '"fp16.h"')
                          .replace("#include <shape.cuh>\n", "#define SHAPE 2\n"))
    assert _real_build(tmp_path, monkeypatch, submission) == (0, "built")


def test_a_header_beside_a_load_source_is_found_only_as_a_quoted_include(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """torch gives a load() file's folder no -I: `#include <tile.cuh>` of a tile.cuh beside k.cu fails on
    the leaderboard, so it fails here; `#include "tile.cuh"` finds it beside k.cu, as nvcc always does."""
    (tmp_path / "include").mkdir()
    (tmp_path / "tile.cuh").write_text("#define TILE 128\n")
    (tmp_path / "k.cu").write_text("// nvfp4ctl: no-tensor-op\n#include <tile.cuh>\n"
                                   "__global__ void k(float* p) { p[0] = TILE; }\n")
    submission = tmp_path / "submission.py"
    submission.write_text(LOAD.replace("INCLUDE", repr(str(tmp_path / "include"))))
    exit_code, output = _real_build(tmp_path, monkeypatch, submission)
    assert exit_code == 1 and "tile.cuh: No such file or directory" in output, output
    (tmp_path / "k.cu").write_text((tmp_path / "k.cu").read_text().replace("<tile.cuh>", '"tile.cuh"'))
    assert _real_build(tmp_path, monkeypatch, submission) == (0, "built")


def _update_in_place(header: Path, text: str) -> None:
    """A pull rewrites a file: new content, and a modification time later than the entry's build."""
    header.write_text(text)
    stat = header.stat()
    os.utime(header, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


def test_a_cutlass_checkout_in_the_include_folders_updated_in_place_rebuilds_the_unit(
        tmp_path: Path, compiles: list[str]) -> None:
    """A CUTLASS checkout named in extra_include_paths (/opt/cutlass/include) counts by its headers' sizes
    and times: keyed by its path alone, a pull served the old entry's registers and spills. A header
    the CUDA never names directly (gemm/dispatch.h, reached from CuTe's) counts too; version.h stays the
    same between releases."""
    checkout = tmp_path / "cutlass" / "include"
    (checkout / "cute").mkdir(parents=True)
    (checkout / "cutlass" / "gemm").mkdir(parents=True)
    (checkout / "cute" / "tensor.hpp").write_text("#define CUTE_TILE 128\n")
    (checkout / "cutlass" / "version.h").write_text("#define CUTLASS_MAJOR 4\n")
    (checkout / "cutlass" / "gemm" / "dispatch.h").write_text("#define DISPATCH 1\n")
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE.replace("INCLUDE", repr(str(checkout)))
                          .replace('#include "tile.cuh"\n#include <shape.cuh>\n', "#include <cute/tensor.hpp>\n")
                          .replace("TILE * SHAPE", "CUTE_TILE"))
    assert _cache_column(submission) == "built"
    assert _cache_column(submission) == "hit"
    _update_in_place(checkout / "cute" / "tensor.hpp", "#define CUTE_TILE 256\n")
    assert _cache_column(submission) == "built"
    _update_in_place(checkout / "cutlass" / "gemm" / "dispatch.h", "#define DISPATCH 2\n")
    assert _cache_column(submission) == "built"
    assert _cache_column(submission) == "hit"
    assert compiles == ["plain.cu"] * 3


def _cutlass_path_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A one-header CUTLASS checkout named by $CUTLASS_PATH; its cute/tensor.hpp."""
    header = tmp_path / "cutlass" / "include" / "cute" / "tensor.hpp"
    header.parent.mkdir(parents=True)
    header.write_text("#define CUTE_TILE 128\n")
    monkeypatch.setenv("CUTLASS_PATH", str(tmp_path / "cutlass"))
    return header


def test_a_cutlass_path_checkout_updated_in_place_rebuilds_the_unit(tmp_path: Path, compiles: list[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """$CUTLASS_PATH, which build adds when the CUDA includes CUTLASS, counts by its headers the same way."""
    header = _cutlass_path_checkout(tmp_path, monkeypatch)
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE.replace("extra_include_paths=[INCLUDE], ", "")
                          .replace('#include "tile.cuh"\n#include <shape.cuh>\n', "#include <cute/tensor.hpp>\n")
                          .replace("TILE * SHAPE", "CUTE_TILE"))
    assert _cache_column(submission) == "built"
    assert _cache_column(submission) == "hit"
    _update_in_place(header, "#define CUTE_TILE 256\n")
    assert _cache_column(submission) == "built"
    assert compiles == ["plain.cu"] * 2


def test_a_unit_without_cutlass_ignores_the_cutlass_checkout(tmp_path: Path, compiles: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """build adds CUTLASS's folders only to units that include it: a pull in $CUTLASS_PATH must not rebuild the
    others (nor be walked for their key)."""
    header = _cutlass_path_checkout(tmp_path, monkeypatch)
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE.replace("extra_include_paths=[INCLUDE], ", "")
                          .replace('#include "tile.cuh"\n#include <shape.cuh>\n', "")
                          .replace("TILE * SHAPE", "128"))
    assert _cache_column(submission) == "built"
    _update_in_place(header, "#define CUTE_TILE 256\n")
    assert _cache_column(submission) == "hit"


CUTE_INLINE = '''from torch.utils.cpp_extension import load_inline
CUDA = r"""// nvfp4ctl: no-tensor-op
#include <cute/config.hpp>
__global__ void k(float* p) { p[0] = 1.0f; }
"""
m = load_inline(name="plain", cpp_sources="", cuda_sources=CUDA, extra_include_paths=INCLUDES,
                extra_cuda_cflags=FLAGS + ["-gencode=arch=compute_90a,code=sm_90a"])
'''


def _cute_submission(tmp_path: Path, includes: list[str], cuda_flags: list[str]) -> Path:
    submission = tmp_path / "submission.py"
    submission.write_text(CUTE_INLINE.replace("INCLUDES", repr(includes)).replace("FLAGS", repr(cuda_flags)))
    return submission


@pytest.mark.parametrize("naming", ["-isystem", "-isystem=", "-I", "extra_include_paths"])
def test_a_cutlass_checkout_of_the_submissions_is_the_one_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  naming: str) -> None:
    """The machine's CUTLASS was added as -I, which nvcc searches before every -isystem folder: a
    checkout named by -isystem was keyed but the wheel's headers compiled. torch adds no CUTLASS on
    the leaderboard, so the checkout's own headers (here one that refuses to compile) are the ones."""
    from nvfp4ctl.build import toolchain

    if not (os.environ.get("CUTLASS_PATH") or toolchain.cutlass_root()):
        pytest.skip("no CUTLASS on this machine to be compiled in the checkout's place")
    checkout = tmp_path / "checkout" / "include"
    (checkout / "cute").mkdir(parents=True)
    (checkout / "cute" / "config.hpp").write_text('#error "the submission\'s own CuTe"\n')
    flags = {"-isystem": ["-isystem", str(checkout)], "-isystem=": [f"-isystem={checkout}"], "-I": [f"-I{checkout}"],
             "extra_include_paths": []}[naming]
    includes = [str(checkout)] if naming == "extra_include_paths" else []
    exit_code, output = _real_build(tmp_path, monkeypatch, _cute_submission(tmp_path, includes, flags))
    assert exit_code == 1 and "the submission's own CuTe" in output, output


def test_the_machines_cutlass_is_searched_after_every_folder_of_the_submissions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A submission whose folders bring no CUTLASS relies on the machine's: added last, as -isystem."""
    from nvfp4ctl.build import toolchain

    if not (os.environ.get("CUTLASS_PATH") or toolchain.cutlass_root()):
        pytest.skip("no CUTLASS on this machine")
    own = tmp_path / "own"
    own.mkdir()
    submission = _cute_submission(tmp_path, [], ["-isystem", str(own)])
    (extension,) = find_sources(submission).extensions
    code = extension.cuda_text
    command = submission_build._command(extension, tmp_path / "plain.cu", "sm_90a", code, tmp_path)
    machines = [str(path) for path in submission_build.cutlass_includes()]
    assert not [flag for flag in command if flag.startswith("-I") and flag[2:] in machines]
    assert command[-2 * len(machines):] == [word for path in machines for word in ("-isystem", path)]
    assert command.index(str(own)) < command.index(machines[0])
    assert _real_build(tmp_path, monkeypatch, submission) == (0, "built")


def test_an_include_folder_in_a_flag_of_several_words_is_an_input(tmp_path: Path, compiles: list[str]) -> None:
    """"-isystem /x" as one flag is two words on the shell line torch's build runs: /x is searched, so an
    edit to a header there rebuilds the unit (it named no folder, and the stale build was served)."""
    system = tmp_path / "system"
    system.mkdir()
    (system / "tile.cuh").write_text("#define TILE 128\n")
    (system / "shape.cuh").write_text("#define SHAPE 2\n")
    submission = tmp_path / "submission.py"
    submission.write_text(INLINE.replace("extra_include_paths=[INCLUDE], ", "").replace(
        '"-gencode=arch=compute_90a,code=sm_90a"', f'"-isystem {system}", "-gencode=arch=compute_90a,code=sm_90a"'))
    assert _cache_column(submission) == "built"
    assert _cache_column(submission) == "hit"
    (system / "shape.cuh").write_text("#define SHAPE 4\n")
    assert _cache_column(submission) == "built"


def test_a_cutlass_checkout_in_a_flag_of_several_words_is_the_one_compiled(tmp_path: Path) -> None:
    """"-isystem /checkout" as one flag brings the submission's own CUTLASS: the machine's is not added."""
    checkout = tmp_path / "checkout" / "include"
    (checkout / "cute").mkdir(parents=True)
    (checkout / "cute" / "config.hpp").write_text("#pragma once\n")
    submission = _cute_submission(tmp_path, [], [f"-isystem {checkout}"])
    (extension,) = find_sources(submission).extensions
    command = submission_build._command(extension, tmp_path / "plain.cu", "sm_90a", extension.cuda_text, tmp_path)
    assert command[command.index(str(checkout)) - 1] == "-isystem"
    machines = {str(path) for path in submission_build.cutlass_includes()}
    assert not machines & set(command), command


@pytest.mark.parametrize(("brings_its_own", "rebuilt"), [(True, "hit"), (False, "built")])
def test_a_new_cutlass_wheel_rebuilds_only_the_units_that_compile_it(tmp_path: Path, compiles: list[str],
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     brings_its_own: bool, rebuilt: str) -> None:
    """The wheel's version was in the key of every unit that includes CUTLASS, also where the submission
    brings its own checkout and the wheel's folders are not added: a wheel upgrade rebuilt it for nothing."""
    from nvfp4ctl.build import toolchain

    monkeypatch.delenv("CUTLASS_PATH", raising=False)
    monkeypatch.delenv("CUTLASS_HOME", raising=False)
    monkeypatch.setattr(toolchain, "CUTLASS_SYSTEM_ROOT", str(tmp_path / "no-usr-local-cutlass"))
    (tmp_path / "wheel" / "source" / "include" / "cute").mkdir(parents=True)
    monkeypatch.setattr(toolchain, "cutlass_root", lambda: tmp_path / "wheel")
    monkeypatch.setattr(toolchain, "cutlass_version", lambda: "4.2.0.0")
    checkout = tmp_path / "checkout" / "include"
    (checkout / "cute").mkdir(parents=True)
    (checkout / "cute" / "config.hpp").write_text("#pragma once\n")
    submission = _cute_submission(tmp_path, [str(checkout)] if brings_its_own else [], [])
    assert _cache_column(submission) == "built"
    monkeypatch.setattr(toolchain, "cutlass_version", lambda: "4.3.0.0")
    assert _cache_column(submission) == rebuilt


def test_a_submission_naming_the_wheels_own_folder_keeps_its_version_in_the_key(tmp_path: Path, compiles: list[str],
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An include folder of the wheel's, named by the submission, brings CUTLASS whose headers the key does
    not read: the wheel's version stands for them."""
    from nvfp4ctl.build import submission_headers, toolchain

    wheel = tmp_path / "wheel"
    (wheel / "source" / "include" / "cute").mkdir(parents=True)
    monkeypatch.delenv("CUTLASS_PATH", raising=False)
    monkeypatch.delenv("CUTLASS_HOME", raising=False)
    monkeypatch.setattr(toolchain, "CUTLASS_SYSTEM_ROOT", str(tmp_path / "no-usr-local-cutlass"))
    monkeypatch.setattr(toolchain, "cutlass_root", lambda: wheel)
    monkeypatch.setattr(toolchain, "cutlass_version", lambda: "4.2.0.0")
    monkeypatch.setattr(submission_headers, "_toolchain_roots", lambda: (wheel.resolve(),))
    submission = _cute_submission(tmp_path, [str(wheel / "source" / "include")], [])
    assert _cache_column(submission) == "built"
    monkeypatch.setattr(toolchain, "cutlass_version", lambda: "4.3.0.0")
    assert _cache_column(submission) == "built"


# The digest of _command's output for COMMAND_SHAPES, per COMMAND_LAYOUT: an entry holds a build made with
# the command of its layout, so a change to the command for the same input must come with a new layout
COMMAND_DIGESTS = {6: "42b1752ed19a9e03"}
COMMAND_SHAPES = [  # (flags, include_paths, arch, code, a load() file or None)
    (["-O3"], [], "sm_100a", "", None),
    (["-Xptxas -v", "-DTAG='a b'", " -std=c++17"], ["/src/include"], "sm_100a", "", None),
    (["-I/src/archive", "--std=c++17"], [], "sm_75", "", None),
    (["-gencode", "arch=compute_90a,code=sm_90a", "-isystem /opt/own"], [], "sm_90a", "#include <cute/tensor.hpp>", None),
    (["-isystem=/opt/cutlass/include"], ["/src/include"], "sm_100a", "#include <cutlass/cutlass.h>", "/src/k.cu"),
]


def _stand_in_torch_flags(extension: object, arch: str) -> submission_build.torch_nvcc.TorchNvccFlags:
    """torch's flags as a fixed release writes them, so the digest follows _command alone."""
    own_standard = any(flag.strip().startswith("-std=") for flag in extension.cuda_flags)  # type: ignore[attr-defined]
    return submission_build.torch_nvcc.TorchNvccFlags(
        ("-DTORCH_EXTENSION_NAME=shape", "-D__CUDA_NO_HALF_OPERATORS__", "--compiler-options", "-fPIC"),
        ("/torch/include", "/python/include"), () if own_standard else ("-std=c++20",))


def test_the_command_layout_is_raised_when_the_command_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The nvcc command changed (flags split into the shell's words, no -gencode where a flag holds
    "arch") while COMMAND_LAYOUT stayed: an entry built with the old command was served as a hit where a
    fresh build now fails."""
    from nvfp4ctl.build.submission_sources import Extension

    monkeypatch.setattr(submission_build, "_torch_flags", _stand_in_torch_flags)
    monkeypatch.setattr(submission_build.toolchain, "nvcc_path", lambda: Path("/cuda/bin/nvcc"))
    monkeypatch.setattr(submission_build, "cutlass_includes", lambda: [Path("/cutlass/include"), Path("/cutlass/util")])
    commands = []
    for flags, include_paths, arch, code, file in COMMAND_SHAPES:
        extension = Extension("load" if file else "load_inline", "shape", 1, cuda_flags=flags, include_paths=include_paths,
                              files=[Path(file)] if file else [])
        unit = Path(file) if file else Path("/build/shape.cu")
        commands.append(submission_build._command(extension, unit, arch, code, Path("/build")))
    digest = hashlib.sha256(json.dumps(commands).encode()).hexdigest()[:16]
    layout = submission_build.COMMAND_LAYOUT
    assert COMMAND_DIGESTS.get(layout) == digest, (
        f"_command gives another command for the same input (digest {digest}) under COMMAND_LAYOUT = {layout}:"
        " an entry built with the old command would be reused; raise submission_build.COMMAND_LAYOUT, say why in"
        f" its comment and record {{{layout + 1}: \"{digest}\"}} in COMMAND_DIGESTS"
        if layout in COMMAND_DIGESTS else
        f"COMMAND_LAYOUT {layout} is not above the last one recorded ({max(COMMAND_DIGESTS)}): entries of that"
        " layout hold builds made with another command; raise it"
        if layout <= max(COMMAND_DIGESTS) else
        f"record COMMAND_LAYOUT {layout}'s command here: COMMAND_DIGESTS[{layout}] = \"{digest}\"")


@pytest.mark.parametrize(("code", "added"), [("#include<cute/tensor.hpp>\n", True),
                                             ("#  include <cutlass/cutlass.h>\n", True),
                                             ("// #include <cute/tensor.hpp>\n", False),
                                             ("#if 0\n#include <cute/tensor.hpp>\n#endif\n", False)])
def test_the_machines_cutlass_is_added_where_the_preprocessor_includes_it(monkeypatch: pytest.MonkeyPatch, code: str,
                                                                        added: bool) -> None:
    """CUTLASS counted included as the include scans count it (preprocessor.includes_cutlass), where a
    match of `#include <cute/` in the text missed `#include<cute/...>`, which nvcc compiles (it failed
    without the machine's CUTLASS), and took one in a comment or an #if 0 group."""
    from nvfp4ctl.build.submission_sources import Extension

    monkeypatch.setattr(submission_build, "_torch_flags", _stand_in_torch_flags)
    monkeypatch.setattr(submission_build.toolchain, "nvcc_path", lambda: Path("/cuda/bin/nvcc"))
    monkeypatch.setattr(submission_build, "cutlass_includes", lambda: [Path("/cutlass/include")])
    extension = Extension("load_inline", "shape", 1, cuda_flags=["-gencode=arch=compute_90a,code=sm_90a"])
    command = submission_build._command(extension, Path("/build/shape.cu"), "sm_90a", code, Path("/build"))
    assert ("/cutlass/include" in command) == added, command


def test_the_machines_cutlass_is_added_where_a_header_of_the_submissions_includes_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A unit that reaches CuTe through a header of its own (`#include "gemm.cuh"`, found in
    extra_include_paths or beside a load() file) compiles with the machine's CUTLASS, as one that includes
    it itself does: only the unit's own text was looked at, and nvcc failed on <cute/tensor.hpp>."""
    from nvfp4ctl.build.submission_sources import Extension

    monkeypatch.setattr(submission_build, "_torch_flags", _stand_in_torch_flags)
    monkeypatch.setattr(submission_build.toolchain, "nvcc_path", lambda: Path("/cuda/bin/nvcc"))
    monkeypatch.setattr(submission_build, "cutlass_includes", lambda: [Path("/cutlass/include")])
    flags = ["-gencode=arch=compute_90a,code=sm_90a"]
    include, beside = tmp_path / "include", tmp_path / "kernels"
    include.mkdir(), beside.mkdir()
    for folder in (include, beside):
        (folder / "gemm.cuh").write_text("#pragma once\n#include <cute/tensor.hpp>\n")
        (folder / "plain.cuh").write_text("#pragma once\n// #include <cute/tensor.hpp>\n")
    inline = Extension("load_inline", "shape", 1, cuda_flags=flags, include_paths=[str(include)])
    filed = Extension("load", "shape", 1, cuda_flags=flags, files=[beside / "k.cu"])
    for header, added in (("gemm.cuh", True), ("plain.cuh", False)):
        code = f'#include "{header}"\n__global__ void k() {{}}\n'
        command = submission_build._command(inline, Path("/build/shape.cu"), "sm_90a", code, Path("/build"))
        assert ("/cutlass/include" in command) == added, command
        command = submission_build._command(filed, beside / "k.cu", "sm_90a", code, Path("/build"))
        assert ("/cutlass/include" in command) == added, command
        assert submission_build._keys_machine_cutlass(code, inline, None) == added


SHARED_HEADERS = '''from torch.utils.cpp_extension import load, load_inline
CUDA = r"""// nvfp4ctl: no-tensor-op
#include "tile.cuh"
__global__ void k(float* p) { p[0] = TILE; }
"""
FLAGS = ["-gencode=arch=compute_90a,code=sm_90a"]
first = load_inline(name="first", cpp_sources="", cuda_sources=CUDA, extra_include_paths=[INCLUDE], extra_cuda_cflags=FLAGS)
second = load_inline(name="second", cpp_sources="", cuda_sources=CUDA, extra_include_paths=[INCLUDE],
                     extra_cuda_cflags=FLAGS)
filed = load(name="filed", sources=["k.cu"], extra_include_paths=[INCLUDE], extra_cuda_cflags=FLAGS)
'''


def test_one_build_reads_each_header_and_source_once(tmp_path: Path, compiles: list[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Each extension's progress line read and hashed every header it reaches twice over (is CUTLASS in
    it?), then its key read them again: extensions sharing headers read each one six times and more."""
    include = tmp_path / "include"
    include.mkdir()
    (include / "tile.cuh").write_text('#pragma once\n#include "tile_size.cuh"\n')
    (include / "tile_size.cuh").write_text("#define TILE 128\n")
    (tmp_path / "k.cu").write_text('// nvfp4ctl: no-tensor-op\n#include "tile.cuh"\n__global__ void k(float* p) {}\n')
    submission = tmp_path / "submission.py"
    submission.write_text(SHARED_HEADERS.replace("INCLUDE", repr(str(include))))
    watched = {include / "tile.cuh", include / "tile_size.cuh", tmp_path / "k.cu"}
    reads: list[str] = []
    read_bytes, read_text = Path.read_bytes, Path.read_text

    def counted_bytes(self: Path) -> bytes:
        reads.extend([self.name] if self in watched else [])
        return read_bytes(self)

    def counted_text(self: Path, *args: object, **kwargs: object) -> str:
        reads.extend([self.name] if self in watched else [])
        return read_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_bytes", counted_bytes)
    monkeypatch.setattr(Path, "read_text", counted_text)
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    assert sorted(compiles) == ["first.cu", "k.cu", "second.cu"]
    assert sorted(reads) == ["k.cu", "tile.cuh", "tile_size.cuh"], reads
    reads.clear()
    assert runner.invoke(app, ["build", str(submission)]).exit_code == 0  # a new command reads them anew
    assert sorted(reads) == ["k.cu", "tile.cuh", "tile_size.cuh"], reads
