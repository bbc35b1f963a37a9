"""The statements of a submission that change os.environ's TORCH_CUDA_ARCH_LIST, which torch reads in a
load_inline / load call to pick the archs it compiles for, read without running the file."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from nvfp4ctl.build.static_values import StaticEvaluator
from nvfp4ctl.build.syntax import call_name, shown
from nvfp4ctl.build.syntax_index import SyntaxIndex

ARCH_LIST = "TORCH_CUDA_ARCH_LIST"
# values torch reads as "the visible GPUs' archs" (_get_cuda_arch_flags: `if not _arch_list or _arch_list == "native"`)
GPU_PICKED_ARCH_LISTS = ("", "native")


@dataclass(frozen=True)
class ArchListSetting:
    """A statement of the file that changes os.environ's TORCH_CUDA_ARCH_LIST, which torch reads in the
    call: `os.environ[...] = ...`, `.setdefault(...)`, `.update(...)`, `|=`, or its removal."""

    line: int
    value: str | None  # None: not a static value (a computed one, an update() whose keys build cannot read)
    deferred: bool  # inside a function: it runs when the function is called, not known here
    kind: str = "set"  # set | setdefault (only where none is set) | unset (del, pop)
    written: str = ""  # the statement, short, for messages


class ArchListReader:
    """The statements that change os.environ's TORCH_CUDA_ARCH_LIST: an item set or deleted, setdefault,
    update, pop and |=, on os.environ however it is reached (import os as o, from os import environ, a
    name bound to it). A key or a value build cannot read is kept as a setting whose value is unknown:
    it may set the list, so nothing may say that none is set. os.putenv changes the environment of child
    processes only, not os.environ: torch does not see it."""

    def __init__(self, index: SyntaxIndex, evaluator: StaticEvaluator) -> None:
        self.evaluator = evaluator
        self.index = index
        self.in_functions = evaluator.function_of  # the nodes inside a function, by id: they run when it is called
        self.modules = {"os"}
        self.environs: set[str] = set()
        self.putenvs: set[str] = set()
        # the module's own functions, and where each is called by its name: read once from the index, so that
        # reading a setter's calls costs its calls, not a walk of the file per setter
        # plain functions (a def of the module's or of a function's body, not a method, not async, no decorator,
        # no yield: a call runs its body), each name defined once, with its calls by name
        self.plain_functions: set[int] = set()
        self.definitions: dict[str, int] = {}  # a method's name counts too: it may be the one a call runs
        self.calls_of: dict[str, list[ast.Call]] = {}
        self.name_uses = index.name_uses
        self.expanded: set[int] = set()  # functions whose module-level calls were given their unknown setting
        for scope, statement in index.definitions:
            self.definitions[statement.name] = self.definitions.get(statement.name, 0) + 1
            if isinstance(statement, ast.FunctionDef) and not isinstance(scope, ast.ClassDef) \
                    and not statement.decorator_list and not _yields(statement):
                self.plain_functions.add(id(statement))
        for node in index.imports:
            if isinstance(node, ast.Import):
                self.modules.update(alias.asname or alias.name for alias in node.names if alias.name == "os")
            elif node.module == "os":
                self.environs.update(alias.asname or alias.name for alias in node.names if alias.name == "environ")
                self.putenvs.update(alias.asname or alias.name for alias in node.names if alias.name == "putenv")
        for call in index.calls:
            if isinstance(call.func, ast.Name):
                self.calls_of.setdefault(call.func.id, []).append(call)
        self.settings: list[ArchListSetting] = []
        self.putenv_lines: list[int] = []

    def read(self) -> tuple[list[ArchListSetting], list[int]]:
        """(the settings in the file's line order, the lines of os.putenv calls that name TORCH_CUDA_ARCH_LIST)."""
        for node in self.index.writes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and self._is_environ(target.value, node.lineno):
                        self._keyed(node, target.slice, node.value, "set")
            elif isinstance(node, ast.Delete):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and self._is_environ(target.value, node.lineno):
                        self._keyed(node, target.slice, None, "unset")
            elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.BitOr) and self._is_environ(node.target, node.lineno):
                self._mapping(node, node.value)
            elif isinstance(node, ast.Call):
                self._call(node)
        self.settings.sort(key=lambda setting: setting.line)
        return self.settings, sorted(self.putenv_lines)

    def _call(self, node: ast.Call) -> None:
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "putenv" and isinstance(func.value, ast.Name)
                and func.value.id in self.modules) or (isinstance(func, ast.Name) and func.id in self.putenvs):
            key = self.evaluator.constant(node.args[0], node.lineno) if node.args else None
            if key == ARCH_LIST:
                self.putenv_lines.append(node.lineno)
            return
        if not isinstance(func, ast.Attribute) or not self._is_environ(func.value, node.lineno):
            return
        if func.attr in ("setdefault", "pop") and node.args:
            value = node.args[1] if func.attr == "setdefault" and len(node.args) > 1 else None
            if func.attr == "setdefault" and value is None:  # setdefault(key) sets nothing readable: None is no str
                return
            self._keyed(node, node.args[0], value, "setdefault" if func.attr == "setdefault" else "unset")
        elif func.attr == "update":
            self._mappings_of(node, node)
        elif func.attr == "clear":
            self._add(node, None, "unset")

    def _mappings_of(self, call: ast.Call, node: ast.AST) -> None:
        """The entries of update(...) or dict(...) `call` (made at `node`): its mappings and keywords."""
        for argument in call.args:
            self._mapping(node, argument)
        for keyword in call.keywords:
            if keyword.arg is None:
                self._mapping(node, keyword.value)
            elif keyword.arg == ARCH_LIST:
                self._add(node, keyword.value, "set")

    def _keyed(self, node: ast.AST, key: ast.AST, value: ast.AST | None, kind: str) -> None:
        """One key of os.environ set, set by default or unset: a key build cannot read may be this one. A key
        that is a parameter of a module-level function only called by name (def _env(k, v): os.environ[k] =
        v) is read at each call, from the argument the call passes; one level only, so the reading stays
        linear: an argument that is no constant is a key build cannot read."""
        name = self.evaluator.constant(key, node.lineno)
        if name == ARCH_LIST:
            self._add(node, value, kind)
        elif name is None and kind != "unset":
            calls = self._calls_passing(node, key)
            if calls is None:
                self._add(node, None, kind, readable=False)
                return
            for call, argument_of, parameters in calls:
                passed_key = argument_of(key)
                given = self.evaluator.constant(passed_key, call.lineno) if passed_key is not None else None
                if given == ARCH_LIST:
                    if isinstance(value, ast.Name) and value.id in parameters:  # the value the call passes
                        passed_value = argument_of(value)
                        self._add(call, passed_value, kind, readable=passed_value is not None)
                    else:  # the function's own value: read where the function is written
                        self._add(node, value, kind)
                elif given is None:
                    self._add(call, None, kind, readable=False)

    def _called_only_by_name(self, function: ast.AST | None) -> list[ast.Call] | None:
        """The calls of a plain function (self.plain_functions), its name defined once, that is used only by
        calling it by its name, each with its arguments spelled out (no *args, no **kwargs); None for anything
        else (a method, an async def, a generator, a decorated function, one passed around or never called):
        where or whether its body runs is not known."""
        if not isinstance(function, ast.FunctionDef) or id(function) not in self.plain_functions \
                or self.definitions.get(function.name, 0) != 1:
            return None
        calls = self.calls_of.get(function.name, [])
        if not calls or self.name_uses.get(function.name, 0) != len(calls) or any(
                isinstance(argument, ast.Starred) for call in calls for argument in call.args) or any(
                keyword.arg is None for call in calls for keyword in call.keywords):
            return None
        return calls

    def _calls_passing(self, node: ast.AST, key: ast.AST) -> list[tuple[ast.Call, object, set[str]]] | None:
        """Where key is a parameter of the plain function around node, called only by name: each call, with
        what it passes for a parameter (a function of the parameter's Name; None where it passes nothing
        readable) and the function's parameters; None otherwise."""
        function = self.evaluator.function_of.get(id(node))
        calls = self._called_only_by_name(function)
        if calls is None or not isinstance(key, ast.Name):
            return None
        assert isinstance(function, ast.FunctionDef)
        parameters = [argument.arg for argument in function.args.posonlyargs + function.args.args]
        keyword_only = [argument.arg for argument in function.args.kwonlyargs]
        if key.id not in parameters + keyword_only or function.args.vararg or function.args.kwarg:
            return None

        def passed(call: ast.Call):
            def argument_of(parameter: ast.AST | None) -> ast.AST | None:
                if not isinstance(parameter, ast.Name) or parameter.id not in parameters + keyword_only:
                    return None
                for keyword in call.keywords:
                    if keyword.arg == parameter.id:
                        return keyword.value
                if parameter.id in parameters and parameters.index(parameter.id) < len(call.args):
                    return call.args[parameters.index(parameter.id)]
                return None  # its default: not read
            return argument_of

        return [(call, passed(call), {*parameters, *keyword_only}) for call in calls]

    def _mapping(self, node: ast.AST, mapping: ast.AST) -> None:
        """update(...) or |= with a dict: its TORCH_CUDA_ARCH_LIST entry, or an unknown setting where the
        dict or one of its keys is not static."""
        if isinstance(mapping, ast.Name):
            bound = self.evaluator.bound(mapping.id, node.lineno, mapping)
            if bound is None or mapping.id in self.evaluator.mutated:
                self._add(node, None, "set", readable=False)
                return
            mapping = bound[1]
        if isinstance(mapping, ast.Call) and call_name(mapping) == "dict":  # dict(KEY=...), dict({...}, KEY=...)
            self._mappings_of(mapping, node)
            return
        if not isinstance(mapping, ast.Dict):
            self._add(node, None, "set", readable=False)
            return
        for key, value in zip(mapping.keys, mapping.values):
            if key is None:  # {**other}
                self._mapping(node, value)
            else:
                self._keyed(node, key, value, "set")

    def _add(self, node: ast.AST, value: ast.AST | None, kind: str, readable: bool = True) -> None:
        text = None
        if readable and value is not None:
            constant = self.evaluator.constant(value, node.lineno)
            text = str(constant) if isinstance(constant, str) else None
        elif readable and kind == "unset":
            text = ""
        deferred = id(node) in self.in_functions
        self.settings.append(ArchListSetting(node.lineno, text, deferred, kind, shown(node)))
        function = self.evaluator.function_of.get(id(node))
        if deferred and id(function) not in self.expanded:
            # a plain function called by its name at module level may set it there: what it leaves is not read
            # (its settings' order, branches and the calls between them), so each such call is one setting of
            # a value build cannot read, once per function however many settings it holds
            self.expanded.add(id(function))
            for call in self._called_only_by_name(function) or []:
                if id(call) not in self.in_functions:
                    self.settings.append(ArchListSetting(call.lineno, None, False, "set", shown(call)))

    def _is_environ(self, node: ast.AST, before: int, depth: int = 0) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id in self.modules
        if isinstance(node, ast.Name):
            if node.id in self.environs:
                return True
            bound = self.evaluator.bound(node.id, before, node)
            return bound is not None and depth < 20 and self._is_environ(bound[1], bound[0], depth + 1)
        return False


def _yields(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a def is a generator: calling it runs none of its body. Its own body only, not the functions
    and lambdas defined in it."""
    waiting: list[ast.AST] = list(function.body)
    while waiting:
        node = waiting.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            waiting.extend(ast.iter_child_nodes(node))
    return False
