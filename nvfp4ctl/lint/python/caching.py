"""NV301/NV302: results kept across calls.

A persistent container is a module-level name, a `global`, `self.<attr>`, a function attribute, a
mutable default argument, or a closure's variable when the function owning it is not itself timed
(`def make(): cache = []; def custom_kernel(data): ...`: make ran once, cache outlives every call).
A timed function that returns a value looked up in one, or copies it into the output (`c.copy_(...)`),
without handing that value to any call first (so nothing was computed into it), hands back an old
result; so does one whose only kernel write into it runs when the key is missing (`if key not in
_memo: _memo[key] = torch.empty_like(c); mod.gemm(..., _memo[key])`): the first call filled it, an
error whatever the key. Allocating on a miss and writing every call is a workspace (a kernel handed
a slice or view of it, or an assignment into one, `ws[:, :, 0] = x @ y`, writes it too). It is an
error when the key is an identity (data_ptr(), id(), _version), when what was stored is an output, or when custom_kernel itself returns it; a warning otherwise. Containers that
only ever receive compiled kernels, modules or descriptors, or configs (numbers made from shapes and
constants, which no result can be), are fine. Scales worked out from the scale tensors alone, which no
result can be either, that a helper keeps and hands to its caller are judged at their store, as in
custom_kernel.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from nvfp4ctl.lint.python.facts import current
from nvfp4ctl.lint.python.index import (ENTRY, TUPLE, Function, ModuleIndex, call_name, catches, dotted,
                                       element_of, parameter_defaults, passed_arguments, position)
from nvfp4ctl.lint.python.wrappers import LOOKUP_METHODS, made_around_input

Report = Callable[[ast.AST, str, str], None]

ARTIFACT_CALL = re.compile(
    r"(?i)^(?:.*compile.*|load_inline|load|jit|build.*|make_\w*|create\w*|.*desc\w*|.*plan\w*|get_\w*|partial|"
    r"autotune|from_dlpack|\w*handle|\w*algo\w*|\w*config\w*|\w*tensor_map\w*|\w*launcher|\w*ptr)$"
)
IDENTITY_KEY = {"data_ptr", "_version", "untyped_storage", "storage", "_cdata", "storage_offset"}
STORE_METHODS = {"setdefault", "update", "append", "add", "insert", "__setitem__"}
METADATA_ATTRS = {"shape", "size", "device", "dtype", "data_ptr", "stride", "numel", "dim", "ndim",
                  "is_contiguous", "_version", "storage_offset", "element_size", "layout", "is_cuda"}
ALLOCATIONS = {"empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
               "new_empty", "new_zeros", "new_ones", "new_full", "empty_strided"}
OUTPUT_VIEWS = {"view", "reshape", "squeeze", "unsqueeze", "flatten", "narrow", "select", "view_as", "as_strided"}
# what a write through (ws.narrow(...).copy_(x), ws.permute(1, 0)[0] = x) writes into the tensor viewed
WRITABLE_VIEWS = OUTPUT_VIEWS | {"permute", "transpose", "t", "unflatten", "movedim", "diagonal", "unfold"}
SHAPE_METADATA = METADATA_ATTRS - {"data_ptr", "_version", "storage_offset"}  # what a config may be made of
TENSOR_MODULES = {"torch", "numpy", "np", "cupy", "jax"}  # their calls make tensors, not config numbers
ARTIFACT, CONFIG, OUTPUT, UNKNOWN, IGNORE = "artifact", "config", "output", "unknown", "ignore"


@dataclass
class Container:
    stores: list[str] = field(default_factory=list)  # value kinds
    identity_key: bool = False
    # every value computed from the input that is stored reads only scale tensors (sfa_permuted.float()):
    # no result can be made of them alone, so a helper handing them back hands back data computed from
    # an input, not a result
    scales_only: bool = True


def check(index: ModuleIndex, report: Report) -> None:
    containers: dict[str, Container] = {}
    timed_nodes = {f.node: f for f in index.timed}
    functions = [*index.functions.values(), *(m for methods in index.classes.values() for m in methods.values())]
    for node in functions:
        function = timed_nodes.get(node) or Function(node, _owner(index, node))
        _collect_stores(function, index, containers)
    for function in index.timed:  # nested ones (what a maker returns) are not among the module's functions
        if function.node not in functions:
            _collect_stores(function, index, containers)
    for function in index.timed:
        _check_returns(function, index, containers, report)


def _owner(index: ModuleIndex, node: ast.AST) -> str | None:
    for cls, methods in index.classes.items():
        if node in methods.values():
            return cls
    return None


def container_key(node: ast.AST, function: Function, index: ModuleIndex) -> str | None:
    """The persistent container an expression names, if it is one."""
    name = dotted(node)
    if name is None:
        return None
    head = name.split(".")[0]
    if head in ("self", "cls") and "." in name:
        return f"{function.cls}.{name.split('.', 1)[1]}"
    if head in index.imports:
        return None
    if name in index.declared_global(function.node) or (
            head in index.module_names and not _is_local(function.node, head, index)):
        return name
    if (head in index.functions or head in index.classes) and "." in name:
        return name  # custom_kernel.cache, Solver.out (a class attribute: self.out's container too)
    if head in _mutable_defaults(function.node):
        return f"{function.name}:{head}"
    if not _is_local(function.node, head, index):
        owner = index.closure_owner(function.node, head)
        if owner is not None and not index.is_timed(owner):
            return f"{owner.name}:{head}"  # a closure's cell: made once, by a function that is not timed
    return None


def _is_local(node: ast.AST, name: str, index: ModuleIndex) -> bool:
    if name in index.declared_global(node) or name in index.declared_nonlocal(node):
        return False
    args = getattr(node, "args", None)
    if args and name in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
        return True
    return name in index.stored_names(node)


def _mutable_defaults(node: ast.AST) -> set[str]:
    args = getattr(node, "args", None)
    if args is None:
        return set()
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return {a.arg for a, d in pairs if isinstance(d, (ast.Dict, ast.List, ast.Set))
            or (isinstance(d, ast.Call) and call_name(d) in ("dict", "list", "set", "OrderedDict", "defaultdict"))}


def _identity_expression(node: ast.AST) -> bool:
    return any(isinstance(x, ast.Attribute) and x.attr in IDENTITY_KEY
               or (isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == "id")
               for x in ast.walk(node))


def _identity(node: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """Is a key built from data_ptr()/id()/_version, directly or through names assigned earlier?"""
    if _identity_expression(node):
        return True
    names = {x.id for x in ast.walk(node) if isinstance(x, ast.Name)}
    return any(_identity_expression(value) for name in names for value in index.assignments(function.node, name))


def _is_entry(function: Function) -> bool:
    return function.entry or (function.cls is None and function.node.name == ENTRY) or (
        function.cls is not None and function.node.name == "__call__")


def _metadata_nodes(node: ast.AST) -> set[int]:
    """The ids of the nodes of an expression that read only a tensor's metadata (shape, address, a lookup
    by key, an allocation of its size), not its data."""
    metadata: set[int] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr in METADATA_ATTRS:
            metadata.update(id(x) for x in ast.walk(inner.value))
        elif isinstance(inner, ast.Call) and (call_name(inner) in ALLOCATIONS | LOOKUP_METHODS | {"len", "id"}):
            metadata.update(id(x) for x in ast.walk(inner))
    return metadata


def _from_input(node: ast.AST, function: Function, index: ModuleIndex, depth: int = 0) -> bool:
    """Is an expression computed from the input tensors' data (not just their shapes or addresses)?"""
    metadata = _metadata_nodes(node)
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and id(inner) not in metadata:
            if element_of(function, inner) is not None:
                return True
            if depth < 2 and any(_from_input(v, function, index, depth + 1)
                                 for v in index.assignments(function.node, inner.id)):
                return True
    return False


def _reads_only_scales(value: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """Does a value read the data of scale tensors only (reference or permuted), and of some input?"""
    layout = current()
    read = _inputs_read(value, function, index)
    return bool(read) and read <= {*layout.reference_scales, *layout.permuted_scales}


def _inputs_read(node: ast.AST, function: Function, index: ModuleIndex, depth: int = 0) -> set[int]:
    """The tuple elements whose data an expression reads, as _from_input follows them (the whole input
    counts as every element)."""
    metadata = _metadata_nodes(node)
    read: set[int] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and id(inner) not in metadata:
            element = element_of(function, inner)
            if element is not None:
                read.update(range(len(current().names)) if element == TUPLE else {element})
            elif depth < 2:
                for value in index.assignments(function.node, inner.id):
                    read |= _inputs_read(value, function, index, depth + 1)
    return read


def _is_lookup_call(node: ast.AST) -> bool:
    """x = cache.get(key): the name's other assignments say what the cache holds."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LOOKUP_METHODS) or (
        isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)))


def value_kind(value: ast.AST, function: Function, index: ModuleIndex, depth: int = 0) -> str:
    """ARTIFACT (compiled kernel, module, descriptor, plan), CONFIG (numbers made from shapes and
    constants), OUTPUT (the output tensor or a result computed from the inputs), IGNORE (an empty
    initial value) or UNKNOWN."""
    kind = _kind(value, function, index, depth)
    return CONFIG if kind == UNKNOWN and _config_value(value, function, index) else kind


def _kind(value: ast.AST, function: Function, index: ModuleIndex, depth: int) -> str:
    if _empty_literal(value):
        return IGNORE
    if isinstance(value, ast.Lambda):
        return ARTIFACT
    if isinstance(value, (ast.Tuple, ast.List)):
        kinds = {value_kind(e, function, index, depth + 1) for e in value.elts} - {IGNORE}
        if OUTPUT in kinds or not kinds <= {ARTIFACT, CONFIG}:
            return OUTPUT if OUTPUT in kinds else UNKNOWN
        return ARTIFACT if ARTIFACT in kinds else CONFIG if kinds else IGNORE  # (kernel, tile): the kernel's
    if isinstance(value, ast.Call):
        name = call_name(value)
        if name in index.classes or ARTIFACT_CALL.match(name) or _subscripted_compile(value):
            return ARTIFACT
        return OUTPUT if _from_input(value, function, index) else UNKNOWN
    if isinstance(value, ast.Name):
        if value.id in index.functions or value.id in index.classes:
            return ARTIFACT
        if _holds_output(value, function, index) or _gathers_output(value.id, function, index):
            return OUTPUT
        if depth < 2:
            kinds = {value_kind(v, function, index, depth + 1) for v in index.assignments(function.node, value.id)
                     if not _is_lookup_call(v)} - {IGNORE}
            if kinds and kinds <= {ARTIFACT, CONFIG}:
                return ARTIFACT if ARTIFACT in kinds else CONFIG
            if OUTPUT in kinds:
                return OUTPUT
        return UNKNOWN
    if isinstance(value, (ast.Subscript, ast.ListComp, ast.GeneratorExp)) and _holds_output(value, function, index):
        return OUTPUT
    return UNKNOWN


def _subscripted_compile(call: ast.Call) -> bool:
    """cute.compile[options](kernel, ...): the options pick how it compiles; what comes back is the compile's.
    Only a function named compile itself: _compiled_kernels[0](...) calls a kept kernel, and gives a result."""
    func = call.func
    return isinstance(func, ast.Subscript) and (dotted(func.value) or "").rpartition(".")[2] == "compile"


def _config_value(node: ast.AST, function: Function, index: ModuleIndex, depth: int = 0) -> bool:
    """Is an expression made only of constants and the inputs' shapes, through arithmetic, literals,
    names assigned such values and calls given only such values (a tile picked for m, n, k)? No
    result can be: a result needs the tensors' data. Tensor makers (torch.empty(m, n)) are not."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr in SHAPE_METADATA  # a.shape, b.dtype
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in SHAPE_METADATA:
            return True  # a.size(0), a.numel()
        if call_name(node) in ALLOCATIONS or (index.resolve(func) or "").split(".")[0] in TENSOR_MODULES:
            return False
        known = index.is_imported_root(func) or isinstance(func, ast.Name) and (
            func.id in index.functions or hasattr(builtins, func.id))  # not x.float(), not a closure over data
        parts = [*node.args, *(k.value for k in node.keywords)]
        return known and bool(parts) and all(_config_value(part, function, index, depth) for part in parts)
    if isinstance(node, ast.Name):
        assigned = index.assignments(function.node, node.id) or (
            index.assignments(index.tree, node.id) if node.id in index.module_names else [])
        return depth < 2 and bool(assigned) and all(_config_value(v, function, index, depth + 1) for v in assigned)
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Tuple, ast.List, ast.Set,
                         ast.Dict, ast.Subscript, ast.Slice, ast.JoinedStr, ast.FormattedValue)):
        return all(_config_value(child, function, index, depth) for child in ast.iter_child_nodes(node)
                   if not isinstance(child, (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)))
    return False


def _holds_output(node: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """Is an expression the output c, the whole input tuple, or (grouped GEMM) the groups' c tensors?"""
    layout = current()
    element = element_of(function, node)
    # element_of says None for "not a tuple element", and a grouped layout's output is None too:
    # comparing the two would make every unknown name an output.
    if element is not None and (element == TUPLE or element == layout.output):
        return True
    if layout.group_output is None:
        return False
    groups, position = layout.group_output
    if element == groups:
        return True  # the list of (a, b, c) tuples holds every output
    if isinstance(node, ast.Subscript) and _constant(node.slice) == position:
        if isinstance(node.value, ast.Subscript):
            return element_of(function, node.value.value) == groups  # abc[i][2], data[0][i][2]
        if isinstance(node.value, ast.Name):  # g[2] of `for g in abc`
            return _bound_by_loop(node.value, None, groups, function, index)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
        generator = node.generators[0]
        return any(element_of(function, iterable) == groups and _picks(target, node.elt, position)
                   for target, iterable in _loop_pairs(generator.target, generator.iter))
    if isinstance(node, ast.Name):  # c of `for a, b, c in abc`, of `for i, (a, b, c) in enumerate(abc)`, ...
        return _bound_by_loop(node, position, groups, function, index)
    return False


def _bound_by_loop(name: ast.Name, position: int | None, groups: int, function: Function, index: ModuleIndex) -> bool:
    """Does a loop over the groups bind this name to one position of each group (None: the whole
    group)? A comprehension's names only inside it; a for loop's only where nothing else is ever
    assigned to the name (`c = pick_tile(...)` after the loop is not the group's c)."""
    rebound = any(not _trivial(value) for value in index.assignments(function.node, name.id))
    for target, iterable, scope in _group_loops(function, index, groups):
        bound = (target.id if isinstance(target, ast.Name) else None) if position is None else _target_at(target, position)
        if bound != name.id:
            continue
        if scope is None and not rebound or scope is not None and _inside(name, scope, index):
            return True
    return False


def _group_loops(function: Function, index: ModuleIndex, groups: int) -> list[tuple[ast.AST, ast.AST, ast.AST | None]]:
    """(target, iterable, scope) of every loop over the groups in the function, computed once;
    scope: the comprehension a target is local to, None for a for loop."""
    key = ("NV301 group loops", id(function.node), groups)
    found = index.memo.get(key)
    if found is None:
        found = []
        for node in index.walk(function.node):
            if isinstance(node, ast.For):
                loops, scope = [node], None
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                loops, scope = node.generators, node
            else:
                continue
            found.extend((target, iterable, scope) for loop in loops
                         for target, iterable in _loop_pairs(loop.target, loop.iter)
                         if element_of(function, iterable) == groups)
        index.memo[key] = found
    return found  # type: ignore[return-value]


def _inside(node: ast.AST, ancestor: ast.AST, index: ModuleIndex) -> bool:
    while node is not None and node is not ancestor:
        node = index.parents.get(node)
    return node is ancestor


def _empty_literal(value: ast.AST) -> bool:
    """A constant or an empty [], (), {} or set literal."""
    return isinstance(value, ast.Constant) or (isinstance(value, (ast.Dict, ast.List, ast.Set, ast.Tuple))
                                               and not getattr(value, "elts", getattr(value, "keys", None)))


def _trivial(value: ast.AST) -> bool:
    """An initial value that says nothing: a constant, an empty literal, or list()/dict()/set()."""
    return _empty_literal(value) or (
        isinstance(value, ast.Call) and call_name(value) in ("list", "dict", "set") and not value.args)


def _loop_pairs(target: ast.AST, iterable: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """What a loop binds, per iterable it walks: `for i, g in enumerate(abc)` binds g to abc's items,
    `for g, s in zip(abc, sizes)` g to abc's and s to sizes'."""
    name = call_name(iterable) if isinstance(iterable, ast.Call) else None
    if name == "enumerate" and iterable.args and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2:
        return _loop_pairs(target.elts[1], iterable.args[0])
    if name == "zip" and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(iterable.args):
        return [pair for inner, arg in zip(target.elts, iterable.args) for pair in _loop_pairs(inner, arg)]
    return [(target, iterable)]


def _gathers_output(name: str, function: Function, index: ModuleIndex) -> bool:
    """A list only ever built up, and built up with outputs: `outs = []`, then `outs.append(c)`,
    `outs.extend(...)` or `outs += [...]` (a name also assigned something else is not followed)."""
    key = ("NV301 gathers output", id(function.node), name)
    found = index.memo.get(key)
    if found is None:
        found = index.memo[key] = all(_trivial(v) for v in index.assignments(function.node, name)) and any(
            _holds_output(added, function, index) or (
                isinstance(added, (ast.List, ast.Tuple)) and any(_holds_output(e, function, index) for e in added.elts))
            for added in _additions(function, index).get(name, ()))
    return bool(found)


def _additions(function: Function, index: ModuleIndex) -> dict[str, list[ast.AST]]:
    """What each plain name has appended, extended or += to it in the function, computed once."""
    key = ("NV301 additions", id(function.node))
    found = index.memo.get(key)
    if found is None:
        found = {}
        for node in index.walk(function.node):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend")
                    and isinstance(node.func.value, ast.Name) and len(node.args) == 1):
                found.setdefault(node.func.value.id, []).append(node.args[0])
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                found.setdefault(node.target.id, []).append(node.value)
        index.memo[key] = found
    return found  # type: ignore[return-value]


def _constant(node: ast.AST) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _target_at(target: ast.AST, position: int) -> str | None:
    """The name a loop target gives to one position of each item: c in `for a, b, c in ...`."""
    if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) > position:
        element = target.elts[position]
        return element.id if isinstance(element, ast.Name) else None
    return None


def _picks(target: ast.AST, element: ast.AST, position: int) -> bool:
    """Does a comprehension yield one position of each item: `c for a, b, c in`, `g[2] for g in`?"""
    if isinstance(element, ast.Name):
        return _target_at(target, position) == element.id
    return (isinstance(element, ast.Subscript) and _constant(element.slice) == position
            and isinstance(element.value, ast.Name) and isinstance(target, ast.Name) and element.value.id == target.id)


def _collect_stores(function: Function, index: ModuleIndex, containers: dict[str, Container]) -> None:
    for node in index.walk(function.node):
        pairs: list[tuple[ast.AST, ast.AST | None, ast.AST]] = []  # (container expr, key, value)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                # `_last_ptr, _last_out = a.data_ptr(), c` stores as two assignments would
                both = (isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
                        and len(target.elts) == len(node.value.elts))
                for one, value in zip(target.elts, node.value.elts) if both else [(target, node.value)]:
                    if isinstance(one, ast.Subscript):
                        pairs.append((one.value, one.slice, value))
                    elif isinstance(one, (ast.Name, ast.Attribute)):
                        pairs.append((one, None, value))
        elif isinstance(node, ast.Call) and call_name(node) == "setattr" and len(node.args) == 3 and _named_attribute(node):
            pairs.append((_named_attribute(node), None, node.args[2]))  # setattr(custom_kernel, "out", c)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STORE_METHODS:
            args = node.args
            if node.func.attr in ("setdefault", "insert") and len(args) >= 2:
                pairs.append((node.func.value, args[0], args[1]))
            elif node.func.attr == "update" and args and isinstance(args[0], ast.Dict):
                pairs.extend((node.func.value, k, v) for k, v in zip(args[0].keys, args[0].values) if k is not None)
            elif args:
                pairs.append((node.func.value, None, args[0]))
        for target, key, value in pairs:
            name = container_key(target, function, index)
            if name is None:
                continue
            entry = containers.setdefault(name, Container())
            kind = value_kind(value, function, index)
            entry.stores.append(kind)
            if kind == OUTPUT and not _reads_only_scales(value, function, index):
                entry.scales_only = False
            if key is not None and _identity(key, function, index):
                entry.identity_key = True


def _lookup(node: ast.AST, function: Function, index: ModuleIndex) -> tuple[str, ast.AST | None] | None:
    """(container, key) when node reads a persistent container, else None."""
    if isinstance(node, ast.Subscript):
        name = container_key(node.value, function, index)
        return (name, node.slice) if name else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LOOKUP_METHODS:
        name = container_key(node.func.value, function, index)
        return (name, node.args[0] if node.args else None) if name else None
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = container_key(node, function, index)
        return (name, None) if name else None
    named = _named_attribute(node)
    if named is not None and call_name(node) == "getattr":  # getattr(custom_kernel, "out", None)
        name = container_key(named, function, index)
        return (name, None) if name else None
    return None


def _named_attribute(node: ast.AST) -> ast.Attribute | None:
    """custom_kernel.out for getattr(custom_kernel, "out", ...) and setattr(custom_kernel, "out", ...):
    the attribute a builtin reads or sets by its name, where the name is a constant."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr")
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
            and node.args[1].value.isidentifier()):
        return None
    return ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load())


def _flows_to_call(function: Function, index: ModuleIndex, names: set[str], dumps: set[str],
                   besides: ast.AST | None = None, container: str | None = None) -> tuple[bool, bool]:
    """Does the cached object get passed to, or called by, a call in this function (other than
    `besides`, the copy into the output that hands it back)? (on every call, only when the key is
    missing from `container`): a kernel that writes a kept buffer only on a miss fills it once."""
    def is_cached(part: ast.AST) -> bool:
        """Is a tensor the cached object, or a part or view of it (a kernel writing it writes the object)?"""
        return any(isinstance(link, ast.Name) and link.id in names or ast.dump(link) in dumps
                   for link in _view_chain(part))

    on_miss = False
    for node in index.walk(function.node):
        if not isinstance(node, ast.Call) or node is besides or _copies_output_in(node, function, index):
            continue
        parts = [node.func, *node.args, *(k.value for k in node.keywords)]
        if isinstance(node.func, ast.Attribute):
            parts.append(node.func.value)
        for part in parts:
            if is_cached(part.value if isinstance(part, ast.Starred) else part):
                if container is not None and _in_miss(node, container, function, index):
                    on_miss = True
                    break
                return True, on_miss
    for target, part in _assigned_parts(function, index):
        if is_cached(part):
            if container is not None and _in_miss(target, container, function, index):
                on_miss = True
                continue
            return True, on_miss
    return False, on_miss


def _view_chain(node: ast.AST, views: frozenset[str] | set[str] = WRITABLE_VIEWS) -> list[ast.AST]:
    """node and each tensor it is a part or view of (through subscripts and the `views` methods):
    ws[:, :, 0] -> [ws[:, :, 0], ws]; ws.view(-1)[0] -> [ws.view(-1)[0], ws.view(-1), ws]. A kernel writing
    the part writes the tensor it views."""
    chain = [node]
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in views:
            node = node.func.value
        else:
            return chain
        chain.append(node)


def _slicing(index_expression: ast.AST) -> bool:
    """ws[:], ws[..., 0], ws[:, :, 0]: an index that takes part of a tensor, not a key of a container."""
    parts = index_expression.elts if isinstance(index_expression, ast.Tuple) else [index_expression]
    return any(isinstance(part, ast.Slice) or isinstance(part, ast.Constant) and part.value is Ellipsis for part in parts)


def _assigned_parts(function: Function, index: ModuleIndex) -> list[tuple[ast.AST, ast.AST]]:
    """(target, tensor written) for each assignment into part of a tensor in the function (`ws[:, :, 0]
    = x @ y`, `ws[:] = x`, `ws[0] += x`): it writes ws this call as surely as a kernel handed ws does.
    A store of a new entry in a kept container (`_ws[key] = torch.empty(...)`) writes no tensor, and
    a copy of the output into one (`ws[:] = c`) stores a result rather than computing one; neither
    counts. Computed once per function."""
    key = ("NV301 assigned parts", id(function.node))
    found = index.memo.get(key)
    if found is None:
        found = []
        for node in index.walk(function.node):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None else []
            for target in targets:
                if not isinstance(target, ast.Subscript) or _holds_output(node.value, function, index):
                    continue
                if container_key(target.value, function, index) is not None and not _slicing(target.slice):
                    continue  # _ws[key] = ...: a new entry, not a write into a kept tensor
                found.append((target, target.value))  # the target: its ancestors hold the statement
        index.memo[key] = found
    return found  # type: ignore[return-value]


def _copies_output_in(call: ast.Call, function: Function, index: ModuleIndex) -> bool:
    """`kept.copy_(c)`: the output copied into something (a kept tensor), which stores a result there
    rather than having a kernel write it."""
    return (isinstance(call.func, ast.Attribute) and call.func.attr == "copy_" and len(call.args) == 1
            and _holds_output(call.args[0], function, index))


def _copies_into_output(call: ast.Call, function: Function, index: ModuleIndex) -> bool:
    """`c.copy_(x)`, `c[:, :, 0].copy_(x)`: a copy that hands x back through the output."""
    return (isinstance(call.func, ast.Attribute) and call.func.attr == "copy_" and len(call.args) == 1
            and _holds_output(_output_base(call.func.value), function, index))


def _written(name: str, keyed: bool, index: ModuleIndex, getters: bool) -> tuple[bool, bool]:
    """(handed to a call on every call, handed to one only where the key is missing) for what container
    `name` holds, anywhere on the timed path (_written_containers). Reached through any key (`out =
    bufs[c.shape]; mod.gemm(..., out); c.copy_(bufs[c.shape])`) or in another function (`_launch(...,
    key)` passes `_ws[key]`). Written every call, it is a workspace; only on a miss (`if key not in _memo:
    _memo[key] = torch.empty_like(c); mod.gemm(..., _memo[key])`), the kernel ran once and later calls
    copy its old result. Copies of the output into it (a stored result) and copies of it into the
    output (the hand-back) do not count. With `getters` (judging a copy into c, not a return), what a
    function returning it hands out counts too (`ws = Solver.workspace(c)`); judging `return
    _outs[key]`, that return is the very hand-back. keyed: only keyed reads count (bufs[k],
    bufs.get(k); not bufs itself, as in bufs.get)."""
    def holds(found: set[tuple[str, bool]]) -> bool:
        return (name, True) in found or not keyed and (name, False) in found

    every_call, on_miss = _written_containers(index, getters)
    return holds(every_call), holds(on_miss)


def _written_containers(index: ModuleIndex, getters: bool) -> tuple[set[tuple[str, bool]], set[tuple[str, bool]]]:
    """(container, keyed read) for every container read handed to a call on the timed path, computed
    once per module (one walk of each timed function, not one per container: files have hundreds):
    those handed over on every call, and those handed over only when the key is missing."""
    key = ("NV301 written", getters)
    found = index.memo.get(key)
    if found is not None:
        return found  # type: ignore[return-value]
    returned: dict[str, set[tuple[str, bool]]] = {}  # getter name -> what its returns read
    if getters:
        for function in index.timed:
            for node in index.walk(function.node):
                if isinstance(node, ast.Return) and node.value is not None:
                    read = _read(node.value, function, index)
                    if read is not None:
                        returned.setdefault(function.node.name, set()).add(read)
    written: set[tuple[str, bool]] = set()
    on_miss: set[tuple[str, bool]] = set()
    for function in index.timed:
        def reads(node: ast.AST) -> set[tuple[str, bool]]:
            read = _read(node, function, index)  # noqa: B023 (used at once)
            if read is not None:
                return {read}
            return returned.get(call_name(node), set()) if isinstance(node, ast.Call) else set()

        def written_by(part: ast.AST) -> set[tuple[str, bool]]:
            """What a tensor handed to a call or assigned into is read from: the first link of its view
            chain that is a kept read or names one (ws[:, :, 0] writes what ws holds)."""
            for link in _view_chain(part):
                found = reads(link) | (carriers.get(link.id, set()) if isinstance(link, ast.Name) else set())  # noqa: B023
                if found:
                    return found
            return set()

        carriers: dict[str, set[tuple[str, bool]]] = {}
        for node in index.walk(function.node):
            if isinstance(node, ast.Assign):
                held = reads(node.value)
                for target in node.targets:
                    if held and isinstance(target, ast.Name):
                        carriers.setdefault(target.id, set()).update(held)
        for node in index.walk(function.node):
            if not isinstance(node, ast.Call) or _copies_output_in(node, function, index) or \
                    _copies_into_output(node, function, index):
                continue
            parts = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(node.func, ast.Attribute):
                parts.append(node.func.value)
            handed: set[tuple[str, bool]] = set()
            for part in parts:
                handed |= written_by(part.value if isinstance(part, ast.Starred) else part)
            for read in handed:
                (on_miss if _in_miss(node, read[0], function, index) else written).add(read)
        for target, part in _assigned_parts(function, index):
            for read in written_by(part):
                (on_miss if _in_miss(target, read[0], function, index) else written).add(read)
    index.memo[key] = written, on_miss
    return written, on_miss


def _read(node: ast.AST, function: Function, index: ModuleIndex) -> tuple[str, bool] | None:
    """(container, keyed) when node reads a persistent container: keyed for bufs[k], bufs.get(k)."""
    found = _lookup(node, function, index)
    if found is None:
        return None
    return found[0], isinstance(node, ast.Subscript) or _is_lookup_call(node)


def _in_miss(node: ast.AST, container: str, function: Function, index: ModuleIndex) -> bool:
    """Does node run only when a key is missing from container: inside such a branch of its own
    function, or in a helper of this file called only from such branches (`if key not in _memo:
    _launch(a, b, key)`), directly or through other helpers (_launch calls _fill, which writes)?"""
    return _on_miss(node, container, function, index) or _called_on_miss(function, container, index, frozenset())


def _called_on_miss(function: Function, container: str, index: ModuleIndex, visiting: frozenset[ast.AST]) -> bool:
    """Is a module function of this file called only where a key is missing from container, each call
    inside a miss branch or in a helper itself called only there? Calls from inside the chain being
    followed (recursion) run only once it has been entered, so they do not decide it."""
    if index.functions.get(function.node.name) is not function.node:
        return False
    key = ("NV301 called on miss", id(function.node), container)
    found = index.memo.get(key) if not visiting else None
    if found is None:
        inner = visiting | {function.node}
        sites = _call_sites(index).get(function.node.name, [])
        found = bool(sites) and all(caller.node in inner or _on_miss(site, container, caller, index)
                                    or _called_on_miss(caller, container, index, inner) for site, caller in sites)
        if not visiting:
            index.memo[key] = found
    return bool(found)


def _on_miss(node: ast.AST, container: str, function: Function, index: ModuleIndex) -> bool:
    regions = _miss_regions(function, index)
    for ancestor in index.ancestors(node):
        if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False  # a nested function runs when called, not where it is defined
        if container in regions.get(id(ancestor), ()):
            return True
    return False


def _call_sites(index: ModuleIndex) -> dict[str, list[tuple[ast.Call, Function]]]:
    """name -> (call, caller) for each call of a module function by name on the timed path, computed once."""
    key = ("NV301 call sites",)
    found = index.memo.get(key)
    if found is None:
        found = {}
        for function in index.timed:
            for node in index.walk(function.node):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in index.functions:
                    found.setdefault(node.func.id, []).append((node, function))
        index.memo[key] = found
    return found  # type: ignore[return-value]


MISSING_ERRORS = {"KeyError", "IndexError"}  # what a lookup that misses raises; catches() knows their bases


def _miss_regions(function: Function, index: ModuleIndex) -> dict[int, set[str]]:
    """id of each statement that runs only when a key is missing from a kept container -> those
    containers, computed once per function: the body of `if key not in kept:`, `if kept.get(key) is
    None:`, `if buf is None:` (buf = kept.get(key)), `if not kept:`, and of `while` with such a test;
    the else of the opposite test, and what follows it in its block when its body returns or raises;
    a `match` case that only a miss reaches (`case None:` of `match kept.get(key):`, `case False:` of
    `match key in kept:`); the handler of `try: buf = kept[key] except KeyError:`. A test joined with
    others by and/or, or by &/|, counts (`if key not in kept or stale:`, `if (key not in kept) | stale:`)."""
    memo_key = ("NV301 miss regions", id(function.node))
    found = index.memo.get(memo_key)
    if found is not None:
        return found  # type: ignore[return-value]
    regions: dict[int, set[str]] = {}

    def mark(statements: list[ast.stmt], names: set[str]) -> None:
        for statement in statements:
            regions.setdefault(id(statement), set()).update(names)

    for node in index.walk(function.node):
        if isinstance(node, (ast.If, ast.While)):  # `while key not in kept:` runs its body only on a miss too
            missing, present = _presence(node.test, function, index)
            mark(node.body, missing)
            mark(node.orelse, present)
            if isinstance(node, ast.If) and present and node.body and isinstance(node.body[-1], (ast.Return, ast.Raise)):
                mark(_following(node, index), present)
        elif isinstance(node, ast.Match):
            for case, names in _case_misses(node, function, index):
                mark(case.body, names)
        elif isinstance(node, ast.Try):
            looked_up = {found[0] for statement in node.body for inner in ast.walk(statement)
                         if isinstance(inner, ast.Subscript) and isinstance(inner.ctx, ast.Load)
                         for found in [_lookup(inner, function, index)] if found}
            for handler in node.handlers:
                if looked_up and catches(handler, MISSING_ERRORS, index):
                    mark(handler.body, looked_up)
    index.memo[memo_key] = regions
    return regions


def _presence(test: ast.AST, function: Function, index: ModuleIndex, depth: int = 0) -> tuple[set[str], set[str]]:
    """(containers the test's truth says a key is missing from, containers it says hold it).

    A miss joined with another condition still counts: the body of `if key not in kept or force:` runs
    on a miss, and otherwise only when `force` holds, which the harness's `custom_kernel(data)` leaves
    at its default (or at what the lambda or functools.partial making custom_kernel, or every call of a
    helper, passes); a repeated input gets the kept result. Only a condition that holds on every call
    (`or True`, `or force` with `force=True` the entry's default, `or REFRESH` with REFRESH only ever
    set True) makes the body run every call, and then it is no miss (an `and` with one that never
    holds: the body never runs). A test held in a name (`stale = key not in kept; if stale:`) counts
    as the test itself. `|` and `&` between conditions read as `or` and `and`: on truths they decide
    the same (they only evaluate both sides)."""
    joined = _joined(test)
    if joined is not None:
        settled, values = joined  # the truth that decides `or` (True) and `and` (False) alone
        if any(_harness_truth(value, function, index) is settled for value in values):
            return set(), set()  # the body runs on every call (or never): it says nothing about the key
        missing: set[str] = set()
        present: set[str] = set()
        for value in values:
            one_missing, one_present = _presence(value, function, index, depth)
            missing |= one_missing
            present |= one_present
        return missing, present
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        missing, present = _presence(test.operand, function, index, depth)
        return present, missing
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], test.left, test.comparators[0]
        if isinstance(op, (ast.In, ast.NotIn)):
            if isinstance(right, ast.Call) and isinstance(right.func, ast.Attribute) and right.func.attr == "keys":
                right = right.func.value
            name = container_key(right, function, index) if isinstance(right, (ast.Name, ast.Attribute)) else None
            found = {name} if name else set()
            return (found, set()) if isinstance(op, ast.NotIn) else (set(), found)
        if isinstance(op, (ast.Is, ast.IsNot)) and _is_none(left) != _is_none(right):
            held = _held(right if _is_none(left) else left, function, index)
            found = {held} if held else set()
            return (found, set()) if isinstance(op, ast.Is) else (set(), found)
        return set(), set()
    held = _held(test, function, index)  # `if kept:`, `if buf:`
    if held is None and isinstance(test, ast.Name) and depth < 2:
        assigned = index.assignments(function.node, test.id)
        if len(assigned) == 1 and (isinstance(assigned[0], (ast.UnaryOp, ast.Compare)) or _joined(assigned[0])):
            return _presence(assigned[0], function, index, depth + 1)  # stale = key not in kept; if stale:
    return set(), {held} if held else set()


def _joined(test: ast.AST) -> tuple[bool, list[ast.expr]] | None:
    """(True, conditions) for `p or q` and `p | q`, (False, conditions) for `p and q` and `p & q`
    (a chain `p | q | r` is one list, as `p or q or r` is); None for any other expression."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.Or), list(test.values)
    if not (isinstance(test, ast.BinOp) and isinstance(test.op, (ast.BitOr, ast.BitAnd))):
        return None
    either = isinstance(test.op, ast.BitOr)
    values: list[ast.expr] = []
    for side in (test.left, test.right):
        inner = _joined(side) if isinstance(side, ast.BinOp) else None
        values.extend(inner[1] if inner is not None and inner[0] == either else [side])
    return either, values


def _harness_truth(node: ast.AST, function: Function, index: ModuleIndex) -> bool | None:
    """Whether a condition holds on every call the harness makes (True), on none (False), or may
    change (None): a constant, `not` of one, an entry parameter never reassigned (the harness passes
    only data, so it keeps its constant default, or the constant that a `custom_kernel = lambda data:
    _impl(data, force=True)` or a functools.partial passes it), a module name only ever set to
    constants of one truth."""
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _harness_truth(node.operand, function, index)
        return None if inner is None else not inner
    if not isinstance(node, ast.Name) or index.assignments(function.node, node.id):
        return None
    args = function.node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = parameter_defaults(function.node)
    if node.id in defaults or node.id in {a.arg for a in [*positional, *args.kwonlyargs]}:
        if not _is_entry(function):
            return _passed_truth(function, node.id, defaults.get(node.id), index)
        if node.id in function.params()[:1] or function.passes_unknown:
            return None
        # what a lambda or functools.partial making the entry passes (None: not one value), else the default
        value = function.passed[node.id] if node.id in function.passed else defaults.get(node.id)
        if isinstance(value, ast.Name) and node.id in function.passed:
            return _module_truth(value.id, index)  # lambda data: _impl(data, force=REFRESH)
        return bool(value.value) if isinstance(value, ast.Constant) else None
    if node.id in index.module_names and not _is_local(function.node, node.id, index):
        return _module_truth(node.id, index)
    return None


def _passed_truth(function: Function, param: str, default: ast.expr | None, index: ModuleIndex) -> bool | None:
    """The truth a helper's parameter has on every call the timed path makes of it by name (`return
    _impl(data, force=True)`), each passing a constant or leaving the constant default; None where the
    calls differ, pass anything else, or the helper is also handed over uncalled (`pool.map(_impl, ...)`)."""
    name = function.node.name
    if function.cls is not None or index.functions.get(name) is not function.node:
        return None
    sites = _call_sites(index).get(name, [])
    if not sites or name in _handed_uncalled(index):
        return None
    truths: set[bool | None] = set()
    for call, _ in sites:
        passed = passed_arguments(function, call)
        if passed is None:
            return None
        value = passed.get(param, default)
        truths.add(bool(value.value) if isinstance(value, ast.Constant) else
                   _module_truth(value.id, index) if isinstance(value, ast.Name) and param in passed else None)
    return truths.pop() if len(truths) == 1 else None


def _handed_uncalled(index: ModuleIndex) -> set[str]:
    """Names the timed path reads other than to call them (`pool.map(_impl, ...)`), computed once."""
    key = ("NV301 handed uncalled",)
    found = index.memo.get(key)
    if found is None:
        found = index.memo[key] = {
            inner.id for timed in index.timed for inner in index.walk(timed.node)
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load)
            and not (isinstance(index.parents.get(inner), ast.Call) and index.parents[inner].func is inner)}
    return found  # type: ignore[return-value]


def _module_truth(name: str, index: ModuleIndex) -> bool | None:
    """The truth of a module name only ever set to constants of one truth (None: any other name)."""
    if name not in index.module_names:
        return None
    values = index.assignments(index.tree, name)
    truths = {bool(v.value) if isinstance(v, ast.Constant) else None for v in values}
    return truths.pop() if len(truths) == 1 else None


def _case_misses(match: ast.Match, function: Function, index: ModuleIndex) -> list[tuple[ast.match_case, set[str]]]:
    """(case, containers a key is missing from whenever the case runs) for a match on a presence test
    or a lookup: `case None:` of `match kept.get(key):`, `case True:`/`case False:` of `match key not
    in kept:`/`match key in kept:`, and a catch-all after the opposite case (`case _:`, `case found:`)."""
    held = _held(match.subject, function, index)
    missing, present = _presence(match.subject, function, index)
    when: dict[object, set[str]] = {None: {held} if held else set(), True: missing, False: present}
    found: list[tuple[ast.match_case, set[str]]] = []
    seen: set[object] = set()
    for case in match.cases:
        pattern = case.pattern
        if isinstance(pattern, ast.MatchSingleton):
            seen.add(pattern.value)
            found.append((case, when.get(pattern.value, set())))
        elif isinstance(pattern, ast.MatchAs) and pattern.pattern is None:  # `case _:`, `case name:`
            if seen == {True}:
                found.append((case, when[False]))  # what is left of a truth test after `case True:`
            elif seen == {False}:
                found.append((case, when[True]))
            # after `case None:` a catch-all gets what was found: nothing missing
    return found


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _held(node: ast.AST, function: Function, index: ModuleIndex) -> str | None:
    """The container an expression reads (kept[key], kept.get(key), kept), directly or through a name
    assigned such a lookup (buf = kept.get(key))."""
    found = _lookup(node, function, index)
    if found is not None:
        return found[0]
    if isinstance(node, ast.Name):
        for value in index.assignments(function.node, node.id):
            if isinstance(value, (ast.Subscript, ast.Call)):
                found = _lookup(value, function, index)
                if found is not None:
                    return found[0]
    return None


def _following(node: ast.stmt, index: ModuleIndex) -> list[ast.stmt]:
    """The statements after node in the block that holds it."""
    block = index.block_of(node)
    return [] if block is None else block[block.index(node) + 1:]


def _output_base(node: ast.AST) -> ast.AST:
    """c for c[:, :, 0], c.view(-1), c.squeeze(-1)[0]: what a copy into part of the output writes."""
    return _view_chain(node, OUTPUT_VIEWS)[-1]


def _handed_back(function: Function, index: ModuleIndex) -> list[tuple[ast.AST, ast.AST, ast.Call | None, str]]:
    """(where, value, copy call, "returns"/"copies") for each way the function hands a value back, in
    source order: `return value`, and a copy into the output (`c.copy_(value)`, `c[...] = value`),
    which hands the value back as surely as returning it does."""
    found: list[tuple[ast.AST, ast.AST, ast.Call | None, str]] = []
    for node in index.walk(function.node):
        if isinstance(node, ast.Return) and node.value is not None:
            found.append((node, node.value, None, "returns"))
        elif isinstance(node, ast.Call) and _copies_into_output(node, function, index):
            found.append((node, node.args[0], node, "copies"))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
                and _holds_output(_output_base(node.targets[0]), function, index):
            found.append((node, node.value, None, "copies"))
    return sorted(found, key=lambda item: position(item[0]))


def _check_returns(function: Function, index: ModuleIndex, containers: dict[str, Container], report: Report) -> None:
    reported: set[str] = set()  # containers looked up here: the stores into them are judged with the lookup
    flagged: set[str] = set()  # one finding per container and function
    for node, value, copy, verb in _handed_back(function, index):
        found = _lookup(value, function, index)
        carriers: set[str] = set()
        lookup_node: ast.AST = value
        if found is None and isinstance(value, ast.Name):
            for assigned in index.assignments(function.node, value.id):
                found = _lookup(assigned, function, index)
                if found is not None:
                    carriers.add(value.id)
                    lookup_node = assigned
                    break
        if found is None:
            continue
        name, key = found
        container = containers.get(name, Container())
        kinds = set(container.stores) - {IGNORE}
        if kinds and kinds <= {ARTIFACT, CONFIG} or not kinds and name not in containers:
            continue  # compiled kernels, descriptors, configs: fine to keep
        dumps = {ast.dump(lookup_node)}
        keyed = not isinstance(lookup_node, (ast.Name, ast.Attribute))
        flows, flows_on_miss = _flows_to_call(function, index, carriers, dumps, copy, name)
        if flows:
            continue  # a buffer the kernel writes into on every call, not a stored answer
        written, written_on_miss = _written(name, keyed, index, verb == "copies")
        if written:
            continue  # the same, written elsewhere on the timed path
        # a buffer the kernel writes only when the key is missing: filled once, by the first call
        filled_once = flows_on_miss or written_on_miss
        if (OUTPUT in kinds and container.scales_only and not filled_once and not _is_entry(function)
                and not _result_handed_back(function, index)):
            continue  # scales worked out once for the caller to use: their store is NV302's, as in custom_kernel
        reported.add(name)
        identity = container.identity_key or (key is not None and _identity(key, function, index))
        entry = _is_entry(function)
        if name in flagged or not (OUTPUT in kinds or identity or entry or filled_once):
            continue  # a helper's cache of something not computed from the inputs (a table, a config)
        flagged.add(name)
        into = " into the output" if verb == "copies" else ""
        if filled_once:
            report(node, "NV301", f"{verb} a result from {name}{into} that the kernel writes only on a miss (nothing "
                                  "kept yet for the key): later calls get the first call's result; run it every call")
        elif OUTPUT in kinds or entry or identity and UNKNOWN not in kinds:
            why = "keyed by data_ptr()/id()/_version" if identity else "holding an earlier output" if OUTPUT in kinds else "kept across calls"
            report(node, "NV301", f"{verb} a result from {name} ({why}){into} instead of computing it every call")
        else:
            report(node, "NV302", f"{verb} a value kept in {name} across calls, keyed by the input's identity "
                                  f"(data_ptr()/id()/_version){into}: fine for a compiled kernel, a descriptor or a "
                                  "config, an error if it is a result")
    _stored_outputs(function, index, reported, report)
    _skips_when_seen(function, index, report)


def _result_handed_back(function: Function, index: ModuleIndex, visiting: frozenset[ast.AST] = frozenset()) -> bool:
    """Does some call of this helper give what custom_kernel hands back (`return _cached(a, b)`, `out =
    _cached(a, b)` then `return out`, through helpers doing the same)? Where none does, what the helper
    keeps is data its callers compute the result from (dequantized scales), as a store in custom_kernel
    itself would be. A helper called where lint cannot see (a callback) is taken to give the result."""
    sites = _call_sites(index).get(function.node.name, [])
    if index.functions.get(function.node.name) is not function.node or not sites:
        return True
    inner = visiting | {function.node}
    return any(caller.node not in inner and _hands_back_call(site, caller, index)
               and (_is_entry(caller) or _result_handed_back(caller, index, inner)) for site, caller in sites)


def _hands_back_call(site: ast.Call, caller: Function, index: ModuleIndex) -> bool:
    """Is the call's value itself what the caller returns or copies into the output, or a name holding it?"""
    for _, value, _, _ in _handed_back(caller, index):
        if value is site or isinstance(value, ast.Name) and any(
                assigned is site for assigned in index.assignments(caller.node, value.id)):
            return True
    return False


def _skips_when_seen(function: Function, index: ModuleIndex, report: Report) -> None:
    """`if a.data_ptr() in _seen: return c` (or `== _last_ptr`): the output is handed back untouched when
    the input's identity matches one kept across calls, and still holds the earlier call's result (the
    Python form of the C++ static last pointer). A branch that does anything before returning (runs a
    cached plan, launches) is not this."""
    for node in index.walk(function.node):
        if not isinstance(node, ast.If) or not _identity(node.test, function, index):
            continue
        kept = next((name for inner in ast.walk(node.test) if isinstance(inner, (ast.Name, ast.Attribute))
                     for name in [container_key(inner, function, index)] if name), None)
        if kept is None:
            continue
        *before, last = node.body
        if (isinstance(last, ast.Return) and last.value is not None and _holds_output(last.value, function, index)
                and not any(isinstance(inner, ast.Call) for statement in before for inner in ast.walk(statement))):
            report(last, "NV301", f"returns the output untouched when the input's identity matches one kept in {kept}:"
                                  " it still holds an earlier call's result, and the work being timed is skipped")


def _stored_outputs(function: Function, index: ModuleIndex, reported: set[str], report: Report) -> None:
    """An output, or data computed from the inputs, put into a persistent container by the timed path,
    even without a visible lookup: at a key (`_sf[key] = ...`, `_sf.setdefault(key, ...)`), added
    (`append`), or as the whole of a kept name or attribute where the store only runs for a new input
    or carries the input's address (`global _sf, _key` with `if _key != sfa.data_ptr(): _sf = ...`,
    `custom_kernel.sf = (key, ...)`)."""
    for node in index.walk(function.node):
        if isinstance(node, ast.Assign):
            for target, value in _assigned_pairs(node):
                if isinstance(target, ast.Subscript):
                    holder = container_key(target.value, function, index)
                    if holder and holder not in reported and value_kind(value, function, index) == OUTPUT:
                        report(target, "NV302", _stored_words(value, holder, target.slice, function, index))
                elif isinstance(target, (ast.Name, ast.Attribute)):
                    _judge_whole_store(node, target, value, function, index, reported, report)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault":
            holder = container_key(node.func.value, function, index)
            if holder and holder not in reported and len(node.args) >= 2 \
                    and value_kind(node.args[1], function, index) == OUTPUT:
                report(node, "NV302", _stored_words(node.args[1], holder, node.args[0], function, index))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "insert", "add"):
            holder = container_key(node.func.value, function, index)
            if holder and holder not in reported and node.args and value_kind(node.args[-1], function, index) == OUTPUT:
                report(node, "NV302", _stored_words(node.args[-1], holder, None, function, index))


def _assigned_pairs(node: ast.Assign) -> list[tuple[ast.AST, ast.AST]]:
    """(target, value) per thing assigned: `_sf, _key = x, y` assigns as two statements would."""
    pairs: list[tuple[ast.AST, ast.AST]] = []
    for target in node.targets:
        if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(target.elts) == len(node.value.elts):
            pairs.extend(zip(target.elts, node.value.elts))
        else:
            pairs.append((target, node.value))
    return pairs


def _judge_whole_store(statement: ast.stmt, target: ast.AST, value: ast.AST, function: Function, index: ModuleIndex,
                       reported: set[str], report: Report) -> None:
    """A kept name or attribute given data computed from an input is a cache, as a keyed store is,
    where the store runs only when the kept value is missing or was made for another input (`if _key
    != sfa.data_ptr():`, `if kept is None:`) or keeps the input's address beside it (`custom_kernel.sf
    = (key, sfa.float())`). Overwritten every call, unguarded, it is a scratch name the next call
    replaces before reading."""
    holder = container_key(target, function, index)
    if not holder or holder in reported or value_kind(value, function, index) != OUTPUT:
        return
    keyed = _identity(value, function, index) or _under_identity_test(statement, function, index)
    if not keyed and not _under_miss(statement, function, index):
        return
    report(target, "NV302", _stored_words(value, holder, None, function, index, keyed=keyed))


def _under_identity_test(node: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """Does node run under an if/while whose test compares the input's address with something kept
    (`if _key != sfa.data_ptr():`, `if kept is None or kept[0] != key:` with kept read from a kept attribute)?"""
    for ancestor in index.ancestors(node):
        if ancestor is function.node:
            return False
        if isinstance(ancestor, (ast.If, ast.While)) and _identity(ancestor.test, function, index) and any(
                isinstance(inner, (ast.Name, ast.Attribute))
                and (container_key(inner, function, index) or _held(inner, function, index))
                for inner in ast.walk(ancestor.test)):
            return True
    return False


def _under_miss(node: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """Does node run only when something kept is missing (`if _sf is None:`)?"""
    regions = _miss_regions(function, index)
    for ancestor in index.ancestors(node):
        if ancestor is function.node:
            return False
        if regions.get(id(ancestor)):
            return True
    return False


def _stored_words(value: ast.AST, holder: str, key: ast.AST | None, function: Function, index: ModuleIndex,
                  keyed: bool = False) -> str:
    """What NV302 says a store keeps: the output itself, or data computed from an input (a dequantized
    B), which keyed by the input's address lets repeated calls over the same inputs skip that work.
    keyed: the store is known to be kept for the input's address otherwise than by its key (a kept
    `_key` compared with data_ptr() before it)."""
    keyed = keyed or key is not None and _identity(key, function, index)
    if _holds_output(value, function, index) or isinstance(value, ast.Name) and _gathers_output(value.id, function, index):
        return f"stores an output in {holder}, which outlives the call"
    if made_around_input(value, function, index):
        return _wrapper_words(holder, keyed=keyed)
    if keyed:
        return keyed_data_words(holder)
    return f"stores data computed from an input in {holder}, which outlives the call: a later call may reuse it"


def keyed_data_words(holder: str, key: str = "data_ptr()/id()/_version") -> str:
    """What a kept store of data computed from an input, keyed by the input's address, does: NV302's words for
    `_sf[sfa.data_ptr()] = sfa.float()`, and NV303's for a cache decorator on a helper doing the same."""
    return (f"stores data computed from an input in {holder}, keyed by the input's address ({key}), so repeated"
            " calls over the same inputs skip that work")


def keeps_computed_data(function: Function, index: ModuleIndex) -> bool:
    """Does a helper hand back only data computed from the scale tensors (`return sfa_permuted.float()`), which
    no caller returns as the result? Kept by a cache decorator, that is the data NV302 speaks of, not a result."""
    returned = [n.value for n in index.own_returns(function.node) if n.value is not None]
    return bool(returned) and all(_reads_only_scales(value, function, index) for value in returned) \
        and not _result_handed_back(function, index)


def _wrapper_words(holder: str, keyed: bool) -> str:
    """A wrapper or view of an input (from_dlpack(a), a.view(...), make_ptr(a.data_ptr())) holds no data
    computed from it, so no work is skipped: what goes wrong is a later tensor meeting the old wrapper."""
    if keyed:
        return (f"keeps an object made around an input (from_dlpack, a view, make_ptr) in {holder}, keyed by the"
                " input's address (data_ptr()/id()/_version): a new tensor at the same address gets the old wrapper,"
                " whose shape, strides and dtype may differ from its own")
    return (f"keeps an object made around an input (from_dlpack, a view, make_ptr) in {holder}, which outlives the"
            " call: a later call may use it, and it still describes the old input's memory, shape and strides")
