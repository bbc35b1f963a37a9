"""index.catches: which exceptions an except clause catches, as Python reads its tuple and the builtin hierarchy."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nvfp4ctl.lint import lint_text
from nvfp4ctl.lint.python.index import catches


def _handler(clause: str) -> ast.ExceptHandler:
    return ast.parse(f"try:\n    pass\n{clause}\n    pass\n").body[0].handlers[0]  # type: ignore[attr-defined]


@pytest.mark.parametrize("clause", [
    "except KeyError:",
    "except builtins.KeyError:",
    "except (IndexError, KeyError):",
    "except (IndexError, (KeyError,)):",
    "except ((KeyError,),):",
    "except (IndexError, (LookupError, (builtins.KeyError, OSError))):",
    "except:",
])
def test_a_clause_naming_the_exception_anywhere_in_its_nested_tuples_catches_it(clause: str) -> None:
    assert catches(_handler(clause), {"KeyError"})


@pytest.mark.parametrize("clause", ["except IndexError:", "except (IndexError, (OSError,)):", "except ((),):"])
def test_a_clause_not_naming_it_does_not_catch_it(clause: str) -> None:
    assert not catches(_handler(clause), {"KeyError"})


@pytest.mark.parametrize(("clause", "raised"), [
    ("except LookupError:", "KeyError"),
    ("except (ValueError, (LookupError,)):", "IndexError"),
    ("except Exception:", "KeyError"),
    ("except BaseException:", "ModuleNotFoundError"),
    ("except ImportError:", "ModuleNotFoundError"),
    ("except IOError:", "FileNotFoundError"),
    ("except builtins.EnvironmentError:", "FileNotFoundError"),
    ("except errors.CacheMiss:", "CacheMiss"),  # no builtin: the name itself
])
def test_a_builtin_base_class_catches_its_subclasses_as_python_does(clause: str, raised: str) -> None:
    assert catches(_handler(clause), {raised})


@pytest.mark.parametrize(("clause", "raised"), [
    ("except ModuleNotFoundError:", "ImportError"),
    ("except PermissionError:", "FileNotFoundError"),
    ("except Exception:", "KeyboardInterrupt"),
    ("except LookupError:", "CacheMiss"),
])
def test_a_subclass_or_a_sibling_of_the_raised_exception_does_not_catch_it(clause: str, raised: str) -> None:
    assert not catches(_handler(clause), {raised})


def _nv012(folder: Path, text: str) -> list[int]:
    (folder / "nvfp4_kernels.py").write_text("X = 1\n")
    submission = folder / "submission.py"
    submission.write_text(text)
    return [d.line for d in lint_text(text, submission) if d.code == "NV012"]


@pytest.mark.parametrize(("clause", "reported"), [
    ("except Exception:", []), ("except BaseException:", []), ("except (ValueError, ImportError):", []),
    ("except LookupError:", [2]), ("except OSError:", [2]),
])
def test_a_local_import_is_guarded_by_a_handler_of_any_base_of_module_not_found_error(
        tmp_path: Path, clause: str, reported: list[int]) -> None:
    assert _nv012(tmp_path, f"try:\n    from nvfp4_kernels import K\n{clause}\n    K = None\n") == reported
