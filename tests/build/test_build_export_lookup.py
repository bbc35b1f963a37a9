"""`build` of an export of a CUTLASS kernel: its `extra_include_paths=_include_dirs()` finds CUTLASS's headers
at import, which build cannot run; build adds this machine's CUTLASS to code that brings none, so what it
compiles is what the leaderboard compiles, and a note says which headers, where it warned "built without them".
A user's own non-static include paths keep the warning, which names the CUTLASS built with in their place, and a
hand-written call whose folders bring no CUTLASS gets a note that this machine's built it. CUTLASS is a stand-in checkout at $CUTLASS_PATH and
nvcc a stand-in that compiles nothing (the `compiles` fixture), so no GPU, wheel or minutes of compile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build import submission_build
from nvfp4ctl.cli import app
from nvfp4ctl.export import export_submission
from nvfp4ctl.project import kernels_dir

CUTLASS_KERNEL = kernels_dir() / "sm100" / "nvfp4_gemm_sm100.cu"
# one line of cuobjdump's listing with the op the sm_100a build must hold, so the tensor-op column passes
SASS = "        /*0a70*/                   UTCOMMA.4X gdesc[UR4], gdesc[UR6], tmem[UR8], tmem[UR10], idesc[UR12], UPT ;\n"
NOT_STATIC = "extra_include_paths is not a static string expression"
runner = CliRunner()


@pytest.fixture()
def cutlass_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A CUTLASS checkout at $CUTLASS_PATH, as far as build looks at one: include/cute and include/cutlass."""
    root = tmp_path / "cutlass"
    for tree in ("cute", "cutlass"):
        (root / "include" / tree).mkdir(parents=True)
    monkeypatch.setenv("CUTLASS_PATH", str(root))
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: SASS)
    return root


def _export(folder: Path) -> Path:
    output = folder / "submission.py"
    export_submission(CUTLASS_KERNEL, output)
    return output


def _build(submission: Path) -> str:
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _line_of(text: str, written: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if written in line)


def _extension(text: str) -> str:
    """The extension's name as export writes it: a literal, nvfp4_gemm_<hash of what it compiles>."""
    return re.search(r'^        name="(\w+)",$', text, re.MULTILINE).group(1)  # type: ignore[union-attr]


def test_an_exports_cutlass_lookup_is_a_note_naming_the_headers_built_with(
        tmp_path: Path, compiles: list[str], cutlass_checkout: Path) -> None:
    """It warned 'extra_include_paths is not a static string expression ...; built without them', read as
    "what build compiled is not what the server compiles", though build added its CUTLASS as the lookup does."""
    submission = _export(tmp_path)
    text = submission.read_text()
    said = _build(submission)
    assert len(compiles) == 1 and NOT_STATIC not in said and "warning:" not in said
    assert (f"note: {_extension(text)}: line {_line_of(text, 'extra_include_paths=_include_dirs(),')}:"
            " extra_include_paths=_include_dirs() is nvfp4ctl export's lookup of CUTLASS's headers at import"
            " ($CUTLASS_PATH, $CUTLASS_HOME, /usr/local/cutlass, then the nvidia-cutlass wheel), which finds the"
            " leaderboard machine's; built with this machine's, as for any code that brings none: $CUTLASS_PATH's"
            f" ({cutlass_checkout / 'include'})") in said
    quiet = runner.invoke(app, ["-q", "build", str(submission)])
    assert quiet.exit_code == 0 and "_include_dirs" not in quiet.output  # a note, which -q drops


@pytest.mark.parametrize("change", ["no export header", "lookup edited"])
def test_a_users_own_lookup_keeps_the_warning(tmp_path: Path, compiles: list[str], cutlass_checkout: Path,
                                              change: str) -> None:
    """The same call in a file export did not write, or an export whose lookup was edited, is include paths
    build cannot know: it still warns, naming this machine's CUTLASS, which it built with in their place."""
    submission = _export(tmp_path)
    text = submission.read_text()
    if change == "no export header":
        text = text.replace("exported by `nvfp4ctl export`", "written by hand", 1)
    else:
        text = text.replace('roots.append("/usr/local/cutlass")', 'roots.append("/opt/my-cutlass")', 1)
    submission.write_text(text)
    said = _build(submission)
    assert (f"warning: {_extension(text)}: line {_line_of(text, 'extra_include_paths=_include_dirs(),')}:"
            f" {NOT_STATIC} (or an f-string whose placeholder build cannot read); built with this machine's CUTLASS"
            f" in their place, as for any code that brings none: $CUTLASS_PATH's ({cutlass_checkout / 'include'})") in said
    assert "nvfp4ctl export's lookup" not in said and "built without them" not in said


def test_an_export_run_as_a_script_keeps_its_lookup(tmp_path: Path, compiles: list[str], cutlass_checkout: Path) -> None:
    """A `#!` line put above the export header (to run the file itself) left the header on line 2, where it
    was looked for on line 1 alone: build warned that it built without the include paths."""
    submission = _export(tmp_path)
    text = "#!/usr/bin/env python3\n" + submission.read_text()
    submission.write_text(text)
    said = _build(submission)
    assert NOT_STATIC not in said and "extra_include_paths=_include_dirs() is nvfp4ctl export's lookup" in said


# a user's own lookup of the nvidia-cutlass wheel, as submissions write it: build cannot run it
OWN_LOOKUP = '''import os
import importlib.util
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
INCLUDES
// nvfp4ctl: no-tensor-op
__global__ void k(float* p) { p[0] = 1.f; }
"""


def _inc():
    spec = importlib.util.find_spec("cutlass_library")
    root = os.path.join(next(iter(spec.submodule_search_locations)), "source")
    return [os.path.join(root, "include")]


_mod = load_inline(name="my_cute_gemm", cpp_sources="", cuda_sources=[CUDA_SRC],
                   extra_include_paths=_inc(),
                   extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])
'''


def _submission_of(folder: Path, template: str, includes: str, marked: str) -> tuple[Path, int]:
    """`template` with its INCLUDES filled in, written as folder/submission.py, and the line of `marked` in it."""
    submission = folder / "submission.py"
    text = template.replace("INCLUDES", includes)
    submission.write_text(text)
    return submission, _line_of(text, marked)


def _own_lookup(folder: Path, includes: str) -> tuple[Path, int]:
    return _submission_of(folder, OWN_LOOKUP, includes, "extra_include_paths=_inc(),")


def test_a_users_own_lookup_names_the_cutlass_built_with_in_their_place(
        tmp_path: Path, compiles: list[str], cutlass_checkout: Path) -> None:
    """A submission's `extra_include_paths=_inc()` finding the wheel, with code that includes <cute/tensor.hpp>:
    build warned "...; built without them", though it compiled with this machine's CUTLASS in their place."""
    submission, line = _own_lookup(tmp_path, "#include <cute/tensor.hpp>")
    said = _build(submission)
    assert len(compiles) == 1
    assert (f"warning: my_cute_gemm: line {line}: {NOT_STATIC} (or an f-string whose placeholder build cannot read);"
            " built with this machine's CUTLASS in their place, as for any code that brings none: $CUTLASS_PATH's"
            f" ({cutlass_checkout / 'include'})") in said, said
    assert "built without them" not in said, said


def test_a_users_own_lookup_for_code_without_cutlass_is_built_without_them(
        tmp_path: Path, compiles: list[str], cutlass_checkout: Path) -> None:
    """No CUTLASS header in the code: build adds none, and the folders are left out as it says."""
    submission, line = _own_lookup(tmp_path, "#include <cuda_fp16.h>")
    said = _build(submission)
    assert (f"warning: my_cute_gemm: line {line}: {NOT_STATIC} (or an f-string whose placeholder build cannot read);"
            " built without them") in said, said
    assert "this machine's" not in said, said


SM90_KERNEL = kernels_dir() / "sm90" / "nvfp4_gemm_sm90.cu"  # no CUTLASS
SM90_SASS = "        /*0060*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ, !UPT, gsb0 ;\n"


@pytest.fixture()
def hgmma(monkeypatch: pytest.MonkeyPatch) -> None:
    """The op the sm_90a build must hold, so the tensor-op column passes."""
    monkeypatch.setattr(submission_build.resources, "dump_sass", lambda binary: SM90_SASS)


def _older_export(folder: Path, lookup_body: str = "return []") -> Path:
    """An export of a kernel without CUTLASS as nvfp4ctl wrote it before it left extra_include_paths out: a
    lookup returning a literal empty list, and the call passing it on."""
    output = folder / "submission.py"
    export_submission(SM90_KERNEL, output)
    text = output.read_text()
    assert "_include_dirs" not in text
    text = text.replace("def _compile():", f"def _include_dirs():\n    {lookup_body}\n\n\ndef _compile():", 1)
    text = text.replace("        with_cuda=True,", "        extra_include_paths=_include_dirs(),\n        with_cuda=True,", 1)
    output.write_text(text)
    return output


def test_an_older_exports_empty_lookup_is_no_folders_not_a_warning(tmp_path: Path, compiles: list[str],
                                                                   hgmma: None) -> None:
    """`def _include_dirs(): return []` is as static as `extra_include_paths=[]`: it warned 'not a static string
    expression ...; built without them', though there was nothing to build without."""
    said = _build(_older_export(tmp_path))
    assert len(compiles) == 1 and NOT_STATIC not in said and "built without them" not in said
    assert "_include_dirs" not in said


@pytest.mark.parametrize("change", ["no export header", "a folder returned"])
def test_a_lookup_that_is_not_an_older_exports_empty_one_keeps_the_warning(tmp_path: Path, compiles: list[str],
                                                                          hgmma: None, change: str) -> None:
    submission = _older_export(tmp_path, 'return ["/opt/inc"]' if change == "a folder returned" else "return []")
    if change == "no export header":
        submission.write_text(submission.read_text().replace("exported by `nvfp4ctl export`", "written by hand", 1))
    said = _build(submission)
    assert NOT_STATIC in said


# a hand-written load_inline whose CUDA includes CUTLASS and CuTe headers: INCLUDES are its include folders
HAND_WRITTEN = '''from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
// nvfp4ctl: no-tensor-op
__global__ void k(float* p) { p[0] = 1.f; }
"""

_mod = load_inline(name="grp_cutlass", cpp_sources="", cuda_sources=[CUDA_SRC],INCLUDES
                   extra_cuda_cflags=["-gencode=arch=compute_100a,code=sm_100a"])
'''


def _hand_written(folder: Path, includes: str = "") -> tuple[Path, int]:
    return _submission_of(folder, HAND_WRITTEN, includes, "load_inline(name=")


def test_cutlass_includes_without_a_folder_say_this_machines_cutlass_built_them(
        tmp_path: Path, compiles: list[str], cutlass_checkout: Path) -> None:
    """`#include "cutlass/cutlass.h"` with no extra_include_paths compiled against this machine's CUTLASS without
    a word, though torch adds none on the leaderboard, where nvcc may not find them."""
    submission, line = _hand_written(tmp_path)
    said = _build(submission)
    assert len(compiles) == 1 and "warning:" not in said, said
    assert (f"note: grp_cutlass: line {line}: its CUDA includes CUTLASS/CuTe headers and the call names no include"
            " folder (extra_include_paths, -I or -isystem): built with this machine's, as for any code that brings"
            f" none: $CUTLASS_PATH's ({cutlass_checkout / 'include'}); torch adds no CUTLASS on the leaderboard, so"
            " there they compile only where that machine's nvcc finds them by itself, which nothing here can tell:"
            " name the folder in extra_include_paths (an nvfp4ctl export looks it up at import: $CUTLASS_PATH,"
            " $CUTLASS_HOME, /usr/local/cutlass, then the nvidia-cutlass wheel)") in said, said
    quiet = runner.invoke(app, ["-q", "build", str(submission)])
    assert quiet.exit_code == 0 and "names no include folder" not in quiet.output  # a note, which -q drops


def test_cutlass_includes_with_a_folder_that_holds_none_here_say_so(
        tmp_path: Path, compiles: list[str], cutlass_checkout: Path) -> None:
    """A folder named that holds no cute/ or cutlass/ here (the leaderboard's path, say) is built past too."""
    (tmp_path / "inc").mkdir()
    submission, line = _hand_written(tmp_path, f"\n                   extra_include_paths=[{str(tmp_path / 'inc')!r}],")
    said = _build(submission)
    assert (f"note: grp_cutlass: line {line}: its CUDA includes CUTLASS/CuTe headers and no include folder of the"
            " call (extra_include_paths, -I or -isystem) holds cute/ or cutlass/ here: built with this machine's") in said, said


def test_cutlass_includes_with_their_own_folder_get_no_note(tmp_path: Path, compiles: list[str],
                                                           cutlass_checkout: Path) -> None:
    submission, _ = _hand_written(tmp_path, f"\n                   extra_include_paths=[{str(cutlass_checkout / 'include')!r}],")
    said = _build(submission)
    assert len(compiles) == 1 and "note:" not in said and "this machine's" not in said, said
