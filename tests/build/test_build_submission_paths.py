"""load()'s sources written as paths the submission makes from its own location (`__file__` through os.path or
pathlib): read without running the file, as the value is certain wherever the file runs; a path from the
working folder, the file system's listing or a name the file binds to something else stays not static."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from nvfp4ctl.build.submission_sources import find_sources, load_source_files
from nvfp4ctl.cli import app

runner = CliRunner()

LOAD = "from torch.utils.cpp_extension import load\n"
KERNEL = "// nvfp4ctl: no-tensor-op\n__global__ void k(float* p) { p[0] = 1.f; }\n"


def _files(tmp_path: Path, text: str) -> list[Path] | None:
    """The files of the submission's one extension; None where its sources are not static."""
    submission = tmp_path / "submission.py"
    submission.write_text(text)
    (extension,) = find_sources(submission).extensions
    return None if extension.unreadable is not None else extension.files


@pytest.mark.parametrize(("imports", "sources"), [
    ("import os", '[os.path.join(os.path.dirname(__file__), "k.cu")]'),
    ("import os.path", '[os.path.join(os.path.dirname(os.path.abspath(__file__)), "k.cu")]'),
    ("import os.path as osp", '[osp.join(osp.dirname(osp.realpath(__file__)), "k.cu")]'),
    ("from os import path", '[path.join(path.dirname(__file__), "k.cu")]'),
    ("from os.path import join, dirname as folder_of", '[join(folder_of(__file__), "k.cu")]'),
    ("import os", '[os.path.normpath(os.path.join(os.path.dirname(__file__), "kernels", "..", "k.cu"))]'),
    ("import os", '[os.path.join(os.path.dirname(__file__), os.path.basename("kernels/k.cu"))]'),
    ("import os", 'os.path.join(os.path.dirname(__file__), "k.cu")'),  # a str alone: torch makes it a list
    ("import os", '[os.path.dirname(__file__) + "/k.cu"]'),
    ("import os", '[f"{os.path.dirname(__file__)}/k.cu"]'),
    ("from pathlib import Path", '[Path(__file__).parent / "k.cu"]'),
    ("from pathlib import Path", '[str(Path(__file__).resolve().parent / "k.cu")]'),
    ("from pathlib import Path", '[Path(__file__).parent.joinpath("k.cu")]'),
    ("from pathlib import Path", '[Path(Path(__file__).parent, "k.cu")]'),
    ("from pathlib import Path", '[Path(__file__).parent / Path(__file__).name.replace("submission.py", "k.cu")]'),
    ("import pathlib", '[str(pathlib.Path(__file__).parent / "k.cu")]'),
    ("import os\nfrom pathlib import Path", '[Path(os.path.dirname(__file__)) / "k.cu"]'),
])  # fmt: skip
def test_each_path_idiom_finds_the_file_beside_the_submission(tmp_path: Path, imports: str, sources: str) -> None:
    files = _files(tmp_path, f"{imports}\n{LOAD}m = load(name='m', sources={sources})\n")
    if ".replace(" in sources:  # a method build does not read: not static, never guessed
        assert files is None
    else:
        assert files == [tmp_path / "k.cu"], sources


@pytest.mark.parametrize("binding", [
    "HERE = os.path.dirname(os.path.abspath(__file__))\nSOURCES = [os.path.join(HERE, 'k.cu')]",
    "HERE = Path(__file__).resolve().parent\nSOURCES = [HERE / 'k.cu']",
    "HERE: Path = Path(__file__).parent\nKERNEL = str(HERE / 'k.cu')\nSOURCES = KERNEL",
    "HERE = os.path.dirname(__file__)\nHERE = os.path.join(HERE, 'kernels', '..')\nSOURCES = [f'{HERE}/k.cu']",
])  # fmt: skip
def test_names_bound_to_paths_are_read_at_module_level_and_in_custom_kernel(tmp_path: Path, binding: str) -> None:
    head = f"import os\nfrom pathlib import Path\n{LOAD}{binding}\n"
    (tmp_path / "kernels").mkdir()
    for call in ("m = load(name='m', sources=SOURCES)\n",
                 "def custom_kernel(data):\n    return load(name='m', sources=SOURCES).run(data)\n"):
        files = _files(tmp_path, head + call)
        assert files is not None and [path.resolve() for path in files] == [tmp_path / "k.cu"], call


def test_a_rebinding_after_the_call_is_not_what_the_call_gets(tmp_path: Path) -> None:
    text = (f"import os\n{LOAD}HERE = os.path.dirname(__file__)\n"
            "m = load(name='m', sources=[os.path.join(HERE, 'k.cu')])\n"
            "HERE = '/elsewhere'\n")
    assert _files(tmp_path, text) == [tmp_path / "k.cu"]


@pytest.mark.parametrize("text", [
    # a name `os`, `Path` or `join` the file binds to something else, anywhere: what it names is not known
    f"import os\n{LOAD}def make(os):\n    return load(name='m', sources=[os.path.join(os.path.dirname(__file__), 'k.cu')])\n",
    f"import os\n{LOAD}def custom_kernel(data):\n    os = data\n"
    "    return load(name='m', sources=[os.path.join(os.path.dirname(__file__), 'k.cu')])\n",
    f"import os\n{LOAD}m = load(name='m', sources=[os.path.join(os.path.dirname(__file__), 'k.cu')])\nos = None\n",
    f"import os\nimport posix as os\n{LOAD}m = load(name='m', sources=[os.path.join(os.path.dirname(__file__), 'k.cu')])\n",
    f"from pathlib import Path\n{LOAD}class Path: pass\nm = load(name='m', sources=[Path(__file__).parent / 'k.cu'])\n",
    f"from os.path import join, dirname\nfrom helpers import *\n{LOAD}m = load(name='m', sources=[join(dirname(__file__), 'k.cu')])\n",
    f"import os\n{LOAD}str = repr\nm = load(name='m', sources=[str(os.path.dirname(__file__))])\n",
    # a __file__ the file assigns; the working folder, the environment, the file system's listing
    f"import os\n{LOAD}__file__ = '/x/y.py'\nm = load(name='m', sources=[os.path.join(os.path.dirname(__file__), 'k.cu')])\n",
    f"import os\n{LOAD}m = load(name='m', sources=[os.path.abspath('k.cu')])\n",
    f"import os\n{LOAD}m = load(name='m', sources=[os.path.join(os.getcwd(), 'k.cu')])\n",
    f"import os\n{LOAD}m = load(name='m', sources=[os.path.join(os.environ['KERNELS'], 'k.cu')])\n",
    f"from pathlib import Path\n{LOAD}m = load(name='m', sources=[Path.cwd() / 'k.cu'])\n",
    f"from pathlib import Path\n{LOAD}m = load(name='m', sources=[Path('k.cu').resolve()])\n",
    f"from pathlib import Path\n{LOAD}m = load(name='m', sources=[Path(__file__).with_name('k.cu')])\n",
    f"from pathlib import Path\n{LOAD}m = load(name='m', sources=[str(p) for p in Path(__file__).parent.glob('*.cu')])\n",
    # what fails in Python or in torch: str / str, a Path + a str, a Path alone (torch iterates it)
    f"import os\n{LOAD}m = load(name='m', sources=[os.path.dirname(__file__) / 'k.cu'])\n",
    f"from pathlib import Path\n{LOAD}m = load(name='m', sources=[Path(__file__).parent + '/k.cu'])\n",
    f"from pathlib import Path\n{LOAD}m = load(name='m', sources=Path(__file__).parent / 'k.cu')\n",
])  # fmt: skip
def test_a_path_build_cannot_be_sure_of_stays_not_static(tmp_path: Path, text: str) -> None:
    assert _files(tmp_path, text) is None


def test_a_path_object_is_no_inline_source_and_no_flag(tmp_path: Path) -> None:
    """torch joins load_inline's sources and strips each flag: a pathlib.Path fails there, a str of it is read."""
    submission = tmp_path / "submission.py"
    submission.write_text("import os\nfrom pathlib import Path\nfrom torch.utils.cpp_extension import load_inline\n"
                          "m = load_inline(name='m', cpp_sources='', cuda_sources=[Path(__file__).parent / 'k.cu'],"
                          " extra_cuda_cflags=['-I' + os.path.dirname(__file__), Path(__file__).parent],"
                          " extra_include_paths=[os.path.join(os.path.dirname(__file__), 'include')])\n")
    (extension,) = find_sources(submission).extensions
    assert extension.unreadable is not None and not extension.cuda_flags_static
    assert extension.include_paths == [str(tmp_path / "include")]


def test_lint_finds_a_load_source_written_from_the_submissions_location(tmp_path: Path) -> None:
    text = f"import os\n{LOAD}m = load(name='m', sources=[os.path.join(os.path.dirname(__file__), 'k.cu')])\n"
    submission = tmp_path / "submission.py"
    import ast

    assert load_source_files(ast.parse(text), tmp_path, submission) == [(str(tmp_path / "k.cu"), tmp_path / "k.cu")]
    assert load_source_files(ast.parse(text), tmp_path) == []  # the file not known: its __file__ is not either


@pytest.mark.parametrize("sources", [
    '[os.path.join(os.path.dirname(os.path.abspath(__file__)), "k.cu")]',
    '[Path(__file__).parent / "k.cu"]',
])  # fmt: skip
def test_build_compiles_the_file_beside_a_submission_whose_load_uses_its_location(
        tmp_path: Path, compiles: list[str], monkeypatch: pytest.MonkeyPatch, sources: str) -> None:
    """The common way to load a kernel file was exit 2, "not a static string expression"; it is built, from
    any working folder (the path is the submission's, not the working folder's)."""
    folder = tmp_path / "entry"
    folder.mkdir()
    (folder / "k.cu").write_text(KERNEL)
    (folder / "submission.py").write_text(
        f"import os\nfrom pathlib import Path\n{LOAD}"
        f"m = load(name='beside', sources={sources}, extra_cuda_cflags=['-gencode=arch=compute_100a,code=sm_100a'])\n"
        "def custom_kernel(data):\n    return m.run(data)\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(app, ["build", str(folder / "submission.py")])
    assert result.exit_code == 0, result.output
    assert compiles == ["k.cu"] and "not a static" not in result.output


def test_a_linked_submission_loads_the_file_beside_the_link(tmp_path: Path, compiles: list[str]) -> None:
    """`submission.py -> versions/v3.py`: Python's __file__ is the link's path, and `python submission.py` finds
    k.cu beside the link; build read the link's target and looked in versions/."""
    folder, versions = tmp_path / "entry", tmp_path / "entry" / "versions"
    versions.mkdir(parents=True)
    (folder / "k.cu").write_text(KERNEL)
    (versions / "v3.py").write_text(
        f"import os\n{LOAD}m = load(name='beside', sources=[os.path.join(os.path.dirname(__file__), 'k.cu')],"
        " extra_cuda_cflags=['-gencode=arch=compute_100a,code=sm_100a'])\n"
        "def custom_kernel(data):\n    return m.run(data)\n")
    (folder / "submission.py").symlink_to(versions / "v3.py")
    result = runner.invoke(app, ["build", str(folder / "submission.py")])
    assert result.exit_code == 0, result.output
    assert compiles == ["k.cu"]


def test_a_source_of_several_pieces_is_one_file(tmp_path: Path) -> None:
    """Each piece of an element was taken for a file of its own: ["kernels/" + NAME] compiled kernels/ and k.cu."""
    text = f"{LOAD}NAME = 'k.cu'\nm = load(name='m', sources=['kernels/' + NAME, 'b' '.cu'])\n"
    assert _files(tmp_path, text) == [tmp_path / "kernels" / "k.cu", tmp_path / "b.cu"]


@pytest.mark.parametrize("text", [
    # a parameter shadows the module's name: its value is the argument's
    f"import os\n{LOAD}HERE = os.path.dirname(__file__)\n"
    "def go(HERE):\n    return load('x', [os.path.join(HERE, 'k.cu')])\n",
    f"import os\n{LOAD}HERE = os.path.dirname(__file__)\n"
    "go = lambda HERE: load('x', [os.path.join(HERE, 'k.cu')])\n",
    # the only binding is another function's own variable: Python raises NameError
    f"import os\n{LOAD}def setup():\n    HERE = '/other'\n"
    "def go():\n    return load('x', [os.path.join(HERE, 'k.cu')])\n",
])  # fmt: skip
def test_a_name_the_read_cannot_see_is_not_static(tmp_path: Path, text: str) -> None:
    """The last binding by line was taken whatever its scope: /other/k.cu, or the module's <dir>/k.cu for a
    parameter."""
    assert _files(tmp_path, text) is None


def test_a_read_in_a_function_gets_the_modules_binding_or_its_own(tmp_path: Path) -> None:
    module_level = (f"import os\n{LOAD}HERE = os.path.dirname(__file__)\n"
                    "def setup():\n    HERE = '/other'\n"
                    "def go():\n    return load('x', [os.path.join(HERE, 'k.cu')])\n")
    assert _files(tmp_path, module_level) == [tmp_path / "k.cu"]
    own = (f"import os\n{LOAD}HERE = '/other'\n"
           "def go():\n    HERE = os.path.dirname(__file__)\n    return load('x', [os.path.join(HERE, 'k.cu')])\n")
    assert _files(tmp_path, own) == [tmp_path / "k.cu"]
    declared = (f"import os\n{LOAD}def setup():\n    global HERE\n    HERE = os.path.dirname(__file__)\n"
                "def go():\n    return load('x', [os.path.join(HERE, 'k.cu')])\n")
    assert _files(tmp_path, declared) == [tmp_path / "k.cu"]


@pytest.mark.parametrize(("binding", "written"), [
    ("", "Path(__file__).parent / 'k.cu'"),
    ("KERNEL = Path(__file__).parent / 'k.cu'\n", "KERNEL"),
])  # fmt: skip
def test_a_path_alone_as_sources_is_refused_as_torch_fails_on_it(tmp_path: Path, compiles: list[str],
                                                                 binding: str, written: str) -> None:
    """It said "is not a static string expression, and build reads ... paths made from __file__ with os.path or
    pathlib", a path build does read: torch iterates sources, which a Path fails."""
    (tmp_path / "k.cu").write_text(KERNEL)
    submission = tmp_path / "submission.py"
    submission.write_text(f"from pathlib import Path\n{LOAD}{binding}m = load(name='m', sources={written},"
                          " extra_cuda_cflags=['-gencode=arch=compute_100a,code=sm_100a'])\n")
    result = runner.invoke(app, ["build", str(submission)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert f"sources `{written}` is a pathlib.Path alone, not a list" in said, said
    assert f"give a list, sources=[{written}]" in said and "not a static" not in said and not compiles


def _linked(tmp_path: Path, text: str) -> Path:
    """entry/submission.py -> entry/versions/v3.py holding the text: the link, as `python submission.py` runs it."""
    versions = tmp_path / "entry" / "versions"
    versions.mkdir(parents=True)
    (versions / "v3.py").write_text(text)
    (tmp_path / "entry" / "submission.py").symlink_to(versions / "v3.py")
    return tmp_path / "entry" / "submission.py"


def test_a_linked_submission_without_extensions_is_read_as_the_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry-point check and the CuTe DSL build were given the link's target, whose __file__ is in versions/."""
    from nvfp4ctl.commands import build_submission
    from nvfp4ctl.runner import entry_point

    given: list[Path] = []
    monkeypatch.setattr(entry_point, "refuse_broken_submission", lambda path, shown: given.append(path))
    monkeypatch.setattr(build_submission, "_build_dsl", lambda path, *rest: given.append(path) or 1 / 0)
    plain = _linked(tmp_path / "plain", "def custom_kernel(data):\n    return data\n")
    assert runner.invoke(app, ["build", str(plain)]).exit_code == 0
    dsl = _linked(tmp_path / "dsl", "import cutlass.cute as cute\n@cute.kernel\ndef k():\n    pass\n")
    runner.invoke(app, ["build", str(dsl)])
    assert given == [plain, dsl]


def test_a_linked_submissions_problem_is_read_from_the_files_beside_the_link(tmp_path: Path) -> None:
    """build's target read a load() source made from __file__ beside the link's target (versions/k.cu), where
    Python reads entry/k.cu: the GEMV submission was judged as the shipped GEMM."""
    from types import SimpleNamespace

    from nvfp4ctl.runner.targets import _own_problem

    link = _linked(tmp_path, f"import os\n{LOAD}m = load(name='m', sources=[os.path.join(os.path.dirname(__file__), 'k.cu')])\n")
    (link.parent / "k.cu").write_text('#include "nvfp4_gemv_api.h"\n')
    assert _own_problem(SimpleNamespace(is_users=False, problem="nvfp4_gemm"), link)[0] == "nvfp4_gemv"
