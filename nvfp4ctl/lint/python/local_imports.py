"""NV012: a module imported from beside the submission.

The leaderboard receives submission.py alone: `from nvfp4_kernels import gemm`, where nvfp4_kernels.py
(or a package folder nvfp4_kernels/) sits next to the submission, imports here and fails there. Only a
module found beside the file counts (an installed one is there too, and so is the standard library's
`random` that a random.py beside it shadows here), and not GPU MODE's own task, utils and reference, which
the harness puts beside the submission. An import whose ImportError the file handles with a fallback
fails nowhere.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from pathlib import Path

from nvfp4ctl.lint.python.index import ModuleIndex, dotted

Report = Callable[[ast.AST, str, str], None]

HARNESS_MODULES = {"task", "utils", "reference", "eval"}  # GPU MODE runs the submission beside these
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def check(index: ModuleIndex, report: Report, submission: Path) -> None:
    folder = submission.parent
    if not submission.is_file():
        return  # text with no file behind it (lint_text, standard input): nothing is beside it
    for node in index.all_nodes:
        for where, module in _imported(node):
            if module in HARNESS_MODULES or module == submission.stem or module in sys.stdlib_module_names:
                continue  # the leaderboard's Python finds the standard library's random, not a random.py beside
            found = _beside(folder, module)
            if found is None or _handled(node, index) or _type_checking_only(node, index):
                continue
            report(where, "NV012", f"imports {module} from {found} beside the file: the leaderboard receives"
                                  " submission.py alone, so the import fails there (ModuleNotFoundError);"
                                  f" paste what the file uses from {found} into it")


def _imported(node: ast.AST) -> list[tuple[ast.AST, str]]:
    """The top-level modules an import statement loads (nvfp4_kernels for `from nvfp4_kernels.gemm import
    run`), each with where to report it: `import kern_b, kern_a` names two, each at its own name, as
    lint keeps one finding of a code per place. A relative import names none (a lone submission has no
    package)."""
    if isinstance(node, ast.Import):
        return [(alias, alias.name.split(".")[0]) for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [(node, node.module.split(".")[0])]
    return []


def _beside(folder: Path, module: str) -> str | None:
    """The file or package folder beside the submission that `import module` loads ("nvfp4_kernels.py",
    "nvfp4_kernels/"): the submission's folder comes first on sys.path, so it shadows an installed one."""
    if (folder / f"{module}.py").is_file():
        return f"{module}.py"
    if (folder / module / "__init__.py").is_file():
        return f"{module}/"
    return None


def _handled(node: ast.AST, index: ModuleIndex) -> bool:
    """Inside a try whose handler catches the ImportError and does something else (a fallback), not
    only re-raise it or pass."""
    child = node
    for parent in index.ancestors(node):
        if isinstance(parent, ast.Try) and child in parent.body and any(
                _catches_import_error(handler) and _falls_back(handler) for handler in parent.handlers):
            return True
        child = parent
    return False


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((dotted(kind) or "").rpartition(".")[2] in IMPORT_ERRORS for kind in caught)


def _falls_back(handler: ast.ExceptHandler) -> bool:
    return any(not isinstance(statement, (ast.Raise, ast.Pass))
               and not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
               for statement in handler.body)


def _type_checking_only(node: ast.AST, index: ModuleIndex) -> bool:
    """Under `if TYPE_CHECKING:` (typing's), which never runs."""
    child = node
    for parent in index.ancestors(node):
        if isinstance(parent, ast.If) and child in parent.body and (dotted(parent.test) or "").endswith("TYPE_CHECKING"):
            return True
        child = parent
    return False
