"""f-string placeholders build cannot read: a load() source or an include folder holding one is not static (it
would be a guess: f"{PREFIX}k.cu" with PREFIX from the environment is not ./k.cu), while a text compiled with it
left empty says so in a note; a placeholder's conversion and format spec are applied as Python applies them."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build.submission_build import extension_notes
from nvfp4ctl.build.submission_sources import Extension, find_sources
from nvfp4ctl.cli import app

runner = CliRunner()

HEAD = "import os\nfrom pathlib import Path\nfrom torch.utils.cpp_extension import load, load_inline\n"
KERNEL = "// nvfp4ctl: no-tensor-op\n__global__ void k(float* p) { p[0] = 1.f; }\n"


def _extension(tmp_path: Path, text: str) -> Extension:
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + text)
    (extension,) = find_sources(submission).extensions
    return extension


@pytest.mark.parametrize("sources", [
    "[f'{PREFIX}k.cu']",
    "f'{PREFIX}k.cu'",
    "[f'{HERE:>5}/k.cu']",  # a format spec of a path: not read
    "[f'{HERE!r}/k.cu']",
    "[f\"{os.environ['KDIR']}/k.cu\"]",
    "[os.path.join(f'{PREFIX}', 'k.cu')]",
])  # fmt: skip
def test_a_source_with_a_placeholder_build_cannot_read_is_not_static(tmp_path: Path, sources: str) -> None:
    extension = _extension(tmp_path, "PREFIX = os.environ.get('KDIR', '')\nHERE = os.path.dirname(__file__)\n"
                                     f"m = load(name='m', sources={sources})\n")
    assert extension.unreadable is not None and extension.files == [], extension.files


@pytest.mark.parametrize("sources", ["[f'{HERE!s}/k.cu']", "[f'{Path(__file__).parent!s}/k.cu']", "[f'{HERE}/k.cu']"])
def test_a_path_placeholder_converted_by_str_is_read(tmp_path: Path, sources: str) -> None:
    extension = _extension(tmp_path, f"HERE = os.path.dirname(__file__)\nm = load(name='m', sources={sources})\n")
    assert extension.files == [tmp_path / "k.cu"]


def test_build_refuses_a_source_from_the_environment_where_it_compiled_the_working_folders(
        tmp_path: Path, compiles: list[str]) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    submission = tmp_path / "submission.py"
    submission.write_text(HEAD + "PREFIX = os.environ.get('KDIR', '')\n"
                          "m = load(name='m', sources=[f'{PREFIX}k.cu'],"
                          " extra_cuda_cflags=['-gencode=arch=compute_100a,code=sm_100a'])\n")
    result = runner.invoke(app, ["build", str(submission)])
    assert result.exit_code == 2, result.output
    assert "not a static string expression" in result.output and not compiles


def test_an_include_folder_with_an_unread_placeholder_is_left_out_with_a_note(tmp_path: Path) -> None:
    extension = _extension(tmp_path, "m = load(name='m', sources=['k.cu'],"
                                     " extra_include_paths=[f\"{os.environ['X']}/include\", 'mine'])\n")
    assert extension.include_paths == []
    notes = extension_notes(extension)
    assert any("extra_include_paths is not a static" in note and note.endswith("built without them") for note in notes), notes


def test_an_include_folder_of_several_pieces_is_one_folder(tmp_path: Path) -> None:
    extension = _extension(tmp_path, "m = load(name='m', sources=['k.cu'], extra_include_paths=['inc/' + 'cute'])\n")
    assert extension.include_paths == [str(tmp_path / "inc" / "cute")]


@pytest.mark.parametrize("flags", [
    "f\"-arch=sm_{os.environ['CC']}\"",
    "f\"--gpu-architecture=sm_{os.environ['CC']}\"",
    "f\"-gencode=arch=compute_{os.environ['CC']},code=sm_100a\"",
    "'-gencode', f\"arch=compute_{os.environ['CC']},code=sm_100a\"",
    "'-arch', f\"sm_{os.environ['CC']}\"",  # the value of a bare -arch
    "'-arch=sm_100a', f\"-code=sm_{os.environ['CC']}\"",
])  # fmt: skip
def test_a_flag_naming_the_arch_with_an_unread_placeholder_is_not_static(tmp_path: Path, flags: str) -> None:
    """-arch=sm_ read as no arch named: torch adds none, and build compiled for nvcc's default arch."""
    extension = _extension(tmp_path, f"m = load(name='m', sources=['k.cu'], extra_cuda_cflags=[{flags}, '-O3'])\n")
    assert not extension.cuda_flags_static and extension.cuda_flags == []
    assert any("names the arch; built without them" in note for note in extension.notes), extension.notes


@pytest.mark.parametrize("flag, left_empty", [
    ("f'-DTAG={os.getpid()}'", "-DTAG="),
    # a folder whose path holds the letters "arch" names no arch: it was dropped with every other flag
    ("f\"-I{os.environ['CUTLASS']}/include/cute/arch\"", "-I/include/cute/arch"),
    ("f'-DARCH_TAG={os.getpid()}'", "-DARCH_TAG="),
])  # fmt: skip
def test_a_flag_naming_no_arch_keeps_its_placeholder_left_empty(tmp_path: Path, flag: str, left_empty: str) -> None:
    extension = _extension(tmp_path, f"m = load(name='m', sources=['k.cu'], extra_cuda_cflags=[{flag}, '-O3'])\n")
    assert extension.cuda_flags_static and extension.cuda_flags == [left_empty, "-O3"]
    assert extension.notes == ["line 4: an f-string placeholder is not a constant; left empty"]


def test_a_constants_conversion_and_format_spec_are_applied(tmp_path: Path) -> None:
    extension = _extension(tmp_path, "N = 7\nNAME = 'k'\nm = load_inline(name='m', cpp_sources='',"
                                     " cuda_sources=f'int a = {N:03d}; const char* b = {NAME!r}; int c = {N:>{N}};')\n")
    assert extension.cuda_text == "int a = 007; const char* b = 'k'; int c = ;"
    assert extension.notes == ["line 6: an f-string placeholder is not a constant; left empty"]


def test_an_incomplete_declaration_is_no_evidence_of_an_undeclared_function(tmp_path: Path) -> None:
    extension = _extension(tmp_path, "m = load_inline(name='m', cpp_sources=f\"void {os.environ['F']}();\","
                                     " cuda_sources='__global__ void k() {}', functions=['run'])\n")
    assert extension.undeclared_functions() == []
