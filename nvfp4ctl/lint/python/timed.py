"""Rules about the timed path (custom_kernel and what it calls in this file): reference scales,
to_blocked, copies of B, reference fallback, benchmark-shape branches, print, a cached entry point."""

from __future__ import annotations

import ast
import builtins
import itertools
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from nvfp4ctl.lint.python import call_sites
from nvfp4ctl.lint.python.caching import keeps_computed_data, keyed_data_words
from nvfp4ctl.lint.python.constants import constant, integer
from nvfp4ctl.lint.python.facts import current, fitting, problem
from nvfp4ctl.lint.python.index import (
    ENTRY, TUPLE, Function, ModuleIndex, call_name, dotted, element_of, elements_of, keyword_parameters, loop_values,
    own_keywords, parameter_names, position, slice_elements, view_of, views_of)
from nvfp4ctl.lint.python.inline_bodies import ignores_argument, reads_argument
from nvfp4ctl.lint.python.whole_file import _is_kernel, guarded_by_debug
from nvfp4ctl.lint.shapes import describe, pinned_shape
from nvfp4ctl.problems.records import TupleLayout

Report = Callable[[ast.AST, str, str], None]

REFERENCE_NAME = re.compile(
    r"^_?(?:sf[ab][12]?_?ref\w*|sf[ab][12]?_cpu|scale_[ab][12]?_ref\w*|ref_sf[ab][12]?\w*|sfasfb(?:_tensors)?)$")
B_NAME = re.compile(r"^(?:b[12]?|B[12]?|b[12]?_ref|mat_?b[12]?|b[12]?_fp4|bq|b_q|b_packed|weight|w[12]?)$")
TRANSPOSE_ATTRS = {"T", "mT", "mH", "H"}
TRANSPOSE_CALLS = {"t", "transpose", "permute", "swapaxes", "swapdims", "movedim"}
COPY_CALLS = {"contiguous", "clone"}
SHAPE_KEEPING_CALLS = {"contiguous", "clone", "detach"}  # with no argument: the same dimensions
# metadata of a tensor, not its values: a kernel given sfa_ref.stride(0) cannot read the reference
# scales (data_ptr() is not here: an address is a way to read them)
SHAPE_ATTRS = {"shape", "size", "dtype", "device", "ndim", "dim", "numel", "nelement", "is_cuda", "layout",
               "stride", "element_size", "itemsize", "nbytes", "is_contiguous", "storage_offset"}
SCALE_NAME = re.compile(r"(?i)sf|scale")
# torch.ops namespaces of torch's own operators: what they do with an argument is documented
TORCH_OP_NAMESPACES = {"aten", "prims", "quantized", "_quantized", "quantized_decomposed", "mkldnn", "c10d",
                       "_c10d_functional", "profiler", "higher_order"}
CACHE_DECORATORS = re.compile(r"(?:^|\.)(?:cache|lru_cache|cached|memoize|cached_property)$")


def _reference() -> dict[int, str]:
    """Reference-scale index -> its name in the problem's tuple (GEMM {2: sfa_ref, 3: sfb_ref})."""
    layout = current()
    return {i: layout.name(i) for i in layout.reference_scales}


def _indices(which: tuple[int, ...]) -> str:
    return ", ".join(str(i) for i in which)


def _permuted_words() -> str:
    """"sfa_permuted/sfb_permuted (data[4], data[5])"."""
    layout = current()
    names = "/".join(layout.name(i) for i in layout.permuted_scales)
    return f"{names} ({', '.join(f'data[{i}]' for i in layout.permuted_scales)})"


def check(index: ModuleIndex, report: Report, shapes: tuple[tuple[int, ...], ...], dims: tuple[str, ...]) -> None:
    def outside_debug(node: ast.AST, code: str, message: str) -> None:
        # a comparison with the reference behind `if DEBUG:` is a debug aid, as a print there is (NV801)
        if not guarded_by_debug(node, index):
            report(node, code, message)

    for function in index.timed:
        _reference_scales(function, index, outside_debug)
        _foreign_unpacks(function, index, report)
        _transposed_b(function, index, outside_debug)
        _fallback(function, index, outside_debug)
        _shape_branches(function, index, report, shapes, dims)
        _prints(function, index, report)
    _cached_entry(index, report)


def _timed_callee(call: ast.Call, index: ModuleIndex) -> bool:
    """Is this a call of a function of this file (its parameters are checked where they are used)?"""
    return isinstance(call.func, ast.Name) and call.func.id in index.functions or (
        isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
        and call.func.value.id in ("self", "cls"))


def _opaque_callee(call: ast.Call, index: ModuleIndex) -> str | None:
    """The name of a callee we cannot see into (an extension module's function, a compiled kernel),
    or None for torch/imported/builtin functions, whose use of an argument is certain. Imported
    names count as extensions where the file shows them to be: a custom op (torch.ops.mylib.gemm),
    or a module load/load_inline builds here. Other imports may be the user's Python, kept quiet as
    a function handed in as a parameter is. A method of an object that a literal, a builtin, the
    standard library or torch made (`cfg.get` of `cfg = json.load(...)`) is theirs, no extension."""
    func = call.func
    name = dotted(func)
    if name is None:
        return call_name(call) or "a function"  # _load().gemm(...), kernels[key](...)
    head = name.split(".")[0]
    if _extension(func, index):
        return name
    if head in index.imports or call_name(call) in ("to_blocked", "_scaled_mm"):
        return None
    if isinstance(func, ast.Name) and (hasattr(builtins, head) or head in index.functions or head in index.classes):
        return None
    if name.count(".") <= 1 and _plain_object(head, call, index):
        return None  # cfg.get(data) of cfg = json.load(...), lock.acquire() of lock = threading.Lock()
    return name


def _plain_object(name: str, call: ast.Call, index: ModuleIndex) -> bool:
    """Is a name only ever bound to a literal (`table = {...}`) or to what a builtin, the standard library
    or torch makes (`cfg = json.load(...)`, `lock = threading.Lock()`, `buf = torch.empty(...)`)? Its
    methods are Python's or torch's own, not an extension's. Makers that may hand back foreign code
    (ctypes.CDLL, importlib, functools.partial, torch.ops, torch.compile, ...) do not count. The
    function's own bindings decide for a local name, the module's for a module name; one binding of
    another kind, or none seen (a parameter, `with ... as name`), and the name stays unknown."""
    function = index.enclosing_function(call)
    scope: ast.AST = function if function is not None and name in index.own_names(function) else index.tree
    key = ("NV403 plain object", id(scope), name)
    found = index.memo.get(key)
    if found is None:
        if scope is index.tree and name not in index.module_names \
                or function is not None and scope is function and name in parameter_names(function):
            found = False
        else:
            values = _bound_values(scope, name, index)
            found = bool(values) and all(value is not None and _plain_value(value, index) for value in values)
        index.memo[key] = found
    return bool(found)


def _bound_values(scope: ast.AST, name: str, index: ModuleIndex) -> list[ast.AST | None]:
    """What a name is bound to in a scope (nested functions included): each assigned value, None for a
    binding lint cannot read (a for or with target, an unpacking, an augmented assignment, an import)."""
    values: list[ast.AST | None] = list(index.assignments(scope, name))
    for node in index.walk(scope):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            values.append(node.value)
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store) \
                and not _plainly_assigned(node, index):
            values.append(None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
            values.append(None)
    return values


def _plainly_assigned(target: ast.Name, index: ModuleIndex) -> bool:
    """Is a stored name one that index.assignments reads the value of (x = v, x := v, x, y = v, w)?"""
    parent = index.parents.get(target)
    if isinstance(parent, ast.Assign | ast.NamedExpr | ast.AnnAssign):
        return True
    grand = index.parents.get(parent) if parent is not None else None
    return isinstance(parent, ast.Tuple) and isinstance(grand, ast.Assign) and isinstance(grand.value, ast.Tuple) \
        and len(grand.value.elts) == len(parent.elts)


# standard-library modules whose results may be foreign or arbitrary code: a native library, an
# imported module, a wrapped function, an unpickled object
FOREIGN_STDLIB = {"ctypes", "importlib", "functools", "operator", "pickle", "marshal", "shelve", "types", "code",
                  "codeop", "runpy", "zipimport", "inspect", "builtins", "copyreg", "multiprocessing", "concurrent"}
FOREIGN_TORCH = ("torch.ops", "torch.classes", "torch.utils.cpp_extension", "torch.jit", "torch.load", "torch.compile",
                 "torch.library", "torch.hub", "torch.package", "torch.export")
FOREIGN_BUILTINS = {"type", "super", "staticmethod", "classmethod", "property"}
PLAIN_BUILTIN_CALLS = {"open", "sorted", "iter", "reversed", "enumerate", "zip", "range"}


def _plain_value(value: ast.AST, index: ModuleIndex) -> bool:
    """A literal, or a call of a builtin type (dict(), set()), of the standard library or of torch."""
    if isinstance(value, (ast.Constant, ast.Dict, ast.List, ast.Set, ast.Tuple, ast.DictComp, ast.ListComp,
                          ast.SetComp, ast.JoinedStr)):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name) and func.id not in index.imports and func.id not in index.functions \
            and func.id not in index.classes and func.id not in index.module_names:
        maker = getattr(builtins, func.id, None)
        return func.id in PLAIN_BUILTIN_CALLS or isinstance(maker, type) and func.id not in FOREIGN_BUILTINS
    if not index.is_imported_root(func):
        return False
    resolved = index.resolve(func) or ""
    root = resolved.split(".")[0]
    if root == "torch":
        return not any(resolved == foreign or resolved.startswith(foreign + ".") for foreign in FOREIGN_TORCH)
    return root in sys.stdlib_module_names and root not in FOREIGN_STDLIB


def _extension(func: ast.AST, index: ModuleIndex) -> bool:
    """Is a called name code built outside Python: a custom op (`torch.ops.mylib.gemm`, not torch's own
    aten/prims), a name bound to what load/load_inline returns (also when the same name is imported
    first: `try: import gemm_ext as mod` / `except ImportError: mod = load_inline(...)`), or from a
    module that such a call of this file builds (`load(name="gemm_ext", ...)`, then `import gemm_ext`)?"""
    resolved = (index.resolve(func) or "").split(".")
    if resolved[:2] == ["torch", "ops"] and len(resolved) > 3 and resolved[2] not in TORCH_OP_NAMESPACES:
        return True
    names, modules = _built_extensions(index)
    head = (dotted(func) or "").split(".")[0]
    return head in names or head in index.imports and bool(modules & set(index.imports[head].split(".")))


def _built_extensions(index: ModuleIndex) -> tuple[set[str], set[str]]:
    """(names bound to a module load/load_inline returns, the module names those calls give), once per file."""
    key = ("NV403 extensions",)
    found = index.memo.get(key)
    if found is None:
        builds = [n for n in index.all_nodes if isinstance(n, ast.Call) and _builds_extension(n, index)]
        modules: set[str] = set()
        builders: set[str] = set()  # functions of this file that build one (`mod = _compile()`)
        for call in builds:
            named = next((k.value for k in call.keywords if k.arg == "name"), call.args[0] if call.args else None)
            if isinstance(named, ast.Constant) and isinstance(named.value, str):
                modules.add(named.value)
            builders.update(f.name for f in index.ancestors(call)
                            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
        names: set[str] = set()
        for node in index.all_nodes if builds else ():
            if not isinstance(node, ast.Assign):
                continue
            value = node.value
            while isinstance(value, ast.Attribute):  # gemm = _compile().gemm
                value = value.value
            if isinstance(value, ast.Call) and (call_name(value) in builders or _builds_extension(value, index)):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        found = index.memo[key] = (names, modules)
    return found  # type: ignore[return-value]


def _builds_extension(call: ast.Call, index: ModuleIndex) -> bool:
    """torch.utils.cpp_extension.load_inline(...) or .load(...), however imported (not torch.load)."""
    if call_name(call) not in ("load", "load_inline"):
        return False
    resolved = index.resolve(call.func) or ""
    return resolved.split(".")[-1] == "load_inline" or resolved.endswith("cpp_extension.load")


def _reference_use(node: ast.AST, element: int, label: str, function: Function, index: ModuleIndex,
                   report: Report, together: tuple[int, ...] = ()) -> None:
    """together: every reference element one finding names (a *pair handing a helper sfa_ref and sfb_ref
    is one place, so one finding), element the one whose read decides the rule."""
    parent = index.parents.get(node)
    if isinstance(parent, ast.Attribute) and parent.attr in SHAPE_ATTRS:
        return  # sfa_ref.shape: metadata, not the scales themselves
    layout = current()
    named = together or (element,)
    scale = "scales" if len(named) > 1 else "scale"
    name = ", ".join(layout.name(e) for e in named)
    target: int = layout.permuted_for(element)  # type: ignore[assignment]  # reference elements only: never None
    targets: list[int] = [layout.permuted_for(e) for e in named]  # type: ignore[misc]
    wanted = ", ".join(layout.name(t) for t in targets)
    permuted = f"{'indices' if len(named) > 1 else 'index'} {_indices(tuple(targets))} ({wanted})"
    call = index.parents.get(parent) if isinstance(parent, ast.keyword) else _through_starred_literal(parent, index)
    callee = _opaque_callee(call, index) if isinstance(call, ast.Call) and node is not call.func else None
    if callee is not None and _passes_permuted(call, target, function, index):  # type: ignore[arg-type]
        if ignores_argument(call, node, index):  # type: ignore[arg-type]
            return  # the kernel's own C++, in the file, never names the parameter it lands in
        read = reads_argument(call, node, index)  # type: ignore[arg-type]
        if read is not None:
            where = f" at line {read.line}" if read.line is not None else ""  # joined pieces: no file line
            report(node, "NV401", f"{label} (the reference {scale} {name}) is passed to {callee}, whose C++ reads "
                                  f"its data as {read.parameter}{where} ({read.text}): the timed path reads the "
                                  f"reference {scale}; the kernel must read {permuted}")
            return
        report(node, "NV403", f"{label} (the reference {scale} {name}) is passed to {callee}: fine only if it "
                              f"ignores {'them' if len(named) > 1 else 'it'}; the kernel must read {permuted}")
    elif callee is not None:
        report(node, "NV401", f"{label} (the reference {scale} {name}) is passed to {callee} without {permuted}: "
                              f"the kernel can only be reading the reference {scale}; pass {wanted}")
    else:
        report(node, "NV401", f"{label} is the reference {scale} {name} (input "
                              f"{'indices' if len(named) > 1 else 'index'} {_indices(named)}): use {permuted}")


def _through_starred_literal(parent: ast.AST | None, index: ModuleIndex) -> ast.AST | None:
    """The call an item of a starred literal goes to (`mod.gemm(*(a, b, sfa_ref))` hands it sfa_ref as
    `mod.gemm(a, b, sfa_ref)` does), else the parent itself."""
    if _starred_literal(parent):
        starred = index.parents.get(parent)  # type: ignore[arg-type]
        if isinstance(starred, ast.Starred):
            return index.parents.get(starred)
    return parent


def _starred_literal(node: ast.AST | None) -> bool:
    """A tuple or list literal with no starred item: each item stands at its own place in the code."""
    return isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(item, ast.Starred) for item in node.elts)


def _reference_use_in_helper(node: ast.Name, hits: set[int], function: Function, index: ModuleIndex,
                             report: Report) -> None:
    """A reference scale read through a parameter (`def _ptr(dtype, t, align): ... t.data_ptr()`) is wrong at
    each call that passes one (`_ptr(SF, sfa_ref, 32)`, `_ptr(SF, sfb_ref, 32)`), not in the helper, which
    is right when given the permuted scales: each such call is reported once, naming what it passes. A
    reference scale that reaches the parameter some way lint cannot place is reported where it is read."""
    if not call_sites.from_parameter(function, node):
        _reference_use(node, min(hits), node.id, function, index, report)
        return
    reported: set[int] = index.memo.setdefault(("NV401 call sites", "reported"), set())  # type: ignore[assignment]
    placed: set[int] = set()
    for argument, element, _caller in call_sites.passing(function, node.id, hits, index):
        placed.add(element)
        if id(argument) in reported:
            continue  # the helper reads its parameter more than once; the call is one mistake

        def at_call(_: ast.AST, code: str, message: str, argument: ast.AST = argument) -> None:
            reported.add(id(argument))
            report(argument, code, message)

        passed = ast.unparse(argument)
        together, readers = ((), [node.id])
        if isinstance(argument, (ast.Starred, ast.keyword)):  # one place handing several parameters: one finding
            together, readers = _starred_scales(function, argument, index)
        read = f"read in {function.name}" if passed == node.id else f"read as {', '.join(readers)} in {function.name}"
        _reference_use(node, element, f"{passed} ({read})", function, index, at_call, together)
    if hits - placed:
        _reference_use(node, min(hits - placed), node.id, function, index, report)


def _starred_scales(function: Function, starred: ast.Starred, index: ModuleIndex) -> tuple[tuple[int, ...], list[str]]:
    """The reference elements a starred argument (`_two(*pair)`, pair = (sfa_ref, sfb_ref)) hands to the
    parameters a helper reads, and those parameters, in the helper's order."""
    reference = set(_reference())
    elements: set[int] = set()
    readers: list[str] = []
    for parameter in function.params():
        if not _reads(function, parameter, index):
            continue
        landed = {element for argument, element, _ in call_sites.passing(function, parameter, reference, index)
                  if argument is starred}
        if landed:
            elements |= landed
            readers.append(parameter)
    return tuple(sorted(elements)), readers


def _reads(function: Function, parameter: str, index: ModuleIndex) -> bool:
    return any(isinstance(node, ast.Name) and node.id == parameter and isinstance(node.ctx, ast.Load)
               and not _passed_on(node, index) for node in index.walk(function.node))


def _passes_permuted(call: ast.Call, permuted: int, function: Function, index: ModuleIndex) -> bool:
    """Does a call hand over the permuted scale too, or something that may hold it? A kernel given the
    whole tuple's elements may ignore the reference ones (NV403); given no permuted scale, it can only
    be reading the reference one (NV401)."""
    for argument in [*call.args, *call.keywords]:
        if isinstance(argument, ast.keyword) and argument.arg is None:
            items = index.splatted(argument)
            if items is None and _keyword_parameter(argument.value, function):
                given = call_sites.keyword_items(function, index)  # **opts of `def _launch(a, **opts)`
                if given is None or any(_may_hold(value, permuted, caller, index) for _, value, caller in given):
                    return True
                continue
            if items is None or any(_may_hold(value, permuted, function, index) for value in items.values()):
                return True  # **options: unknown, or a mapping lint sees that holds it
            continue
        value = argument.value if isinstance(argument, (ast.keyword, ast.Starred)) else argument
        if isinstance(argument, ast.Starred) and view_of(function, value) is None:
            return True  # *args of unknown content
        if _may_hold(value, permuted, function, index):
            return True
    return False


def _may_hold(node: ast.AST, element: int, function: Function, index: ModuleIndex, depth: int = 0) -> bool:
    """Is an expression made from an element, or from the whole tuple (through names assigned from
    them), or is it a name of unknown origin or an attribute named like scales (self.sfa_perm)?
    data[0] is element 0 and nothing else: the data inside it does not count as the whole tuple."""
    held = elements_of(function, node) | {e for view in views_of(function, node) for e in view}
    if held:
        return element in held or TUPLE in held
    if isinstance(node, ast.Attribute) and SCALE_NAME.search(node.attr):
        return True
    if isinstance(node, ast.Name):
        assigned = index.assignments(function.node, node.id)
        if not assigned:  # a scale from somewhere lint does not see (a global, a closure)
            return not function.possible(node.id, position(node)) and bool(SCALE_NAME.search(node.id))
        return depth < 2 and any(_may_hold(value, element, function, index, depth + 1) for value in assigned)
    return any(_may_hold(child, element, function, index, depth) for child in ast.iter_child_nodes(node))


def _reference_scales(function: Function, index: ModuleIndex, report: Report) -> None:
    layout = current()
    scales, permuted_scales = layout.reference_scales, layout.permuted_scales
    reference = _reference()
    references = f"indices {_indices(scales)}" if len(scales) > 1 else f"index {scales[0]}"
    permuted = (f"input indices {_indices(permuted_scales)}" if len(permuted_scales) > 1
                else f"input index {permuted_scales[0]}")
    for node in index.walk(function.node):
        if isinstance(node, ast.Call) and "to_blocked" in (call_name(node), (index.resolve(node.func) or "").split(".")[-1]):
            report(node.func, "NV402", f"to_blocked() in the timed path: use {_permuted_words()}")
        if isinstance(node, ast.Call):
            _whole_input_passed(node, function, index, report)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if _passed_on(node, index):
                continue
            hits = elements_of(function, node) & set(reference)
            if hits:
                _reference_use(node, min(hits), ast.unparse(node), function, index, report)
            covered = slice_elements(function, node)
            if covered and set(covered) & set(reference):
                report(node, "NV403", f"this slice of the input passes the reference scales ({references}) along")
        elif isinstance(node, ast.Starred) and (held := set(view_of(function, node.value) or ()) & set(reference)):
            call = index.parents.get(node)
            # `*(a, b, sfa_ref)`: each reference item is judged where it stands, one finding each
            if isinstance(call, ast.Call) and not _timed_callee(call, index) and not _starred_literal(node.value):
                callee = _opaque_callee(call, index) if node is not call.func else None
                _sequence_handed_over(node, held, call, callee, function, index, report)
        elif isinstance(node, ast.keyword) and node.arg is None:
            _splatted_scales(node, function, index, report)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if _keyword_parameter(node, function):
                if not _keywords_handed_on(node, function, index):
                    _keyword_items_read(node, function, index, report)
                continue
            possible = function.possible(node.id, position(node))
            if _passed_on(node, index):
                continue
            whole = _literal_passed_whole(node, function, index)
            if whole is not None:  # args = (a, sfa_ref); ext.gemm(args): as ext.gemm(*args) is
                call, callee = whole
                held = set(view_of(function, node) or ()) & set(reference)
                if held:
                    _sequence_handed_over(node, held, call, callee, function, index, report)
                    continue
            hits = possible & set(reference)
            if hits:
                _reference_use_in_helper(node, hits, function, index, report)
            elif not possible and REFERENCE_NAME.match(node.id) and not _ignored_by_kernel(node, index):
                report(node, "NV403", f"{node.id} reads like the reference scales; the timed path must use the "
                                      f"permuted ones ({permuted})")


def _sequence_handed_over(node: ast.AST, held: set[int], call: ast.Call, callee: str | None, function: Function,
                          index: ModuleIndex, report: Report) -> None:
    """Reference scales handed to a call as one sequence (`*args`, or `args` itself where it is bound once
    to a literal): NV401 where the call gets no permuted scale for them, NV403 otherwise."""
    layout = current()
    alone = sorted(e for e in held if not _passes_permuted(call, layout.permuted_for(e), function, index))  # type: ignore[arg-type]
    if callee is not None and alone:  # mod.dual(a, b1, b2, *refs, c): only the reference ones go in
        names = ", ".join(layout.name(e) for e in alone)
        wanted = ", ".join(layout.name(layout.permuted_for(e)) for e in alone)  # type: ignore[arg-type]
        report(node, "NV401", f"{ast.unparse(node)} passes the reference scales ({names}) to {callee} "
                              f"without the permuted ones: the kernel can only be reading the reference "
                              f"scales; pass {wanted}")
    else:
        scales = layout.reference_scales
        references = f"indices {_indices(scales)}" if len(scales) > 1 else f"index {scales[0]}"
        report(node, "NV403", f"{ast.unparse(node)} passes the reference scales ({references}) along; "
                              "pass the elements you use")


def _literal_passed_whole(node: ast.Name, function: Function, index: ModuleIndex) -> tuple[ast.Call, str] | None:
    """(call, callee) where a sequence whose items lint knows is itself an argument of an extension call:
    a name bound once to a tuple or list literal and never changed after (`args = (a, sfa_ref);
    ext.gemm(args)`), a list built only by appends (`args = []; args.append(sfa_ref)`), or the starred
    name of an unpacking of the input (`a, b, *rest = data; ext.gemm(rest)`). The call gets its items
    as surely as `ext.gemm(*args)` does. A function of this file is followed through its parameter instead."""
    holder, call = node, index.parents.get(node)
    if isinstance(call, ast.keyword):
        holder, call = call, index.parents.get(call)
    if not isinstance(call, ast.Call) or holder is call.func or _timed_callee(call, index) \
            or element_of(function, node) is not None:
        return None
    if not (_bound_once_to_literal(node.id, function, index) or index.appended(function.node, node.id)
            or _starred_once(node.id, function, index)):
        return None
    callee = _opaque_callee(call, index)
    return (call, callee) if callee is not None else None


def _bound_once_to_literal(name: str, function: Function, index: ModuleIndex) -> bool:
    assigned = index.assignments(function.node, name)
    return len(assigned) == 1 and _starred_literal(assigned[0]) and not _changed_in_place(name, function, index)


def _starred_once(name: str, function: Function, index: ModuleIndex) -> bool:
    """Is the name bound only as the starred name of one unpacking (`a, b, *rest = data`), never changed after?
    Which elements it holds follows from where the star stands."""
    bindings = [node for node in index.walk(function.node) if isinstance(node, ast.Name) and node.id == name
                and not isinstance(node.ctx, ast.Load)]
    if len(bindings) != 1 or not isinstance(starred := index.parents.get(bindings[0]), ast.Starred):
        return False
    unpacking = index.parents.get(starred)
    statement = index.parents.get(unpacking) if isinstance(unpacking, (ast.Tuple, ast.List)) else None
    return (isinstance(statement, ast.Assign) and unpacking in statement.targets
            and not _changed_in_place(name, function, index))


def _changed_in_place(name: str, function: Function, index: ModuleIndex) -> bool:
    """Is a name's list changed after it is bound (`args.append(sfa_permuted)`, `args[1] = x`, `args += [x]`)?"""
    for node in index.walk(function.node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        if any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
               or isinstance(node, ast.AugAssign) and isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _splatted_scales(keyword: ast.keyword, function: Function, index: ModuleIndex, report: Report) -> None:
    """`mod.gemm(a, b, c, **kw)` of `kw = dict(sfa=sfa_ref)`: the scales go in as if passed by keyword, one
    finding at the `**kw` naming them. A function of this file is followed instead, through its parameters."""
    items = index.splatted(keyword)
    call = index.parents.get(keyword)
    if not items or not isinstance(call, ast.Call) or _timed_callee(call, index):
        return
    reference = _reference()
    held = {key: element for key, value in items.items() if (element := element_of(function, value)) in reference}
    if not held:
        return
    layout = current()
    alone = [e for e in held.values() if not _passes_permuted(call, layout.permuted_for(e), function, index)]  # type: ignore[arg-type]
    passed = ", ".join(f"{key}={ast.unparse(items[key])}" for key in held)
    _reference_use(keyword, min(alone or held.values()), f"{ast.unparse(keyword)} ({passed})", function, index,
                   report, tuple(sorted(set(held.values()))))


def _ignored_by_kernel(node: ast.AST, index: ModuleIndex) -> bool:
    """Is node an argument of an extension call whose visible C++ never names the parameter it lands in?"""
    for ancestor in index.ancestors(node):
        if isinstance(ancestor, ast.Call) and _opaque_callee(ancestor, index) is not None \
                and ignores_argument(ancestor, node, index):
            return True
        if isinstance(ancestor, ast.stmt):
            return False
    return False


def _whole_input_passed(call: ast.Call, function: Function, index: ModuleIndex, report: Report) -> None:
    """`ext.gemm(data)`: the whole input, reference scales and permuted ones alike, handed to code lint
    cannot read. Which scales it reads is unknown, so it is neither fine nor an error: NV403, as for
    *data. Functions of this file, and objects of its classes, are followed instead."""
    callee = _opaque_callee(call, index)
    layout = current()
    if callee is None or not layout.reference_scales or _timed_callee(call, index) \
            or id(call) in _followed_calls(function, index) or _own_object(call.func, index):
        return
    if isinstance(call.func, ast.Name) and not (call.func.id in index.module_names or call.func.id in index.imports
                                                or index.assignments(function.node, call.func.id)):
        return  # a parameter or closure (a decorator's fn: the user's own function) or an undefined name
    for argument in [*call.args, *(k.value for k in call.keywords)]:
        if not isinstance(argument, ast.Starred) and element_of(function, argument) == TUPLE:
            names = "/".join(layout.name(i) for i in layout.reference_scales)
            report(argument, "NV403", f"{ast.unparse(argument)} hands {callee} the whole input, the reference scales "
                                      f"{names} with the permuted ones: lint cannot see which it reads; fine only if "
                                      f"it reads {_permuted_words()}, or pass the elements it uses")


def _own_object(func: ast.AST, index: ModuleIndex) -> bool:
    """`runner(data)`, `Runner()(data)`: an object of a class of this file, whose __call__ is followed."""
    if isinstance(func, ast.Name):
        return func.id in index.instances and index.instances[func.id] in index.classes
    return isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id in index.classes


def _followed_calls(function: Function, index: ModuleIndex) -> set[int]:
    """ids of the calls in a function that the timed path follows into a function of this file."""
    key = ("NV403 followed calls", id(function.node))
    found = index.memo.get(key)
    if found is None:
        found = index.memo[key] = {id(call) for _, call in index.callees(function) if call is not None}
    return found  # type: ignore[return-value]


def _passed_on(node: ast.AST, index: ModuleIndex) -> bool:
    """Is an element bound to names (`x = data[2]`, `pair = (data[2], data[3])`) or handed to a function
    of this file (`launch(sfa)`, `launch((a, sfa))`, `launch(scale=sfa)`)? Then the names or the
    parameter hold it, and where they are used is what counts, also through a starred literal
    (`_ptr(*[1, sfb_ref], 32)`: reported once, at the call's starred argument)."""
    holder, parent = node, index.parents.get(node)
    if isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):
        holder, parent = parent, index.parents.get(parent)
        if isinstance(parent, ast.Starred):  # _ptr(*[1, sfb_ref], 32): the helper's parameter holds it
            holder, parent = parent, index.parents.get(parent)
    if isinstance(parent, ast.keyword):
        holder, parent = parent, index.parents.get(parent)
    if _splatted_item(holder, parent, index) or _appended_item(node, parent, index):
        return True
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is holder:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        return all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in targets)  # names the index follows
    return isinstance(parent, ast.Call) and holder is not parent.func and _timed_callee(parent, index) or (
        _looped_over(node, index))


def _splatted_item(holder: ast.AST, parent: ast.AST | None, index: ModuleIndex) -> bool:
    """Is it a value of a mapping lint follows into each `**name` (`kw = dict(sfa=sfa_ref)`, `kw = {"sfa":
    sfa_ref}`, then only `kernel(**kw)`)? Then each call given **kw is where it counts, unless one hands it
    to a helper of the file with no parameter of its key and no **kwargs to take it (a TypeError when run):
    no parameter holds it there, so it counts where it is put in."""
    if isinstance(parent, ast.Dict) and any(value is holder for value in parent.values):
        mapping: ast.AST = parent
        key = next(k for k, v in zip(parent.keys, parent.values) if v is holder)
        name = key.value if isinstance(key, ast.Constant) else None
    elif isinstance(holder, ast.keyword) and isinstance(parent, ast.Call) and call_name(parent) == "dict":
        mapping, name = parent, holder.arg
    else:
        return False
    statement = index.parents.get(mapping)
    if not (isinstance(statement, ast.Assign) and statement.value is mapping and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        return False
    scope = index.enclosing_function(statement)
    return scope is not None and index.mapping(scope, statement.targets[0].id) is not None \
        and not _lost_in_a_helper(name, statement.targets[0].id, scope, index)


def _lost_in_a_helper(key: object, mapping: str, scope: ast.AST, index: ModuleIndex) -> bool:
    """Does a `**mapping` hand its item `key` to a helper of the file that has neither a parameter of that name
    nor a **kwargs parameter?"""
    for node in index.walk(scope):
        if isinstance(node, ast.keyword) and node.arg is None and isinstance(node.value, ast.Name) \
                and node.value.id == mapping:
            call = index.parents.get(node)
            helper = index.functions.get(call.func.id) if isinstance(call, ast.Call) \
                and isinstance(call.func, ast.Name) else None
            if helper is not None and helper.args.kwarg is None \
                    and key not in keyword_parameters(helper):
                return True
    return False


def _keyword_parameter(node: ast.AST, function: Function) -> bool:
    return isinstance(node, ast.Name) and own_keywords(function, node)


def _keywords_handed_on(node: ast.Name, function: Function, index: ModuleIndex) -> bool:
    """Is a **kwargs parameter handed whole to helpers of this file that take each of its keys (`_inner(**kw)`
    of `def _inner(sfa, **_)`)? Then their parameters hold its items, and where they are used is what counts."""
    keyword = index.parents.get(node)
    call = index.parents.get(keyword) if isinstance(keyword, ast.keyword) and keyword.arg is None else None
    if not isinstance(call, ast.Call) or not _timed_callee(call, index):
        return False
    helpers = [callee.node for callee, at in index.callees(function) if at is call]
    given = call_sites.keyword_items(function, index)
    return bool(helpers) and all(helper.args.kwarg is not None or given is not None and all(
        key in keyword_parameters(helper) for key, _, _ in given) for helper in helpers)


def _keyword_items_read(node: ast.Name, function: Function, index: ModuleIndex, report: Report) -> None:
    """A helper's **kwargs parameter read (`opts["sf"]`, `opts.get("sf")`, `mod.gemm(a, **opts)`) holds the
    items the calls give it under keys naming none of its parameters (`_launch(a, **kw)` of `kw =
    dict(sf=sfa_ref)`, `_launch(a, sf=sfa_ref)`): each call handing it a reference scale the helper reads is
    reported once, naming every such key, as for named parameters; the helper itself is not."""
    read, _ = _keyword_read(node, function, index)
    keys = _keyword_keys_read(node.id, function, index)
    reference = set(_reference())
    reported: set[int] = index.memo.setdefault(("NV401 call sites", "reported"), set())  # type: ignore[assignment]
    handed: dict[int, tuple[call_sites.Argument, dict[str, int]]] = {}
    for key in sorted(keys):
        for argument, element, _caller in call_sites.passing(function, key, reference, index):
            handed.setdefault(id(argument), (argument, {}))[1][key] = element
    for argument, held in handed.values():
        if id(argument) in reported:
            continue  # the helper reads the mapping more than once; the call is one mistake

        def at_call(_: ast.AST, code: str, message: str, argument: ast.AST = argument) -> None:
            reported.add(id(argument))
            report(argument, code, message)

        readers = ", ".join(f"{node.id}[{key!r}]" for key in held)
        together = tuple(sorted(set(held.values())))
        _reference_use(read, min(together), f"{ast.unparse(argument)} (read as {readers} in {function.name})",
                       function, index, at_call, together if len(together) > 1 else ())


def _keyword_keys_read(name: str, function: Function, index: ModuleIndex) -> set[str]:
    """Every key the function's reads of its **kwargs parameter `name` take, worked out once per function:
    each read of it asks for all of them."""
    key = ("NV401 **kwargs keys", id(function.node), name)
    found = index.memo.get(key)
    if found is None:
        keys: set[str] = set()
        for use in index.walk(function.node):
            if isinstance(use, ast.Name) and use.id == name and _keyword_parameter(use, function):
                keys |= _keyword_read(use, function, index)[1]
        found = index.memo[key] = keys
    return found  # type: ignore[return-value]


def _keyword_read(node: ast.Name, function: Function, index: ModuleIndex) -> tuple[ast.AST, set[str]]:
    """Where a **kwargs parameter is read and the keys that read takes: one for `opts["sf"]` and
    `opts.get("sf")`, every key the calls give it for any other read (`**opts`, `opts` handed on whole)."""
    parent = index.parents.get(node)
    if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.slice, ast.Constant):
        return parent, {parent.slice.value} if isinstance(parent.slice.value, str) else set()
    call = index.parents.get(parent) if isinstance(parent, ast.Attribute) else None  # type: ignore[arg-type]
    if isinstance(call, ast.Call) and call.func is parent and parent.attr == "get" and call.args \
            and isinstance(call.args[0], ast.Constant):  # type: ignore[union-attr]
        return call, {call.args[0].value} if isinstance(call.args[0].value, str) else set()
    given = {key for key, _, _ in call_sites.keyword_items(function, index) or ()}
    return (parent if isinstance(parent, ast.keyword) else node), given


def _appended_item(node: ast.AST, parent: ast.AST | None, index: ModuleIndex) -> bool:
    """Is it appended to a list lint follows (`args = []`, then only `args.append(sfa_ref)` statements)?
    Then the list holds it, as `args = [sfa_ref]` would, and where the list is used is what counts."""
    if not (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute)
            and isinstance(parent.func.value, ast.Name) and parent.func.attr == "append"):
        return False
    scope = index.enclosing_function(parent)
    items = None if scope is None else index.appended(scope, parent.func.value.id)
    return items is not None and any(item is node for item in items)


def _looped_over(node: ast.AST, index: ModuleIndex) -> bool:
    """Is the node an item a for loop's name takes (`for t in (sfa_ref,):`, `for n, t in (("a", sfa_ref),):`)?
    Then t holds it, and where t is used is what counts."""
    for ancestor in itertools.islice(index.ancestors(node), 3):  # the literal, an item of it, the loop
        if isinstance(ancestor, (ast.For, ast.AsyncFor)):
            looped = loop_values(ancestor)
            return looped is not None and any(value is node for values in looped.values() for value in values)
    return False


def _foreign_unpacks(function: Function, index: ModuleIndex, report: Report) -> None:
    """An unpacking of the whole input into as many names as another problem's tuple has (a GEMM-shaped
    `a, b, sfa, sfb, sfa_p, sfb_p, c = data` in a dual GEMM file) raises ValueError, and gives its names
    no positions: the reference scales could be any of them. Positions only ever come from the
    problem's own tuple (the GEMM's 2 and 3 are b2 and sfa_ref in the dual GEMM's). Where every call
    reaches the unpacking (NV006) the file cannot run under this task at all: it is most likely another
    problem's submission, or lint was given the wrong task.yml.
    A count that fits no problem (`a, b, c = data`) raises as surely where every call reaches it: NV007,
    an error too. Where a call may skip it (a branch, a helper, a test double's) it is left alone: no
    problem's tuple gives its names positions, and it need never run."""
    layout = current()
    size = len(layout.names)
    for unpacking_of in _miscounted_unpackings(function, index):
        target, named, others = unpacking_of.target, unpacking_of.named, unpacking_of.others
        unpacking = (f"unpacks {named} names from the {problem()} input, which has {size} "
                     f"({', '.join(layout.names)})")
        # not "raises ValueError": a length check before it (assert len(data) == 4) raises its own error first
        cannot = f"{unpacking} on every call, so it cannot take {problem()}'s input"
        every_call = f"{cannot} ({_count_source(layout, named)}): unpack the task's {size}," \
                     " or gather the rest with a starred name"
        if not others:
            if unpacking_of.every_call:
                report(target, "NV007", every_call)
            continue
        if unpacking_of.every_call:
            # the dual GEMM's task text describes 7, as many as the GEMM's input: written from that text, the
            # file is no GEMM submission
            described = named == len(layout.described)
            report(target, "NV006", every_call if described else f"{cannot}; {_looks_like(named, others)}")
        else:
            report(target, "NV403", f"{unpacking}: that raises ValueError, and lint cannot tell which of them are"
                                    f" the reference scales; {named} names fit the input of {', '.join(others)}")


@dataclass(frozen=True)
class MiscountedUnpacking:
    """An unpacking of the whole input into a number of names the task's tuple does not have."""

    target: ast.Tuple | ast.List
    named: int
    others: tuple[str, ...]  # the other problems whose input has `named` elements
    every_call: bool  # every call of the entry reaches it (_reached_on_every_call)


def _miscounted_unpackings(function: Function, index: ModuleIndex) -> Iterator[MiscountedUnpacking]:
    """Each unpacking of the whole input with no starred name into a count not the task's, where no length
    test lets it run only for that count (_length_tested): what NV006, NV007 and NV403 judge."""
    size = len(current().names)
    for node in index.walk(function.node):
        if not isinstance(node, ast.Assign) or element_of(function, node.value) != TUPLE:
            continue
        for target in node.targets:
            if not isinstance(target, (ast.Tuple, ast.List)):
                continue
            if any(isinstance(item, ast.Starred) for item in target.elts):
                continue
            named = len(target.elts)
            if named == size or _length_tested(node, function, index, named):
                continue
            others = tuple(name for name in fitting(named) if name != problem())
            yield MiscountedUnpacking(target, named, others, _reached_on_every_call(node, function, index))


def every_call_unpackings(index: ModuleIndex) -> list[MiscountedUnpacking]:
    """The unpackings NV006 and NV007 report: of the whole input, on every call, into a count not the task's."""
    return [found for function in index.timed for found in _miscounted_unpackings(function, index) if found.every_call]


def _count_source(layout: TupleLayout, named: int) -> str:
    """Where a count not the task's comes from: the tuple GPU MODE's task text describes, where it is that one
    (the grouped GEMM's template unpacks 3; the dual GEMM's text describes 7), else no problem's input."""
    if named != len(layout.described):
        return f"no problem's input has {named}"
    return (f"GPU MODE's task text describes {named}, ({', '.join(layout.described)}), but generate_input returns"
            f" these {len(layout.names)}")


def _length_tested(statement: ast.stmt, function: Function, index: ModuleIndex, named: int) -> bool:
    """Does an `if` around the statement let it run only when the input has `named` elements (`if len(data)
    == 4:`, or `n = len(data)` then `if n == 4:`/`elif n == 4:`)? Then the unpacking cannot raise: the
    task's tuple never gets there."""
    child: ast.AST = statement
    for parent in index.ancestors(statement):
        if parent is function.node:
            return False
        if isinstance(parent, ast.If) and any(child is inner for inner in parent.body) \
                and _tests_length(parent.test, function, index) == named:
            return True
        child = parent
    return False


def _tests_length(test: ast.AST, function: Function, index: ModuleIndex) -> int | None:
    """N for `len(data) == N` (either side), or `n == N` with n only ever bound to len(data)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    if not (isinstance(right, ast.Constant) and type(right.value) is int):
        return None
    if isinstance(left, ast.Name):
        bindings = [n for n in index.walk(function.node)
                    if isinstance(n, ast.Name) and n.id == left.id and isinstance(n.ctx, ast.Store)]
        values = index.assignments(function.node, left.id)
        if len(bindings) != 1 or len(values) != 1:
            return None
        left = values[0]
    is_length = (isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len"
                 and len(left.args) == 1 and not left.keywords and element_of(function, left.args[0]) == TUPLE)
    return right.value if is_length else None


def _reached_on_every_call(statement: ast.stmt, function: Function, index: ModuleIndex) -> bool:
    """Does every call of the harness's entry run this statement? Only where it stands in the entry's own
    body (no branch, loop, try or with around it: any may skip it or swallow its ValueError) with no
    return before it. A helper may be called with something else, or not at all."""
    body = function.node.body
    if not function.entry or not isinstance(body, list) or statement not in body:
        return False
    before = body[:body.index(statement)]
    return not any(isinstance(node, ast.Return) and index.enclosing_function(node) is function.node
                   for earlier in before for node in index.walk(earlier))


def _looks_like(named: int, others: list[str]) -> str:
    """What the file looks like, for an unpacking of `named` names that fits `others`' inputs. The file is
    named beside --task: with no path lint reads the folder of the task.yml it is given."""
    if len(others) == 1:
        return (f"this looks like a {others[0]} submission ({named} names are its input): lint it as one,"
                f" nvfp4ctl lint --task PATH FILE with {others[0]}'s task.yml")
    return (f"this looks like another problem's submission ({named} names fit the input of"
            f" {' and '.join(others)}): lint it with that problem's task.yml, nvfp4ctl lint --task PATH FILE")


def _torch_function_operand(node: ast.AST) -> ast.AST:
    """torch.transpose(b, 0, 1) -> b; anything else unchanged."""
    if (isinstance(node, ast.Call) and call_name(node) in TRANSPOSE_CALLS and node.args
            and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("torch", "np", "numpy")):
        return node.args[0]
    return node


def _has_transpose(node: ast.AST, function: Function | None = None) -> bool:
    """Does an expression transpose what it starts from, swapping B's n and k dimensions (its first two:
    b is (n, k/2, l))? `b.permute(2, 0, 1)` keeps n before k: with the batch outermost in memory, as
    generate_input lays B out, that view is already contiguous and .contiguous() copies nothing. So does
    `b.mT` of the 3-D b, which swaps k and l; of a slice of b with n and k last (b[:, :, 0].mT) it swaps them."""
    found = _transposing(node)
    if found is None:
        return False
    axes = _axes(function, _transposed_operand(found)) if function is not None else None
    if axes is None:
        return _swaps_n_and_k(found)
    order = _reordered(found, len(axes))
    if order is None:
        return True  # dimensions lint cannot read count as swapping them
    after = [axes[i] for i in order]
    return "n" in after and "k" in after and after.index("k") < after.index("n")


def _transposed_operand(node: ast.AST) -> ast.AST:
    """What a transposing attribute or call transposes: b of b.mT, b.t(), torch.transpose(b, 0, 1)."""
    if isinstance(node, ast.Attribute):
        return node.value
    if isinstance(node, ast.Call) and _torch_function_operand(node) is not node:
        return _torch_function_operand(node)
    return node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else node


def _axes(function: Function, node: ast.AST) -> list[str] | None:
    """B's dimensions an expression has, in order, where lint knows them: ["n", "k", "l"] for the problem's
    B itself, fewer for an integer index of it (["n", "k"] for b[:, :, 0], ["k", "l"] for b[0]), the same
    through views that keep the shape (b.view(torch.uint8), .contiguous()); None for anything else (a
    name made from B, a reshape, an index lint cannot read)."""
    if element_of(function, node) in current().b_operands:
        return ["n", "k", "l"]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords and (
            node.func.attr in SHAPE_KEEPING_CALLS and not node.args
            or node.func.attr == "view" and len(node.args) == 1 and (dotted(node.args[0]) or "").startswith("torch.")):
        return _axes(function, node.func.value)  # view(dtype): fp4x2 as uint8 keeps every dimension
    if not isinstance(node, ast.Subscript):
        return None
    axes = _axes(function, node.value)
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    fixed = [item for item in items if not (isinstance(item, ast.Constant) and item.value in (None, Ellipsis))]
    if axes is None or len(fixed) > len(axes):
        return None
    steps: list[str] = []  # per item: "keep" a dimension, "drop" it (an integer), "new" one (None)
    for item in items:
        if isinstance(item, ast.Constant) and item.value is Ellipsis:
            steps.extend(["keep"] * (len(axes) - len(fixed)))
        elif isinstance(item, ast.Constant) and item.value is None:
            steps.append("new")
        elif isinstance(item, ast.Slice):
            steps.append("keep")
        elif _index_integer(item) is not None:
            steps.append("drop")
        else:
            return None  # a tensor or a name as an index may select any shape
    if sum(isinstance(item, ast.Constant) and item.value is Ellipsis for item in items) > 1:
        return None
    remaining, kept = list(axes), []
    for step in steps:
        if step == "new":
            kept.append("1")
        elif step == "keep":
            kept.append(remaining.pop(0))
        else:
            remaining.pop(0)
    return kept + remaining


def _index_integer(node: ast.AST) -> int | None:
    """0 for b[..., 0], and for a module-level constant holding an integer; None for anything else."""
    return constant(node.id) if isinstance(node, ast.Name) else integer(node)


def _reordered(node: ast.AST, rank: int) -> list[int] | None:
    """The order a transposing attribute or call puts the dimensions of a `rank`-D operand in (.T and
    .t() reverse them, .mT swaps the last two, transpose/permute as given), None where lint cannot read it."""
    dims = list(range(rank))
    if isinstance(node, ast.Attribute):
        if node.attr in ("T", "H"):
            return dims[::-1]
        return dims[:-2] + dims[-2:][::-1] if rank >= 2 else None  # .mT, .mH
    name = call_name(node) if isinstance(node, ast.Call) and not node.keywords else ""
    if name == "t":
        return dims[::-1] if rank <= 2 else None
    arguments = node.args[1:] if _torch_function_operand(node) is not node else node.args  # type: ignore[attr-defined]
    if name == "permute" and len(arguments) == 1 and isinstance(arguments[0], (ast.Tuple, ast.List)):
        arguments = arguments[0].elts  # permute((2, 0, 1))
    given = [integer(argument) for argument in arguments]
    if not given or None in given or any(not -rank <= d < rank for d in given):  # type: ignore[operator]
        return None
    given = [d + rank if d < 0 else d for d in given]  # type: ignore[operator]
    if name in ("transpose", "swapaxes", "swapdims") and len(given) == 2:
        dims[given[0]], dims[given[1]] = dims[given[1]], dims[given[0]]  # type: ignore[index]
        return dims
    return given if name == "permute" and sorted(given) == dims else None  # type: ignore[return-value]


def _transposing(node: ast.AST) -> ast.AST | None:
    """The outermost transposing attribute or call of an expression (b.T, b.t(), b.permute(...)), if any."""
    while True:
        if isinstance(node, ast.Attribute):
            if node.attr in TRANSPOSE_ATTRS:
                return node
            node = node.value
        elif isinstance(node, ast.Call):
            if call_name(node) in TRANSPOSE_CALLS:
                return node
            node = node.func.value if isinstance(node.func, ast.Attribute) else node
            if isinstance(node, ast.Call):
                return None
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return None


def _swaps_n_and_k(node: ast.AST) -> bool:
    """Whether a transposing attribute or call of an operand whose dimensions lint does not know (a name
    made from B) puts dimension 1 (k) before dimension 0 (n). Dimensions lint cannot read (names,
    negative ones of a transpose, movedim) count as swapping them."""
    if not isinstance(node, ast.Call) or call_name(node) not in ("transpose", "swapaxes", "swapdims", "permute"):
        return True  # .T, .mT, .t(), movedim
    arguments = node.args[1:] if _torch_function_operand(node) is not node else node.args
    if call_name(node) == "permute" and len(arguments) == 1 and isinstance(arguments[0], (ast.Tuple, ast.List)):
        arguments = arguments[0].elts  # permute((2, 0, 1))
    dims = [integer(argument) for argument in arguments]
    if None in dims or node.keywords:
        return True
    if call_name(node) != "permute":
        if len(dims) != 2 or min(dims) < 0:  # type: ignore[type-var]
            return True
        return min(dims) == 0 and max(dims) >= 1  # type: ignore[type-var]  # transpose(0, j) moves n after k
    order = [d + len(dims) if d < 0 else d for d in dims]  # type: ignore[operator]
    if sorted(order) != list(range(len(order))) or len(order) < 2:
        return True
    return order.index(1) < order.index(0)


def _b_operand(function: Function, node: ast.AST, derived: dict[str, str]) -> str | None:
    """Which B an expression starts from: the problem's name of it (data[1], a name bound to it: "b", "b1"),
    "" where only its name says it is one (b, w2, weight), None where it is no B."""
    operands = current().b_operands
    while True:
        if isinstance(node, ast.Name):
            element = function.binding(node.id, position(node))
            if element in operands:
                return current().name(element)  # type: ignore[arg-type]
            if element is None and node.id in derived:
                return derived[node.id]
            return "" if element is None and B_NAME.match(node.id) else None
        element = element_of(function, node)
        if element in operands:
            return current().name(element)  # type: ignore[arg-type]
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return None


def _copied_b_words(operand: str) -> str:
    """NV501's words for the problem's B: the GEMM's B, the dual GEMM's b1 or b2 (both where the expression
    does not say which), the grouped GEMM's b of each group, the GEMV's b (its vector padded to 128 rows,
    of no (N, K) shape). One sentence for every problem; only its names differ."""
    layout = current()
    names = [layout.name(i) for i in layout.b_operands]
    shape = "(N, K) "
    if layout.nested:
        copied, already, passed, viewed = "each group's b", "every b in abc_tensors is", "b or a transposed view", "b"
    elif not names:
        copied, already, passed, viewed, shape = "b", "b is", "b or a transposed view", "b", ""
    elif len(names) == 1:
        copied, already, passed, viewed = "B", "B is", "b or a transposed view", "b"
    elif operand in names:
        copied, already, passed, viewed = operand, f"{operand} is", f"{operand} or a transposed view", operand
    else:
        copied, already = " or ".join(names), f"{' and '.join(names)} are"
        passed, viewed = "them or transposed views", names[0]
    return (f"copy-transposes {copied} every call: {already} already {shape}K-major; pass {passed} ({viewed}.t())"
            " without .contiguous()")


def _transposed_b(function: Function, index: ModuleIndex, report: Report) -> None:
    derived: dict[str, str] = {}  # names made from a B by views (b8 = b.view(torch.uint8)) -> which B
    held: dict[str, list[tuple[tuple[int, int], str | None]]] = {}  # name -> (where, B transposed there or None)
    for node in sorted((n for n in index.walk(function.node) if isinstance(n, ast.Assign)), key=position):
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            continue
        name = node.targets[0].id
        if not _has_transpose(node.value, function):
            operand = None if isinstance(node.value, ast.Name) else _b_operand(function, node.value, derived)
            if operand is not None:
                derived[name] = operand
        view = _transposed_view(function, node.value, derived, held) if not _copy_call(node.value) else None
        held.setdefault(name, []).append((_end(node), view))
    for node in index.walk(function.node):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if _copy_call(node):
            operand = _transposed_view(function, node.func.value, derived, held)
        elif node.func.attr == "copy_" and len(node.args) == 1:
            operand = _transposed_view(function, node.args[0], derived, held)  # bt.copy_(b.t())
        else:
            continue
        if operand is not None:
            report(node, "NV501", _copied_b_words(operand))


def _copy_call(node: ast.AST) -> bool:
    """x.contiguous(), x.clone(), x.to(memory_format=torch.contiguous_format): a call that copies a
    transposed view into a fresh contiguous tensor."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr in COPY_CALLS:
        return True
    return node.func.attr == "to" and any(
        keyword.arg == "memory_format" and (dotted(keyword.value) or "").endswith("contiguous_format")
        for keyword in node.keywords)


def _transposed_view(function: Function, node: ast.AST, derived: dict[str, str],
                     held: dict[str, list[tuple[tuple[int, int], str | None]]]) -> str | None:
    """Which B an expression is a transposed view of (b.t(), torch.transpose(b, 0, 1), or a name an
    earlier statement set to one: `bt = b.t()`, then `bt.contiguous()`), None where it is none."""
    if _has_transpose(node, function):
        return _b_operand(function, _torch_function_operand(node), derived)
    if isinstance(node, ast.Name):
        at = position(node)
        before = [operand for where, operand in held.get(node.id, ()) if where <= at]
        return before[-1] if before else None
    return None


def _end(node: ast.AST) -> tuple[int, int]:
    """Where a statement ends: a name it assigns holds its value from there on."""
    return getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0


def _fallback(function: Function, index: ModuleIndex, report: Report) -> None:
    for node in index.walk(function.node):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        if name == "ref_kernel":
            report(node.func, "NV701", "calls the reference implementation (ref_kernel) in the timed path")
        elif name == "_scaled_mm":
            arguments = [*node.args, *(k.value for k in node.keywords)]
            if any(_reference_derived(arg, function, index) for arg in arguments):
                report(node.func, "NV701", "torch._scaled_mm with the reference scales is the reference, not a kernel")


def _reference_derived(node: ast.AST, function: Function, index: ModuleIndex, depth: int = 0) -> bool:
    """Built from the reference scales: to_blocked(...), their indices, or a name assigned from those."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and call_name(inner) == "to_blocked":
            return True
        if element_of(function, inner) in _reference():
            return True
        if isinstance(inner, ast.Name):
            if function.possible(inner.id, position(inner)) & set(_reference()) or REFERENCE_NAME.match(inner.id):
                return True
            if depth < 2 and any(_reference_derived(value, function, index, depth + 1)
                                 for value in index.assignments(function.node, inner.id)):
                return True
    return False


def _compared_ints(test: ast.AST, function: Function, index: ModuleIndex) -> list[int]:
    values: list[int] = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, operands, operands[1:]):
            if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                continue
            for side, other in ((left, right), (right, left)):
                if isinstance(other, ast.BinOp) and isinstance(other.op, ast.Mod):
                    continue
                values.extend(_int_literals(side, function, index))
    return values


def _int_literals(node: ast.AST, function: Function, index: ModuleIndex, follow_calls: bool = True) -> list[int]:
    """The integers a side of a comparison is written with: literals, a module constant only ever set to
    a number (`BENCH_N = 7168`), and, one call down, what a helper of the file returns where every return
    is made of those (`def bench(): return BENCH_M, BENCH_N`, then `if (m, n) == bench():`)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [value for element in node.elts for value in _int_literals(element, function, index, follow_calls)]
    if isinstance(node, ast.Name) and _numeric_constant(node, function, index):
        return [value for assigned in index.assignments(index.tree, node.id) for value in _plain_ints(assigned)]
    if follow_calls and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in index.functions:
        helper = Function(index.functions[node.func.id])
        returns = [n.value for n in index.own_returns(helper.node)]
        if returns and all(value is not None and _numbers_only(value, helper, index) for value in returns):
            return [number for value in returns for number in _int_literals(value, helper, index, follow_calls=False)]
    return []


def _plain_ints(node: ast.AST) -> list[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [value for element in node.elts for value in _plain_ints(element)]
    return []


def _numbers_only(node: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """128, (128, 7168), BENCH_M or (BENCH_M, BENCH_N) of module constants only ever set to numbers."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_numbers_only(element, function, index) for element in node.elts)
    return _config_number(node) or _numeric_constant(node, function, index)


def _shape_branches(function: Function, index: ModuleIndex, report: Report, shapes: tuple[tuple[int, ...], ...],
                    dims: tuple[str, ...]) -> None:
    for node in index.walk(function.node):
        values: list[int] = []
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            values = _compared_ints(node.test, function, index)
        elif isinstance(node, ast.match_case):
            values = [v.value for v in ast.walk(node.pattern) if isinstance(v, ast.Constant) and type(v.value) is int]
        if not values:
            continue
        shape = pinned_shape(values, shapes)
        if shape is not None and not _picks_config(node, function, index):
            anchor = node.pattern if isinstance(node, ast.match_case) else node.test
            report(anchor, "NV702", f"branches on the benchmark shape {describe(shape, values, dims)}: every shape must take the "
                                    "same code path (tuned configs are fine)")


def _picks_config(node: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """Does a shape branch only pick config numbers (`tile = 128 if (m, n) == (128, 7168) else 64`,
    `if ...: tile, stages = 64, 4`)? A tuned config is fine; a return, a call or any other statement
    in a branch is another code path, and so is a picked number that a later branch tests."""
    if isinstance(node, ast.IfExp):
        parent = index.parents.get(node)
        if isinstance(parent, ast.Return):  # `return BIG if (m, n) == ... else SMALL`: a tile table's return
            return _config_helper(function, index)
        if not (_config_record(node.body, function, index) and _config_record(node.orelse, function, index)):
            return False
        picked = _assigned_names(parent) if isinstance(parent, (ast.Assign, ast.AnnAssign)) else set()
    elif isinstance(node, ast.If):
        picked = _config_statements([*node.body, *node.orelse], _config_helper(function, index))
    elif isinstance(node, ast.match_case):
        match = index.parents.get(node)
        picked = _config_statements([s for case in getattr(match, "cases", []) for s in case.body],
                                    _config_helper(function, index))
    else:
        return False
    return picked is not None and not picked & _tested_names(function, index)


def _config_helper(function: Function, index: ModuleIndex) -> bool:
    """Is a function a tile table (`def _tiles(m, n, k): if (m, n, k) == ...: return 128, 4`): not the
    entry, every return of it hands back config numbers, and no caller tests what it returns
    (`if _tiles(m, n, k) == (128, 4): return fast(data)` is another code path, as is testing a name
    assigned from it)? Its shape branches then pick a tuned config."""
    key = ("NV702 config helper", id(function.node))
    found = index.memo.get(key)
    if found is None:
        found = index.memo[key] = _returns_only_config(function, index) and not _result_tested(function, index)
    return bool(found)


def _returns_only_config(function: Function, index: ModuleIndex) -> bool:
    if function.entry or (function.cls is None and function.node.name == ENTRY):
        return False
    returns = index.own_returns(function.node)
    return bool(returns) and all(r.value is not None and _config_record(r.value, function, index) for r in returns)


def _config_record(node: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """Config numbers, a module constant only ever set to one (`_EVICT_FIRST = 0x12F0...`), or a class of
    this file made from them only (`Tile(128, 4)`, a dataclass)."""
    if _config_number(node) or _numeric_constant(node, function, index):
        return True
    if isinstance(node, ast.IfExp):  # `BIG if m > 256 else SMALL`: one config or another
        return _config_record(node.body, function, index) and _config_record(node.orelse, function, index)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in index.classes
            and all(_config_number(part) for part in [*node.args, *(k.value for k in node.keywords)]))


def _numeric_constant(node: ast.AST, function: Function, index: ModuleIndex) -> bool:
    """A module name every assignment of which is a config number, none of them inside a function, and which
    `function` reads as that module name (no parameter or local of its own by the name)."""
    if not (isinstance(node, ast.Name) and node.id in index.module_names):
        return False
    if node.id in parameter_names(function.node) or index.assignments(function.node, node.id):
        return False
    values = index.assignments(index.tree, node.id)
    return bool(values) and all(_config_number(value) and index.enclosing_function(value) is None for value in values)


def _result_tested(helper: Function, index: ModuleIndex) -> bool:
    """Does any timed function test a call of the helper, or a name it assigns one to?"""
    for caller in index.timed:
        for node in index.walk(caller.node):
            if not (isinstance(node, ast.Call) and _calls(node, helper)):
                continue
            for ancestor in index.ancestors(node):
                if isinstance(ancestor, (ast.If, ast.IfExp, ast.While, ast.Assert, ast.Match, ast.match_case)):
                    return True  # in a test (a call in a branch's body is inside its statement, below)
                if isinstance(ancestor, ast.stmt):
                    if isinstance(ancestor, (ast.Assign, ast.AnnAssign)) and _assigned_names(ancestor) & \
                            _tested_names(caller, index):
                        return True
                    break
    return False


def _calls(call: ast.Call, function: Function) -> bool:
    """Is a call one of function: `name(...)` of a module function, `self.name(...)` of a method?"""
    func = call.func
    if function.cls is None:
        return isinstance(func, ast.Name) and func.id == function.node.name
    return isinstance(func, ast.Attribute) and func.attr == function.node.name


def _config_number(node: ast.AST) -> bool:
    """128, -1, 0.5, (128, 256): a literal number or a tuple of them (not a bool, a string or a name)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_config_number(item) for item in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _assigned_names(node: ast.AST) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    names: set[str] = set()
    for target in targets:
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts):
            names.update(t.id for t in target.elts)  # type: ignore[attr-defined]
        else:
            return set()
    return names


def _config_statements(statements: list[ast.stmt], returns_config: bool = False) -> set[str] | None:
    """The names a branch's statements set, when all they do is set names to config numbers (an elif
    chain included), or, in a tile table (returns_config), return them; None when anything else happens."""
    picked: set[str] = set()
    for statement in statements:
        if isinstance(statement, ast.Pass) or returns_config and isinstance(statement, ast.Return):
            continue  # a tile table's returns are all config numbers (_config_helper)
        if isinstance(statement, ast.If):
            inner = _config_statements([*statement.body, *statement.orelse], returns_config)
            if inner is None:
                return None
            picked |= inner
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None \
                and _config_number(statement.value) and _assigned_names(statement):
            picked |= _assigned_names(statement)
        else:
            return None
    return picked


def _tested_names(function: Function, index: ModuleIndex) -> set[str]:
    """Names read in a condition of the function (if, while, x if c else y, match, assert)."""
    key = ("NV702 tested names", id(function.node))
    found = index.memo.get(key)
    if found is None:
        tests = [n.test for n in index.walk(function.node) if isinstance(n, (ast.If, ast.IfExp, ast.While, ast.Assert))]
        tests += [n.subject for n in index.walk(function.node) if isinstance(n, ast.Match)]
        found = index.memo[key] = {n.id for test in tests for n in ast.walk(test) if isinstance(n, ast.Name)}
    return found  # type: ignore[return-value]


def _prints(function: Function, index: ModuleIndex, report: Report) -> None:
    if _is_kernel(function.node, index) is not None:
        return  # device prints are NV802's business
    for node in index.walk(function.node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            in_handler = any(isinstance(a, ast.ExceptHandler) for a in index.ancestors(node))
            if not in_handler and _is_kernel(index.enclosing_function(node), index) is None \
                    and not guarded_by_debug(node, index):
                report(node.func, "NV801", "print() in the timed path: it runs on every call; put it behind a debug flag")


def _cached_entry(index: ModuleIndex, report: Report) -> None:
    entry = index.functions.get(ENTRY)
    if entry is not None:
        for decorator, name in _cache_decorators(entry, index):
            report(decorator, "NV303", f"@{name} on custom_kernel returns the first result for every later call")
    for value in _entry_values(index):  # custom_kernel = functools.lru_cache(maxsize=None)(_impl)
        for call in (n for n in ast.walk(value) if isinstance(n, ast.Call) and n.args):
            for _, name in _cache_wrappers([call.func], index):
                report(call, "NV303", f"{name}(...) makes custom_kernel return the first result for every later call")
    for function in index.timed:  # a helper the timed path hands input tensors: keyed by the tensor objects
        if function.node is entry or not any(function.param_bindings.values()):
            continue
        for decorator, name in _cache_decorators(function.node, index):
            if keeps_computed_data(function, index):  # the words of the dict-keyed cache of the same data (NV302)
                report(decorator, "NV303", f"@{name} on {function.name}, which the timed path passes input tensors, "
                                           + keyed_data_words("its cache", "id(), the tensor's hash"))
            else:
                report(decorator, "NV303", f"@{name} on {function.name}, which the timed path passes input tensors:"
                                           " a call with the same tensor objects returns the first call's result")


def _entry_values(index: ModuleIndex) -> list[ast.AST]:
    """What module-level assignments give custom_kernel (`custom_kernel = ...`, annotated or not)."""
    found = []
    for node in index.tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if targets and node.value is not None and any(isinstance(t, ast.Name) and t.id == ENTRY for t in targets):
            found.append(node.value)
    return found


def _cache_decorators(node: ast.AST, index: ModuleIndex) -> list[tuple[ast.AST, str]]:
    return _cache_wrappers(getattr(node, "decorator_list", []), index)


def _cache_wrappers(decorators: list[ast.expr], index: ModuleIndex) -> list[tuple[ast.AST, str]]:
    """(decorator, its name) for each one that caches results (functools.cache, lru_cache(...), ...)."""
    found = []
    for decorator in decorators:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = index.resolve(target) or ""
        if CACHE_DECORATORS.search(name):
            found.append((decorator, name))
    return found
