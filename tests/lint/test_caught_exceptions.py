"""index.catches: which exceptions an except clause catches, as Python reads its tuple."""

from __future__ import annotations

import ast

import pytest

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
