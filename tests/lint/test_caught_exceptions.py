"""index.catches: which exceptions an except clause catches, as Python reads its tuple and the builtin hierarchy."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nvfp4ctl.lint import lint_text
from nvfp4ctl.lint.python.index import ModuleIndex, catches


def _catches(clause: str, raised: set[str], above: str = "", below: str = "") -> bool:
    """Does the clause of `try: pass` catch raised, the module holding `above` before the try and `below` after?"""
    tree = ast.parse(f"{above}\ntry:\n    pass\n{clause}\n    pass\n{below}\n")
    [handler] = [node for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler)]
    return catches(handler, raised, ModuleIndex(tree))


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
    assert _catches(clause, {"KeyError"})


@pytest.mark.parametrize("clause", ["except IndexError:", "except (IndexError, (OSError,)):", "except ((),):"])
def test_a_clause_not_naming_it_does_not_catch_it(clause: str) -> None:
    assert not _catches(clause, {"KeyError"})


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
    assert _catches(clause, {raised})


@pytest.mark.parametrize(("clause", "raised"), [
    ("except ModuleNotFoundError:", "ImportError"),
    ("except PermissionError:", "FileNotFoundError"),
    ("except Exception:", "KeyboardInterrupt"),
    ("except LookupError:", "CacheMiss"),
])
def test_a_subclass_or_a_sibling_of_the_raised_exception_does_not_catch_it(clause: str, raised: str) -> None:
    assert not _catches(clause, {raised})


@pytest.mark.parametrize(("above", "clause"), [
    ("ERRORS = (KeyError, IndexError)", "except ERRORS:"),
    ("ERRORS = KeyError, IndexError", "except ERRORS:"),
    ("ERRORS: tuple[type[Exception], ...] = (LookupError,)", "except ERRORS:"),
    ("ERRORS = (IndexError, (builtins.KeyError,))", "except (OSError, ERRORS):"),
    ("LOOKUPS = (KeyError,)\nERRORS = (OSError, LOOKUPS)", "except ERRORS:"),
    ("ERRORS = (OSError, ERRORS_TOO)\nERRORS_TOO = (KeyError, ERRORS)", "except ERRORS_TOO:"),  # each followed once
])
def test_a_module_level_name_bound_once_to_a_tuple_of_exceptions_catches_what_the_tuple_names(
        above: str, clause: str) -> None:
    assert _catches(clause, {"KeyError"}, above)


@pytest.mark.parametrize(("above", "clause", "below"), [
    ("ERRORS = (OSError, IndexError)", "except ERRORS:", ""),  # the tuple names no base of KeyError
    ("ERRORS = (KeyError, IndexError)\nERRORS = (OSError,)", "except ERRORS:", ""),  # bound twice
    ("ERRORS = (KeyError, IndexError)", "except ERRORS:", "def f():\n    global ERRORS\n    ERRORS = ()"),
    ("ERRORS = [KeyError, IndexError]", "except ERRORS:", ""),  # a list: Python raises TypeError there
    ("ERRORS = KeyError if flag else OSError", "except ERRORS:", ""),
    ("ERRORS = (errors(), KeyError)", "except ERRORS:", ""),  # not a tuple of classes alone
    ("def f():\n    ERRORS = (KeyError,)", "except ERRORS:", ""),  # a function's own name
    ("", "except ERRORS:", "ERRORS = (KeyError, IndexError)"),  # not bound yet where the clause is read
])
def test_any_other_name_in_an_except_clause_catches_only_what_is_named_so(above: str, clause: str, below: str) -> None:
    assert not _catches(clause, {"KeyError"}, above, below)


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


def test_a_local_import_is_guarded_by_a_module_level_tuple_of_exceptions_naming_a_base_of_it(tmp_path: Path) -> None:
    guarded = "GUARDS = (ValueError, ImportError)\ntry:\n    from nvfp4_kernels import K\nexcept GUARDS:\n    K = None\n"
    assert _nv012(tmp_path, guarded) == []
    assert _nv012(tmp_path, guarded.replace("ImportError)", "OSError)")) == [3]


def _function_catches(raised: set[str], below: str, clause: str = "except ERRORS:") -> bool:
    """Does the clause of a `try` inside a function body catch raised, the module holding `below` after it?"""
    tree = ast.parse(f"def load():\n    try:\n        pass\n    {clause}\n        pass\n{below}\n")
    [handler] = [node for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler)]
    return catches(handler, raised, ModuleIndex(tree))


def test_a_clause_in_a_function_reads_a_tuple_the_module_binds_below_it() -> None:
    """A function runs once the module has bound its names: the tuple bound further down is what it catches,
    where lint read the name as unbound there, as it is for a module-level clause."""
    assert _function_catches({"KeyError"}, "ERRORS = (KeyError, IndexError)")
    assert _function_catches({"KeyError"}, "class Cache:\n    def get(self):\n        pass\nERRORS = (LookupError,)")
    assert not _function_catches({"KeyError"}, "ERRORS = (OSError, IndexError)")
    assert not _function_catches({"KeyError"}, "ERRORS = (KeyError,)\nERRORS = (OSError,)")  # bound twice
    method = ast.parse("class Cache:\n    def get(self):\n        try:\n            pass\n        except ERRORS:\n"
                       "            pass\nERRORS = (KeyError,)\n")
    [handler] = [node for node in ast.walk(method) if isinstance(node, ast.ExceptHandler)]
    assert catches(handler, {"KeyError"}, ModuleIndex(method))


def test_a_clause_in_a_class_body_reads_only_a_tuple_bound_above_it() -> None:
    """A class body runs where the module reaches it, as a module-level clause does."""
    tree = ast.parse("class Cache:\n    try:\n        pass\n    except ERRORS:\n        pass\nERRORS = (KeyError,)\n")
    [handler] = [node for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler)]
    assert not catches(handler, {"KeyError"}, ModuleIndex(tree))


def test_a_local_import_in_a_function_is_guarded_by_a_tuple_the_module_binds_below(tmp_path: Path) -> None:
    guarded = ("def custom_kernel(data):\n    try:\n        from nvfp4_kernels import K\n    except GUARDS:\n"
               "        K = None\n    return K\n\n\nGUARDS = (ValueError, ImportError)\n")
    assert _nv012(tmp_path, guarded) == []
    assert _nv012(tmp_path, guarded.replace("ImportError)", "OSError)")) == [3]


@pytest.mark.parametrize(("below", "caught"), [
    ("load()\nERRORS = (KeyError, IndexError)", False),  # run as the module is read, above the binding: NameError
    ("if True:\n    cached = [load()]\nERRORS = (KeyError,)", False),  # inside a module-level block too
    ("ERRORS = (KeyError, IndexError)\nload()", True),  # called once the tuple is bound
    ("handler = lambda: load()\nERRORS = (KeyError,)\nhandler()", True),  # a lambda runs when it is called
    ("def warm():\n    load()\nERRORS = (KeyError,)", True),  # a function's call runs when that function does
    ("loader.load()\nERRORS = (KeyError,)", True),  # not a call of the module's function by its name
])
def test_a_clause_in_a_function_the_module_calls_above_the_binding_reads_the_tuple_as_unbound(
        below: str, caught: bool) -> None:
    """`def f(): try … except ERRORS: …`, then `f()` above `ERRORS = (KeyError,)`: the call runs the clause before
    the tuple is bound, where lint took the function's clause as catching KeyError wherever the module called it."""
    assert _function_catches({"KeyError"}, below) is caught


def test_a_local_import_in_a_function_called_above_its_guards_binding_is_unguarded(tmp_path: Path) -> None:
    called_early = ("def _load():\n    try:\n        from nvfp4_kernels import K\n    except GUARDS:\n"
                    "        K = None\n    return K\n\n\nKERNEL = _load()\nGUARDS = (ValueError, ImportError)\n")
    assert _nv012(tmp_path, called_early) == [3]
    called_after = called_early.replace("KERNEL = _load()\nGUARDS = (ValueError, ImportError)\n",
                                        "GUARDS = (ValueError, ImportError)\nKERNEL = _load()\n")
    assert _nv012(tmp_path, called_after) == []
