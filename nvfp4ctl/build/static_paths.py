"""The paths a submission builds from its own location, read without running the file: `__file__` and what
os.path and pathlib make of it (`os.path.join(os.path.dirname(__file__), "k.cu")`, `Path(__file__).parent /
"k.cu"`), whose value is certain wherever the file runs; a path from the working folder, the environment or
the file system's listing is not.

What is read: `__file__` (the submission's absolute path, as Python gives it to a file run or imported from
its folder); os.path's dirname, basename, join, normpath, and abspath and realpath of an absolute path (of a
relative one they read the working folder); pathlib's Path(...) of static strings or paths, its .parent,
.name, .joinpath(...), `/`, and .resolve() of an absolute path; str(...) of a path. os, os.path, pathlib
and their functions are named as imported (`import os.path as osp`, `from os.path import join`, `from
pathlib import Path`), and only where the file binds the name to nothing else: a local `os`, a parameter
named Path, a star import (which may bind any of them) make the call unknown."""

from __future__ import annotations

import ast
import os
import posixpath
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from nvfp4ctl.build.syntax_index import SyntaxIndex

if TYPE_CHECKING:
    from nvfp4ctl.build.static_values import StaticEvaluator

# a str where the expression makes a str (os.path's functions, str(...)), a PurePosixPath where it makes a
# pathlib.Path: torch takes a Path in load()'s sources, not in a string's place (cuda_sources, a flag)
PathValue = str | PurePosixPath

_MODULES = frozenset({"os", "os.path", "pathlib"})
# the expressions read here; the evaluator reads the others (a string, a name, a concatenation)
PATH_NODES = (ast.Call, ast.Attribute, ast.BinOp)
_OS_PATH: dict[str, Callable[..., str]] = {
    "dirname": posixpath.dirname, "basename": posixpath.basename, "normpath": posixpath.normpath,
    "join": posixpath.join}
# read the working folder (abspath) or the file system (realpath) where the path is relative: certain only
# for an absolute one, which abspath normalises and realpath resolves here, where the submission is
_ABSOLUTE_ONLY: dict[str, Callable[[str], str]] = {"abspath": posixpath.normpath, "realpath": os.path.realpath}


class PathReader:
    """Static values of the path expressions of one submission, for a StaticEvaluator: the strings inside
    them (names bound to strings, concatenations) are the evaluator's to read."""

    def __init__(self, index: SyntaxIndex, evaluator: StaticEvaluator, submission: Path | None) -> None:
        self.evaluator = evaluator
        rebound = index.rebound
        # __file__ is the submission's own unless the file assigns it
        self.file = None if submission is None or "__file__" in rebound else os.path.abspath(submission)
        self.builtin_str = "str" not in rebound
        # what each imported name is bound to ("os", "os.path", "os.path.join", "pathlib.Path"), for names
        # bound by imports of one thing only and by nothing else
        imported: dict[str, set[str]] = {}
        star = False
        for node in index.imports:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    # `import os.path` binds os; `import os.path as osp` binds osp to os.path
                    name, target = (alias.asname, alias.name) if alias.asname else (alias.name.split(".")[0],) * 2
                    imported.setdefault(name, set()).add(target)
            else:
                for alias in node.names:
                    star |= alias.name == "*"
                    module = "." * node.level + (node.module or "")
                    imported.setdefault(alias.asname or alias.name, set()).add(f"{module}.{alias.name}")
        self.imported = {} if star else {name: next(iter(targets)) for name, targets in imported.items()
                                         if len(targets) == 1 and name not in rebound}
        self.builtin_str = self.builtin_str and "str" not in imported and not star

    def value(self, node: ast.AST, before: int, depth: int = 0) -> PathValue | None:
        """The value of a path expression (a str or a Path), None for anything it cannot be sure of."""
        if depth > 20:
            return None
        if isinstance(node, ast.Name) and node.id == "__file__":
            return self.file
        if isinstance(node, ast.Call):
            return self._called(node, before, depth)
        if isinstance(node, ast.Attribute):
            base = self.value(node.value, before, depth + 1)
            if not isinstance(base, PurePosixPath):
                return None
            return base.parent if node.attr == "parent" else base.name if node.attr == "name" else None
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, ast.Div):
                return self._string(node, before, depth) if isinstance(node.op, ast.Add) else None
            left, right = self.value(node.left, before, depth + 1), self.value(node.right, before, depth + 1)
            if left is None or right is None or not any(isinstance(side, PurePosixPath) for side in (left, right)):
                return None  # str / str is no path
            return PurePosixPath(left) / right
        return self._string(node, before, depth)

    def _string(self, node: ast.AST, before: int, depth: int) -> PathValue | None:
        """A value the evaluator reads (a constant, a name, a concatenation): a str, or a name's Path."""
        if self.evaluator.is_sequence(node, before):
            return None
        pieces = self.evaluator.pieces_or_paths(node, before, depth + 1)
        if not pieces or any(piece.unread is not None for piece in pieces):  # a placeholder left empty: a guess
            return None
        if any(piece.path_object for piece in pieces):  # a Path, never a part of a concatenation (pieces_or_paths)
            return PurePosixPath(pieces[0].text) if len(pieces) == 1 else None
        return "".join(piece.text for piece in pieces)

    def _called(self, call: ast.Call, before: int, depth: int) -> PathValue | None:
        if call.keywords or any(isinstance(argument, ast.Starred) for argument in call.args):
            return None
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("resolve", "joinpath"):
            owner = self.value(func.value, before, depth + 1)  # a method of a Path value, not a module's function
            if isinstance(owner, PurePosixPath):
                return self._method(owner, func.attr, call, before, depth)
        named = self._qualified(func)
        function = named[len("os.path."):] if named is not None and named.startswith("os.path.") else ""
        if not (named in ("str", "pathlib.Path") or function in _OS_PATH or function in _ABSOLUTE_ONLY):
            return None  # read no argument of a call that is none of these
        if named == "str" and len(call.args) == 1:
            value = self.value(call.args[0], before, depth + 1)
            return None if value is None else str(value)
        arguments = [self.value(argument, before, depth + 1) for argument in call.args]
        if named == "str" or any(argument is None for argument in arguments):
            return None
        texts = [str(argument) for argument in arguments]
        if named == "pathlib.Path":
            return PurePosixPath(*texts)
        if function in _OS_PATH and (len(texts) == 1 or (function == "join" and texts)):
            return _OS_PATH[function](*texts)
        if function in _ABSOLUTE_ONLY and len(texts) == 1 and posixpath.isabs(texts[0]):
            return _ABSOLUTE_ONLY[function](texts[0])
        return None

    def _method(self, owner: PurePosixPath, method: str, call: ast.Call, before: int, depth: int) -> PathValue | None:
        if method == "resolve":
            return PurePosixPath(os.path.realpath(owner)) if not call.args and owner.is_absolute() else None
        parts = [self.value(argument, before, depth + 1) for argument in call.args]
        return None if any(part is None for part in parts) else owner.joinpath(*(str(part) for part in parts))

    def _qualified(self, node: ast.AST) -> str | None:
        """What a name or a dotted name names, as imported: "os.path.join" for os.path.join, osp.join (import
        os.path as osp) and join (from os.path import join); "str" for the builtin; None for anything else."""
        if isinstance(node, ast.Name):
            if node.id == "str":
                return "str" if self.builtin_str else None
            return self.imported.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self._qualified(node.value)
            return f"{base}.{node.attr}" if base in _MODULES else None
        return None
