"""`build submission.py` refuses extra_include_paths, extra_cflags and extra_ldflags given as a str, not a
list: torch reads each character as an element (-I<folder>/s, -I<folder>/o, ... for "some/dir"; the flags
-, O, 3 for "-O3"), and appends its own link flags to extra_ldflags. Build read the str as the one folder or
the flags meant, found the headers in some/dir and passed what the leaderboard's build fails on."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build.flag_problems import strs_for_lists
from nvfp4ctl.build.submission_sources import find_sources
from nvfp4ctl.cli import app

runner = CliRunner()

HEAD = ("from torch.utils.cpp_extension import load_inline\n"
        'CUDA = r"""// nvfp4ctl: no-tensor-op\n#include "tile.cuh"\n__global__ void k(int* p) { p[0] = TILE; }"""\n')


def _submission(tmp_path: Path, arguments: str, head: str = HEAD) -> Path:
    """A submission whose CUDA includes some/dir/tile.cuh, its one load_inline call on line 5 given `arguments`."""
    (tmp_path / "some" / "dir").mkdir(parents=True, exist_ok=True)
    (tmp_path / "some" / "dir" / "tile.cuh").write_text("#define TILE 128\n")
    submission = tmp_path / "submission.py"
    submission.write_text(f'{head}m = load_inline(name="tiles", cpp_sources="", cuda_sources=CUDA, {arguments})\n')
    return submission


@pytest.mark.parametrize(("arguments", "says"), [
    ('extra_include_paths="some/dir"', "extra_include_paths is a str ('some/dir'), not a list: torch reads each of its"
     " characters as a folder ('s', 'o', 'm', ...), so some/dir is never searched for headers; give a list, ['some/dir']"),
    ('extra_include_paths=["some/dir"], extra_cflags="-O3 -DNDEBUG"', "extra_cflags is a str ('-O3 -DNDEBUG'), not a"
     " list: torch reads each of its characters as a flag and the host compiler fails; give a list, ['-O3', '-DNDEBUG']"),
    ('extra_include_paths=["some/dir"], extra_ldflags="-lcuda"', "extra_ldflags is a str ('-lcuda'), not a list: torch"
     " appends its own link flags to it and fails (AttributeError: 'str' object has no attribute 'append'); give a"
     " list, ['-lcuda']"),
])
def test_a_str_torch_iterates_is_one_line_and_exit_2(tmp_path: Path, compiles: list[str], arguments: str,
                                                      says: str) -> None:
    result = runner.invoke(app, ["build", str(_submission(tmp_path, arguments)), "--arch", "sm_100a"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert f"submission.py:5: tiles's {says}" in said, said
    assert not compiles and "Traceback" not in result.output


def test_a_str_bound_to_a_name_is_refused_with_its_value(tmp_path: Path, compiles: list[str]) -> None:
    submission = _submission(tmp_path, "extra_include_paths=INCLUDE", HEAD + 'INCLUDE = "some/dir"\n')
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "extra_include_paths is a str ('some/dir')" in said, said
    assert "give a list, ['some/dir']" in said and not compiles, said


def test_a_placeholder_build_cannot_read_gives_the_expression_to_put_in_a_list(tmp_path: Path,
                                                                              compiles: list[str]) -> None:
    """An f-string is a str whatever its placeholder holds; its value, read with the placeholder left empty
    (/include), is not what to write."""
    head = HEAD + "import os\n"
    submission = _submission(tmp_path, 'extra_include_paths=f"{os.environ[\'ROOT\']}/include"', head)
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    written = "f\"{os.environ['ROOT']}/include\""
    assert (f"extra_include_paths is a str ({written}), not a list: torch reads each of its characters as a folder,"
            f" so {written} is never searched for headers; give a list, [{written}]") in said, said
    assert " /include" not in said and "'/include'" not in said and not compiles, said


@pytest.mark.parametrize("arguments", [
    'extra_include_paths=["some/dir"], extra_cflags=["-O3"], extra_ldflags=["-lcuda"]',
    'extra_include_paths=("some/dir",)',
    'extra_include_paths=["some/dir"], extra_cflags="", extra_ldflags=""',  # torch reads `value or []`: none
    'extra_include_paths=["some/dir"], extra_ldflags=None',
])
def test_lists_and_empty_values_build(tmp_path: Path, compiles: list[str], arguments: str) -> None:
    result = runner.invoke(app, ["build", str(_submission(tmp_path, arguments)), "--arch", "sm_100a"])
    assert result.exit_code == 0, result.output
    assert compiles == ["tiles.cu"]


def test_the_folder_a_one_character_str_names_is_the_one_torch_searches(tmp_path: Path) -> None:
    """"." read one character an element is ["."]: torch searches the folder it names."""
    (extension,) = find_sources(_submission(tmp_path, 'extra_include_paths="."')).extensions
    assert strs_for_lists(extension) == []


def test_a_str_of_c_flags_is_refused_only_where_torch_runs_the_host_compiler(tmp_path: Path) -> None:
    """load() of .cu files alone compiles no C++: torch never gives extra_cflags to a compiler."""
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    for sources, refused in (('["k.cu"]', []), ('["k.cu", "bind.cpp"]', ["extra_cflags"])):
        submission = tmp_path / "submission.py"
        submission.write_text("from torch.utils.cpp_extension import load\n"
                              f'm = load(name="k", sources={sources}, extra_cflags="-O3")\n')
        (extension,) = find_sources(submission).extensions
        assert [given.argument for given, _ in strs_for_lists(extension)] == refused, sources


@pytest.mark.parametrize(("arguments", "head", "says"), [
    ('extra_include_paths=["some/dir"], extra_ldflags=("-lcuda",)', HEAD, "extra_ldflags is a tuple (('-lcuda',)),"
     " not a list: torch appends its own link flags to it and fails (AttributeError: 'tuple' object has no attribute"
     " 'append'); give a list, ['-lcuda']"),
    ('extra_include_paths=["some/dir"], extra_ldflags=LINK', HEAD + 'LINK = ("-lcuda", "-lcublas")\n',
     "extra_ldflags is a tuple (('-lcuda', '-lcublas')), not a list"),
    ('extra_include_paths=Path("some/dir")', HEAD + "from pathlib import Path\n", "extra_include_paths is a"
     " pathlib.Path (Path('some/dir')), not a list: torch iterates it and fails (TypeError: 'PosixPath' object is not"
     " iterable); give a list of str, [str(Path('some/dir'))]"),
    ('extra_include_paths=[Path(__file__).parent / "some" / "dir", "x"]', HEAD + "from pathlib import Path\n",
     "extra_include_paths holds a pathlib.Path ([Path(__file__).parent / 'some' / 'dir', 'x']), not a str: torch strips"
     " each folder and fails (AttributeError: 'PosixPath' object has no attribute 'strip'); give a list of str,"
     " [str(Path(__file__).parent / 'some' / 'dir'), 'x']"),
])
def test_a_tuple_of_link_flags_or_a_path_for_folders_is_one_line_and_exit_2(tmp_path: Path, compiles: list[str],
                                                                           arguments: str, head: str, says: str) -> None:
    """torch appends its link flags to extra_ldflags (a tuple has no append) and iterates extra_include_paths,
    stripping each folder (a Path is not iterable, nor has it a strip): build compiled the device code, which needs
    neither, and passed; lint said nothing."""
    submission = _submission(tmp_path, arguments, head)
    line = len(head.splitlines()) + 1
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert f"submission.py:{line}: tiles's {says}" in said, said
    assert not compiles and "Traceback" not in result.output
    linted = runner.invoke(app, ["lint", str(submission)])
    assert "NV010" in linted.output and linted.exit_code == 1, linted.output


@pytest.mark.parametrize("arguments", [
    'extra_include_paths=["some/dir"], extra_ldflags=()',  # torch reads `value or []`: no flags
    'extra_include_paths=[str(Path("some/dir"))], extra_ldflags=["-lcuda"]',
])
def test_an_empty_tuple_and_paths_made_str_build(tmp_path: Path, compiles: list[str], arguments: str) -> None:
    submission = _submission(tmp_path, arguments, HEAD + "from pathlib import Path\n")
    result = runner.invoke(app, ["build", str(submission), "--arch", "sm_100a"])
    assert result.exit_code == 0, result.output
