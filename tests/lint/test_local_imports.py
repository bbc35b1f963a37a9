"""NV012: a module imported from beside the submission, which the leaderboard never receives."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from nvfp4ctl.lint import lint_text

BESIDE = ("nvfp4_kernels.py", "task.py", "utils.py", "reference.py", "helpers/__init__.py", "tables/data.json")


def _found(folder: Path, text: str) -> list[tuple[int, str, str]]:
    for name in BESIDE:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("X = 1\n")
    submission = folder / "submission.py"
    submission.write_text(textwrap.dedent(text))
    return [(d.line, d.code, d.message) for d in lint_text(submission.read_text(), submission) if d.code == "NV012"]


def test_a_module_beside_the_submission_is_an_error_naming_it_and_its_file(tmp_path: Path) -> None:
    found = _found(tmp_path, """\
        from task import input_t, output_t
        from nvfp4_kernels import nvfp4_gemm_kernel, _lut
        import helpers.gemm as hg

        def custom_kernel(data: input_t) -> output_t:
            import nvfp4_kernels
            return data[6]
        """)
    assert [(line, code) for line, code, _ in found] == [(2, "NV012"), (3, "NV012"), (6, "NV012")]
    assert found[0][2].startswith("imports nvfp4_kernels from nvfp4_kernels.py beside the file: the leaderboard"
                                  " receives submission.py alone, so the import fails there")
    assert "helpers from helpers/ beside the file" in found[1][2]
    diagnostic = next(d for d in lint_text((tmp_path / "submission.py").read_text(), tmp_path / "submission.py")
                      if d.code == "NV012")
    assert diagnostic.severity.value == "error"


@pytest.mark.parametrize("text", [
    "from task import input_t\nfrom utils import make_match_reference\nimport reference\n",  # GPU MODE's own
    "import torch\nimport tables\nfrom json import loads\n",  # installed, or a folder that is no package
    "from . import nvfp4_kernels\n",  # relative: no package to be relative to, whatever lies beside
    "try:\n    from nvfp4_kernels import K\nexcept ImportError:\n    K = None\n",
    "try:\n    import nvfp4_kernels\nexcept (ModuleNotFoundError, OSError):\n    nvfp4_kernels = None\n",
    "try:\n    import nvfp4_kernels\nexcept (OSError, (ModuleNotFoundError,)):\n    nvfp4_kernels = None\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from nvfp4_kernels import K\n",
])
def test_harness_installed_and_guarded_imports_are_not_nv012(tmp_path: Path, text: str) -> None:
    assert _found(tmp_path, text) == []


@pytest.mark.parametrize("handler", ["    raise\n", "    pass\n", "    raise RuntimeError('no kernels')\n"])
def test_a_handler_with_no_fallback_leaves_the_import_reported(tmp_path: Path, handler: str) -> None:
    text = "try:\n    from nvfp4_kernels import K\nexcept ImportError:\n" + handler
    assert [(line, code) for line, code, _ in _found(tmp_path, text)] == [(2, "NV012")]


def test_text_with_no_file_behind_it_has_nothing_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nvfp4_kernels.py").write_text("X = 1\n")
    assert [d for d in lint_text("from nvfp4_kernels import X\n", "submission.py") if d.code == "NV012"] == []


def test_a_file_named_like_a_standard_library_module_is_not_what_the_leaderboard_imports(tmp_path: Path) -> None:
    (tmp_path / "random.py").write_text("X = 1\n")
    assert _found(tmp_path, "import random\nfrom json import loads\n") == []


def test_each_module_beside_it_of_one_import_statement_is_reported(tmp_path: Path) -> None:
    (tmp_path / "kern_a.py").write_text("X = 1\n")
    found = _found(tmp_path, "import nvfp4_kernels, kern_a\n")
    assert [(line, message.split(" beside")[0]) for line, _, message in found] == [
        (1, "imports nvfp4_kernels from nvfp4_kernels.py"), (1, "imports kern_a from kern_a.py")]


def test_a_module_in_a_folder_without_init_beside_it_is_reported_naming_its_file(tmp_path: Path) -> None:
    (tmp_path / "nsonly").mkdir()
    (tmp_path / "nsonly" / "mod.py").write_text("X = 1\n")
    found = _found(tmp_path, "from nsonly import mod\nimport nsonly.mod\nfrom tables import data\n")
    assert [(line, message.split(" beside")[0]) for line, _, message in found] == [
        (1, "imports nsonly from nsonly/mod.py"), (2, "imports nsonly from nsonly/mod.py")]


def test_a_folder_without_init_named_like_an_installed_package_is_not_reported(tmp_path: Path) -> None:
    # Python takes the installed regular package typer over a namespace portion typer/ beside the file.
    (tmp_path / "typer").mkdir()
    (tmp_path / "typer" / "main.py").write_text("X = 1\n")
    assert _found(tmp_path, "from typer import main\nimport typer.main\n") == []


@pytest.mark.parametrize("name", ["nvfp4_ext.cpython-311-x86_64-linux-gnu.so", "nvfp4_ext.abi3.so", "nvfp4_ext.so",
                                  "nvfp4_ext.cp311-win_amd64.pyd"])
def test_a_compiled_extension_beside_it_is_reported(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(b"\x7fELF")
    found = _found(tmp_path, "import nvfp4_ext\n")
    assert [line for line, _, _ in found] == [1]
    assert found[0][2].startswith(f"imports nvfp4_ext from {name} beside the file")
    assert found[0][2].endswith("build it in the file (torch.utils.cpp_extension.load_inline)")


def test_importlib_import_module_of_a_name_lint_can_read_is_reported(tmp_path: Path) -> None:
    found = _found(tmp_path, """\
        import importlib
        from importlib import import_module
        PREFIX = "nvfp4_"
        k = importlib.import_module("nvfp4_kernels")
        g = import_module(PREFIX + "kernels.gemm")
        r = importlib.import_module(".nvfp4_kernels", package="pkg")
        t = importlib.import_module("json")
        """)
    assert [(line, message.split(" beside")[0]) for line, _, message in found] == [
        (4, "imports nvfp4_kernels from nvfp4_kernels.py"), (5, "imports nvfp4_kernels from nvfp4_kernels.py")]


def test_a_bare_import_of_a_folder_without_init_holding_python_is_reported(tmp_path: Path) -> None:
    # Python imports nsonly/ as a namespace package here; the leaderboard has no such folder.
    (tmp_path / "nsonly").mkdir()
    (tmp_path / "nsonly" / "mod.py").write_text("X = 1\n")
    found = _found(tmp_path, "import nsonly\nimport tables\n")
    assert [(line, message.split(" beside")[0]) for line, _, message in found] == [(1, "imports nsonly from nsonly/")]
