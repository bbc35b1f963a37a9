"""One walk of a submission's syntax tree, kept for all its static reads (the values of its expressions, its
TORCH_CUDA_ARCH_LIST settings, its extension calls): each read then costs the nodes it looks at, not a walk of
the whole file of its own, and a read repeated per call (is load imported from cpp_extension?) costs nothing."""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# the nodes whose body's def statements count as the module's own functions (a def under an `if` does not)
_DEFINING = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_WRITES = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Delete, ast.Call)
# the statements and patterns that bind the name they carry (a str in .name; an except without `as` has None)
_NAMED_BINDINGS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)


@dataclass
class SyntaxIndex:
    """What the reads look up, each list in the order of ast.walk (breadth first), which the reads keep:
    of two bindings on one line, the later in that order wins."""

    tree: ast.Module
    # Assign, AnnAssign, AugAssign, Delete and Call nodes together: what binds, changes or calls
    writes: list[ast.AST] = field(default_factory=list)
    calls: list[ast.Call] = field(default_factory=list)
    imports: list[ast.Import | ast.ImportFrom] = field(default_factory=list)
    functions: list[ast.AST] = field(default_factory=list)  # defs and lambdas
    # (the module, def or class, a def or async def statement of its body)
    definitions: list[tuple[ast.AST, ast.FunctionDef | ast.AsyncFunctionDef]] = field(default_factory=list)
    # NAME.append/extend/insert(...) standing alone as a statement: a change in place build can follow
    standalone_changes: list[ast.Expr] = field(default_factory=list)
    # the innermost function (a def or a lambda) whose body holds each node, by id (they run when it is
    # called); module-level nodes, and a function's defaults and decorators, are absent
    function_of: dict[int, ast.AST] = field(default_factory=dict)
    # the names each function binds as its own variables (assigned, parameters), by the function's id: not
    # those it declares global or nonlocal
    function_locals: dict[int, set[str]] = field(default_factory=dict)
    # the block (the statement list) each statement is in, by id, and each assigned value's, which is its
    # statement's: a change in place is followed only where it runs in the same straight run
    blocks: dict[int, int] = field(default_factory=dict)
    name_uses: dict[str, int] = field(default_factory=dict)  # Name nodes by their name
    # the names the file binds anywhere other than by an import (assigned, deleted, a parameter, a def or
    # class, an except or match name): where `os` or `Path` is one, what it names is not the module's
    rebound: set[str] = field(default_factory=set)

    @cached_property  # read once the walk is done, for every bare load(...) of the file
    def imports_load(self) -> bool:
        """`from torch.utils.cpp_extension import load` makes a bare load(...) the extension loader."""
        return any(isinstance(node, ast.ImportFrom) and node.module == "torch.utils.cpp_extension"
                   and any(alias.name == "load" for alias in node.names) for node in self.imports)


def _changes_a_name(value: ast.AST) -> bool:
    """Whether an expression is NAME.append(...), NAME.extend(...) or NAME.insert(...)."""
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
            and value.func.attr in ("append", "extend", "insert"))


def index_of(tree: ast.Module) -> SyntaxIndex:
    """The index of a parsed submission, made in one walk in ast.walk's order: each node's function is known
    from its parent's, so nested functions cost no walk of their own."""
    index = SyntaxIndex(tree)
    bound: dict[int, set[str]] = {}
    shared: dict[int, set[str]] = {}
    waiting: deque[ast.AST] = deque([tree])
    while waiting:
        node = waiting.popleft()
        children = list(ast.iter_child_nodes(node))
        waiting.extend(children)
        function = index.function_of.get(id(node))
        if isinstance(node, FUNCTIONS):
            index.functions.append(node)
            body = node.body if isinstance(node.body, list) else [node.body]
            inside = {id(statement) for statement in body}
            for child in children:
                owner = node if id(child) in inside else function
                if owner is not None:
                    index.function_of[id(child)] = owner
            arguments = node.args
            parameters = {argument.arg for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs
                          + [extra for extra in (arguments.vararg, arguments.kwarg) if extra is not None]}
            bound.setdefault(id(node), set()).update(parameters)
            index.rebound |= parameters
        elif function is not None:
            index.function_of.update((id(child), function) for child in children)
        if isinstance(node, ast.Name):
            index.name_uses[node.id] = index.name_uses.get(node.id, 0) + 1
            if not isinstance(node.ctx, ast.Load):
                index.rebound.add(node.id)
            if isinstance(node.ctx, ast.Store) and function is not None:
                bound.setdefault(id(function), set()).add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and function is not None:
            shared.setdefault(id(function), set()).update(node.names)
        elif isinstance(node, _WRITES):
            index.writes.append(node)
            if isinstance(node, ast.Call):
                index.calls.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            index.imports.append(node)
        elif isinstance(node, ast.Expr) and _changes_a_name(node.value):
            index.standalone_changes.append(node)
        elif isinstance(node, _NAMED_BINDINGS) and getattr(node, "name", None):
            index.rebound.add(node.name)  # def os(): ..., class Path: ..., except E as os:
        elif isinstance(node, ast.MatchMapping) and node.rest:
            index.rebound.add(node.rest)
        if isinstance(node, _DEFINING):
            index.definitions.extend((node, statement) for statement in node.body
                                     if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)))
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            for statement in block:
                if not isinstance(statement, ast.stmt):
                    continue
                index.blocks[id(statement)] = id(block)
                if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
                    index.blocks[id(statement.value)] = id(block)
    index.function_locals = {function: names - shared.get(function, set()) for function, names in bound.items()}
    return index
