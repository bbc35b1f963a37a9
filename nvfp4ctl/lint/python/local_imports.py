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
import glob
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

from nvfp4ctl.lint.python.index import ModuleIndex, catches, dotted
from nvfp4ctl.lint.python.strings import folded_string

Report = Callable[[ast.AST, str, str], None]

HARNESS_MODULES = {"task", "utils", "reference", "eval"}  # GPU MODE runs the submission beside these
IMPORT_ERRORS = {"ModuleNotFoundError"}  # what importing a missing module raises; catches() knows its bases


def check(index: ModuleIndex, report: Report, submission: Path) -> None:
    folder = submission.parent
    if not submission.is_file():
        return  # text with no file behind it (lint_text, standard input): nothing is beside it
    for node in index.all_nodes:
        for where, loaded in _imported(node, index):
            module = loaded[0].split(".")[0]
            if module in HARNESS_MODULES or module == submission.stem or module in sys.stdlib_module_names:
                continue  # the leaderboard's Python finds the standard library's random, not a random.py beside
            found = _beside(folder, loaded)
            if found is None or _never_fails(node, index):
                continue
            compiled = found.endswith((".so", ".pyd"))
            mend = ("build it in the file (torch.utils.cpp_extension.load_inline)" if compiled
                    else f"paste what the file uses from {found} into it")
            report(where, "NV012", f"imports {module} from {found} beside the file: the leaderboard receives"
                                  f" submission.py alone, so the import fails there (ModuleNotFoundError); {mend}")


def _imported(node: ast.AST, index: ModuleIndex) -> list[tuple[ast.AST, list[str]]]:
    """The modules an import loads, each with where to report it: `import kern_b, kern_a` names two, each at
    its own name, as lint keeps one finding of a code per place. `from nsonly import mod` may load
    nsonly and nsonly.mod (a submodule, where nsonly is a folder without __init__.py);
    importlib.import_module("kern_a") loads what its name folds to. A relative import names none (a
    lone submission has no package)."""
    if isinstance(node, ast.Import):
        return [(alias, [alias.name]) for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [(node, [node.module, *(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")])]
    if (isinstance(node, ast.Call) and node.args and not any(k.arg == "package" for k in node.keywords)
            and index.resolve(node.func) in ("importlib.import_module", "__import__")):
        name = folded_string(node.args[0], index)
        if name and not name.startswith("."):
            return [(node, [name])]
    return []


def _beside(folder: Path, loaded: list[str]) -> str | None:
    """The file or folder beside the submission that an import loads ("nvfp4_kernels.py", "nvfp4_kernels/",
    a compiled "nvfp4_ext.cpython-311-x86_64-linux-gnu.so", "nsonly/mod.py" in a folder without
    __init__.py, or "nsonly/" itself for `import nsonly` where it holds Python). The submission's folder
    comes first on sys.path, so a module or regular package there shadows an installed one; a folder
    without __init__.py does not: Python keeps it only as a namespace portion and takes an installed
    module or regular package of that name over it."""
    top = loaded[0].split(".")[0]
    found = _module_file(folder, top)
    if found is not None or not (folder / top).is_dir() or _installed_regular(top):
        return found
    # A folder without __init__.py is a namespace package: it counts where it holds what is imported
    # (a folder of data named like an installed package does not).
    for name in loaded:
        parts = name.split(".")
        if len(parts) > 1:
            inner = _module_file(folder.joinpath(*parts[:-1]), parts[-1])
            if inner is not None:
                return "/".join([*parts[:-1], inner])
    # `import nsonly` alone loads the folder itself: it counts where it holds Python (a folder of data
    # only, such as tables/ of JSON files, is no module anyone means to import)
    return f"{top}/" if loaded == [top] and _holds_python(folder / top) else None


def _holds_python(folder: Path) -> bool:
    """A module directly in the folder: a .py file, a compiled extension or a package folder."""
    try:
        return any(path.is_file() and path.suffix in (".py", ".so", ".pyd") or (path / "__init__.py").is_file()
                   for path in folder.iterdir())
    except OSError:  # a folder lint may not list is judged by what it can see: nothing
        return False


def _installed_regular(top: str) -> bool:
    """An installed module or regular package named top (typer/ beside the file does not shadow the
    installed typer). A namespace package found here has no origin."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin not in (None, "namespace")


def _module_file(folder: Path, module: str) -> str | None:
    """module.py, module/ with its __init__.py, or a compiled extension (module.so, module.pyd, and the
    tagged module.cpython-311-x86_64-linux-gnu.so, module.abi3.so, module.cp311-win_amd64.pyd)."""
    if (folder / f"{module}.py").is_file():
        return f"{module}.py"
    if (folder / module / "__init__.py").is_file():
        return f"{module}/"
    if folder.is_dir():
        for path in sorted(folder.glob(f"{glob.escape(module)}.*")):
            if path.suffix in (".so", ".pyd") and path.is_file() and (
                    path.stem == module or "." not in path.stem[len(module) + 1:]):
                return path.name
    return None


def _never_fails(node: ast.AST, index: ModuleIndex) -> bool:
    """Inside a try whose handler catches the ImportError and does something else (a fallback), not
    only re-raise it or pass; or under `if TYPE_CHECKING:` (typing's), which never runs."""
    child = node
    for parent in index.ancestors(node):
        if isinstance(parent, ast.Try) and child in parent.body and any(
                catches(handler, IMPORT_ERRORS, index) and _falls_back(handler) for handler in parent.handlers):
            return True
        if isinstance(parent, ast.If) and child in parent.body and (dotted(parent.test) or "").endswith("TYPE_CHECKING"):
            return True
        child = parent
    return False


def _falls_back(handler: ast.ExceptHandler) -> bool:
    return any(not isinstance(statement, (ast.Raise, ast.Pass))
               and not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
               for statement in handler.body)
