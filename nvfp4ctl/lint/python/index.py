"""One pass over a module's ast: imports, module-level names, the timed path and what the input
tuple's elements are called in each function on it.

The timed path is `custom_kernel` and every module-level function or class method it reaches
through calls in this file (a simple call graph: names, self.method, Class.method, instance()).
Where custom_kernel is made by a function of this file (`custom_kernel = make()`, or a decorator
`@memo`), what is timed is the nested function that one returns; the maker itself ran once, at import.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from dataclasses import dataclass, field

from nvfp4ctl.lint.python.constants import constant, integer, module_tuples

ENTRY = "custom_kernel"
TUPLE = -1  # binding of a name holding the whole input tuple; 0.. name one element
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
# A part of the tuple held as a sequence, element by element (None: not one of the input's elements):
# `a, b, *rest = data` gives rest (2, 3, 4, 5, 6) in the GEMM, `pair = (data[4], data[5])` (4, 5).
View = tuple[int | None, ...]
Binding = int | View  # what a name may hold: one element (or TUPLE), or a view
Event = Binding | frozenset[Binding] | None  # an assignment: a binding, one of several, or something else
_SHARED_NODES = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
END_OF_MODULE = (1 << 62, 0)  # a position past every statement


def dotted(node: ast.AST) -> str | None:
    """"torch.cuda.graph" for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def call_name(call: ast.Call) -> str:
    """Last name of what is called: "compile" for torch.compile(...), "" when not a plain name."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def parameter_names(function: FunctionNode | ast.Lambda) -> set[str]:
    """Every parameter's name: positional, keyword-only, *args and **kwargs."""
    args = function.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a is not None}


def keyword_parameters(function: FunctionNode) -> set[str]:
    """The parameters a call can give by keyword: positional-or-keyword and keyword-only (a keyword naming none
    of them goes to **kwargs, or is a TypeError)."""
    args = function.args
    return {a.arg for a in [*args.args, *args.kwonlyargs]}


def parameter_defaults(function: FunctionNode | ast.Lambda) -> dict[str, ast.expr]:
    """name -> default value for each parameter that has one, positional and keyword-only."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip((a.arg for a in positional[len(positional) - len(args.defaults):]), args.defaults))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    return defaults


def catches(handler: ast.ExceptHandler, raised: set[str], index: ModuleIndex) -> bool:
    """Does an except clause catch one of the exceptions `raised` (bare, a name, a dotted name or a tuple of
    them, tuples nested in it included as Python reads them, and a name the module binds once to such a tuple:
    `ERRORS = (KeyError, IndexError)`, then `except ERRORS:`; above the clause where that runs as the module
    is read, anywhere for a clause in a function body, but above the first call where the module calls that
    function as it is read)? Of such calls only a module-level function's, called by its name from module-level
    code, are seen: a clause in a method or a nested function, or in a function the module reaches through
    another, reads the tuple as bound wherever it is. A builtin exception
    it names catches its subclasses too, as Python's hierarchy has it (`except LookupError:` catches
    KeyError, `except Exception:` all but a few; IOError and EnvironmentError are OSError), read by its last
    part (builtins.OSError is OSError); a name no builtin exception has catches what is named so."""
    if handler.type is None:
        return True
    key = ("module tuples",)
    if key not in index.memo:
        index.memo[key] = module_tuples(index.tree)
    tuples: dict[str, tuple[ast.Tuple, ast.stmt]] = index.memo[key]  # type: ignore[assignment]
    read_at = _first_read_at(handler, index)
    bound = {name: value for name, (value, statement) in tuples.items()
             if position(statement) < read_at and _names_classes(value)}
    return any(_catches_one(kind, raised) for kind in _caught_kinds(handler.type, bound, set()))


def _first_read_at(handler: ast.ExceptHandler, index: ModuleIndex) -> tuple[int, int]:
    """Where the module, as it is read, may first run the clause: a module-level (or class-body) clause where it
    stands; a clause in a module-level function at the first module-level call of that function by its name, so
    a tuple bound below that call is not bound yet there (Python raises NameError); else past the module's end,
    as a function runs once the module has bound its names."""
    function = index.enclosing_function(handler)
    if function is None:
        return position(handler)
    if index.functions.get(function.name) is not function:
        return END_OF_MODULE
    key = ("module-level calls",)
    if key not in index.memo:
        index.memo[key] = _first_module_level_calls(index)
    first_calls: dict[str, tuple[int, int]] = index.memo[key]  # type: ignore[assignment]
    return first_calls.get(function.name, END_OF_MODULE)


def _first_module_level_calls(index: ModuleIndex) -> dict[str, tuple[int, int]]:
    """name -> position of the first call of that name the module makes as it is read: outside any function
    and any lambda, which run only when called."""
    first: dict[str, tuple[int, int]] = {}
    for node in index.all_nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and not any(isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for a in index.ancestors(node)):
            first[node.func.id] = min(first.get(node.func.id, END_OF_MODULE), position(node))
    return first


def _names_classes(kinds: ast.Tuple) -> bool:
    """Is every item a name or dotted name (`KeyError`, `errors.CacheMiss`) or a tuple of them?"""
    return all(_names_classes(kind) if isinstance(kind, ast.Tuple) else dotted(kind) is not None for kind in kinds.elts)


def _catches_one(kind: ast.expr, raised: set[str]) -> bool:
    name = (dotted(kind) or "").rpartition(".")[2]
    if name in raised:
        return True
    caught = _builtin_exception(name)
    return caught is not None and any(issubclass(one, caught) for one in map(_builtin_exception, raised) if one)


def _builtin_exception(name: str) -> type[BaseException] | None:
    found = getattr(builtins, name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _caught_kinds(kind: ast.expr, tuples: dict[str, ast.Tuple], expanded: set[str]) -> list[ast.expr]:
    """The exception classes an except clause names: `except (KeyError, (IndexError,)):` names both, as
    does `except ERRORS:` where tuples holds ERRORS = (KeyError, IndexError). Each name is expanded once
    (expanded): a tuple naming itself, or named again, adds nothing new."""
    if isinstance(kind, ast.Name) and kind.id in tuples:
        if kind.id in expanded:
            return []
        expanded.add(kind.id)
        kind = tuples[kind.id]
    if isinstance(kind, ast.Tuple):
        return [inner for element in kind.elts for inner in _caught_kinds(element, tuples, expanded)]
    return [kind]


def position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


@dataclass
class Function:
    node: FunctionNode
    cls: str | None = None  # owning class for methods
    entry: bool = False  # what the harness calls: custom_kernel, or what it was made from
    # name -> [(position, binding)] in source order; binding None = rebound to something else
    events: dict[str, list[tuple[tuple[int, int], Event]]] = field(default_factory=dict)
    param_bindings: dict[str, set[Binding]] = field(default_factory=dict)
    # key -> what the callers hand the **kwargs parameter under a key naming no parameter (`_run(sfa=sfa_ref)`
    # of `def _run(**kw)`), followed on where the function hands its **kwargs to a helper (`_inner(**kw)`)
    keyword_bindings: dict[str, set[Binding]] = field(default_factory=dict)
    # what an entry made by a lambda or functools.partial is always given beside the input
    # (`lambda data: _impl(data, force=True)`): parameter -> argument, None where the calls disagree
    passed: dict[str, ast.expr | None] = field(default_factory=dict)
    passes_unknown: bool = False  # given *args or **kwargs: any parameter may hold anything

    @property
    def name(self) -> str:
        return f"{self.cls}.{self.node.name}" if self.cls else self.node.name

    def params(self) -> list[str]:
        args = self.node.args
        names = [a.arg for a in [*args.posonlyargs, *args.args]]
        return names[1:] if self.cls and names and names[0] in ("self", "cls") else names

    def possible(self, name: str, at: tuple[int, int]) -> set[Binding]:
        """Tuple elements (or TUPLE) a name may hold at a position: its last assignment before it,
        else what the callers pass for the parameter of that name."""
        current: set[Binding] = set(self.param_bindings.get(name, ()))
        for where, value in self.events.get(name, ()):
            if where < at:
                current = set() if value is None else set(value) if isinstance(value, frozenset) else {value}
            else:
                break
        return current

    def binding(self, name: str, at: tuple[int, int]) -> Binding | None:
        found = self.possible(name, at)
        return next(iter(found)) if len(found) == 1 else None


class ModuleIndex:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        # One breadth-first walk gives every node and its parent. Context and operator nodes are
        # shared singletons in CPython's ast (no single parent) and no rule needs them.
        self.parents: dict[ast.AST, ast.AST] = {}
        self.all_nodes: list[ast.AST] = [tree]
        position_in_walk = 0
        while position_in_walk < len(self.all_nodes):
            parent = self.all_nodes[position_in_walk]
            position_in_walk += 1
            for child in ast.iter_child_nodes(parent):
                if not isinstance(child, _SHARED_NODES):
                    self.parents[child] = parent
                    self.all_nodes.append(child)
        self._walks: dict[int, list[ast.AST]] = {id(tree): self.all_nodes}
        self._index_function_bodies()
        self._stored: dict[int, set[str]] = {}
        self._declared: dict[int, tuple[set[str], set[str]]] = {}  # id -> (global, nonlocal) names
        self._assigned: dict[int, dict[str, list[ast.AST]]] = {}
        self._callees: dict[tuple[int, str | None], list[tuple[FunctionNode, str | None, ast.Call | None]]] = {}
        self.memo: dict[tuple[object, ...], object] = {}  # a rule's own per-module results, keyed (rule, ...)
        self.imports: dict[str, str] = {}
        self.functions: dict[str, FunctionNode] = {}
        self.classes: dict[str, dict[str, FunctionNode]] = {}
        self.instances: dict[str, str] = {}  # module variable -> class it was made from
        self.module_names: set[str] = set()
        self._collect_module_level()
        self.timed: list[Function] = []
        self._build_timed_path()

    # -- module level ------------------------------------------------------------------------------
    def _collect_module_level(self) -> None:
        for node in self.all_nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.imports[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in self.tree.body:
            for stmt in _flatten_module_statement(node):
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions[stmt.name] = stmt
                elif isinstance(stmt, ast.ClassDef):
                    self.classes[stmt.name] = {
                        item.name: item for item in stmt.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    }
                elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    for target in targets:
                        for name in _target_names(target):
                            self.module_names.add(name)
                    value = stmt.value
                    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                        for target in targets:
                            if isinstance(target, ast.Name):
                                self.instances[target.id] = value.func.id

    def _index_function_bodies(self) -> None:
        """Every function's nodes (nested ones included) from the one walk of the whole tree."""
        nearest: dict[int, ast.AST | None] = {id(self.tree): None}
        own: dict[int, list[ast.AST]] = {}
        functions: list[ast.AST] = []
        for node in self.all_nodes:  # breadth-first: a parent is always seen before its children
            parent = self.parents.get(node)
            if parent is None:
                continue
            enclosing = parent if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) else nearest[id(parent)]
            nearest[id(node)] = enclosing
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append(node)
            if enclosing is not None:
                own.setdefault(id(enclosing), []).append(node)
        for function in reversed(functions):  # inner functions come later: fold them into outer ones
            body = [function, *own.get(id(function), [])]
            self._walks[id(function)] = body
            outer = nearest.get(id(function))
            if outer is not None:
                own.setdefault(id(outer), []).extend(body[1:])  # the inner def itself is already there

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """ast.walk(node), computed once per node (rules walk the same functions many times)."""
        found = self._walks.get(id(node))
        if found is None:
            found = self._walks[id(node)] = list(ast.walk(node))
        return found

    def stored_names(self, node: ast.AST) -> set[str]:
        found = self._stored.get(id(node))
        if found is None:
            found = self._stored[id(node)] = {
                n.id for n in self.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return found

    def declared_global(self, node: ast.AST) -> set[str]:
        return self._declarations(node)[0]

    def declared_nonlocal(self, node: ast.AST) -> set[str]:
        return self._declarations(node)[1]

    def _declarations(self, node: ast.AST) -> tuple[set[str], set[str]]:
        """(names declared global, names declared nonlocal) anywhere inside node, in one walk."""
        found = self._declared.get(id(node))
        if found is None:
            global_names: set[str] = set()
            nonlocal_names: set[str] = set()
            for n in self.walk(node):
                if isinstance(n, ast.Global):
                    global_names.update(n.names)
                elif isinstance(n, ast.Nonlocal):
                    nonlocal_names.update(n.names)
            found = self._declared[id(node)] = (global_names, nonlocal_names)
        return found

    def own_names(self, function: FunctionNode) -> set[str]:
        """Names local to a function itself (parameters and assignments), not to functions nested in it."""
        key = ("own names", id(function))
        found = self.memo.get(key)
        if found is None:
            found = parameter_names(function)
            found |= {n.id for n in self.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                      and self.enclosing_function(n) is function}
            found |= {n.name for n in self.nested_functions(function)}
            found -= {name for n in self.walk(function) if isinstance(n, (ast.Global, ast.Nonlocal))
                      and self.enclosing_function(n) is function for name in n.names}
            self.memo[key] = found
        return found  # type: ignore[return-value]

    def nested_functions(self, function: FunctionNode) -> list[FunctionNode]:
        """Functions defined directly in a function's body (not in functions nested deeper), found once
        per function: _beside asks for a maker's at every call site in what it makes."""
        key = ("nested functions", id(function))
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = [
                n for n in self.walk(function) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and n is not function and self.enclosing_function(n) is function]
        return found  # type: ignore[return-value]

    def closure_owner(self, function: FunctionNode, name: str) -> FunctionNode | None:
        """The enclosing function whose local `name` is (a free variable of `function`), if any."""
        for ancestor in self.ancestors(function):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in self.own_names(ancestor):
                return ancestor
        return None

    def assignments(self, node: ast.AST, name: str) -> list[ast.AST]:
        """Values assigned to a plain name anywhere inside node (x = ..., x := ..., and the pairs of
        m, n = a.shape[0], b.shape[0])."""
        table = self._assigned.get(id(node))
        if table is None:
            table = self._assigned[id(node)] = {}
            for inner in self.walk(node):
                if isinstance(inner, ast.Assign):
                    for target in inner.targets:
                        if isinstance(target, ast.Name):
                            table.setdefault(target.id, []).append(inner.value)
                        elif (isinstance(target, ast.Tuple) and isinstance(inner.value, ast.Tuple)
                              and len(target.elts) == len(inner.value.elts)):
                            for one, value in zip(target.elts, inner.value.elts):
                                if isinstance(one, ast.Name):
                                    table.setdefault(one.id, []).append(value)
                elif isinstance(inner, ast.NamedExpr):
                    table.setdefault(inner.target.id, []).append(inner.value)
        return table.get(name, [])

    def splatted(self, keyword: ast.keyword) -> dict[str, ast.expr] | None:
        """What a `**name` hands over, key by key, where lint sees it all: name is bound once in the function,
        to a dict literal with string keys or a `dict(key=value, ...)` call, and used only as `**name`
        (`kw = dict(sfa=sfa_ref); kernel(**kw)`). None for any other mapping, which may hold anything."""
        if keyword.arg is not None or not isinstance(keyword.value, ast.Name):
            return None
        scope = self.enclosing_function(keyword)
        return None if scope is None else self.mapping(scope, keyword.value.id)

    def mapping(self, scope: FunctionNode, name: str) -> dict[str, ast.expr] | None:
        """A function's name that only ever holds one mapping lint sees whole, its items; see splatted."""
        key = ("splatted mapping", id(scope), name)
        if key not in self.memo:
            self.memo[key] = self._mapping(scope, name)
        return self.memo[key]  # type: ignore[return-value]

    def _mapping(self, scope: FunctionNode, name: str) -> dict[str, ast.expr] | None:
        if name in self.declared_global(scope) | self.declared_nonlocal(scope):
            return None
        uses = [n for n in self.walk(scope) if isinstance(n, ast.Name) and n.id == name]
        stores = [n for n in uses if isinstance(n.ctx, ast.Store)]
        if len(stores) != 1 or not all(isinstance(n.ctx, ast.Store) or _splat_of(n, self.parents.get(n))
                                       for n in uses):
            return None  # bound again, changed (kw["sfb"] = ...) or read some other way
        statement = self.parents.get(stores[0])
        if not (isinstance(statement, ast.Assign) and statement.targets == [stores[0]]):
            return None
        value = statement.value
        if isinstance(value, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                               for k in value.keys):
            return {k.value: v for k, v in zip(value.keys, value.values)}  # type: ignore[union-attr]
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict"
                and not value.args and all(k.arg is not None for k in value.keywords)
                and "dict" not in self.functions and "dict" not in self.imports and "dict" not in self.module_names):
            return {k.arg: k.value for k in value.keywords}  # type: ignore[misc]
        return None

    def appended(self, scope: FunctionNode, name: str) -> list[ast.Name] | None:
        """The names appended, in order, to a list a function binds once to `[]` and changes only by
        `name.append(x)` statements of that same block after it (`args = []; args.append(a);
        args.append(sfa_ref)`): it holds those items at those places, as `args = [a, sfa_ref]` would. None
        for any other name: bound again, changed another way, or appended to in a branch or loop, where
        which item sits where is not known."""
        key = ("appended list", id(scope), name)
        if key not in self.memo:
            self.memo[key] = self._appended(scope, name)
        return self.memo[key]  # type: ignore[return-value]

    def _appended(self, scope: FunctionNode, name: str) -> list[ast.Name] | None:
        if name in self.declared_global(scope) | self.declared_nonlocal(scope):
            return None
        uses = [n for n in self.walk(scope) if isinstance(n, ast.Name) and n.id == name]
        stores = [n for n in uses if not isinstance(n.ctx, ast.Load)]
        statement = self.parents.get(stores[0]) if len(stores) == 1 else None
        if not (isinstance(statement, ast.Assign) and statement.targets == stores
                and isinstance(statement.value, ast.List) and not statement.value.elts):
            return None
        block = self.block_of(statement)
        appends: list[ast.Expr] = []
        for use in uses:
            holder = self.parents.get(use)
            if use is stores[0] or not isinstance(holder, (ast.Attribute, ast.Subscript)):
                continue  # the binding, or the list read whole (len(args), ext.gemm(args), *args)
            if isinstance(holder, ast.Subscript) and isinstance(holder.ctx, ast.Load) and holder.value is use:
                continue  # args[1] reads an item
            call, statement_of_call = self.parents.get(holder), self.parents.get(self.parents.get(holder))  # type: ignore[arg-type]
            if not (isinstance(holder, ast.Attribute) and holder.attr == "append" and isinstance(call, ast.Call)
                    and call.func is holder and len(call.args) == 1 and isinstance(call.args[0], ast.Name)
                    and not call.keywords and isinstance(statement_of_call, ast.Expr)
                    and block is not None and statement_of_call in block
                    and block.index(statement_of_call) > block.index(statement)):
                return None  # args.extend(...), args[1] = x, args.sort(), an append in a branch
            appends.append(statement_of_call)
        appends.sort(key=block.index)  # type: ignore[arg-type]
        return [a.value.args[0] for a in appends]  # type: ignore[attr-defined,misc]

    def block_of(self, statement: ast.stmt) -> list[ast.stmt] | None:
        """The statement list (a body, an else, a finally) that holds the statement."""
        parent = self.parents.get(statement)
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(parent, field_name, None)
            if isinstance(block, list) and any(s is statement for s in block):
                return block
        return None

    def resolve(self, node: ast.AST) -> str | None:
        """Dotted name with its first part replaced by what it was imported as."""
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.imports:
            return self.imports[head] + ("." + rest if rest else "")
        return name

    def is_imported_root(self, node: ast.AST) -> bool:
        name = dotted(node)
        return name is not None and name.split(".")[0] in self.imports

    def enclosing_function(self, node: ast.AST) -> FunctionNode | None:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            current = self.parents.get(current)
        return current

    def own_returns(self, function: FunctionNode) -> list[ast.Return]:
        """The function's own return statements, not those of the functions nested in it."""
        return [n for n in self.walk(function) if isinstance(n, ast.Return) and self.enclosing_function(n) is function]

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    # -- timed path --------------------------------------------------------------------------------
    def _method(self, cls: str | None, name: str) -> Function | None:
        if cls in self.classes and name in self.classes[cls]:
            return Function(self.classes[cls][name], cls)
        return None

    def _roots(self) -> list[Function]:
        if ENTRY in self.functions:
            entry = self.functions[ENTRY]
            made = [made for decorator in entry.decorator_list for made in self._made_by(decorator, decorator=True)]
            return [Function(entry, entry=True), *(Function(node, entry=True) for node in made)]
        roots: list[Function] = []
        for node in (stmt for top in self.tree.body for stmt in _flatten_module_statement(top)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            if not targets or node.value is None or not any(isinstance(t, ast.Name) and t.id == ENTRY for t in targets):
                continue
            value = self._through_aliases(node.value)
            if isinstance(value, ast.Lambda):  # custom_kernel = lambda data: _impl(64, data)
                roots.extend(self._called_by_lambda(value))
                continue
            aliased = self._aliased(value)
            if aliased is not None:  # custom_kernel = _impl, = functools.partial(_impl, ...), = _runner.run
                roots.append(aliased)
                continue
            made = self._made_by(value)
            roots.extend(Function(inner, entry=True) for inner in made)
            for inner in self.walk(value):
                if isinstance(inner, ast.Name):
                    if inner.id in self.functions and not (made and self._is_called(inner, value)):
                        roots.append(Function(self.functions[inner.id], entry=True))
                    for cls in (inner.id, self.instances.get(inner.id)):
                        method = self._method(cls, "__call__")
                        if method is not None:
                            method.entry = True
                            roots.append(method)
        return roots

    def _through_aliases(self, value: ast.AST) -> ast.AST:
        """What a module name stands for when it is set once at module level (`kernel = _impl` or
        `run = make()`, then `custom_kernel = kernel`), followed a few names deep."""
        for _ in range(3):
            if not (isinstance(value, ast.Name) and value.id in self.module_names and value.id not in self.functions
                    and value.id not in self.classes):
                break
            assigned = [v for v in self.assignments(self.tree, value.id) if self.enclosing_function(v) is None]
            if len(assigned) != 1:
                break
            value = assigned[0]
        return value

    def _aliased(self, value: ast.AST, bound: list[ast.expr] | None = None, keywords: dict[str, ast.expr] | None = None,
                 depth: int = 0) -> Function | None:
        """The function of this file that custom_kernel names: `custom_kernel = _impl`, through
        functools.partial (the data parameter is the first one partial leaves open) and bound methods
        of objects of the file's classes (`_runner.run`, `Runner().run`). bound and keywords: what the
        partials around it pass, which the function is given on every call."""
        bound = bound or []
        keywords = keywords or {}
        found: Function | None = None
        if isinstance(value, ast.Name) and value.id in self.functions:
            found = Function(self.functions[value.id], entry=True)
        elif isinstance(value, ast.Attribute):
            owner = value.value
            cls = self.instances.get(owner.id) if isinstance(owner, ast.Name) else (
                owner.func.id if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) else None)
            found = self._method(cls, value.attr)
            if found is not None:
                found.entry = True
        elif (isinstance(value, ast.Call) and value.args and not any(isinstance(a, ast.Starred) for a in value.args)
              and (self.resolve(value.func) or "") in ("functools.partial", "partial") and depth < 3):
            # an inner partial's arguments come first; an outer one's keyword overrides the inner one's
            inner_keywords = {k.arg: k.value for k in value.keywords if k.arg and k.arg not in keywords}
            found = self._aliased(self._through_aliases(value.args[0]), [*value.args[1:], *bound],
                                 {**keywords, **inner_keywords}, depth + 1)
            if found is not None and any(k.arg is None for k in value.keywords):
                found.passes_unknown = True  # partial(_impl, **options)
            return found
        if found is not None:
            params = found.params()
            open_params = [name for name in params[len(bound):] if name not in keywords]
            if not open_params:
                return None
            found.param_bindings[open_params[0]] = {TUPLE}
            found.passed.update({**dict(zip(params, bound)), **keywords})
        return found

    def _called_by_lambda(self, value: ast.Lambda) -> list[Function]:
        """What `custom_kernel = lambda data: _impl(64, data)` runs: the file's functions it calls, each
        parameter holding what the lambda's call passes it (the harness's tuple comes in as the lambda's
        first parameter), so data is _impl's second parameter here, not its first."""
        # the lambda stands in as the caller: only its parameters and the calls in it are read
        caller = Function(value, entry=True)  # type: ignore[arg-type]
        params = caller.params()
        if params:
            caller.param_bindings[params[0]] = {TUPLE}
        elif value.args.vararg is not None:  # lambda *args: _impl(*args, tile=64): args is (data,)
            caller.param_bindings[value.args.vararg.arg] = {(TUPLE,)}
        called: dict[ast.AST, Function] = {}
        seen_calls: set[ast.AST] = set()
        for callee, call in self.callees(caller):
            function = called.setdefault(callee.node, callee)
            function.entry = True
            if call is not None:
                _bind_params(function, call, caller, self)
                for name in function.params():  # what the calls pass is all the parameters hold (even nothing):
                    function.param_bindings.setdefault(name, set())  # the first one is not the harness's tuple
                _record_passed(function, call, seen=callee.node in seen_calls)
                seen_calls.add(callee.node)
        return list(called.values())

    @staticmethod
    def _is_called(name: ast.Name, value: ast.AST) -> bool:
        return isinstance(value, ast.Call) and value.func is name

    def _made_by(self, maker: ast.AST, decorator: bool = False) -> list[FunctionNode]:
        """The nested functions a maker of this file returns: `custom_kernel = make(...)` is what make
        returns; `@memo` is what memo returns, `@memo(...)` what the decorator memo(...) returns returns."""
        levels = 1 if decorator else 0
        if isinstance(maker, ast.Call):
            maker, levels = maker.func, levels + 1
        return self._returned_by(maker.id, levels) if isinstance(maker, ast.Name) else []

    def _returned_by(self, maker: str | None, levels: int) -> list[FunctionNode]:
        """What calling the file's function `maker` `levels` times over returns, where that is a nested function."""
        if not levels or maker not in self.functions:
            return []
        found = [self.functions[maker]]  # type: ignore[index]
        for _ in range(levels):
            found = [inner for function in found for inner in self._returned_functions(function)]
        return found

    def _returned_functions(self, function: FunctionNode) -> list[FunctionNode]:
        nested = {n.name: n for n in self.nested_functions(function)}
        return [nested[n.value.id] for n in self.own_returns(function)
                if isinstance(n.value, ast.Name) and n.value.id in nested]

    def callees(self, function: Function) -> list[tuple[Function, ast.Call | None]]:
        """The functions of this file a function calls, each with the call (None where it is only handed on
        or run by a constructor), found once per function: the timed path and NV401's call sites ask for
        the same functions' callees many times. Each answer is a fresh Function, free for the asker to bind."""
        key = (id(function.node), function.cls)
        found = self._callees.get(key)
        if found is None:
            found = self._callees[key] = [(callee.node, callee.cls, call) for callee, call in self._find_callees(function)]
        return [(Function(node, cls), call) for node, cls, call in found]

    def _find_callees(self, function: Function) -> Iterator[tuple[Function, ast.Call | None]]:
        for node in self.walk(function.node):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name):
                    beside = self._beside(function.node, func.id)
                    if beside is not None:  # a nested def shadows the module's function of its name
                        yield Function(beside), node
                    elif func.id in self.functions:
                        yield Function(self.functions[func.id]), node
                        for decorator in self.functions[func.id].decorator_list:  # calling it calls the wrapper
                            for wrapper in self._made_by(decorator, decorator=True):
                                yield Function(wrapper), node
                    for made in self._returned_by(self.instances.get(func.id), 1):  # _run = make(); _run(data)
                        yield Function(made), node
                    for cls, method in ((func.id, "__init__"), (func.id, "__call__"), (self.instances.get(func.id), "__call__")):
                        found = self._method(cls, method)
                        if found is not None:
                            yield found, node if method == "__call__" and cls != func.id else None
                elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                    owner = func.value.id
                    cls = function.cls if owner in ("self", "cls") else self.instances.get(owner, owner)
                    found = self._method(cls, func.attr)
                    if found is not None:
                        yield found, node
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    if isinstance(arg, ast.Name) and arg.id in self.functions:
                        yield Function(self.functions[arg.id]), None

    def _beside(self, function: FunctionNode, name: str) -> FunctionNode | None:
        """A function defined in this one or next to it, in a function enclosing it (a maker's helpers),
        the nearest first, as Python looks a name up."""
        for ancestor in [function, *self.ancestors(function)]:
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for nested in self.nested_functions(ancestor):
                    if nested.name == name:
                        return nested
        return None

    def _build_timed_path(self) -> None:
        roots = self._roots()
        if not roots:
            return
        by_node: dict[ast.AST, Function] = {}
        queue = list(roots)
        for root in roots:
            params = root.params()
            if params and not root.param_bindings:  # an alias through partial says which parameter data is
                root.param_bindings[params[0]] = {TUPLE}
        while queue:
            function = queue.pop(0)
            if function.node in by_node:
                continue
            by_node[function.node] = function
            self.timed.append(function)
            for callee, _ in self.callees(function):
                if callee.node not in by_node:
                    queue.append(callee)
        # Bindings: local assignments, then what callers pass in (a couple of rounds reach helpers).
        for _ in range(3):
            for function in self.timed:
                _local_events(function, self.walk(function.node), self)
            for function in self.timed:
                for callee, call in self.callees(function):
                    if call is not None:
                        _bind_params(by_node[callee.node], call, function, self)

    def is_timed(self, function: FunctionNode | None) -> bool:
        return function is not None and any(f.node is function for f in self.timed)

    def timed_function(self, node: ast.AST) -> Function | None:
        """The timed function whose body (nested code included) holds node."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for function in self.timed:
                    if function.node is ancestor:
                        return function
        return None


def _splat_of(name: ast.Name, parent: ast.AST | None) -> bool:
    """Is the name read as a call's `**name`?"""
    return isinstance(parent, ast.keyword) and parent.arg is None and parent.value is name


def _flatten_module_statement(node: ast.stmt) -> list[ast.stmt]:
    """Module-level statements, looking inside if/try blocks (conditional imports and defs)."""
    if isinstance(node, ast.If):
        return [s for child in [*node.body, *node.orelse] for s in _flatten_module_statement(child)]
    if isinstance(node, ast.Try):
        children = [*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)]
        return [s for child in children for s in _flatten_module_statement(child)]
    return [node]


def _target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _target_names(element)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def tuple_length() -> int:
    """Elements of the problem's input tuple (7 for the GEMM and GEMV, 10 dual, 4 grouped)."""
    from nvfp4ctl.lint.python.facts import current

    return len(current().names)


def element_of(function: Function, node: ast.AST) -> int | None:
    """Which tuple element (or TUPLE) an expression is: data, data[4], rest[0], a name bound to one."""
    if isinstance(node, ast.Name):
        found = function.binding(node.id, position(node))
        return None if isinstance(found, tuple) else found
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tuple", "list") and node.args:
        return TUPLE if element_of(function, node.args[0]) == TUPLE else None
    value = _int_index(node)
    if value is not None:
        if element_of(function, node.value) == TUPLE:  # type: ignore[attr-defined]
            return value + tuple_length() if value < 0 else value
        view = view_of(function, node.value)  # type: ignore[attr-defined]
        if view is not None and -len(view) <= value < len(view):
            return view[value]
    return None


def _int_index(node: ast.AST) -> int | None:
    """4 for x[4] and x[SFA_IDX] (SFA_IDX = 4 at module level), -1 for x[-1] and x[len(x) - 1]; None
    for anything else."""
    if not isinstance(node, ast.Subscript):
        return None
    index = node.slice
    if (isinstance(index, ast.BinOp) and isinstance(index.op, ast.Sub) and isinstance(index.left, ast.Call)
            and isinstance(index.left.func, ast.Name) and index.left.func.id == "len" and len(index.left.args) == 1
            and not index.left.keywords and ast.dump(index.left.args[0]) == ast.dump(node.value)):
        back = _int_constant(index.right)
        return -back if back is not None and back > 0 else None  # x[len(x) - k] is x[-k]
    return _int_constant(index)


def _int_constant(node: ast.AST) -> int | None:
    """4 for 4 and for a module-level constant holding 4, -1 for -1; None for anything else (a
    local name, a float, True)."""
    if isinstance(node, ast.Name):
        return constant(node.id)
    return integer(node)


def view_of(function: Function, node: ast.AST) -> View | None:
    """The elements a sequence expression holds, in order: the whole tuple, data[2:], a name bound to
    a part of it (`*rest` of an unpacking), list(...)/tuple(...) of one, or a literal (data[4], data[5])
    of which at least one item is an element. None: not known to hold any element."""
    if element_of(function, node) == TUPLE:
        return tuple(range(tuple_length()))
    if isinstance(node, ast.Name):
        found = function.binding(node.id, position(node))
        return found if isinstance(found, tuple) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tuple", "list") and node.args:
        return view_of(function, node.args[0])
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        covered = slice_elements(function, node)
        return tuple(covered) if covered is not None else None
    if isinstance(node, (ast.Tuple, ast.List)):
        items: list[int | None] = []
        for item in node.elts:
            if isinstance(item, ast.Starred):
                inner = view_of(function, item.value)
                if inner is None:
                    return None  # an unknown number of items: no positions after it
                items.extend(inner)
            else:
                items.append(element_of(function, item))
        return tuple(items) if any(item is not None for item in items) else None
    return None


def views_of(function: Function, node: ast.AST) -> list[View]:
    """Every view an expression may be: a parameter may be given a different one by each call."""
    if isinstance(node, ast.Name) and element_of(function, node) is None:
        return sorted((b for b in function.possible(node.id, position(node)) if isinstance(b, tuple)), key=repr)
    view = view_of(function, node)
    return [view] if view is not None else []


def elements_of(function: Function, node: ast.AST) -> set[int]:
    """Every element an expression may be (element_of's answer, or one per view of `inputs` in inputs[2])."""
    element = element_of(function, node)
    if element is not None:
        return {element}
    found: set[int] = set()
    value = _int_index(node)
    if value is not None:
        for view in views_of(function, node.value):  # type: ignore[attr-defined]
            if -len(view) <= value < len(view) and view[value] is not None:
                found.add(view[value])  # type: ignore[arg-type]
    return found


def slice_elements(function: Function, node: ast.AST) -> list[int | None] | None:
    """Elements covered by data[a:b] or rest[a:b] (None if node is not such a slice)."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)):
        return None
    whole = view_of(function, node.value)
    if whole is None:
        return None
    bounds: list[int | None] = []
    for part in (node.slice.lower, node.slice.upper, node.slice.step):
        bound = None if part is None else _int_constant(part)
        if part is not None and bound is None:
            return None  # a name, a float, a string: not a slice lint can take (data[:1.5] raises anyway)
        bounds.append(bound)
    if bounds[2] == 0:
        return None  # data[::0] raises ValueError when run; lint must not
    return list(whole[slice(*bounds)])


def _local_events(function: Function, nodes: list[ast.AST], module: ModuleIndex) -> None:
    events: dict[str, list[tuple[tuple[int, int], Event]]] = {}

    def record(name: str, where: tuple[int, int], values: set[Binding | None]) -> None:
        known = {value for value in values if value is not None}
        event: Event = None if not known else known.pop() if len(known) == 1 else frozenset(known)
        events.setdefault(name, []).append((where, event))

    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            end = (getattr(node, "end_lineno", node.lineno), getattr(node, "end_col_offset", 0))
            whole = element_of(function, node.value)
            views = views_of(function, node.value)  # a helper called with several tuples: one per call
            appended = (module.appended(function.node, targets[0].id)
                        if isinstance(targets[0], ast.Name) and isinstance(node.value, ast.List) else None)
            if appended:  # args = [] then args.append(a), args.append(sfa_ref): as args = [a, sfa_ref]
                views = views_of(function, ast.List(elts=list(appended), ctx=ast.Load()))
            for target in targets:
                if isinstance(target, ast.Name):
                    record(target.id, end, {whole} if whole is not None else set(views))
                elif _pairwise(target, node.value):  # refs, perms = rest[:3], rest[3:6]: each its own value
                    for one, value in zip(target.elts, node.value.elts):  # type: ignore[union-attr]
                        element = element_of(function, value)
                        record(one.id, end, {element} if element is not None else set(views_of(function, value)))
                elif isinstance(target, (ast.Tuple, ast.List)):
                    unpacked: dict[str, set[Binding | None]] = {}
                    for view in views or [None]:
                        for name, element in _unpack(target, None if view is None else list(view)):
                            unpacked.setdefault(name, set()).add(element)
                    for name, values in unpacked.items():
                        record(name, end, values)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            looped = loop_values(node)
            for name in _target_names(node.target):
                values: set[Binding | None] = set()
                for value in (looped or {}).get(name, ()):
                    element = element_of(function, value)
                    values |= {element} if element is not None else set(views_of(function, value))
                record(name, position(node.target), values)
        elif isinstance(node, ast.comprehension):
            for name in _target_names(node.target):
                record(name, position(node.target), set())
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:  # what __enter__ returns: nothing lint knows
                for name in _target_names(item.optional_vars) if item.optional_vars is not None else ():
                    record(name, position(item.optional_vars), set())
    for items in events.values():
        items.sort(key=lambda item: item[0])
    function.events = events


def loop_values(loop: ast.For | ast.AsyncFor) -> dict[str, list[ast.expr]] | None:
    """What each name of a loop's target takes, item by item, where the loop runs over a literal (`for t in
    (sfa_ref, sfb_ref):`, `for name, t in (("a", sfa_ref), ("b", sfb_ref)):`); None for any other iterable, or
    an item the target does not pair with name by name."""
    iterable = loop.iter
    if not isinstance(iterable, (ast.Tuple, ast.List)) or any(isinstance(item, ast.Starred) for item in iterable.elts):
        return None
    values: dict[str, list[ast.expr]] = {}
    for item in iterable.elts:
        if isinstance(loop.target, ast.Name):
            values.setdefault(loop.target.id, []).append(item)
        elif _pairwise(loop.target, item):
            for one, value in zip(loop.target.elts, item.elts):  # type: ignore[attr-defined]
                values.setdefault(one.id, []).append(value)
        else:
            return None
    return values


def _pairwise(target: ast.AST, value: ast.AST) -> bool:
    """`x, y = p, q`: names only on the left, as many plain items on the right (no *starred)."""
    return (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts) and all(isinstance(t, ast.Name) for t in target.elts)
            and not any(isinstance(v, ast.Starred) for v in value.elts))


def _unpack(target: ast.Tuple | ast.List, elements: list[int | None] | None) -> list[tuple[str, Binding | None]]:
    """What each name of an unpacking gets; a starred name gets the view of what it takes."""
    names = target.elts
    pairs: list[tuple[str, Binding | None]] = []
    star = next((i for i, e in enumerate(names) if isinstance(e, ast.Starred)), None)
    if elements is not None and (len(names) - (star is not None)) > len(elements) or (
            star is None and elements is not None and len(names) != len(elements)):
        elements = None  # not this problem's tuple (another problem's layout): no positions
    for index, element in enumerate(names):
        if isinstance(element, ast.Starred) and isinstance(element.value, ast.Name) and elements is not None:
            after = len(names) - index - 1
            taken = tuple(elements[index : len(elements) - after])
            pairs.append((element.value.id, taken if any(e is not None for e in taken) else None))
            continue
        if not isinstance(element, ast.Name):
            for name in _target_names(element):
                pairs.append((name, None))
            continue
        value: int | None = None
        if elements is not None:
            if star is None or index < star:
                value = elements[index] if index < len(elements) else None
            else:
                from_end = len(names) - index
                value = elements[-from_end] if from_end <= len(elements) else None
        pairs.append((element.id, value))
    return pairs


def _bind_params(callee: Function, call: ast.Call, caller: Function, module: ModuleIndex) -> None:
    """Each argument of a call to the callee's parameter it lands in: positional ones in order (up to
    a *starred one, whose items go on from there), keywords by name, keyword-only parameters included,
    also from a **mapping lint sees whole (ModuleIndex.splatted)."""
    params = callee.params()
    index = 0
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            for offset, element in enumerate(view_of(caller, arg.value) or ()):
                if element is not None and index + offset < len(params):
                    callee.param_bindings.setdefault(params[index + offset], set()).add(element)
            break  # positions after *args are unknown; keywords still name theirs
        if index < len(params):
            _bind(callee.param_bindings, params[index], caller, arg)
        index += 1
    by_keyword = {*params, *(a.arg for a in callee.node.args.kwonlyargs)}
    takes_any = callee.node.args.kwarg is not None
    for keyword in call.keywords:
        given = [(keyword.arg, keyword.value)] if keyword.arg is not None else (module.splatted(keyword) or {}).items()
        for key, value in given:
            if key in by_keyword:
                _bind(callee.param_bindings, key, caller, value)
            elif takes_any:
                _bind(callee.keyword_bindings, key, caller, value)
        if hands_on_own_keywords(caller, keyword):
            for key, held in caller.keyword_bindings.items():  # _run(**kw) hands on what _run's callers gave kw
                if key in by_keyword or takes_any:
                    bindings = callee.param_bindings if key in by_keyword else callee.keyword_bindings
                    bindings.setdefault(key, set()).update(held)


def own_keywords(function: Function, name: ast.Name) -> bool:
    """Is the name the function's **kwargs parameter (`opts` of `def _launch(a, **opts)`), not bound again
    before this use?"""
    kwargs = function.node.args.kwarg
    return kwargs is not None and name.id == kwargs.arg \
        and not any(where < position(name) for where, _ in function.events.get(name.id, ()))


def hands_on_own_keywords(function: Function, argument: ast.expr | ast.keyword) -> bool:
    """Is the argument `**kw` of the function's own **kwargs parameter, handing on what its callers gave it?"""
    return isinstance(argument, ast.keyword) and argument.arg is None and isinstance(argument.value, ast.Name) \
        and own_keywords(function, argument.value)


def passed_arguments(callee: Function, call: ast.Call) -> dict[str, ast.expr] | None:
    """What a call passes each parameter of the callee, by position or keyword; None for a call with a
    *starred argument or a **mapping, which may pass any parameter anything."""
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
        return None
    passed: dict[str, ast.expr] = dict(zip(callee.params(), call.args))
    passed.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    return passed


def _record_passed(callee: Function, call: ast.Call, seen: bool) -> None:
    """What one call of an entry's lambda passes each parameter, by position or keyword; a parameter
    two calls pass differently, or one passes and one leaves to its default, is known to hold neither,
    and so is every one after a *starred argument or beside a **mapping."""
    passed = passed_arguments(callee, call)
    if passed is None:
        callee.passes_unknown = True
        return
    if not seen:
        callee.passed.update(passed)
        return
    for name in set(callee.passed) | set(passed):
        before, now = callee.passed.get(name), passed.get(name)
        if before is None or now is None or ast.dump(before) != ast.dump(now):
            callee.passed[name] = None


def _bind(bindings: dict[str, set[Binding]], param: str, caller: Function, arg: ast.AST) -> None:
    """The parameter (or **kwargs key) may hold what the argument is: an element, the tuple, or a part of it;
    given a name that may hold several (a helper's parameter that each call gives another scale), it may
    hold each."""
    if isinstance(arg, ast.Name):
        # element_of knows a name only where it holds one thing: dequantize(a, sfa_ref), dequantize(b,
        # sfb_permuted) left nothing for the gather_scales(permuted_scales, ...) inside it to read
        held = caller.possible(arg.id, position(arg))
        if held:
            bindings.setdefault(param, set()).update(held)
        return
    element = element_of(caller, arg)
    found: Binding | None = element if element is not None else view_of(caller, arg)
    if found is not None:
        bindings.setdefault(param, set()).add(found)
